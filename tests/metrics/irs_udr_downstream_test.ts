import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { irs } from "../../lib/metrics/irs.ts";
import { histogramDiscretize } from "../../lib/metrics/discrete.ts";
import { spearmanAbsMatrix, udr } from "../../lib/metrics/udr.ts";
import { downstreamTask, LOGISTIC_CV_CS, stratifiedFolds } from "../../lib/metrics/downstream.ts";
import { factorGrid, fromRows, permutedGridCopy, REFERENCE } from "./helpers.ts";

const matrix = (rows: number, cols: number, f: (r: number, c: number) => number): Matrix => ({
  data: Float64Array.from({ length: rows * cols }, (_, i) => f(Math.floor(i / cols), i % cols)),
  rows,
  cols,
});

/** tests/metrics/fixtures/reference_irs_udr.json, written by make_irs_udr_reference.py. */
interface IrsCase {
  name: string;
  options: { diff_quantile?: number; num_bins?: number };
  avg_score: number;
  active: boolean[];
  /** disentanglement_lib's per-code scores, of the active codes only. */
  disentanglement_scores_active: number[];
}
const REFERENCE_IRS_UDR: {
  irs: {
    small: { codes: number[][]; factors: number[][]; cases: IrsCase[]; factor_2_bins_5: number[] };
    reference: { dataset: string; cases: IrsCase[] }[];
  };
  udr: {
    small: {
      a: number[][];
      b: number[][];
      spearman_abs: number[][];
      all: { udr: number; udr_paper: number };
      kl: { a: number[]; b: number[]; udr: number; udr_paper: number };
    };
    reference: { a: string; b: string; spearman_abs: number[][]; udr: number; udr_paper: number };
  };
  stratified_folds: { y: number[]; n_splits: number; fold: number[] }[];
  logistic_cv_cs: number[];
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/reference_irs_udr.json", import.meta.url)));

// numpy and the port agree on every IRS and UDR score to a few roundings (measured ≤ 4.5e-16).
const TOLERANCE = 1e-15;

function assertIrsMatches(codes: Matrix, factors: Matrix, expected: IrsCase, label: string): void {
  const { diff_quantile: diffQuantile, num_bins: numBins } = expected.options;
  const result = irs(codes, factors, { diffQuantile, numBins });
  assertAlmostEquals(result.avg_score, expected.avg_score, TOLERANCE, `${label}: avg_score`);
  assertEquals(result.active, expected.active, `${label}: active`);
  assertEquals(result.num_active_dims, expected.disentanglement_scores_active.length);
  // disentanglement_lib drops constant codes; here they stay in place with score 0.
  const active = result.disentanglement_scores.filter((_, j) => result.active[j]);
  active.forEach((v, j) =>
    assertAlmostEquals(v, expected.disentanglement_scores_active[j], TOLERANCE, `${label}: ${j}`)
  );
  result.disentanglement_scores.forEach((v, j) => {
    if (!result.active[j]) assertEquals(v, 0, `${label}: constant code ${j}`);
  });
}

Deno.test("IRS matches disentanglement_lib's scalable_disentanglement_score", () => {
  const { codes, factors, cases, factor_2_bins_5 } = REFERENCE_IRS_UDR.irs.small;
  // A constant code; exact factor groups, the paper's max (quantile 1) and histogram-binned factors.
  for (const expected of cases) assertIrsMatches(fromRows(codes), fromRows(factors), expected, expected.name);
  assertEquals(Array.from(histogramDiscretize(fromRows(factors.map((row) => [row[2]])), 5)), factor_2_bins_5);
});

for (const { dataset, cases } of REFERENCE_IRS_UDR.irs.reference) {
  Deno.test(`IRS matches disentanglement_lib on ${dataset}, exact and binned factors`, () => {
    const d = REFERENCE.find((r) => r.name === dataset)!;
    for (const expected of cases) {
      assertIrsMatches(fromRows(d.train_codes), fromRows(d.train_factors), expected, `${dataset} ${expected.name}`);
    }
  });
}

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

function assertMatrixMatches(actual: number[][], expected: number[][]): void {
  assertEquals(actual.length, expected.length);
  actual.forEach((row, i) => row.forEach((v, j) => assertAlmostEquals(v, expected[i][j], TOLERANCE, `[${i}][${j}]`)));
}

Deno.test("UDR matches disentanglement_lib's relative_strength_disentanglement on Spearman correlations", () => {
  const { a: rowsA, b: rowsB, spearman_abs, all, kl } = REFERENCE_IRS_UDR.udr.small;
  const a = fromRows(rowsA), b = fromRows(rowsB);
  // Ties, an exact monotone match (|ρ| = 1) and unequal code counts.
  assertMatrixMatches(spearmanAbsMatrix(a, b), spearman_abs);
  assertAlmostEquals(udr(a, b), all.udr, TOLERANCE);
  assertAlmostEquals(udr(a, b, { normalization: "paper" }), all.udr_paper, TOLERANCE);
  assertAlmostEquals(udr(a, b, { kl }), kl.udr, TOLERANCE);
  assertAlmostEquals(udr(a, b, { kl, normalization: "paper" }), kl.udr_paper, TOLERANCE);
  assertEquals(udr(a, b, { kl: { a: [0, 0, 0], b: [1, 1, 1, 1] } }), 0);
  assertThrows(() => udr(a, b, { kl: { a: [1], b: [1, 1, 1, 1] } }), Error, "kl.a");
});

Deno.test("UDR matches disentanglement_lib on two unrelated 600-row models", () => {
  const { a, b, spearman_abs, udr: expected, udr_paper } = REFERENCE_IRS_UDR.udr.reference;
  const codesOf = (name: string) => fromRows(REFERENCE.find((r) => r.name === name)!.train_codes);
  const codesA = codesOf(a), codesB = codesOf(b);
  assertMatrixMatches(spearmanAbsMatrix(codesA, codesB), spearman_abs);
  assertAlmostEquals(udr(codesA, codesB), expected, TOLERANCE);
  assertAlmostEquals(udr(codesA, codesB, { normalization: "paper" }), udr_paper, TOLERANCE);
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
  for (const { y, n_splits, fold } of REFERENCE_IRS_UDR.stratified_folds) {
    assertEquals(Array.from(stratifiedFolds(y, n_splits)), fold, `${n_splits} folds of [${y}]`);
  }
  // The second reference case is this grid column: at most one row per class more in any fold.
  const y = Array.from(factorGrid([7, 3]).data).filter((_, i) => i % 2 === 1);
  const folds = stratifiedFolds(y, 5);
  for (let f = 0; f < 5; f++) {
    for (const label of [0, 1, 2]) {
      const count = y.filter((v, i) => v === label && folds[i] === f).length;
      assert(count >= 1 && count <= 2, `fold ${f} class ${label}: ${count}`);
    }
  }
  assertEquals(LOGISTIC_CV_CS.length, 10);
  // Exponents −4 + 8i/9 here and −4 + i·(8/9) in np.linspace can differ by an ulp, which 10^x
  // scales to a relative 2.3e-15 (measured; C[7]).
  LOGISTIC_CV_CS.forEach((c, i) => assertAlmostEquals(c, REFERENCE_IRS_UDR.logistic_cv_cs[i], 5e-15 * c, `C[${i}]`));
});
