import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { makeSplit, oodFactor, type Split } from "../../lib/data/splits.ts";
import { errorCorrelations, gridVariance, oodAnalysis, r2Scores } from "../../lib/metrics/r2.ts";

const matrix = (data: number[], cols: number): Matrix => ({ data, rows: data.length / cols, cols });

/** |a − b| within 1e-9 of |b| (or 1e-12 absolute near 0). */
function close(actual: number | null, expected: number | null, what: string) {
  if (expected === null) return assertEquals(actual, null, what);
  assert(actual !== null, `${what}: null, expected ${expected}`);
  assertAlmostEquals(actual, expected, Math.max(1e-9 * Math.abs(expected), 1e-12), what);
}

Deno.test("the full-grid variance of index/(n − 1) is (n + 1)/(12(n − 1)): 0.25, 1/6, 0.0876068 for n = 2, 3, 40", () => {
  assertAlmostEquals(gridVariance(2), 0.25, 1e-15);
  assertAlmostEquals(gridVariance(3), 1 / 6, 1e-15);
  assertAlmostEquals(gridVariance(40), 0.0876068, 1e-7);
  // Against the definition: the population variance of 0, 1/39, …, 1.
  const values = Array.from({ length: 40 }, (_, i) => i / 39);
  const mean = values.reduce((a, b) => a + b) / 40;
  assertAlmostEquals(gridVariance(40), values.reduce((a, v) => a + (v - mean) ** 2, 0) / 40, 1e-15);
  assertThrows(() => gridVariance(1), Error, "at least 2 values");
});

Deno.test("reference test_rsquared: perfect prediction scores 1, the grid mean 0, zeros below 0", () => {
  // One factor of 10 values, each seen once: the scored points are the grid, as in the reference test.
  const sizes = [10];
  const factors = Int32Array.from({ length: 10 }, (_, i) => i);
  const truth = Array.from(factors, (i) => i / 9);
  const perfect = r2Scores(matrix(truth, 1), factors, sizes);
  assertEquals(perfect.r2, 1);
  assertEquals(perfect.mse, [0]);
  assertAlmostEquals(r2Scores(matrix(truth.map(() => 0.5), 1), factors, sizes).r2, 0, 1e-12);
  assert(r2Scores(matrix(truth.map(() => 0), 1), factors, sizes).r2 < 0);
});

Deno.test("R² averages all factors, shape included, unclipped; MSE is in normalized units", () => {
  const sizes = [3, 2];
  const factors = Int32Array.from([0, 0, 1, 1, 2, 0]);
  // Factor 0 predicted exactly; factor 1 always wrong by 1 (MSE 1, variance 0.25: R² = −3).
  const result = r2Scores(matrix([0, 1, 0.5, 0, 1, 1], 2), factors, sizes);
  assertEquals(result.perFactor, [1, -3]);
  assertEquals(result.mse, [0, 1]);
  assertEquals(result.r2, -1);
});

Deno.test("r2Scores refuses mismatched shapes, factors outside the grid and non-finite predictions", () => {
  const factors = Int32Array.from([0, 1]);
  assertThrows(() => r2Scores(matrix([0, 0, 0], 3), factors, [2, 2]), Error, "3 columns");
  assertThrows(() => r2Scores(matrix([0, 0, 0, 0], 2), factors, [2, 2]), Error, "expected 2 rows × 2 factors");
  assertThrows(() => r2Scores(matrix([0, 0], 2), Int32Array.from([0, 2]), [2, 2]), Error, "outside 0..1");
  assertThrows(() => r2Scores(matrix([0, NaN], 2), factors, [2, 2]), Error, "non-finite");
});

const reference = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_r2.json", import.meta.url)));
const referenceSplit: Split = {
  name: "interpolation",
  sizes: reference.sizes,
  train: Int32Array.from(reference.train),
  test: Int32Array.from(reference.test),
};
const referenceFactors = Int32Array.from(reference.factors);
const k = reference.sizes.length;

