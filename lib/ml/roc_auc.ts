/**
 * Area under the ROC curve. The Mann–Whitney form with average ranks for
 * ties equals the trapezoidal area under sklearn's `roc_curve`, so
 * {@linkcode rocAuc} matches `sklearn.metrics.roc_auc_score` on binary
 * labels and {@linkcode macroRocAuc} matches it on an indicator matrix.
 *
 * @module
 */
import { ranks } from "../core/matrix.ts";

/**
 * ROC-AUC of `scores` `[n]` against binary `positive` `[n]` (truthy =
 * positive class). Throws when only one class is present, as sklearn does.
 */
export function rocAuc(positive: ArrayLike<number | boolean>, scores: ArrayLike<number>): number {
  const n = positive.length;
  if (scores.length !== n) throw new Error(`rocAuc: ${n} labels vs ${scores.length} scores`);
  const r = ranks(scores);
  let nPositive = 0;
  let rankSum = 0;
  for (let i = 0; i < n; i++) {
    if (positive[i]) {
      nPositive++;
      rankSum += r[i];
    }
  }
  const nNegative = n - nPositive;
  if (nPositive === 0 || nNegative === 0) {
    throw new Error("rocAuc: only one class present in the labels, ROC AUC is not defined");
  }
  return (rankSum - (nPositive * (nPositive + 1)) / 2) / (nPositive * nNegative);
}

/**
 * Macro-averaged ROC-AUC over the columns of a label indicator matrix, as
 * `roc_auc_score(one_hot, proba)`: `labels` `[n]` are class indices into
 * 0..k−1 (column c is the indicator of class c) and `scores` is row-major
 * `[n, k]` (e.g. `predictProba` output).
 */
export function macroRocAuc(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
  k: number,
  { skipDegenerate = false }: { skipDegenerate?: boolean } = {},
): number {
  const n = labels.length;
  if (scores.length !== n * k) throw new Error(`macroRocAuc: scores hold ${scores.length} values, expected ${n}×${k}`);
  let total = 0, counted = 0;
  for (let c = 0; c < k; c++) {
    const column = new Float64Array(n);
    const positive = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      column[i] = scores[i * k + c];
      positive[i] = labels[i] === c ? 1 : 0;
    }
    const positives = positive.reduce((a, b) => a + b, 0);
    if (skipDegenerate && (positives === 0 || positives === n)) continue;
    total += rocAuc(positive, column);
    counted++;
  }
  return total / counted;
}
