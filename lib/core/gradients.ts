/**
 * Gradient plumbing TF.js lacks: a value computed in the forward pass whose
 * backward pass is zero (torch's `detach`, TF's `stop_gradient`).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/**
 * `compute(x)` in the forward pass, zero gradient in the backward pass
 * (torch's `detach`, TF's `stop_gradient`; TF.js has no such op). The ops
 * inside run off the gradient tape, so they may lack gradients (argmax,
 * comparisons) even when `x` depends on the variables being differentiated.
 */
export function detached<T extends tf.Tensor>(x: tf.Tensor, compute: (x: tf.Tensor) => T): T {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
    value: compute(args[0] as tf.Tensor),
    gradFunc: () => tf.zerosLike(x),
  }));
  return f(x) as T;
}

/** `x` without gradient (identity forward, zero backward). */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  return detached(x, (t) => tf.clone(t) as T);
}
