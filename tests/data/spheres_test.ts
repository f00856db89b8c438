import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  analyticShift,
  maxMarginClassifier,
  misalignedClassifier,
  outerErrorClosedForm,
  sampleSpheres,
  type SphereRadii,
} from "../../lib/data/spheres.ts";

/** scipy.stats.beta.sf of Eq. 5's outer-point error (tests/data/fixtures/make_spheres_reference.py). */
const REFERENCE: { cases: { dim: number; r1: number; r2: number; outer_error: number }[] } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_spheres.json", import.meta.url)),
);

function norms(x: Float32Array, dim: number, upTo = dim): number[] {
  return Array.from({ length: x.length / dim }, (_, i) => {
    let s = 0;
    for (let k = 0; k < upTo; k++) s += x[i * dim + k] ** 2;
    return Math.sqrt(s);
  });
}

Deno.test("sampled points lie on their sphere, exactly n/2 per class, classes mixed, seeded", () => {
  for (const [dim, radii] of [[2, {}], [100, {}], [7, { r1: 1, r2: 1.3 }]] as [number, SphereRadii][]) {
    const { r1 = 1, r2 = 10 } = radii;
    const { x, y } = sampleSpheres(1000, dim, new Rng(3), radii);
    assertEquals(x.length, 1000 * dim);
    assertEquals(y.reduce((a, b) => a + b, 0), 500);
    norms(x, dim).forEach((r, i) => assertAlmostEquals(r / (y[i] === 1 ? r2 : r1), 1, 1e-6));
    // Shuffled: both classes in the first 20 rows.
    assert(y.slice(0, 20).some((v) => v === 0) && y.slice(0, 20).some((v) => v === 1));
  }
  const a = sampleSpheres(10, 5, new Rng(9)), b = sampleSpheres(10, 5, new Rng(9));
  assertEquals([...a.x], [...b.x]);
  assertEquals([...a.y], [...b.y]);
});

Deno.test("directions are uniform: coordinate means ≈ 0 and x_k²/R² averages 1/d", () => {
  const dim = 5, n = 20_000;
  const { x, y } = sampleSpheres(n, dim, new Rng(11));
  for (let k = 0; k < dim; k++) {
    let mean = 0, square = 0;
    for (let i = 0; i < n; i++) {
      const r = y[i] === 1 ? 10 : 1;
      mean += x[i * dim + k] / r / n;
      square += (x[i * dim + k] / r) ** 2 / n;
    }
    // s.e. of the mean √(1/(d n)) ≈ 0.0032; of the square ≈ 0.0023 (Var of Beta(½, 2) is 0.1067).
    assert(Math.abs(mean) < 0.013, `coordinate ${k} mean ${mean}`);
    assertAlmostEquals(square, 1 / dim, 0.01);
  }
});

Deno.test("the closed form of Eq. 5's outer error matches scipy.stats.beta.sf, 1e-27 included", () => {
  for (const { dim, r1, r2, outer_error } of REFERENCE.cases) {
    assertAlmostEquals(outerErrorClosedForm(dim, r1, r2) / outer_error, 1, 1e-10);
  }
  // The clean-error table to four places (ours).
  const quoted: [number, number][] = [[2, 0.3707], [3, 0.1648], [5, 0.0385], [10, 0.0014]];
  for (const [dim, value] of quoted) assertAlmostEquals(outerErrorClosedForm(dim), value, 5e-5);
});

Deno.test("Eq. 5's error on 200k outer points at d 3, 5, 10 is within 3 s.e. of scipy's; inner points never err", () => {
  for (const dim of [3, 5, 10]) {
    const expected = REFERENCE.cases.find((c) => c.dim === dim && c.r2 === 10)!.outer_error;
    const { x, y } = sampleSpheres(400_000, dim, Rng.derive(1, "eq5", dim));
    const predicted = misalignedClassifier(x, dim);
    let outer = 0, outerErrors = 0, innerErrors = 0;
    for (let i = 0; i < y.length; i++) {
      if (y[i] === 1) {
        outer++;
        if (predicted[i] !== 1) outerErrors++;
      } else if (predicted[i] !== 0) innerErrors++;
    }
    assertEquals(outer, 200_000);
    assertEquals(innerErrors, 0);
    const rate = outerErrors / outer, se = Math.sqrt(expected * (1 - expected) / outer);
    assert(Math.abs(rate - expected) <= 3 * se, `d ${dim}: measured ${rate}, scipy ${expected}, 3 s.e. ${3 * se}`);
  }
});

