import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  affineWarp,
  type BorderMode,
  gaussianFilter,
  motionBlur,
  plasmaFractal,
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
