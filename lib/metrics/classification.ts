/**
 * Classifier evaluation on plain arrays: predicted classes from scores, how
 * many match the labels, and accuracy, shared by the attacks, the adaptation
 * studies and every experiment that scores a classifier.
 *
 * @module
 */

/** Row-wise argmax of `[n, classes]` scores (the first maximum on ties, as numpy). */
export function argmaxRows(scores: ArrayLike<number>, n: number, classes: number): Int32Array {
  const out = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (scores[r * classes + c] > scores[r * classes + best]) best = c;
    out[r] = best;
  }
  return out;
}

/** How many of the first `labels.length` predictions equal their labels. */
export function correctCount(predicted: ArrayLike<number>, labels: ArrayLike<number>): number {
  let correct = 0;
  for (let i = 0; i < labels.length; i++) if (predicted[i] === labels[i]) correct++;
  return correct;
}

/** Fraction of positions where `predicted` equals `labels` (over `labels.length`). */
export function accuracy(predicted: ArrayLike<number>, labels: ArrayLike<number>): number {
  return correctCount(predicted, labels) / labels.length;
}

/** Accuracy of the argmax of scores `[n, classes]` (logits or probabilities) against labels `[n]`. */
export function scoreAccuracy(scores: ArrayLike<number>, labels: ArrayLike<number>, classes: number): number {
  return accuracy(argmaxRows(scores, labels.length, classes), labels);
}
