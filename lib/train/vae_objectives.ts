/**
 * The six unsupervised objectives compared by Locatello et al. 2019
 * (002_e32ada0b3d473046.md §2.2, §2.5): one shared VAE loss — Bernoulli
 * reconstruction plus KL to N(0, I) — and per method a regularizer, as in
 * disentanglement_lib. All terms are batch means in nats.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import type { Decoder, Encoder } from "../models/dislib_vae.ts";
import { Mlp } from "../models/mlp.ts";
import { Params } from "../models/params.ts";
import type { Matrix } from "../metrics/mcc.ts";
import type { LossTerms } from "./loop.ts";

/** Method names, in disentanglement_lib's sweep order. */
export const VAE_METHODS = [
  "beta_vae",
  "factor_vae",
  "dip_vae_i",
  "dip_vae_ii",
  "beta_tc_vae",
  "annealed_vae",
] as const;
/** A method name. */
export type VaeMethod = typeof VAE_METHODS[number];

/** Table 3's hyperparameter grid per method (its one swept value). */
export const VAE_GRID: Record<VaeMethod, { name: string; values: number[] }> = {
  beta_vae: { name: "beta", values: [1, 2, 4, 6, 8, 16] },
  annealed_vae: { name: "c_max", values: [5, 10, 25, 50, 75, 100] },
  factor_vae: { name: "gamma", values: [10, 20, 30, 40, 50, 100] },
  dip_vae_i: { name: "lambda_od", values: [1, 2, 5, 10, 20, 50] },
  dip_vae_ii: { name: "lambda_od", values: [1, 2, 5, 10, 20, 50] },
  beta_tc_vae: { name: "beta", values: [1, 2, 4, 6, 8, 10] },
};

/** Encoder outputs and the sampled latents of one batch. */
export interface Posterior {
  mean: tf.Tensor2D;
  logVar: tf.Tensor2D;
  z: tf.Tensor2D;
}

/** Sigmoid cross-entropy with logits, summed over pixels, averaged over the batch. */
export function bernoulliReconstruction(logits: tf.Tensor4D, x: tf.Tensor4D): tf.Scalar {
  const perPixel = tf.add(tf.sub(tf.relu(logits), tf.mul(logits, x)), tf.softplus(tf.neg(tf.abs(logits))));
  return tf.div(tf.sum(perPixel), x.shape[0]) as tf.Scalar;
}

/** KL(q(z|x) ‖ N(0, I)) summed over latents, averaged over the batch. */
export function gaussianKl(mean: tf.Tensor2D, logVar: tf.Tensor2D): tf.Scalar {
  return tf.div(
    tf.mul(0.5, tf.sum(tf.sub(tf.add(tf.square(mean), tf.exp(logVar)), tf.add(logVar, 1)))),
    mean.shape[0],
  ) as tf.Scalar;
}

/** Encodes and draws z = μ + σ·ε with ε given (drawn by the caller from the run's seed). */
export function posterior(encoder: Encoder, x: tf.Tensor4D, noise: tf.Tensor2D): Posterior {
  const { mean, logVar } = encoder.encode(x);
  return { mean, logVar, z: reparameterize(mean, logVar, noise) };
}

/** z = μ + σ·ε, the reparameterized sample of N(μ, exp(logVar)). */
export function reparameterize(mean: tf.Tensor2D, logVar: tf.Tensor2D, noise: tf.Tensor2D): tf.Tensor2D {
  return tf.add(mean, tf.mul(tf.exp(tf.mul(0.5, logVar)), noise)) as tf.Tensor2D;
}

/** Codes of a set of images: the mean code, a sampled code when asked, and each code's average KL to N(0, 1). */
export interface ImageCodes {
  mean: Matrix;
  /** z = μ + σ·ε, present when {@linkcode encodeImages} was given a noise generator. */
  sampled: Matrix | null;
  /** Average KL(q(z_i|x) ‖ N(0, 1)) per code (UDR's informativeness test). */
  klPerCode: Float64Array;
}

/**
 * Encodes `images` `[n, h, w, c]` in chunks of 256. With `noise`, also draws
 * one sampled code per image, ε from `noise` chunk by chunk.
 */
