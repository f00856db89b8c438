/**
 * How an optimizer's applyGradients is routed through a fused kernel: the two forms TF.js accepts for the gradients,
 * read as one list, and the patch of the optimizer class's method, which keeps TF.js's own as the fallback.
 *
 * @module
 */
import type * as tf from "@tensorflow/tfjs";

/** The gradients applyGradients takes: by variable name, or a list of named tensors. */
export type Gradients = tf.NamedTensorMap | { name: string; tensor: tf.Tensor }[];

/** The variables' names in the order TF.js's optimizers index their state by, each with its gradient (or none). */
export function namedGradients(gradients: Gradients): { name: string; gradient: tf.Tensor | null | undefined }[] {
  return Array.isArray(gradients)
    ? gradients.map(({ name, tensor }) => ({ name, gradient: tensor }))
    : Object.keys(gradients).map((name) => ({ name, gradient: gradients[name] }));
}

/** A fused applyGradients: `original` is TF.js's own, for what the fused path does not take. */
export type FusedApplyGradients<T> = (
  this: T,
  original: (this: T, gradients: Gradients) => void,
  gradients: Gradients,
) => void;

/** Routes `optimizerClass`'s applyGradients through `fused` (idempotent). */
export function routeApplyGradients<T>(optimizerClass: { prototype: unknown }, fused: FusedApplyGradients<T>): void {
  const prototype = optimizerClass.prototype as {
    applyGradients: ((this: T, gradients: Gradients) => void) & { fused?: boolean };
  };
  if (prototype.applyGradients.fused) return;
  const original = prototype.applyGradients;
  const patched = function (this: T, gradients: Gradients) {
    fused.call(this, original, gradients);
  };
  prototype.applyGradients = Object.assign(patched, { fused: true });
}
