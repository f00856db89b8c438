/**
 * Contrastive objectives (Schneider2023 Ch. 6–8):
 *
 * - {@linkcode infoNce}: CEBRA's generalised InfoNCE (`cebra/models/criterions.py`) with cosine or
 *   negative squared Euclidean similarity, a constant or learnable temperature, the positive kept
 *   out of the denominator, stabilised by the row maximum of the negative similarities.
 * - {@linkcode lpInfoNce} and {@linkcode simclrLoss}: cl-ica's `LpSimCLRLoss` and `SimCLRLoss`
 *   (brendel-group/cl-ica `losses.py`), whose negatives are the batch itself rolled by one row
 *   (`torch.roll(h, 1, 0)` in `main_mlp.py`), so each anchor also meets itself.
 * - {@linkcode goodnessOfFitBits}: CEBRA's goodness of fit, log(batch · sessions) − InfoNCE in bits.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { detached } from "../core/gradients.ts";

/** Similarity of {@linkcode infoNce}: ⟨a, b⟩ (on unit vectors) or −‖a − b‖². */
export type Distance = "cosine" | "euclidean";

/** The distances {@linkcode infoNce} accepts. */
export const DISTANCES: readonly Distance[] = ["cosine", "euclidean"];

/** Options of {@linkcode infoNce}. */
export interface InfoNceOptions {
  /** The similarity φ: cosine, or the negative squared Euclidean distance. */
  distance: Distance;
  /** Constant temperature τ > 0, default 1; ignored when `logInverseTemperature` is given. */
  temperature?: number;
  /**
   * Learnable α = ln(1/τ) (a scalar variable); the similarities are scaled by
   * min(e^α, 1/minTemperature), as CEBRA's Learnable*InfoNCE clamp the inverse temperature.
   */
  logInverseTemperature?: tf.Variable;
  /** Smallest temperature a learnable α can reach, default 0.1 (CEBRA's `min_temperature`). */
  minTemperature?: number;
}

/**
 * The loss and its two terms, each a scalar the caller disposes. As CEBRA returns them,
 * `align` = mean_i −φ(ref_i, pos_i) and `uniform` = mean_i log Σ_j exp φ(ref_i, neg_j), so
 * `total` = `align` + `uniform` and neither term depends on the stabilising constant.
 */
export interface InfoNceTerms {
  /** The loss, `align` + `uniform`. */
  total: tf.Scalar;
  /** mean_i −φ(ref_i, pos_i). */
  align: tf.Scalar;
  /** mean_i log Σ_j exp φ(ref_i, neg_j). */
  uniform: tf.Scalar;
}

function checkPositive(value: number, what: string): void {
  if (!(Number.isFinite(value) && value > 0)) throw new UsageError(`${what} must be a finite number > 0, got ${value}`);
}

function checkRows(a: tf.Tensor, b: tf.Tensor, names: [string, string], sameRows: boolean): void {
  if (a.rank !== 2 || b.rank !== 2) {
    throw new UsageError(`${names[0]} and ${names[1]} must be 2-D [batch, dims], got ranks ${a.rank} and ${b.rank}`);
  }
  if (a.shape[1] !== b.shape[1] || (sameRows && a.shape[0] !== b.shape[0])) {
    throw new UsageError(
      `${names[0]} [${a.shape}] and ${names[1]} [${b.shape}] must have ${sameRows ? "the same shape" : "equal widths"}`,
    );
  }
  if (a.shape[0] < 1 || b.shape[0] < 1) throw new UsageError(`${names[0]} and ${names[1]} need at least one row`);
}

/**
 * CEBRA's InfoNCE of references `ref` `[n, d]` against positives `pos` `[n, d]` (row i with row i)
 * and negatives `neg` `[m, d]` (every row of `ref` against every row of `neg`):
 *
 *   loss = mean_i [−φ(ref_i, pos_i) + c_i] + mean_i log Σ_j exp(φ(ref_i, neg_j) − c_i),
 *   c_i = max_j φ(ref_i, neg_j),
 *
 * with φ = ⟨a, b⟩/τ ("cosine"; the inputs are used as given, the encoder normalises them) or
 * φ = −‖a − b‖²/τ ("euclidean", from ‖a‖² + ‖b‖² − 2⟨a, b⟩ as CEBRA). c_i is detached as in
 * CEBRA, and the log-sum-exp is written out: the backward passes of `tf.max` and `tf.logSumExp`
 * build a broadcast equality mask, which dominated a training step on wasm.
 */
