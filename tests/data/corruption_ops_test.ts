import jpegJs from "jpeg-js";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  affineWarp,
  type BorderMode,
  boxBlur3,
  boxResize,
  cannyCv2,
  clippedZoom,
  clippedZoomSize,
  convolve2d,
  diskKernel,
  distanceTransform5,
  equalizeHist,
  gaussianFilter,
  glassShuffle,
  hsvToRgb,
  jpeg,
  jpegBatch,
  motionBlur,
  nearestResize,
  plasmaFractal,
  rgbToHsv,
  sampleBilinear,
} from "../../lib/data/corruption_ops.ts";

/** What make_corruption_reference.py computed with numpy, scipy and PIL. */
const REFERENCE = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/reference_corruption_ops.json", import.meta.url)),
);

interface TestImage {
  img: Float32Array;
  h: number;
  w: number;
  c: number;
}

function testImage(name: string): TestImage {
  const { shape, values } = REFERENCE.images[name];
  return { img: Float32Array.from(values), h: shape[0], w: shape[1], c: shape[2] };
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what: string): void {
  assertEquals(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  assert(worst <= tolerance, `${what}: largest difference ${worst} > ${tolerance}`);
}

function constantImage(h: number, w: number, c: number, value: number): Float32Array {
  return new Float32Array(h * w * c).fill(value);
}

Deno.test("gaussianFilter matches scipy.ndimage.gaussian_filter (nearest, truncate 4; reflect, truncate 3)", () => {
  for (const ref of REFERENCE.gaussian_filter) {
    const { img, h, w, c } = testImage(ref.image);
    const out = gaussianFilter(img, h, w, c, ref.sigma, { mode: ref.mode, truncate: ref.truncate });
    assertClose(out, ref.values, 1e-6, `${ref.image} sigma ${ref.sigma} ${ref.mode}`);
  }
});

Deno.test("gaussianFilter keeps constant images and returns a copy at sigma 0", () => {
  const flat = constantImage(9, 7, 3, 0.3);
  assertClose(gaussianFilter(flat, 9, 7, 3, 2), flat, 1e-7, "constant");
  const { img, h, w, c } = testImage("color");
  const same = gaussianFilter(img, h, w, c, 0);
  assertEquals(Array.from(same), Array.from(img));
  assert(same !== img);
});

Deno.test("motionBlur matches a numpy port of imagecorruptions _motion_blur", () => {
  for (const ref of REFERENCE.motion_blur) {
    const { img, h, w, c } = testImage(ref.image);
    const out = motionBlur(img, h, w, c, ref.radius, ref.sigma, ref.angle);
    assertClose(out, ref.values, 1e-6, `${ref.image} r ${ref.radius} σ ${ref.sigma} θ ${ref.angle}`);
  }
});

Deno.test("motionBlur keeps a constant image while every shift stays inside it", () => {
  const flat = constantImage(28, 28, 1, 0.6);
  assertClose(motionBlur(flat, 28, 28, 1, 10, 3, 17), flat, 1e-6, "constant");
});

Deno.test("sampleBilinear matches scipy.ndimage.map_coordinates order 1 in each border mode", () => {
  const { img, h, w, c } = testImage("gray");
  const { rows, cols } = REFERENCE.map_coordinates_points;
  for (const ref of REFERENCE.map_coordinates) {
    const out = sampleBilinear(img, h, w, c, rows, cols, ref.mode as BorderMode, ref.cval);
    assertClose(out, ref.values, 1e-6, ref.mode);
  }
});

Deno.test("affineWarp: identity, a whole-pixel shift with fill, and a half-pixel fade at the edge", () => {
  const { img, h, w, c } = testImage("color");
  assertClose(affineWarp(img, h, w, c, [1, 0, 0, 0, 1, 0]), img, 0, "identity");
  // Output (row, col) reads input (row − 2, col + 1).
  const shifted = affineWarp(img, h, w, c, [1, 0, -2, 0, 1, 1], 0.5);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let ch = 0; ch < c; ch++) {
        const inside = y - 2 >= 0 && x + 1 < w;
        const expected = inside ? img[((y - 2) * w + x + 1) * c + ch] : 0.5;
        assertAlmostEquals(shifted[(y * w + x) * c + ch], expected, 1e-7);
      }
    }
  }
  // Half a pixel beyond the left edge: halfway between the edge pixel and the fill (skimage warp's constant mode).
  const faded = affineWarp(constantImage(4, 4, 1, 1), 4, 4, 1, [1, 0, 0, 0, 1, -0.5]);
  assertAlmostEquals(faded[0], 0.5, 1e-7);
  assertAlmostEquals(faded[1], 1, 1e-7);
});

