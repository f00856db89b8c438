import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import type { Matrix } from "../../lib/metrics/mcc.ts";
import { irs } from "../../lib/metrics/irs.ts";
import { histogramDiscretize } from "../../lib/metrics/discrete.ts";
import { spearmanAbsMatrix, udr } from "../../lib/metrics/udr.ts";
import { downstreamTask, LOGISTIC_CV_CS, stratifiedFolds } from "../../lib/metrics/downstream.ts";
import { factorGrid, permutedGridCopy } from "./helpers.ts";

const matrix = (rows: number, cols: number, f: (r: number, c: number) => number): Matrix => ({
  data: Float64Array.from({ length: rows * cols }, (_, i) => f(Math.floor(i / cols), i % cols)),
  rows,
  cols,
});

// Oracle values below come from disentanglement_lib's scalable_disentanglement_score,
// histogram discretizer and relative_strength_disentanglement run on the same arrays in numpy/scipy.
const irsFactors = matrix(30, 3, (i, c) => [i % 3, Math.floor(i / 3) % 4, (i * 7) % 25][c]);
const irsCodes = matrix(30, 4, (i, c) => [Math.sin(i), (i % 3) + 0.1 * Math.cos(3 * i), (i * i) % 7, 2][c]);

Deno.test("IRS matches disentanglement_lib's scalable_disentanglement_score", () => {
  const exact = irs(irsCodes, irsFactors);
  assertAlmostEquals(exact.avg_score, 0.9218479575643939, 1e-12);
  [0.99076435, 0.90733975, 0.8952381, 0].forEach((v, j) =>
    assertAlmostEquals(exact.disentanglement_scores[j], v, 1e-8)
  );
  assertEquals(exact.num_active_dims, 3);
  assertEquals(exact.active, [true, true, true, false]);
  assertAlmostEquals(irs(irsCodes, irsFactors, { diffQuantile: 1 }).avg_score, 0.9217258678539091, 1e-12);
  const binned = irs(irsCodes, irsFactors, { numBins: 5 });
  assertAlmostEquals(binned.avg_score, 0.42467160773977186, 1e-12);
  const column = Float64Array.from({ length: 30 }, (_, i) => (i * 7) % 25);
  assertEquals(
    Array.from(histogramDiscretize({ data: column, rows: 30, cols: 1 }, 5)),
    [1, 2, 3, 5, 1, 3, 4, 5, 2, 3, 5, 1, 2, 4, 5, 2, 3, 4, 1, 2, 4, 5, 1, 3, 4, 1, 2, 3, 5, 1],
  );
});

Deno.test("IRS: a permuted rescaled copy of the factors scores 1, noise codes near 0, constants 0", () => {
  const { factors, codes } = permutedGridCopy();
  const copy = irs(codes, factors);
  assert(copy.avg_score >= 0.9, `copy ${copy.avg_score}`);
  assertAlmostEquals(copy.avg_score, 1, 1e-12);
  const rng = new Rng(11);
  const noise = matrix(factors.rows, 5, () => rng.uniform());
  const score = irs(noise, factors).avg_score;
  assert(score >= 0 && score <= 0.1, `noise ${score}`);
  assertEquals(irs(matrix(10, 2, () => 3), matrix(10, 1, (r) => r % 2)), {
    avg_score: 0,
    disentanglement_scores: [0, 0],
    num_active_dims: 0,
    active: [false, false],
  });
  assertThrows(() => irs(codes, matrix(3, 1, () => 0)), Error, "row counts differ");
  assertThrows(() => irs(codes, factors, { diffQuantile: 1.5 }), Error, "diffQuantile");
});

Deno.test("UDR matches disentanglement_lib's relative_strength_disentanglement on Spearman correlations", () => {
  const a = matrix(20, 3, (i, c) => [Math.sin(i), Math.cos(2 * i), i % 5][c]);
  const b = matrix(
    20,
    4,
    (i, c) => [(i % 5) * 2 + 0.01 * i, Math.sin(i) + 0.3 * Math.cos(2 * i), (i * 7) % 11, -Math.cos(2 * i)][c],
  );
  const r = spearmanAbsMatrix(a, b);
  assertAlmostEquals(r[0][1], 0.9849624060150375, 1e-12);
  assertAlmostEquals(r[2][0], 0.9810229431759453, 1e-12);
  assertAlmostEquals(r[1][3], 1, 1e-12);
  assertAlmostEquals(udr(a, b), 0.7163118259261609, 1e-12);
  assertAlmostEquals(udr(a, b, { kl: { a: [0.5, 0.001, 0.2], b: [1, 0.3, 0.005, 0.02] } }), 0.6717445374907359, 1e-12);
  assertEquals(udr(a, b, { kl: { a: [0, 0, 0], b: [1, 1, 1, 1] } }), 0);
  assertThrows(() => udr(a, b, { kl: { a: [1], b: [1, 1, 1, 1] } }), Error, "kl.a");
});

