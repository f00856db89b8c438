/**
 * One optimizer step of a classifier's softmax cross-entropy: the step of every classifier the
 * toolkit trains (lib/train/classifier.ts), and what `deno task bench` times for them. It lives
 * beside the classifiers (as regressionStep beside the regressors) so that the bench and any
 * training loop take the same step.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/**
 * The mean softmax cross-entropy in nats of `logits` `[batch, classes]` against `labels` `[batch]` (int32): a mean
 * over examples, so that shards of a batch weighted by their rows give the batch's (data-parallel training).
 */
export function crossEntropyLoss(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  return tf.losses.softmaxCrossEntropy(tf.oneHot(labels, logits.shape[1]), logits) as tf.Scalar;
}

/**
 * Minimises the mean softmax cross-entropy of `logits()` `[batch, classes]` against `labels` `[batch]` (int32) over
 * `variables`; returns the loss in nats (the caller disposes it).
 */
export function crossEntropyStep(
  optimizer: tf.Optimizer,
  variables: tf.Variable[],
  logits: () => tf.Tensor2D,
  labels: tf.Tensor1D,
): tf.Scalar {
  return optimizer.minimize(
    () => crossEntropyLoss(logits(), labels),
    true,
    variables,
  )!;
}