/** An Rng stand-in that hands out fixed uniforms (plasmaFractal only calls `uniform`). */
function fixedUniforms(values: number[]): Rng {
  let next = 0;
  return { uniform: () => values[next++] } as unknown as Rng;
}

Deno.test("plasmaFractal matches imagecorruptions plasma_fractal fed the same uniforms", () => {
  for (const ref of REFERENCE.plasma_fractal) {
    const out = plasmaFractal(ref.map_size, ref.wibble_decay, fixedUniforms(REFERENCE.plasma_uniforms));
    assertClose(out, ref.values, 1e-6, `plasma ${ref.map_size} decay ${ref.wibble_decay}`);
  }
});

Deno.test("plasmaFractal spans [0, 1], is reproducible from its Rng and rejects sides that are not powers of 2", () => {
  const a = plasmaFractal(32, 2, new Rng(5)), b = plasmaFractal(32, 2, new Rng(5));
  assertEquals(Array.from(a), Array.from(b));
  assertEquals(Math.min(...a), 0);
  assertEquals(Math.max(...a), 1);
  let threw = false;
  try {
    plasmaFractal(24, 2, new Rng(1));
  } catch {
    threw = true;
  }
  assert(threw);
});

Deno.test("clippedZoom matches imagecorruptions clipped_zoom (scipy zoom order 1), cut top-left", () => {
  for (const ref of REFERENCE.clipped_zoom) {
    const { img, h, w, c } = testImage(ref.image);
    assertClose(clippedZoom(img, h, w, c, ref.factor), ref.values, 1e-6, `${ref.image} zoom ${ref.factor}`);
  }
});

Deno.test("clippedZoom: the untrimmed result holds both the top-left and the centred cut", () => {
  const { img, h, w, c } = testImage("gray");
  const zoom = 1.5;
  const fullH = clippedZoomSize(h, zoom), fullW = clippedZoomSize(w, zoom);
  const full = clippedZoom(img, h, w, c, zoom, { trim: "none" });
  assertEquals(full.length, fullH * fullW * c);
  const centre = clippedZoom(img, h, w, c, zoom, { trim: "center" });
  const top = Math.floor((fullH - h) / 2), left = Math.floor((fullW - w) / 2);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) assertEquals(centre[y * w + x], full[(y + top) * fullW + x + left]);
  }
});

Deno.test("diskKernel matches imagecorruptions disk with cv2.GaussianBlur written out", () => {
  for (const ref of REFERENCE.disk) {
    const { kernel, size } = diskKernel(ref.radius, ref.alias_blur);
    assertEquals(size, ref.size);
    assertClose(kernel, ref.values, 1e-7, `disk ${ref.radius}, ${ref.alias_blur}`);
    // The reflect-101 border adds weight where the disk reaches the grid's edge (radius 8 and 10), as in cv2.
    if (ref.radius <= 6) assertAlmostEquals(kernel.reduce((a, b) => a + b, 0), 1, 1e-6);
  }
});

Deno.test("convolve2d matches cv2.filter2D (reflect-101) written out with numpy", () => {
  for (const ref of REFERENCE.filter2d) {
    const { img, h, w, c } = testImage(ref.image);
    const { kernel, size } = diskKernel(ref.radius, ref.alias_blur);
    assertClose(convolve2d(img, h, w, c, kernel, size), ref.values, 1e-6, `${ref.image} disk ${ref.radius}`);
  }
});

Deno.test("boxResize matches PIL resize(BOX) on float images", () => {
  for (const ref of REFERENCE.box_resize) {
    const { img, h, w, c } = testImage(ref.image);
    const [outH, outW] = ref.out;
    assertClose(boxResize(img, h, w, c, outH, outW), ref.values, 1e-6, `${ref.image} → ${outH}×${outW}`);
  }
});

Deno.test("nearestResize takes the pixels PIL resize(NEAREST) takes", () => {
  for (const ref of REFERENCE.nearest_resize) {
    const [h, w] = ref.in, [outH, outW] = ref.out;
    const indices = Float32Array.from({ length: h * w }, (_, k) => k);
    assertEquals(Array.from(nearestResize(indices, h, w, 1, outH, outW)), ref.source, `${h}×${w} → ${outH}×${outW}`);
  }
});

