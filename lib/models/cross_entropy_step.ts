/**
 * One optimizer step of a classifier's softmax cross-entropy: the step noise training takes on its
 * (clean, noisy or ANT) batches, the test-time-adaptation source model's training step, and what
 * `deno task bench` times for them. It lives beside the classifiers (as regressionStep beside the
 * regressors) because lib/train and lib/adapt both call it and lib/train already imports lib/adapt.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";

/**
 * Minimises the mean softmax cross-entropy of `logits()` `[batch, classes]` against `labels` `[batch]` (int32) over
 * `variables`; returns the loss in nats (the caller disposes it).
 */
export function crossEntropyStep(
  optimizer: tf.Optimizer,
  variables: tf.Variable[],
  logits: () => tf.Tensor,
  labels: tf.Tensor1D,
  classes: number,
): tf.Scalar {
  return optimizer.minimize(
    () => {
      const out = logits();
      return tf.losses.softmaxCrossEntropy(tf.oneHot(labels, classes).toFloat(), out) as tf.Scalar;
    },
    true,
    variables,
  )!;
}
