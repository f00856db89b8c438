/**
 * Modularity and explicitness (Ridgeway & Mozer 2018) as disentanglement_lib's
 * `modularity_explicitness.py` computes them. Modularity scores how much each
 * code concentrates its (squared) mutual information on a single factor;
 * explicitness is the ROC-AUC of a logistic regression from all codes to each
 * factor.
 *
 * @module
 */
import { checkSplit, column, gatherRows, type Matrix } from "../core/matrix.ts";
import { histogramDiscretize, mutualInfoMatrix } from "./discrete.ts";
import { fitLogisticRegression } from "../ml/logistic_regression.ts";
import { standardizeByTrain } from "../ml/linalg.ts";
import { macroRocAuc } from "../ml/roc_auc.ts";

/**
 * Modularity of a mutual information matrix `m` `[codes][factors]`: per code
 * i with s = m_i², 1 − (Σ s − max s) / (max s · (F − 1)), or 0 when max s is
 * 0; averaged over codes.
 */
export function modularity(m: number[][]): number {
  if (m.length === 0) throw new Error("modularity needs at least 1 code");
  const factors = m[0].length;
  const scores = m.map((row, i) => {
    if (row.length !== factors) throw new Error(`row ${i} has ${row.length} factors, expected ${factors}`);
    const squared = row.map((v) => v * v);
    const max = Math.max(...squared);
    if (max === 0) return 0;
    const delta = (squared.reduce((s, v) => s + v, 0) - max) / (max * (factors - 1));
    return 1 - delta;
  });
  return scores.reduce((s, v) => s + v, 0) / scores.length;
}

/** Options of {@linkcode modularityExplicitness}. */
export interface ModularityOptions {
  /** Histogram bins per code for the mutual information. */
  bins?: number;
}

/** The result of {@linkcode modularityExplicitness}. */
export interface ModularityExplicitnessResult {
  /** Modularity of the train MI matrix, in [0, 1]. */
  modularity: number;
  /** Mean over factors of the macro ROC-AUC on the train rows. */
  explicitness_train: number;
  /** The same on the test rows. */
  explicitness_test: number;
}

/**
 * Modularity of the train codes `[n, d]` against the train factors `[n, f]`
 * (discretised MI), and explicitness on train and test: per factor, a
 * logistic regression (C = 1) on the codes standardised with the train
 * moments, scored by the macro ROC-AUC of its probabilities against the
 * one-hot labels, then averaged over factors. Where a small test set lacks
 * some train classes or holds unseen ones (sklearn fails there with a shape
 * error), test rows of unseen classes are left out and classes without
 * both positives and negatives in the test set are skipped; with matching
 * class sets the result is sklearn's.
 */
export function modularityExplicitness(
  trainCodes: Matrix,
  trainFactors: Matrix,
  testCodes: Matrix,
  testFactors: Matrix,
  { bins = 20 }: ModularityOptions = {},
): ModularityExplicitnessResult {
  checkSplit({ trainCodes, trainFactors, testCodes, testFactors }, 2);
  const mi = mutualInfoMatrix(histogramDiscretize(trainCodes, bins), trainCodes.cols, trainFactors);
  const [xTrain, xTest] = standardizeByTrain(trainCodes, testCodes);
  let sumTrain = 0;
  let sumTest = 0;
  for (let j = 0; j < trainFactors.cols; j++) {
    const yTrain = column(trainFactors.data, trainFactors.rows, trainFactors.cols, j);
    const yTest = column(testFactors.data, testFactors.rows, testFactors.cols, j);
    const classes = Float64Array.from(new Set(yTrain)).sort();
    const index = new Map(Array.from(classes, (v, i) => [v, i]));
    const labelTrain = Int32Array.from(yTrain, (v) => index.get(v)!);
    const seen = Array.from(yTest.keys()).filter((r) => index.has(yTest[r]));
    const labelTest = Int32Array.from(seen, (r) => index.get(yTest[r])!);
    const xSeen: Matrix = { data: gatherRows(xTest.data, xTest.cols, seen), rows: seen.length, cols: xTest.cols };
    const model = fitLogisticRegression(xTrain, labelTrain);
    sumTrain += macroRocAuc(labelTrain, model.predictProba(xTrain), classes.length);
    sumTest += macroRocAuc(labelTest, model.predictProba(xSeen), classes.length, { skipDegenerate: true });
  }
  return {
    modularity: modularity(mi),
    explicitness_train: sumTrain / trainFactors.cols,
    explicitness_test: sumTest / trainFactors.cols,
  };
}
