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

Deno.test("jpegBatch gives each image the bytes jpeg-js gives it alone (28×28 gray, 32×32 and 20×27 colour)", () => {
  for (const [h, w, c] of [[28, 28, 1], [32, 32, 3], [20, 27, 3]]) {
    const n = 5, size = h * w * c, rng = new Rng(h + w);
    const images = Float32Array.from({ length: n * size }, () => rng.int(256) / 255);
    const batch = jpegBatch(images, n, h, w, c, 30);
    for (let i = 0; i < n; i++) {
      const rgba = new Uint8Array(h * w * 4).fill(255);
      for (let p = 0; p < h * w; p++) {
        for (let ch = 0; ch < 3; ch++) {
          rgba[p * 4 + ch] = Math.round(images[i * size + p * c + (c === 1 ? 0 : ch)] * 255);
        }
      }
      const alone =
        jpegJs.decode(jpegJs.encode({ data: rgba, width: w, height: h }, 30).data, { useTArray: true }).data;
      for (let p = 0; p < h * w; p++) {
        const expected = c === 3
          ? [0, 1, 2].map((ch) => alone[p * 4 + ch])
          : [Math.round((alone[p * 4] + alone[p * 4 + 1] + alone[p * 4 + 2]) / 3)];
        const got = Array.from(batch.subarray(i * size + p * c, i * size + (p + 1) * c), (v) => Math.round(v * 255));
        assertEquals(got, expected, `${h}×${w}×${c} image ${i} pixel ${p}`);
      }
    }
  }
});

/** One image through jpeg-js alone (encode, decode), as bytes `[h, w, c]`; gray goes in as R = G = B. */

function jpegJsRoundTrip(image: Float32Array, h: number, w: number, c: number, quality: number): number[] {
  const rgba = new Uint8Array(h * w * 4).fill(255);
  for (let p = 0; p < h * w; p++) {
    for (let ch = 0; ch < 3; ch++) {
      rgba[p * 4 + ch] = Math.round(Math.min(1, Math.max(0, image[p * c + (c === 1 ? 0 : ch)])) * 255);
    }
  }
  const decoded =
    jpegJs.decode(jpegJs.encode({ data: rgba, width: w, height: h }, quality).data, { useTArray: true }).data;
  const bytes: number[] = [];
  for (let p = 0; p < h * w; p++) {
    if (c === 1) bytes.push(Math.round((decoded[p * 4] + decoded[p * 4 + 1] + decoded[p * 4 + 2]) / 3));
    else for (let ch = 0; ch < 3; ch++) bytes.push(decoded[p * 4 + ch]);
  }
  return bytes;
}

Deno.test("jpegBatch gives jpeg-js's bytes at qualities 0–120 on noise, extremes and gradients, gray and colour", () => {
  const rng = new Rng(21);
  const shapes: [number, number, number][] = [[9, 13, 1], [17, 11, 3]];
  // 0 means 50 to jpeg-js and 120 means 100; the step tables change form at 50.
  for (const quality of [0, 1, 40, 58, 100, 120]) {
    for (const [h, w, c] of shapes) {
      const size = h * w * c;
      // Uniform noise (values slightly outside [0, 1] are clipped first), a 0/1 checkerboard that drives the
      // highest-frequency coefficients to their extremes, and a smooth colour gradient.
      const noise = Float32Array.from({ length: size }, () => rng.uniform() * 1.1 - 0.05);
      const checker = Float32Array.from({ length: size }, (_, k) => {
        const p = Math.floor(k / c);
        return (Math.floor(p / w) + (p % w) + (k % c)) % 2;
      });
      const gradient = Float32Array.from({ length: size }, (_, k) => {
        const p = Math.floor(k / c);
        return Math.round(255 * (0.5 + 0.45 * Math.sin(Math.floor(p / w) / 3 + (k % c)) * Math.cos((p % w) / 4))) / 255;
      });
      const images = [noise, checker, gradient];
      const batch = jpegBatch(Float32Array.from(images.flatMap((image) => [...image])), 3, h, w, c, quality);
      images.forEach((image, i) => {
        const got = Array.from(batch.subarray(i * size, (i + 1) * size), (v) => Math.round(v * 255));
        assertEquals(got, jpegJsRoundTrip(image, h, w, c, quality), `quality ${quality}, ${h}×${w}×${c}, image ${i}`);
        // The values are the bytes over 255 exactly.
        assertEquals(Array.from(batch.subarray(i * size, (i + 1) * size)), got.map((b) => Math.fround(b / 255)));
      });
    }
  }
});
