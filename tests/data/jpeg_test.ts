import jpegJs from "jpeg-js";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { jpeg, jpegBatch } from "../../lib/data/jpeg.ts";

Deno.test("jpeg: high quality is close, low quality is coarser, gray stays gray", () => {
  const h = 32, w = 32;
  const smooth = Float32Array.from({ length: h * w * 3 }, (_, k) => {
    const p = Math.floor(k / 3), ch = k % 3;
    return Math.round(255 * (0.5 + 0.4 * Math.sin((p % w) / 5 + ch) * Math.cos(Math.floor(p / w) / 7))) / 255;
  });
  const error = (out: Float32Array) => Math.sqrt(out.reduce((a, v, k) => a + (v - smooth[k]) ** 2, 0) / out.length);
  const fine = error(jpeg(smooth, h, w, 3, 95)), coarse = error(jpeg(smooth, h, w, 3, 7));
  assert(fine < 0.01 && coarse > 2 * fine, `rmse ${fine} at quality 95, ${coarse} at 7`);
  const gray = Float32Array.from({ length: h * w }, (_, k) => smooth[3 * k]);
  const out = jpeg(gray, h, w, 1, 50);
  assertEquals(out.length, h * w);
  for (const v of out) assertAlmostEquals(v * 255, Math.round(v * 255), 1e-4);
});

/** An image `[h, w, c]` of values in [0, 1] (noise slightly beyond, to be clipped). */
interface TestImage {
  values: Float32Array;
  h: number;
  w: number;
  c: number;
}

/**
 * Images that reach the codec's corners: uniform noise a little outside [0, 1], a 0/1 checkerboard (the
 * highest-frequency coefficients at their extremes), a smooth gradient, thin bright strokes on black as in MNIST, and
 * rectangles of saturated colours not aligned to the 8×8 blocks (the decoder's RGB clamps).
 */
function testImages(h: number, w: number, c: number, rng: Rng): TestImage[] {
  const image = (value: (y: number, x: number, ch: number) => number): TestImage => {
    const values = new Float32Array(h * w * c);
    for (let y = 0, k = 0; y < h; y++) {
      for (let x = 0; x < w; x++) for (let ch = 0; ch < c; ch++) values[k++] = value(y, x, ch);
    }
    return { values, h, w, c };
  };
  const strokes = Array.from({ length: 3 }, () => ({ y: rng.int(h), x: rng.int(w), dy: rng.int(3) - 1, dx: 1 }));
  const corners = Array.from({ length: 9 }, () => [rng.int(2), rng.int(2), rng.int(2)]);
  const cutY = 1 + rng.int(h - 1), cutX = 1 + rng.int(w - 1);
  return [
    image(() => rng.uniform() * 1.1 - 0.05),
    image((y, x, ch) => (y + x + ch) % 2),
    image((y, x, ch) => Math.round(255 * (0.5 + 0.45 * Math.sin(y / 3 + ch) * Math.cos(x / 4))) / 255),
    image((y, x) => strokes.some((s) => Math.abs((y - s.y) * s.dx - (x - s.x) * s.dy) <= 1) ? 1 - (y * x % 7) / 20 : 0),
    image((y, x, ch) => corners[(y < cutY ? 0 : 3) + (x < cutX ? 0 : x < cutX + 5 ? 1 : 2)][ch]),
  ];
}

/**
 * jpeg-js's encode and decode of many images at once, as bytes `[h, w, c]` per image: each image padded to whole 8×8
 * blocks by repeating its last row and column (as jpeg-js pads a lone image) and placed side by side on one strip.
 * Baseline JPEG without chroma subsampling codes each block on its own, so each image decodes as if alone (the last
 * test checks this against one jpeg-js round trip per image), and one jpeg-js call per quality keeps the grid fast.
 * Gray goes in as R = G = B and comes back as the rounded mean of the channels.
 */
