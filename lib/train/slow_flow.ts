/**
 * The SlowFlow objective (Klindt2021 Eq. 23, App. B, F.1.2):
 * the exact negative log-likelihood of a pair (x_{t−1}, x_t) under a flow
 * z = f(x) with a standard normal marginal for z_{t−1} and a Laplace(λ)
 * transition prior p(z_t | z_{t−1}) = Π (λ/2) exp(−λ|z_t − z_{t−1}|).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/** Per-pair terms of the SlowFlow NLL, in nats (each a batch mean). */
export type SlowFlowTerms = {
  total: tf.Scalar;
  gaussian: tf.Scalar;
  transition: tf.Scalar;
  logDet: tf.Scalar;
};

/**
 * NLL of pairs given their latents `z0 = f(x_{t−1})`, `z1 = f(x_t)` (each
 * `[batch, dim]`) and the flow's log|det J| at each (`[batch]`). The model is
 * agnostic to time direction (Klindt2021 App. E), so the Gaussian marginal term
 * averages both directions; the Laplace term is symmetric already. `lambda`
 * may be a trainable scalar (maximum-likelihood rate).
 */
export function slowFlowNll(
  z0: tf.Tensor2D,
  z1: tf.Tensor2D,
  logDet0: tf.Tensor1D,
  logDet1: tf.Tensor1D,
  lambda: number | tf.Scalar,
): SlowFlowTerms {
  const dim = z0.shape[1];
  const gaussian = tf.add(
    tf.mul(0.25, tf.mean(tf.add(tf.sum(tf.square(z0), 1), tf.sum(tf.square(z1), 1)))),
    0.5 * dim * Math.log(2 * Math.PI),
  ) as tf.Scalar;
  const transition = tf.sub(
    tf.mul(lambda, tf.mean(tf.sum(tf.abs(tf.sub(z1, z0)), 1))),
    tf.mul(dim, tf.log(tf.div(lambda, 2))),
  ) as tf.Scalar;
  // Both images of the pair pass through the flow: two Jacobian factors.
  const logDetPair = tf.mean(tf.add(logDet0, logDet1)) as tf.Scalar;
  const total = tf.sub(tf.add(gaussian, transition), logDetPair) as tf.Scalar;
  return { total, gaussian, transition, logDet: logDetPair };
}