Deno.test("the analytic attack keeps D's decision, puts every inner point at norm R₂ and the oracle says outer", () => {
  for (const [dim, radii] of [[100, {}], [3, {}], [20, { r1: 2, r2: 3 }]] as [number, SphereRadii][]) {
    const { r2 = 10 } = radii;
    const { x, y } = sampleSpheres(2000, dim, Rng.derive(2, "attack", dim), radii);
    const shifted = analyticShift(x, y, dim, radii);
    const before = misalignedClassifier(x, dim, radii), after = misalignedClassifier(shifted, dim, radii);
    const oracle = maxMarginClassifier(shifted, dim, radii);
    const shiftedNorms = norms(shifted, dim);
    for (let i = 0; i < y.length; i++) {
      assertEquals(after[i], before[i]);
      assertEquals(oracle[i], 1); // every attacked point, and every outer point, is outer to the oracle
      if (y[i] === 0) {
        assertAlmostEquals(shiftedNorms[i] / r2, 1, 1e-6);
        // Only x_d moved, keeping its sign.
        for (let k = 0; k + 1 < dim; k++) assertEquals(shifted[i * dim + k], x[i * dim + k]);
        assert(Math.sign(shifted[i * dim + dim - 1]) === (x[i * dim + dim - 1] < 0 ? -1 : 1));
      } else {
        for (let k = 0; k < dim; k++) assertEquals(shifted[i * dim + k], x[i * dim + k]);
      }
    }
    // d 100: Example 6's numbers, clean accuracy 1 and shifted accuracy 0.5.
    if (dim === 100) {
      assertEquals(before.every((v, i) => v === y[i]), true);
      assertEquals(after.filter((v) => v === 1).length, 1000);
    }
  }
});

Deno.test("an inner-labelled row beyond R₂ in its first d − 1 coordinates gets x_d = 0", () => {
  const x = Float32Array.from([11, 0, 3, 0.5, 0.5, -0.5]);
  const shifted = analyticShift(x, Int32Array.from([0, 0]), 3);
  assertEquals([...shifted.slice(0, 3)], [11, 0, 0]);
  assertAlmostEquals(Math.hypot(...shifted.slice(3)), 10, 1e-5);
  assert(shifted[5] < 0);
  assertEquals([...misalignedClassifier(shifted, 3)], [1, 0]);
  assertEquals([...maxMarginClassifier(shifted, 3)], [1, 1]);
});

Deno.test("bad settings are usage errors naming what is allowed", () => {
  const rng = new Rng(0);
  assertThrows(() => sampleSpheres(10, 1, rng), UsageError, "≥ 2");
  assertThrows(() => sampleSpheres(10, 3, rng, { r1: 0 }), UsageError, "r1");
  assertThrows(() => sampleSpheres(10, 3, rng, { r1: -1 }), UsageError, "r1");
  assertThrows(() => sampleSpheres(10, 3, rng, { r1: 10, r2: 10 }), UsageError, "0 < r1 < r2");
  assertThrows(() => sampleSpheres(10, 3, rng, { r1: 12 }), UsageError, "0 < r1 < r2");
  assertThrows(() => sampleSpheres(9, 3, rng), UsageError, "even");
  assertThrows(() => outerErrorClosedForm(1), UsageError, "≥ 2");
  assertThrows(() => outerErrorClosedForm(3, 2, 1), UsageError, "0 < r1 < r2");
  assertThrows(() => misalignedClassifier(new Float32Array(7), 3), UsageError, "whole rows");
  assertThrows(() => analyticShift(new Float32Array(6), new Int32Array(3), 3), UsageError, "labels");
});