export function infoNce(ref: tf.Tensor2D, pos: tf.Tensor2D, neg: tf.Tensor2D, options: InfoNceOptions): InfoNceTerms {
  checkRows(ref, pos, ["ref", "pos"], true);
  checkRows(ref, neg, ["ref", "neg"], false);
  if (!DISTANCES.includes(options.distance)) {
    throw new UsageError(`unknown distance "${options.distance}": use one of ${DISTANCES.join(", ")}`);
  }
  const temperature = options.temperature ?? 1;
  const minTemperature = options.minTemperature ?? 0.1;
  checkPositive(temperature, "temperature");
  checkPositive(minTemperature, "minTemperature");
  const alpha = options.logInverseTemperature;
  if (alpha && alpha.size !== 1) {
    throw new UsageError(`logInverseTemperature must be a scalar, got shape [${alpha.shape}]`);
  }
  return tf.tidy(() => {
    let posSim = tf.sum(tf.mul(ref, pos), 1);
    let negSim = tf.matMul(ref, neg, false, true);
    if (options.distance === "euclidean") {
      const refSq = tf.sum(tf.square(ref), 1);
      const posSq = tf.sum(tf.square(pos), 1);
      const negSq = tf.sum(tf.square(neg), 1);
      posSim = tf.neg(tf.sub(tf.add(refSq, posSq), tf.mul(2, posSim)));
      negSim = tf.neg(tf.sub(tf.add(tf.expandDims(refSq, 1), tf.expandDims(negSq, 0)), tf.mul(2, negSim)));
    }
    if (alpha) {
      const scale = tf.minimum(tf.exp(tf.reshape(alpha, [])), 1 / minTemperature);
      posSim = tf.mul(posSim, scale);
      negSim = tf.mul(negSim, scale);
    } else {
      posSim = tf.div(posSim, temperature);
      negSim = tf.div(negSim, temperature);
    }
    const c = detached(negSim, (sim) => tf.max(sim, 1, true));
    const alignStable = tf.mean(tf.neg(tf.sub(posSim, tf.reshape(c, [-1]))));
    const uniformStable = tf.mean(tf.log(tf.sum(tf.exp(tf.sub(negSim, c)), 1)));
    const cMean = tf.mean(c);
    return {
      total: tf.add(alignStable, uniformStable) as tf.Scalar,
      align: tf.sub(alignStable, cMean) as tf.Scalar,
      uniform: tf.add(uniformStable, cMean) as tf.Scalar,
    };
  });
}

/** Options of {@linkcode lpInfoNce} (cl-ica `LpSimCLRLoss`, α = 0.5). */
export interface LpInfoNceOptions {
  /** Exponent p > 0 of the Lp distance. */
  p: number;
  /** Temperature τ > 0. */
  tau: number;
  /** Use Σ|·|^p (true, cl-ica's default) instead of the norm (Σ|·|^p)^{1/p}. */
  pow?: boolean;
  /**
   * true (`main_mlp.py`'s setting, default): log-sum-exp over the negatives and the positive;
   * false: log-mean-exp over the negatives only.
   */
  simclrCompatibility?: boolean;
}

/** The batch rolled down by one row, `torch.roll(h, 1, 0)`: row j is row j − 1 (row 0 is the last). */
function rollRows(h: tf.Tensor2D): tf.Tensor2D {
  const n = h.shape[0];
  if (n === 1) return h;
  return tf.concat([tf.slice(h, [n - 1, 0], [1, -1]), tf.slice(h, [0, 0], [n - 1, -1])], 0);
}

/**
 * Σ_k |x_k|^p over the last axis, or its p-th root when `root`; the root has zero gradient where
 * the sum is 0 (torch.norm's backward masks that point).
 */
function lpDistance(diff: tf.Tensor, p: number, root: boolean): tf.Tensor {
  // |x|¹ and x² by their own kernels: the general power (exp-log with its own gradient) cost a cl-ica step 1.6–2.7×.
  const powered = p === 1 ? tf.abs(diff) : p === 2 ? tf.square(diff) : tf.pow(tf.abs(diff), p);
  const sum = tf.sum(powered, -1);
  return root ? safeRoot(sum, p) : sum;
}

/**
 * log Σ_j exp(x_ij) per row, shifted by the detached row maximum: `tf.logSumExp`'s backward pass
 * differentiates its max through a broadcast equality mask, which dominated a training step on wasm.
 */
function rowLogSumExp(x: tf.Tensor2D): tf.Tensor1D {
  const c = detached(x, (v) => tf.max(v, 1, true));
  return tf.add(tf.log(tf.sum(tf.exp(tf.sub(x, c)), 1)), tf.reshape(c, [-1])) as tf.Tensor1D;
}

/** s^{1/p} for s ≥ 0 with gradient 0 where s = 0 (the plain power rule gives ∞ · 0 there). */
function safeRoot(sum: tf.Tensor, p: number): tf.Tensor {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const s = args[0] as tf.Tensor;
    const value = tf.pow(s, 1 / p);
    (args[1] as tf.GradSaveFunc)([s, value]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [x, y] = saved;
        const positive = tf.greater(x, 0);
        const slope = tf.div(y, tf.mul(p, tf.where(positive, x, tf.onesLike(x))));
        return tf.mul(dy, tf.where(positive, slope, tf.zerosLike(x)));
      },
    };
  });
  return f(sum);
}