function jpegJsBytes(images: TestImage[], quality: number): Uint8Array[] {
  const tileW = images.map(({ w }) => Math.ceil(w / 8) * 8);
  const left = tileW.map((_, i) => tileW.slice(0, i).reduce((a, b) => a + b, 0));
  const width = left[images.length - 1] + tileW[images.length - 1];
  const height = Math.max(...images.map(({ h }) => Math.ceil(h / 8) * 8));
  const rgba = new Uint8Array(width * height * 4).fill(255);
  images.forEach(({ values, h, w, c }, i) => {
    for (let y = 0; y < Math.ceil(h / 8) * 8; y++) {
      for (let x = 0; x < tileW[i]; x++) {
        const from = (Math.min(y, h - 1) * w + Math.min(x, w - 1)) * c, to = (y * width + left[i] + x) * 4;
        for (let ch = 0; ch < 3; ch++) {
          rgba[to + ch] = Math.round(Math.min(1, Math.max(0, values[from + (c === 1 ? 0 : ch)])) * 255);
        }
      }
    }
  });
  const decoded = jpegJs.decode(jpegJs.encode({ data: rgba, width, height }, quality).data, { useTArray: true }).data;
  return images.map(({ h, w, c }, i) => {
    const bytes = new Uint8Array(h * w * c);
    for (let y = 0, k = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const at = (y * width + left[i] + x) * 4;
        if (c === 1) bytes[k++] = Math.round((decoded[at] + decoded[at + 1] + decoded[at + 2]) / 3);
        else for (let ch = 0; ch < 3; ch++) bytes[k++] = decoded[at + ch];
      }
    }
    return bytes;
  });
}

/** Sizes of the grid: MNIST, CIFAR, odd sizes that pad partial blocks, and a larger image, gray and colour. */
const SHAPES: [number, number, number][] = [
  [28, 28, 1],
  [32, 32, 3],
  [20, 27, 3],
  [13, 9, 1],
  [13, 9, 3],
  [64, 64, 1],
  [64, 64, 3],
];

/** {@linkcode jpegBatch} of the images of one shape (all the same size) as bytes per image. */
function codecBytes(images: TestImage[], quality: number): Uint8Array[] {
  const { h, w, c } = images[0], size = h * w * c;
  const input = new Float32Array(images.length * size);
  images.forEach(({ values }, i) => input.set(values, i * size));
  const batch = jpegBatch(input, images.length, h, w, c, quality);
  return images.map((_, i) => {
    const out = batch.subarray(i * size, (i + 1) * size), bytes = Uint8Array.from(out, (v) => Math.round(v * 255));
    // The values are the bytes over 255 exactly.
    const off = out.findIndex((v, k) => v !== Math.fround(bytes[k] / 255));
    assertEquals(off, -1, `value ${out[off]} at ${off} is not a byte over 255`);
    return bytes;
  });
}

/**
 * Qualities of the grid: both ends, the corruption tables' on both sides of 50 (where the step tables change form),
 * and 0 and 120, which jpeg-js takes as 50 and 100. Building a jpeg-js encoder costs tens of milliseconds whatever the
 * image (65 535-entry coding tables), so the grid samples the qualities instead of taking all 100.
 */
const QUALITIES = [0, 1, 7, 18, 25, 40, 50, 58, 80, 85, 100, 120];

Deno.test("jpegBatch gives jpeg-js's bytes over qualities 0–120, sizes 13×9 to 64×64 and five image kinds", () => {
  const rng = new Rng(40);
  QUALITIES.forEach((quality, q) => {
    // One kind per shape, in turn: each quality meets all five kinds, each shape and kind two or three qualities.
    const images = SHAPES.map(([h, w, c], s) => testImages(h, w, c, rng)[(q + s) % 5]);
    const expected = jpegJsBytes(images, quality);
    images.forEach((image, s) => {
      assertEquals(codecBytes([image], quality)[0], expected[s], `quality ${quality}, ${SHAPES[s].join("×")}`);
    });
  });
});

Deno.test("jpegBatch of a batch gives each image the bytes of its own jpeg-js round trip", () => {
  // Odd sizes, whose padded blocks the strip above must fill as jpeg-js fills a lone image's.
  const rng = new Rng(21), quality = 30;
  for (const [h, w, c] of [[20, 27, 3], [13, 9, 1]]) {
    const images = testImages(h, w, c, rng).slice(0, 2);
    codecBytes(images, quality).forEach((got, i) => {
      assertEquals(got, jpegJsBytes([images[i]], quality)[0], `${h}×${w}×${c}, image ${i}`);
    });
  }
});
