/**
 * Permutation-contrastive learning (PCL, Hyvärinen & Morioka 2017; the
 * baseline of Klindt2021): a logistic regression
 * tells true consecutive pairs (h(x_t), h(x_{t−1})) from pairs whose second
 * element is shuffled; the features h are the learned representation.
 *
 * Regression function, per source dimension i:
 *   r = −Σ_i |a_i h1_i + b_i h2_i + c_i| + Σ_i e_i h1_i² + d
 * The reference code fixes e_i = 1; learning e_i (initialised at 0) lets the
 * quadratic term play the role of the marginal log-density in the PCL
 * paper's regression function instead of imposing its scale.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Params } from "../models/params.ts";

/** The learnable coefficients a, b, c, e and d of the PCL regression. */
export class PclHead {
  #params: Params;
  #prefix: string;

  /** Adds the coefficients for `dim` features to `params` under `prefix`. */
  constructor(params: Params, dim: number, prefix = "head/") {
    this.#params = params;
    this.#prefix = prefix;
    params.add(`${prefix}a`, new Float32Array(dim).fill(1), [dim]);
    params.add(`${prefix}b`, new Float32Array(dim).fill(-1), [dim]);
    params.addZeros(`${prefix}c`, [dim]);
    params.addZeros(`${prefix}e`, [dim]);
    params.addZeros(`${prefix}d`, []);
  }

  /** Logits `[batch]` that the pairs (h1, h2) are real. */
  logits(h1: tf.Tensor2D, h2: tf.Tensor2D): tf.Tensor1D {
    const p = (key: string) => this.#params.get(`${this.#prefix}${key}`);
    const inner = tf.add(tf.add(tf.mul(p("a"), h1), tf.mul(p("b"), h2)), p("c"));
    const quadratic = tf.sum(tf.mul(p("e"), tf.square(h1)), 1);
    return tf.add(tf.sub(quadratic, tf.sum(tf.abs(inner), 1)), p("d")) as tf.Tensor1D;
  }
}

/** PCL loss terms: binary cross-entropy and discrimination accuracy. */
export type PclTerms = {
  total: tf.Scalar;
  accuracy: tf.Scalar;
};

/**
 * Binary cross-entropy of real pairs (h1, h2) against shuffled pairs
 * (h1, h2Shuffled), averaged over both kinds.
 */
export function pclLoss(head: PclHead, h1: tf.Tensor2D, h2: tf.Tensor2D, h2Shuffled: tf.Tensor2D): PclTerms {
  const real = head.logits(h1, h2);
  const fake = head.logits(h1, h2Shuffled);
  // softplus(−r) is −log σ(r); softplus(r) is −log(1 − σ(r)).
  const total = tf.mul(0.5, tf.add(tf.mean(tf.softplus(tf.neg(real))), tf.mean(tf.softplus(fake)))) as tf.Scalar;
  const accuracy = tf.mul(
    0.5,
    tf.add(tf.mean(tf.cast(tf.greater(real, 0), "float32")), tf.mean(tf.cast(tf.lessEqual(fake, 0), "float32"))),
  ) as tf.Scalar;
  return { total, accuracy };
}