export async function encodeImages(
  encoder: Encoder,
  images: Float32Array,
  n: number,
  shape: [number, number, number],
  noise?: Rng,
): Promise<ImageCodes> {
  const size = shape[0] * shape[1] * shape[2];
  const chunks: { mean: Float32Array; z: Float32Array | null; kl: Float32Array }[] = [];
  for (let start = 0; start < n; start += 256) {
    const rows = Math.min(256, n - start);
    const [mean, z, kl] = tf.tidy(() => {
      const q = encoder.encode(tf.tensor4d(images.subarray(start * size, (start + rows) * size), [rows, ...shape]));
      const d = q.mean.shape[1];
      const perCode = tf.mul(0.5, tf.sub(tf.add(tf.square(q.mean), tf.exp(q.logVar)), tf.add(q.logVar, 1)));
      const sampled = noise
        ? reparameterize(q.mean, q.logVar, tf.tensor2d(noise.normalArray(rows * d), [rows, d]))
        : null;
      return [q.mean, sampled, tf.sum(perCode, 0)];
    });
    chunks.push({
      mean: await mean.data() as Float32Array,
      z: z ? await z.data() as Float32Array : null,
      kl: await kl.data() as Float32Array,
    });
    tf.dispose([mean, kl, ...(z ? [z] : [])]);
  }
  const d = chunks[0].kl.length;
  const mean = new Float64Array(n * d), sampled = noise ? new Float64Array(n * d) : null;
  const klPerCode = new Float64Array(d);
  chunks.forEach((chunk, i) => {
    mean.set(chunk.mean, i * 256 * d);
    if (chunk.z) sampled!.set(chunk.z, i * 256 * d);
    chunk.kl.forEach((v, j) => (klPerCode[j] += v / n));
  });
  return {
    mean: { data: mean, rows: n, cols: d },
    sampled: sampled && { data: sampled, rows: n, cols: d },
    klPerCode,
  };
}

/** Biased minibatch covariance E[μμᵀ] − E[μ]E[μ]ᵀ `[d, d]`. */
function covariance(m: tf.Tensor2D): tf.Tensor2D {
  const centred = tf.sub(m, tf.mean(m, 0, true));
  return tf.div(tf.matMul(centred, centred, true, false), m.shape[0]) as tf.Tensor2D;
}

/** DIP-VAE penalty λ_od Σ_{i≠j} C_ij² + λ_d Σ_i (C_ii − 1)². */
export function dipPenalty(cov: tf.Tensor2D, lambdaOffDiagonal: number, lambdaDiagonal: number): tf.Scalar {
  const d = cov.shape[0];
  const diagonal = tf.mul(cov, tf.eye(d));
  const off = tf.sum(tf.square(tf.sub(cov, diagonal)));
  const on = tf.sum(tf.square(tf.sub(tf.sum(diagonal, 1), 1)));
  return tf.add(tf.mul(lambdaOffDiagonal, off), tf.mul(lambdaDiagonal, on)) as tf.Scalar;
}

/** log N(z; μ, exp(logVar)) elementwise. */
function gaussianLogDensity(z: tf.Tensor, mean: tf.Tensor, logVar: tf.Tensor): tf.Tensor {
  const precision = tf.exp(tf.neg(logVar));
  return tf.mul(-0.5, tf.add(tf.mul(tf.square(tf.sub(z, mean)), precision), tf.add(logVar, Math.log(2 * Math.PI))));
}

/**
 * β-TCVAE's minibatch estimate of the total correlation: mean_j [log q(z_j)
 * − Σ_l log q(z_jl)] with logsumexp over the batch, without the constant
 * (L − 1) log(B·N), as disentanglement_lib.
 */
export function minibatchTotalCorrelation({ mean, logVar, z }: Posterior): tf.Scalar {
  // [B (z_j), B (x_i), L] log densities of every sample under every posterior.
  const densities = gaussianLogDensity(tf.expandDims(z, 1), tf.expandDims(mean, 0), tf.expandDims(logVar, 0));
  const logQz = tf.logSumExp(tf.sum(densities, 2), 1);
  const logProductQz = tf.sum(tf.logSumExp(densities, 1), 1);
  return tf.mean(tf.sub(logQz, logProductQz)) as tf.Scalar;
}

/** FactorVAE's discriminator: 6 × FC-1000 leaky ReLU, FC-2 logits (disentanglement_lib's fc_discriminator). */
export class FactorDiscriminator {
  readonly params = new Params();
  #mlp: Mlp;

  constructor(rng: Rng, latents: number, hidden = 1000, layers = 6) {
    this.#mlp = new Mlp(rng, this.params, "discriminator/", [latents, ...Array(layers).fill(hidden), 2], {
      activation: "leaky_relu",
    });
  }

  /** Logits `[batch, 2]`: class 0 = a sample of q(z), class 1 = of Π_j q(z_j). */
  logits(z: tf.Tensor2D): tf.Tensor2D {
    return this.#mlp.apply(z);
  }
}

