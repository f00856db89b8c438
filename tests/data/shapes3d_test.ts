import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { hueToRgb, shapes3d } from "../../lib/data/shapes3d.ts";

const dataset = shapes3d();
const PIXELS = 64 * 64;

/** One image of the tuple (floor_hue, wall_hue, object_hue, scale, shape, orientation). */
function render(...tuple: number[]): Float32Array {
  return dataset.observations({ values: Int32Array.from(tuple), n: 1 }, new Rng(0)).values;
}

/** Pixels (by index) whose RGB differs between two images. */
function changed(a: Float32Array, b: Float32Array): Set<number> {
  const out = new Set<number>();
  for (let p = 0; p < PIXELS; p++) {
    if (a[3 * p] !== b[3 * p] || a[3 * p + 1] !== b[3 * p + 1] || a[3 * p + 2] !== b[3 * p + 2]) out.add(p);
  }
  return out;
}

/** Object pixels: those that change when only the object hue changes. */
function objectMask(scale: number, shape: number, orientation: number): Set<number> {
  return changed(render(0, 5, 2, scale, shape, orientation), render(0, 5, 7, scale, shape, orientation));
}

function disjoint(a: Set<number>, b: Set<number>): boolean {
  for (const p of a) if (b.has(p)) return false;
  return true;
}

Deno.test("shapes3d has the original's factors and a procedural description", () => {
  assertEquals(dataset.factorNames, ["floor_hue", "wall_hue", "object_hue", "scale", "shape", "orientation"]);
  assertEquals(dataset.factorSizes, [10, 10, 10, 8, 4, 15]);
  assertEquals(dataset.factorSizes.reduce((a, b) => a * b, 1), 480_000);
  assertEquals(dataset.imageShape, [64, 64, 3]);
  assertEquals(dataset.categorical, [4]);
  assert(/procedural/i.test(dataset.description) && /ray caster/.test(dataset.description));
  assert(/not DeepMind's images/.test(dataset.description));
});

Deno.test("hueToRgb gives full-saturation, full-value HSV colours", () => {
  const expected: [number, [number, number, number]][] = [[0, [1, 0, 0]], [1 / 3, [0, 1, 0]], [2 / 3, [0, 0, 1]]];
  for (const [hue, rgb] of expected) {
    hueToRgb(hue).forEach((v, c) => assertAlmostEquals(v, rgb[c], 1e-12));
  }
  const orange = hueToRgb(0.1);
  assertAlmostEquals(orange[1], 0.6, 1e-12);
  for (let i = 0; i < 10; i++) {
    const rgb = hueToRgb(i / 10);
    assertEquals(Math.max(...rgb), 1);
    assertEquals(Math.min(...rgb), 0);
  }
});

Deno.test("sampled images have shape [n, 64, 64, 3], values in [0, 1] and are deterministic", () => {
  const factors = dataset.sampleFactors(50, new Rng(1));
  assertEquals(factors.values.length, 50 * 6);
  for (let i = 0; i < factors.values.length; i++) {
    const v = factors.values[i];
    assert(Number.isInteger(v) && v >= 0 && v < dataset.factorSizes[i % 6]);
  }
  const a = dataset.observations(factors, new Rng(2));
  assertEquals(a.n, 50);
  assertEquals(a.shape, [64, 64, 3]);
  assertEquals(a.values.length, 50 * PIXELS * 3);
  let min = Infinity, max = -Infinity;
  for (const v of a.values) min = Math.min(min, v), max = Math.max(max, v);
  assert(min >= 0 && max <= 1 && max > 0.9, `range [${min}, ${max}]`);
  // A fresh dataset (nothing cached) and another rng give the identical images.
  const b = shapes3d().observations(factors, new Rng(3));
  assertEquals(b.values, a.values);
});

Deno.test("the three hue factors change disjoint pixel sets that cover the image", () => {
  for (const [scale, shape, orientation] of [[0, 0, 0], [7, 2, 7], [3, 3, 14], [5, 1, 4]]) {
    const base = render(1, 4, 8, scale, shape, orientation);
    const floor = changed(base, render(6, 4, 8, scale, shape, orientation));
    const wall = changed(base, render(1, 9, 8, scale, shape, orientation));
    const object = changed(base, render(1, 4, 3, scale, shape, orientation));
    assert(disjoint(floor, wall) && disjoint(floor, object) && disjoint(wall, object));
    // Every pixel belongs to one surface, and each surface is clearly visible.
    assertEquals(floor.size + wall.size + object.size, PIXELS);
    for (const mask of [floor, wall, object]) assert(mask.size > 200, `surface of ${mask.size} pixels`);
    // The floor is below the wall: its mean row is larger.
    const meanRow = (mask: Set<number>) => [...mask].reduce((s, p) => s + Math.floor(p / 64), 0) / mask.size;
    assert(meanRow(floor) > meanRow(wall) + 10);
    // Changing another floor hue touches exactly the same pixels.
    assertEquals(changed(base, render(9, 4, 8, scale, shape, orientation)), floor);
  }
});

Deno.test("a larger scale covers more object pixels", () => {
  for (let shape = 0; shape < 4; shape++) {
    let previous = 0;
    for (let scale = 0; scale < 8; scale++) {
      const size = objectMask(scale, shape, 7).size;
      assert(size > previous, `shape ${shape}, scale ${scale}: ${size} ≤ ${previous} pixels`);
      previous = size;
    }
  }
  // Area grows roughly as scale² (1.25 / 0.75)² ≈ 2.8.
  const ratio = objectMask(7, 2, 7).size / objectMask(0, 2, 7).size;
  assert(ratio > 2.2 && ratio < 3.4, `area ratio ${ratio}`);
});

Deno.test("the four shapes have four different silhouettes", () => {
  const masks = [0, 1, 2, 3].map((shape) => objectMask(4, shape, 3));
  for (let i = 0; i < 4; i++) {
    for (let j = i + 1; j < 4; j++) {
      let differing = 0;
      for (let p = 0; p < PIXELS; p++) if (masks[i].has(p) !== masks[j].has(p)) differing++;
      assert(differing >= 20, `shapes ${i} and ${j} differ in ${differing} pixels`);
    }
  }
});

Deno.test("orientation changes the view; the sphere's silhouette is symmetric under ±azimuth mirroring", () => {
  for (let orientation = 1; orientation < 15; orientation++) {
    assert(changed(render(2, 5, 0, 4, 0, 0), render(2, 5, 0, 4, 0, orientation)).size > 50);
  }
  // The scene geometry is mirror-symmetric except for the light, so the
  // sphere's silhouette at −θ is the mirror image of that at +θ.
  const left = objectMask(4, 2, 2), right = objectMask(4, 2, 12);
  for (const p of left) assert(right.has(Math.floor(p / 64) * 64 + 63 - (p % 64)));
  assertEquals(left.size, right.size);
});

Deno.test("out-of-range factors are rejected", () => {
  assertThrows(() => render(10, 0, 0, 0, 0, 0), RangeError, "factor 0");
  assertThrows(() => render(0, 0, 0, 0, 0, 15), RangeError, "factor 5");
  assertThrows(() => render(0, 0, 0, 0, -1, 0), RangeError, "factor 4");
  assertThrows(
    () => dataset.observations({ values: new Int32Array(5), n: 1 }, new Rng(0)),
    RangeError,
    "expected 1×6",
  );
});