Deno.test("UDR of a model with a permuted, rescaled copy of itself is 1; of independent noise near 0", () => {
  // A full factor grid has exactly uncorrelated columns, so R is a permutation matrix.
  const { codes, permutation } = permutedGridCopy();
  const copy = matrix(codes.rows, 4, (r, c) => Math.exp(codes.data[r * 4 + permutation[c]]) * (c % 2 ? -1 : 2));
  assertAlmostEquals(udr(codes, copy), 1, 1e-9);
  assertAlmostEquals(udr(codes, copy, { normalization: "paper" }), 1, 1e-9);
  const rng = new Rng(12);
  const noiseA = matrix(2000, 6, () => rng.normal()), noiseB = matrix(2000, 6, () => rng.normal());
  const score = udr(noiseA, noiseB);
  assert(score >= 0 && score <= 0.2, `noise ${score}`);
});

/** Pixel codes (factor / (size − 1)) and factors of `n` uniform rows of a [4, 5, 6] grid. */
function identityData(n: number, rng: Rng): { codes: Matrix; factors: Matrix } {
  const sizes = [4, 5, 6];
  const factors = matrix(n, 3, (_, c) => rng.int(sizes[c]));
  return { factors, codes: matrix(n, 3, (r, c) => factors.data[r * 3 + c] / (sizes[c] - 1)) };
}

Deno.test("downstream task: the identity representation predicts every factor; sizes beyond the data are skipped", () => {
  const rng = new Rng(13);
  const train = identityData(1000, rng), test = identityData(500, rng);
  const result = downstreamTask(train.codes, train.factors, test.codes, test.factors, { sizes: [10, 1000, 10000] });
  assertEquals(result.skipped, [10000]);
  assertEquals(result.scores.map((s) => s.size), [10, 1000]);
  const [tiny, large] = result.scores;
  assert(large.test_accuracy >= 0.9, `logistic test ${large.test_accuracy}`);
  assert(large.train_accuracy >= 0.9, `logistic train ${large.train_accuracy}`);
  assert(tiny.test_accuracy >= 0 && tiny.test_accuracy <= 1);
  assertEquals(large.per_factor_test.length, 3);
  const gbt = downstreamTask(train.codes, train.factors, test.codes, test.factors, { sizes: [1000], predictor: "gbt" });
  assertAlmostEquals(gbt.scores[0].test_accuracy, 1, 1e-12);
});

Deno.test("downstream task handles single-class subsets and validates inputs", () => {
  const codes = matrix(6, 2, (r, c) => r + c);
  const factors = matrix(6, 2, (r, c) => (c === 0 ? 3 : r % 2));
  const result = downstreamTask(codes, factors, codes, factors, { sizes: [1, 6] });
  // Factor 0 is constant: predicted exactly; factor 1 alternates and has too few rows for CV (C = 1).
  assertEquals(result.scores[0].per_factor_train[0], 1);
  assertEquals(result.scores[0].per_factor_test[0], 1);
  assertEquals(result.scores[0].per_factor_test[1], 0.5);
  assertThrows(() => downstreamTask(codes, factors, codes, matrix(6, 2, () => 0.5)), Error, "integers");
  assertThrows(() => downstreamTask(codes, factors, codes, factors, { sizes: [0] }), Error, "sizes");
  assertThrows(
    () => downstreamTask(codes, factors, codes, factors, { predictor: "svm" as "gbt" }),
    Error,
    "unknown predictor",
  );
});

Deno.test("stratified folds follow sklearn's StratifiedKFold; the C grid is logspace(-4, 4, 10)", () => {
  assertEquals(Array.from(stratifiedFolds([1, 1, 1, 0, 0, 0, 0, 0, 0, 0], 3)), [0, 1, 2, 0, 0, 0, 1, 1, 2, 2]);
  const y = Array.from(factorGrid([7, 3]).data).filter((_, i) => i % 2 === 1);
  const folds = stratifiedFolds(y, 5);
  for (let f = 0; f < 5; f++) {
    for (const label of [0, 1, 2]) {
      const count = y.filter((v, i) => v === label && folds[i] === f).length;
      assert(count >= 1 && count <= 2, `fold ${f} class ${label}: ${count}`);
    }
  }
  assertEquals(LOGISTIC_CV_CS.length, 10);
  assertAlmostEquals(LOGISTIC_CV_CS[0], 1e-4, 1e-18);
  assertAlmostEquals(LOGISTIC_CV_CS[9], 1e4, 1e-8);
  assertAlmostEquals(LOGISTIC_CV_CS[4], 10 ** (-4 + 32 / 9), 1e-12);
});