Deno.test("r2Scores matches numpy on random predictions (fixtures/make_r2_reference.py)", () => {
  const result = r2Scores(matrix(reference.pred_a, k), referenceFactors, reference.sizes);
  close(result.r2, reference.r2, "r2");
  result.perFactor.forEach((v, j) => close(v, reference.per_factor[j], `perFactor ${j}`));
  result.mse.forEach((v, j) => close(v, reference.mse[j], `mse ${j}`));
});

Deno.test("the OOD factor of each row and the one-OOD analysis match numpy", () => {
  reference.ood_factor.forEach((expected: number, r: number) => {
    let index = 0;
    for (let j = 0; j < k; j++) index = index * reference.sizes[j] + referenceFactors[r * k + j];
    assertEquals(oodFactor(referenceSplit, index), expected, `row ${r}`);
  });
  const result = oodAnalysis(matrix(reference.pred_a, k), referenceFactors, referenceSplit);
  assertEquals(result.n, reference.ood.n);
  for (const key of ["r2Ood", "r2Id", "ratioMedian", "ratioInUnit"] as const) {
    close(result[key], reference.ood[key], key);
  }
  for (const key of ["oodPerFactor", "idPerFactor"] as const) {
    result[key].forEach((v, j) => close(v, reference.ood[key][j], `${key} ${j}`));
  }
});

Deno.test("error correlations between two models and with the truth match numpy", () => {
  const result = errorCorrelations(
    matrix(reference.pred_a, k),
    matrix(reference.pred_b, k),
    referenceFactors,
    referenceSplit,
  );
  assertEquals(result.n, reference.correlations.n);
  for (const key of ["between", "truthA", "truthB"] as const) close(result[key], reference.correlations[key], key);
});

Deno.test("predicting the training mean on the OOD factor gives ratio 0; the truth gives ratio 1", () => {
  const split = makeSplit("shapes3d", "extrapolation");
  // Two one-OOD points (floor hue 8 and 9, everything else in train) and a train point, which is ignored.
  const factors = Int32Array.from([8, 0, 0, 0, 0, 0, 9, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
  const trainMeanOfFloor = 3.5 / 9; // train floor hues are 0..7
  const truth = Array.from(factors, (v, i) => v / ([10, 10, 10, 8, 4, 15][i % 6] - 1));
  const atMean = truth.map((v, i) => i % 6 === 0 && i < 12 ? trainMeanOfFloor : v);
  const towardsMean = oodAnalysis(matrix(atMean, 6), factors, split);
  assertEquals(towardsMean.n, 2);
  assertEquals(towardsMean.oodPerFactor.slice(1), [null, null, null, null, null]);
  assertEquals(towardsMean.ratioMedian, 0);
  assertEquals(towardsMean.ratioInUnit, 1);
  assertEquals(towardsMean.r2Id, 1);
  const exact = oodAnalysis(matrix(truth, 6), factors, split);
  assertAlmostEquals(exact.ratioMedian!, 1, 1e-12);
  assertEquals(exact.r2Ood, 1);
});

Deno.test("a composition split has no one-OOD points: the analysis is empty, not an error", () => {
  const split = makeSplit("dsprites", "composition");
  const factors = Int32Array.from([0, 0, 39, 31, 31]);
  const result = oodAnalysis(matrix([0, 0, 1, 1, 1], 5), factors, split);
  assertEquals(result, {
    r2Ood: null,
    r2Id: null,
    oodPerFactor: [null, null, null, null, null],
    idPerFactor: [null, null, null, null, null],
    ratioMedian: null,
    ratioInUnit: null,
    n: 0,
  });
  assertThrows(
    () => errorCorrelations(matrix([0, 0, 1, 1, 1], 5), matrix([0, 0, 1, 1, 1], 5), factors, split),
    Error,
    "at least 2 rows",
  );
});