/**
 * cl-ica's `LpSimCLRLoss` of anchors `h1` `[n, d]` and positives `h2` `[n, d]`, negatives the
 * rolled batch h3 = roll(h1, 1) (the anchor itself included):
 *
 *   loss = mean_i [d(h1_i, h2_i)/τ + log Σ_j exp(−d_ij/τ) (+ exp(−d(h1_i, h2_i)/τ) in compatibility mode)],
 *
 * d = Σ|·|^p (`pow`) or the Lp norm, d_ij = d(h1_i, h3_j) for p ≥ 1. For p < 1 cl-ica takes
 * d_ij = d(h1_j + 1e-12, h3_i) and the positive d(|h1_i − h2_i| + 1e-12), kept here as written.
 * Builds an `[n, n, d]` difference tensor.
 */
export function lpInfoNce(h1: tf.Tensor2D, h2: tf.Tensor2D, options: LpInfoNceOptions): tf.Scalar {
  checkRows(h1, h2, ["h1", "h2"], true);
  const { p, tau, pow = true, simclrCompatibility = true } = options;
  checkPositive(p, "p");
  checkPositive(tau, "tau");
  return tf.tidy(() => {
    const h3 = rollRows(h1);
    let negDist: tf.Tensor2D, posDist: tf.Tensor1D;
    if (p < 1) {
      // Row a of h3 is row a − 1 of h1: that pair's difference is exactly 0 and constant. Masking it keeps its
      // two ±p·(1e-12)^(p−1) gradient paths (≈ ±5·10⁵ at p = 0.5) from cancelling only to float32 rounding.
      const n = h1.shape[0];
      const keep = new Float32Array(n * n).fill(1);
      for (let a = 0; a < n; a++) keep[a * n + (a + n - 1) % n] = 0;
      const diff = tf.add(
        tf.mul(tf.sub(tf.expandDims(h1, 0), tf.expandDims(h3, 1)), tf.tensor3d(keep, [n, n, 1])),
        1e-12,
      );
      negDist = lpDistance(diff, p, !pow) as tf.Tensor2D;
      posDist = lpDistance(tf.add(tf.abs(tf.sub(h1, h2)), 1e-12), p, !pow) as tf.Tensor1D;
    } else {
      negDist = lpDistance(tf.sub(tf.expandDims(h1, 1), tf.expandDims(h3, 0)), p, !pow) as tf.Tensor2D;
      posDist = lpDistance(tf.sub(h1, h2), p, !pow) as tf.Tensor1D;
    }
    const lossPos = tf.div(posDist, tau);
    const lossNeg = simclrCompatibility
      ? rowLogSumExp(tf.div(tf.neg(tf.concat([negDist, tf.expandDims(posDist, 1)], 1)), tau))
      : tf.sub(rowLogSumExp(tf.div(tf.neg(negDist), tau)), Math.log(negDist.shape[1]));
    return tf.mean(tf.add(lossPos, lossNeg)) as tf.Scalar;
  });
}

/**
 * cl-ica's `SimCLRLoss` (normalize false, α = 0.5) of anchors `h1` `[n, d]` and positives `h2`
 * `[n, d]`, for representations on the sphere (the encoder normalises them):
 *
 *   loss = mean_i [−⟨h1_i, h2_i⟩/τ + log(Σ_j exp(⟨h1_i, h3_j⟩/τ) + exp(⟨h1_i, h2_i⟩/τ))], h3 = roll(h1, 1).
 */
export function simclrLoss(h1: tf.Tensor2D, h2: tf.Tensor2D, tau: number): tf.Scalar {
  checkRows(h1, h2, ["h1", "h2"], true);
  checkPositive(tau, "tau");
  return tf.tidy(() => {
    const neg = tf.matMul(h1, rollRows(h1), false, true);
    const pos = tf.sum(tf.mul(h1, h2), 1);
    const lossPos = tf.div(tf.neg(pos), tau);
    const lossNeg = rowLogSumExp(tf.div(tf.concat([neg, tf.expandDims(pos, 1)], 1), tau));
    return tf.mean(tf.add(lossPos, lossNeg)) as tf.Scalar;
  });
}

/**
 * CEBRA's goodness of fit in bits, (ln(batchSize · sessions) − loss) · log₂ e, of an InfoNCE
 * `loss` in nats (`infonce_to_goodness_of_fit`): 0 for an embedding that carries no
 * information about the positives, more the better.
 */
export function goodnessOfFitBits(loss: number, batchSize: number, sessions = 1): number {
  if (!Number.isFinite(loss)) throw new UsageError(`InfoNCE loss must be finite, got ${loss}`);
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new UsageError(`batchSize must be an integer ≥ 1, got ${batchSize}`);
  }
  if (!Number.isInteger(sessions) || sessions < 1) {
    throw new UsageError(`sessions must be an integer ≥ 1, got ${sessions}`);
  }
  return (Math.log(batchSize * sessions) - loss) * Math.LOG2E;
}