/** Permutes each latent column independently across the batch (samples of Π_j q(z_j)). */
export function permuteDims(z: tf.Tensor2D, rng: Rng): tf.Tensor2D {
  const batch = z.shape[0];
  // Permutation-matrix products instead of gather: gather's gradient is not needed, but matMul runs fast on wasm.
  const columns = tf.unstack(z, 1).map((column) => {
    const order = rng.permutation(batch);
    const p = new Float32Array(batch * batch);
    order.forEach((from, to) => p[to * batch + from] = 1);
    return tf.squeeze(tf.matMul(tf.tensor2d(p, [batch, batch]), tf.expandDims(column, 1)), [1]);
  });
  return tf.stack(columns, 1) as tf.Tensor2D;
}

/** Per-method settings for {@linkcode vaeLoss}. */
export interface VaeLossOptions {
  method: VaeMethod;
  /** The method's swept hyperparameter (β, c_max, γ or λ_od). */
  value: number;
  /** Training step, for AnnealedVAE's capacity schedule. */
  step: number;
  /** AnnealedVAE: steps over which C grows to c_max (100,000), and γ (1000). */
  iterationThreshold?: number;
  annealGamma?: number;
  /** FactorVAE: the discriminator. */
  discriminator?: FactorDiscriminator;
}

/**
 * The loss of one batch for `method`: reconstruction + KL + regularizer, as
 * disentanglement_lib minimizes it. Returns every term for logging.
 */
export function vaeLoss(decoder: Decoder, x: tf.Tensor4D, q: Posterior, options: VaeLossOptions): LossTerms {
  const reconstruction = bernoulliReconstruction(decoder.decode(q.z), x);
  const kl = gaussianKl(q.mean, q.logVar);
  const terms: LossTerms = { total: reconstruction, reconstruction, kl };
  const { method, value } = options;
  let regularized: tf.Scalar;
  switch (method) {
    case "beta_vae":
      regularized = tf.mul(value, kl) as tf.Scalar;
      break;
    case "annealed_vae": {
      const capacity = Math.min(value, (value * options.step) / (options.iterationThreshold ?? 100_000));
      terms.capacity = tf.scalar(capacity);
      regularized = tf.mul(options.annealGamma ?? 1000, tf.abs(tf.sub(kl, capacity))) as tf.Scalar;
      break;
    }
    case "factor_vae": {
      const logits = options.discriminator!.logits(q.z);
      const [real, permuted] = tf.split(logits, 2, 1);
      terms.tc_estimate = tf.mean(tf.sub(real, permuted)) as tf.Scalar;
      regularized = tf.add(kl, tf.mul(value, terms.tc_estimate)) as tf.Scalar;
      break;
    }
    case "dip_vae_i":
    case "dip_vae_ii": {
      const cov = method === "dip_vae_i"
        ? covariance(q.mean)
        // tfjs has no gradient for Diag: a broadcast against the identity builds the same matrix.
        : tf.add(covariance(q.mean), tf.mul(tf.eye(q.mean.shape[1]), tf.mean(tf.exp(q.logVar), 0))) as tf.Tensor2D;
      terms.dip_penalty = dipPenalty(cov, value, method === "dip_vae_i" ? 10 * value : value);
      regularized = tf.add(kl, terms.dip_penalty) as tf.Scalar;
      break;
    }
    case "beta_tc_vae":
      terms.tc_estimate = minibatchTotalCorrelation(q);
      regularized = tf.add(kl, tf.mul(value - 1, terms.tc_estimate)) as tf.Scalar;
      break;
  }
  terms.total = tf.add(reconstruction, regularized) as tf.Scalar;
  return terms;
}

/**
 * The FactorVAE discriminator's loss (minimized): −½ E log D(z)[0] − ½ E log
 * D(z_perm)[1], with probabilities clipped to [1e-6, 1 − 1e-6] as the reference code.
 */
export function discriminatorLoss(
  discriminator: FactorDiscriminator,
  z: tf.Tensor2D,
  zPermuted: tf.Tensor2D,
): tf.Scalar {
  const logProb = (logits: tf.Tensor2D, column: number) =>
    tf.log(tf.clipByValue(tf.squeeze(tf.slice(tf.softmax(logits), [0, column], [-1, 1]), [1]), 1e-6, 1 - 1e-6));
  return tf.neg(tf.add(
    tf.mul(0.5, tf.mean(logProb(discriminator.logits(z), 0))),
    tf.mul(0.5, tf.mean(logProb(discriminator.logits(zPermuted), 1))),
  )) as tf.Scalar;
}