Deno.test("rgbToHsv and hsvToRgb match Python's colorsys and invert each other", () => {
  const { rgb, hsv } = REFERENCE.hsv;
  assertClose(rgbToHsv(rgb), hsv, 1e-6, "rgb → hsv");
  assertClose(hsvToRgb(hsv), rgb, 1e-6, "hsv → rgb");
});

Deno.test("glassShuffle only permutes pixels, within maxDelta, and leaves the border band alone", () => {
  const h = 12, w = 10, c = 3;
  const img = Float32Array.from({ length: h * w * c }, (_, k) => k);
  const out = glassShuffle(img, h, w, c, 2, 3, new Rng(4));
  assertEquals(Array.from(out).sort((a, b) => a - b), Array.from(img));
  let moved = 0;
  for (let p = 0; p < h * w; p++) {
    const from = out[p * c] / c, y = Math.floor(p / w), x = p % w;
    for (let ch = 0; ch < c; ch++) assertEquals(out[p * c + ch], (from * c) + ch); // pixels move whole
    if (from !== p) moved++;
    // Swaps touch rows and columns maxDelta + 1 − maxDelta = 1 and up only.
    if (y === 0 || x === 0) assertEquals(from, p);
  }
  assert(moved > h * w / 2, `only ${moved} pixels moved`);
});

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

Deno.test("boxBlur3 is the 3×3 mean with reflect-101 borders, rounded for bytes", () => {
  const img = [0, 9, 0, 9, 0, 9, 0, 9, 0]; // 3×3 checkerboard
  const out = boxBlur3(img, 3, 3);
  assertAlmostEquals(out[4], 36 / 9, 1e-12);
  // Corner (0, 0) reads rows 1, 0, 1 and columns 1, 0, 1: four of the nine are odd cells (nines).
  assertAlmostEquals(out[0], 36 / 9, 1e-12);
  // A centre impulse of 5 is read 4 times by a corner (20/9), twice by an edge (10/9), once by the centre (5/9).
  assertEquals(Array.from(boxBlur3([0, 0, 0, 0, 5, 0, 0, 0, 0], 3, 3, true)), [2, 1, 2, 1, 1, 1, 2, 1, 2]);
});

Deno.test("cannyCv2 finds a one-pixel line along a vertical step and nothing on a flat image", () => {
  const h = 12, w = 12;
  const step = Float64Array.from({ length: h * w }, (_, k) => (k % w < 6 ? 0 : 200));
  const edges = cannyCv2(step, h, w, 50, 150);
  for (let y = 0; y < h; y++) {
    const row = Array.from(edges.slice(y * w, (y + 1) * w));
    // Sobel responds equally in columns 5 and 6; suppression keeps the first (strictly above the left neighbour).
    assertEquals(row, row.map((_, x) => (x === 5 ? 255 : 0)), `row ${y}`);
  }
  assertEquals(cannyCv2(new Float64Array(h * w).fill(90), h, w, 50, 150).reduce((a, b) => a + b, 0), 0);
});

Deno.test("distanceTransform5: cv2's 5×5 chamfer distances from a single zero pixel", () => {
  const h = 7, w = 7;
  const img = new Uint8Array(h * w).fill(255);
  img[3 * w + 3] = 0;
  const d = distanceTransform5(img, h, w);
  const at = (dy: number, dx: number) => d[(3 + dy) * w + 3 + dx];
  assertEquals(at(0, 0), 0);
  assertAlmostEquals(at(0, 1), 1, 1e-12);
  assertAlmostEquals(at(1, 1), 1.4, 1e-12);
  assertAlmostEquals(at(1, 2), 2.1969, 1e-12);
  assertAlmostEquals(at(0, 3), 3, 1e-12);
  assertAlmostEquals(at(3, 3), 4.2, 1e-12);
  assertEquals(distanceTransform5(new Uint8Array(4).fill(1), 2, 2)[0], Infinity);
});

Deno.test("equalizeHist maps the cumulative histogram above the lowest value onto 0..255", () => {
  // Values 10 (×2), 20 (×1), 30 (×1): the lowest maps to 0, then 255·1/2 and 255·2/2.
  assertEquals(Array.from(equalizeHist([10, 20, 10, 30])), [0, 128, 0, 255]);
  assertEquals(Array.from(equalizeHist([7, 7, 7])), [7, 7, 7]);
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
