/**
 * DCI disentanglement, completeness and informativeness (Eastwood & Williams,
 * 2018) as disentanglement_lib computes it: one predictor per ground-truth
 * factor from all codes gives a codes × factors importance matrix R.
 * Disentanglement weighs each code's 1 − entropy of its importance over
 * factors; completeness each factor's 1 − entropy over codes; informativeness
 * is the predictors' mean accuracy (R² for the Lasso variant).
 *
 * @module
 */
import { checkIntegerLabels, checkSplit, column, type Matrix } from "../core/matrix.ts";
import { fitGradientBoosting, type GradientBoostingOptions } from "../ml/gradient_boosting.ts";
import { fitLasso } from "../ml/lasso.ts";
import { standardizeByTrain } from "../ml/linalg.ts";

const factorColumn = (m: Matrix, j: number) => column(m.data, m.rows, m.cols, j);

/** Options of {@linkcode dci}. */
export interface DciOptions {
  /**
   * "gbt" (default): disentanglement_lib's gradient-boosted trees classifier per factor, importance
   * = feature importances, informativeness = accuracy. "lasso": a Lasso regression of the factor
   * value on standardised codes, importance = |coefficients|, informativeness = R².
   */
  method?: "gbt" | "lasso";
  /** Lasso penalty, default 0.01. */
  alpha?: number;
  /** Hyperparameters of the gradient-boosted trees (sklearn's defaults otherwise). */
  gradientBoosting?: GradientBoostingOptions;
}

/** The result of {@linkcode dci}. */
export interface DciResult {
  /** Disentanglement D. */
  disentanglement: number;
  /** Completeness C. */
  completeness: number;
  /** Mean over factors of the training accuracy (or R²). */
  informativeness_train: number;
  /** Mean over factors of the test accuracy (or R²). */
  informativeness_test: number;
  /** `importance[code][factor]`. */
  importance: number[][];
}

/** scipy.stats.entropy of the non-negative weights `p` (normalised here) in the given base. */
function entropy(p: number[], base: number): number {
  const total = p.reduce((s, v) => s + v, 0);
  let h = 0;
  for (const v of p) {
    const q = v / total;
    if (q > 0) h -= q * Math.log(q);
  }
  return h / Math.log(base);
}

function checkImportance(importance: number[][]): void {
  if (importance.length === 0 || importance[0].length === 0) throw new Error("importance matrix is empty");
  const cols = importance[0].length;
  for (const row of importance) {
    if (row.length !== cols) throw new Error("importance matrix rows have different lengths");
    for (const v of row) {
      if (!(v >= 0 && Number.isFinite(v))) throw new Error(`importance must be finite and ≥ 0, got ${v}`);
    }
  }
}

/** Weighted sum of per-item scores with weights proportional to `sums` (all ones if the matrix sums to 0). */
function weighted(scores: number[], sums: number[]): number {
  const total = sums.reduce((s, v) => s + v, 0);
  // disentanglement_lib replaces an all-zero matrix by ones, i.e. uniform weights.
  const weights = total === 0 ? sums.map(() => 1 / sums.length) : sums.map((v) => v / total);
  return scores.reduce((s, v, i) => s + v * weights[i], 0);
}

/**
 * Disentanglement of an importance matrix `[codes][factors]`: Σᵢ ρᵢ(1 − Hᵢ), with Hᵢ
 * the entropy (base = number of factors) of code i's importances + 1e-11 and ρᵢ
 * its share of the total importance. With a single factor the base-1 entropy is
 * 0/0 and the score NaN, as in disentanglement_lib.
 */
export function disentanglementScore(importance: number[][]): number {
  checkImportance(importance);
  const factors = importance[0].length;
  const perCode = importance.map((row) => 1 - entropy(row.map((v) => v + 1e-11), factors));
  return weighted(perCode, importance.map((row) => row.reduce((s, v) => s + v, 0)));
}

/**
 * Completeness of an importance matrix `[codes][factors]`: Σⱼ ρⱼ(1 − Hⱼ), with Hⱼ the
 * entropy (base = number of codes) of factor j's importances + 1e-11 and ρⱼ its
 * share of the total importance (NaN with a single code, as in disentanglement_lib).
 */
export function completenessScore(importance: number[][]): number {
  checkImportance(importance);
  const codes = importance.length;
  const factors = importance[0].length;
  const columns = Array.from({ length: factors }, (_, j) => importance.map((row) => row[j]));
  const perFactor = columns.map((column) => 1 - entropy(column.map((v) => v + 1e-11), codes));
  return weighted(perFactor, columns.map((column) => column.reduce((s, v) => s + v, 0)));
}

/**
 * DCI scores of codes `[n, codes]` against discrete ground-truth factors
 * `[n, factors]` (integer labels), fitting on the training rows and reporting
 * informativeness on both splits.
 */
export function dci(
  trainCodes: Matrix,
  trainFactors: Matrix,
  testCodes: Matrix,
  testFactors: Matrix,
  options: DciOptions = {},
): DciResult {
  const method = options.method ?? "gbt";
  if (method !== "gbt" && method !== "lasso") throw new Error(`unknown DCI method "${method}"`);
  checkSplit({ trainCodes, trainFactors, testCodes, testFactors }, 2);
  if (method === "gbt") checkIntegerLabels({ trainFactors, testFactors });

  const codes = trainCodes.cols, factors = trainFactors.cols;
  const importance = Array.from({ length: codes }, () => new Array<number>(factors).fill(0));
  let trainScore = 0, testScore = 0;
  const [trainX, testX] = method === "lasso" ? standardizeByTrain(trainCodes, testCodes) : [trainCodes, testCodes];
  for (let j = 0; j < factors; j++) {
    const yTrain = factorColumn(trainFactors, j), yTest = factorColumn(testFactors, j);
    if (method === "gbt") {
      const model = fitGradientBoosting(trainX, Int32Array.from(yTrain), options.gradientBoosting);
      for (let i = 0; i < codes; i++) importance[i][j] = Math.abs(model.featureImportances[i]);
      trainScore += model.accuracy(trainX, yTrain);
      testScore += model.accuracy(testX, yTest);
    } else {
      const model = fitLasso(trainX, yTrain, { alpha: options.alpha ?? 0.01 });
      for (let i = 0; i < codes; i++) importance[i][j] = Math.abs(model.coef[i]);
      trainScore += model.r2(trainX, yTrain);
      testScore += model.r2(testX, yTest);
    }
  }
  return {
    disentanglement: disentanglementScore(importance),
    completeness: completenessScore(importance),
    informativeness_train: trainScore / factors,
    informativeness_test: testScore / factors,
    importance,
  };
}
