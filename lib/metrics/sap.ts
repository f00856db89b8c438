/**
 * Separated Attribute Predictability (Kumar et al. 2018) as
 * disentanglement_lib's `sap_score.py` computes it: a score matrix of how well
 * each single code predicts each factor, then per factor the gap between its
 * two best codes, averaged.
 *
 * @module
 */
import { checkSplit, column, type Matrix, meanSd } from "../core/matrix.ts";
import { fitLinearSvm1d } from "../ml/linear_svm.ts";

/** Options of {@linkcode sap}. */
export interface SapOptions {
  /** Score by squared correlation (continuous factors) instead of SVM accuracy. */
  continuous?: boolean;
}

/** The result of {@linkcode sap}. */
export interface SapResult {
  /** The SAP score. */
  sap: number;
  /** Score matrix `[codes][factors]`. */
  scores: number[][];
}

/** cov(a, b)² / (var a · var b) with ddof = 1; 0 when var a ≤ 1e-12 (or var b is 0). */
function squaredCorrelation(a: Float64Array, b: Float64Array): number {
  const n = a.length;
  const { mean: ma, variance: varA } = meanSd(a);
  const { mean: mb, variance: varB } = meanSd(b);
  let cab = 0;
  for (let i = 0; i < n; i++) cab += (a[i] - ma) * (b[i] - mb);
  // disentanglement_lib only guards var a; a constant factor would give 0/0 there.
  if (!(varA > 1e-12) || varB === 0) return 0;
  return (cab / (n - 1)) ** 2 / (varA * varB);
}

/**
 * SAP of train codes `[n, d]` and factors `[n, f]`. Discrete (default): the
 * score of (code i, factor j) is the test accuracy of a
 * `LinearSVC(C=0.01, class_weight="balanced")` trained on code i alone;
 * continuous: the squared correlation on the train data. With a single code
 * the runner-up score is taken as 0.
 */
export function sap(
  trainCodes: Matrix,
  trainFactors: Matrix,
  testCodes: Matrix,
  testFactors: Matrix,
  { continuous = false }: SapOptions = {},
): SapResult {
  checkSplit({ trainCodes, trainFactors, testCodes, testFactors }, 2);
  const n = trainCodes.rows;
  const factorsTrain = Array.from(
    { length: trainFactors.cols },
    (_, j) => column(trainFactors.data, n, trainFactors.cols, j),
  );
  const factorsTest = Array.from(
    { length: testFactors.cols },
    (_, j) => column(testFactors.data, testFactors.rows, testFactors.cols, j),
  );
  const scores = Array.from({ length: trainCodes.cols }, (_, i) => {
    const code = column(trainCodes.data, n, trainCodes.cols, i);
    if (continuous) return factorsTrain.map((y) => squaredCorrelation(code, y));
    const codeTest = column(testCodes.data, testCodes.rows, testCodes.cols, i);
    return factorsTrain.map((y, j) => {
      const predicted = fitLinearSvm1d(code, y, { c: 0.01, classWeight: "balanced" }).predict(codeTest);
      let correct = 0;
      for (let r = 0; r < predicted.length; r++) if (predicted[r] === factorsTest[j][r]) correct++;
      return correct / predicted.length;
    });
  });
  const gaps = factorsTrain.map((_, j) => {
    const sorted = scores.map((row) => row[j]).sort((a, b) => b - a);
    return sorted[0] - (sorted[1] ?? 0);
  });
  return { sap: gaps.reduce((s, v) => s + v, 0) / gaps.length, scores };
}
