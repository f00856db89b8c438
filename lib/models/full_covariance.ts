/**
 * The full-covariance Gaussian posterior of β-VAE_Σ (Zietlow 2022, §3.2.7,
 * eqs. 3.30–3.31): q(z|x) = N(μ, LLᵀ) with L lower-triangular, parameterised
 * by the d(d+1)/2 raw numbers of an encoder head. With a full covariance the
 * VAE objective is rotationally symmetric again, which makes it the ablation
 * of the diagonal posterior's preference for orthogonal decoders.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/** Number of entries of a d×d lower triangle, diagonal included: d(d+1)/2. */
export const triangularCount = (d: number): number => d * (d + 1) / 2;

/** Position of L[i][j] (j ≤ i) in the raw vector: row-major lower triangle. */
export const triangleIndex = (i: number, j: number): number => i * (i + 1) / 2 + j;

function checkSize(d: number): void {
  if (!Number.isInteger(d) || d < 1) throw new Error(`full covariance: d must be a positive integer, got ${d}`);
}

/**
 * Constant pieces of the triangle layout for `d`: the 0/1 placement matrix
 * `[d(d+1)/2, d·d]` and the diagonal mask `[d(d+1)/2]` (1 where raw holds L_jj).
 */
export function triangleLayout(d: number): { placement: Float32Array; diagonal: Float32Array } {
  checkSize(d);
  const count = triangularCount(d);
  const placement = new Float32Array(count * d * d), diagonal = new Float32Array(count);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      const t = triangleIndex(i, j);
      placement[t * d * d + i * d + j] = 1;
      if (i === j) diagonal[t] = 1;
    }
  }
  return { placement, diagonal };
}

/**
 * The raw triangle with exp applied to its diagonal entries, `[..., d(d+1)/2]`.
 * exp sees 0 at the off-diagonal entries (raw·mask), so a large off-diagonal
 * value cannot overflow into an inf·0 = NaN gradient.
 */
export function positiveDiagonal(raw: tf.Tensor, diagonal: tf.Tensor1D): tf.Tensor {
  return tf.tidy(() => tf.add(tf.sub(raw, tf.mul(raw, diagonal)), tf.mul(tf.exp(tf.mul(raw, diagonal)), diagonal)));
}

/**
 * raw `[..., d(d+1)/2]` → L `[..., d, d]`: lower-triangular with exp on the
 * diagonal (so LLᵀ is positive definite). Order of raw: row-major lower
 * triangle (row i, col j ≤ i). Entries are placed by a constant 0/1 matMul
 * because the wasm backend has no gather gradient.
 */
export function lowerTriangular(raw: tf.Tensor, d: number): tf.Tensor {
  checkSize(d);
  const count = triangularCount(d);
  const lead = raw.shape.slice(0, -1);
  if (raw.shape.at(-1) !== count) {
    throw new Error(`lowerTriangular: last axis must be d(d+1)/2 = ${count} for d = ${d}, got [${raw.shape}]`);
  }
  const { placement, diagonal } = triangleLayout(d);
  return tf.tidy(() => {
    const rows = lead.reduce((a, b) => a * b, 1);
    const filled = positiveDiagonal(raw, tf.tensor1d(diagonal));
    const flat = tf.matMul(tf.reshape(filled, [rows, count]), tf.tensor2d(placement, [count, d * d]));
    return tf.reshape(flat, [...lead, d, d]);
  });
}

/**
 * KL(N(μ, LLᵀ) ‖ N(0, I)) = ½(‖μ‖² + ‖L‖²_F − 2Σ_j log L_jj − d) per row
 * (eq. 3.30 with tr Σ = ‖L‖²_F, log det Σ = 2Σ log L_jj): mean `[..., d]`,
 * l `[..., d, d]` lower-triangular with a positive diagonal → `[...]`.
 */
export function fullCovarianceKl(mean: tf.Tensor, l: tf.Tensor): tf.Tensor {
  const d = mean.shape.at(-1)!;
  if (l.shape.length !== mean.shape.length + 1 || l.shape.at(-1) !== d || l.shape.at(-2) !== d) {
    throw new Error(`fullCovarianceKl: l must be [..., ${d}, ${d}] beside mean [${mean.shape}], got [${l.shape}]`);
  }
  return tf.tidy(() => {
    // The diagonal as a masked row sum: no gather (and no gather gradient) needed.
    const diag = tf.sum(tf.mul(l, tf.eye(d)), -1);
    const squares = tf.add(tf.sum(tf.square(mean), -1), tf.sum(tf.square(l), [-2, -1]));
    return tf.mul(tf.sub(tf.sub(squares, tf.mul(tf.sum(tf.log(diag), -1), 2)), d), 0.5);
  });
}

/** The reparameterized sample z = μ + Lε: mean and eps `[..., d]`, l `[..., d, d]` → `[..., d]`. */
export function sampleFullCovariance(mean: tf.Tensor, l: tf.Tensor, eps: tf.Tensor): tf.Tensor {
  const d = mean.shape.at(-1)!;
  if (eps.shape.join() !== mean.shape.join() || l.shape.join() !== [...mean.shape, d].join()) {
    throw new Error(
      `sampleFullCovariance: mean and eps [..., d], l [..., d, d]; got [${mean.shape}], [${eps.shape}], [${l.shape}]`,
    );
  }
  // (Lε)_i = Σ_j L_ij ε_j as a broadcast product and a row sum: cheaper than a batch of d×d matMuls for small d.
  return tf.tidy(() => tf.add(mean, tf.sum(tf.mul(l, tf.expandDims(eps, -2)), -1)));
}
