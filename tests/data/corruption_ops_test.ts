import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import * as ops from "../../lib/data/corruption_ops.ts";
import { assertClose, constantImage, REFERENCE, testImage } from "./corruption_reference.ts";

Deno.test("gaussianFilter matches scipy.ndimage.gaussian_filter (nearest, truncate 4; reflect, truncate 3)", () => {
  for (const ref of REFERENCE.gaussian_filter) {
    const { img, h, w, c } = testImage(ref.image);
    const out = ops.gaussianFilter(img, h, w, c, ref.sigma, { mode: ref.mode, truncate: ref.truncate });
    assertClose(out, ref.values, 1e-6, `${ref.image} sigma ${ref.sigma} ${ref.mode}`);
  }
});

Deno.test("gaussianFilter keeps constant images and returns a copy at sigma 0", () => {
  const flat = constantImage(9, 7, 3, 0.3);
  assertClose(ops.gaussianFilter(flat, 9, 7, 3, 2), flat, 1e-7, "constant");
  const { img, h, w, c } = testImage("color");
  const same = ops.gaussianFilter(img, h, w, c, 0);
  assertEquals(Array.from(same), Array.from(img));
  assert(same !== img);
});

Deno.test("motionBlur matches a numpy port of imagecorruptions _motion_blur", () => {
  for (const ref of REFERENCE.motion_blur) {
    const { img, h, w, c } = testImage(ref.image);
    const out = ops.motionBlur(img, h, w, c, ref.radius, ref.sigma, ref.angle);
    assertClose(out, ref.values, 1e-6, `${ref.image} r ${ref.radius} σ ${ref.sigma} θ ${ref.angle}`);
  }
});

Deno.test("motionBlur keeps a constant image while every shift stays inside it", () => {
  const flat = constantImage(28, 28, 1, 0.6);
  assertClose(ops.motionBlur(flat, 28, 28, 1, 10, 3, 17), flat, 1e-6, "constant");
});

/** An Rng stand-in that hands out fixed uniforms (plasmaFractal only calls `uniform`). */

function fixedUniforms(values: number[]): Rng {
  let next = 0;
  return { uniform: () => values[next++] } as unknown as Rng;
}

Deno.test("plasmaFractal matches imagecorruptions plasma_fractal fed the same uniforms", () => {
  for (const ref of REFERENCE.plasma_fractal) {
    const out = ops.plasmaFractal(ref.map_size, ref.wibble_decay, fixedUniforms(REFERENCE.plasma_uniforms));
    assertClose(out, ref.values, 1e-6, `plasma ${ref.map_size} decay ${ref.wibble_decay}`);
  }
});

Deno.test("plasmaFractal spans [0, 1], is reproducible from its Rng and rejects sides that are not powers of 2", () => {
  const a = ops.plasmaFractal(32, 2, new Rng(5)), b = ops.plasmaFractal(32, 2, new Rng(5));
  assertEquals(Array.from(a), Array.from(b));
  assertEquals(Math.min(...a), 0);
  assertEquals(Math.max(...a), 1);
  let threw = false;
  try {
    ops.plasmaFractal(24, 2, new Rng(1));
  } catch {
    threw = true;
  }
  assert(threw);
});

Deno.test("diskKernel matches imagecorruptions disk with cv2.GaussianBlur written out", () => {
  for (const ref of REFERENCE.disk) {
    const { kernel, size } = ops.diskKernel(ref.radius, ref.alias_blur);
    assertEquals(size, ref.size);
    assertClose(kernel, ref.values, 1e-7, `disk ${ref.radius}, ${ref.alias_blur}`);
    // The reflect-101 border adds weight where the disk reaches the grid's edge (radius 8 and 10), as in cv2.
    if (ref.radius <= 6) assertAlmostEquals(kernel.reduce((a, b) => a + b, 0), 1, 1e-6);
  }
});

Deno.test("convolve2d matches cv2.filter2D (reflect-101) written out with numpy", () => {
  for (const ref of REFERENCE.filter2d) {
    const { img, h, w, c } = testImage(ref.image);
    const { kernel, size } = ops.diskKernel(ref.radius, ref.alias_blur);
    assertClose(ops.convolve2d(img, h, w, c, kernel, size), ref.values, 1e-6, `${ref.image} disk ${ref.radius}`);
  }
});

Deno.test("rgbToHsv and hsvToRgb match Python's colorsys and invert each other", () => {
  const { rgb, hsv } = REFERENCE.hsv;
  assertClose(ops.rgbToHsv(rgb), hsv, 1e-6, "rgb → hsv");
  assertClose(ops.hsvToRgb(hsv), rgb, 1e-6, "hsv → rgb");
});

Deno.test("glassShuffle only permutes pixels, within maxDelta, and leaves the border band alone", () => {
  const h = 12, w = 10, c = 3;
  const img = Float32Array.from({ length: h * w * c }, (_, k) => k);
  const out = ops.glassShuffle(img, h, w, c, 2, 3, new Rng(4));
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
