/**
 * Objectives on pairs of images (x_{t−1}, x_t) from Klindt2021
 * (§3, App. A, E): SlowVAE with its Gaussian marginal
 * and Laplace transition prior, and the baselines trained on the same pairs
 * — PM-VAE (the α = 2 ablation), Ada-GVAE and Ada-MLVAE (Locatello et al.
 * 2020) and PCL on the encoder's mean.
 *
 * The weighting of the terms follows the authors' reference code: a batch
 * of n pairs is 2n images, the reconstruction and every per-image term are
 * means over the 2n images, the pair terms are means over the n pairs.
 * All terms are in nats, summed over latents.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { defineRegistry, type Registered, type Registry } from "../core/registry.ts";
import type { Decoder, Encoder } from "../models/vae.ts";
import type { LossTerms } from "./loop.ts";
import { type PclHead, pclLoss } from "./pcl.ts";
import { posterior, reparameterize } from "../models/vae.ts";
import { bernoulliReconstruction, gaussianKl } from "./vae_objectives.ts";

/** A pair objective: which of the weights β (KL to N(0, I)), γ (transition) and λ (Laplace rate) it reads. */
export interface PairObjective extends Registered {
  /** The weights it reads. */
  weights: readonly ("beta" | "gamma" | "rate")[];
}

/** The pair objectives' entries, SlowVAE first; their literal names type {@linkcode PairMethod}. */
export const PAIR_OBJECTIVE_ENTRIES = [
  {
    name: "slow_vae",
    description: "SlowVAE: Gaussian marginal and sparse (Laplace) transition prior",
    source: "Klindt2021 §3, App. A",
    weights: ["beta", "gamma", "rate"],
  },
  {
    name: "pm_vae",
    description: "PM-VAE: the Gaussian (α = 2) transition ablation, KL between the pair's posteriors",
    source: "Klindt2021 App. F.3",
    weights: ["beta", "gamma"],
  },
  {
    name: "ada_gvae",
    description: "Ada-GVAE: posteriors of dimensions the pair shares averaged (Locatello et al. 2020)",
    source: "Klindt2021",
    weights: ["beta"],
  },
  {
    name: "ada_mlvae",
    description: "Ada-MLVAE: shared dimensions merged as a product of the pair's posteriors",
    source: "Klindt2021",
    weights: ["beta"],
  },
  {
    name: "pcl",
    description: "PCL: logistic regression of real against shuffled pairs on the encoder's mean",
    source: "Klindt2021",
    weights: [],
  },
] as const satisfies readonly PairObjective[];
/** A registered pair objective, with its literal name and weights. */
export type PairObjectiveEntry = typeof PAIR_OBJECTIVE_ENTRIES[number];
/** Pair objectives, SlowVAE first. */
export const PAIR_OBJECTIVES: Registry<PairObjectiveEntry> = defineRegistry("pair objective", PAIR_OBJECTIVE_ENTRIES);
/** Pair objective names, SlowVAE first. */
export const PAIR_METHODS: readonly PairMethod[] = PAIR_OBJECTIVES.names;
/** A pair objective's name. */
export type PairMethod = PairObjectiveEntry["name"];

/**
 * Cross-entropy H(N(μ̃, σ²), Laplace(0, rate)) per element, Klindt2021 Eq. 22:
 * −log(λ/2) + λ E|X| with X ~ N(μ̃, σ²) and the folded-normal mean
 * E|X| = σ√(2/π) exp(−μ̃²/2σ²) + μ̃ erf(μ̃/(σ√2)) (Eq. 21, using 1 − 2Φ(u) = −erf(u/√2)).
 * `meanDiff` is μ̃ = μ(x_t) − z_{t−1}, `logVar` is log σ²(x_t); same shapes.
 */
export function laplaceCrossEntropy(meanDiff: tf.Tensor, logVar: tf.Tensor, rate: number | tf.Scalar): tf.Tensor {
  const sigma = tf.exp(tf.mul(0.5, logVar));
  const u = tf.div(meanDiff, sigma);
  const folded = tf.add(
    tf.mul(tf.mul(sigma, Math.sqrt(2 / Math.PI)), tf.exp(tf.mul(-0.5, tf.square(u)))),
    tf.mul(meanDiff, tf.erf(tf.mul(u, Math.SQRT1_2))),
  );
  return tf.add(tf.neg(tf.log(tf.div(rate, 2))), tf.mul(rate, folded));
}

/** Entropy of N(μ, σ²) per element, ½ log(2πe σ²), from `logVar` = log σ². */
export function gaussianEntropy(logVar: tf.Tensor): tf.Tensor {
  return tf.mul(0.5, tf.add(logVar, Math.log(2 * Math.PI * Math.E)));
}

/** KL(N(μ0, σ0²) ‖ N(μ1, σ1²)) per element. */
export function gaussianPairKl(mean0: tf.Tensor, logVar0: tf.Tensor, mean1: tf.Tensor, logVar1: tf.Tensor): tf.Tensor {
  const ratio = tf.div(tf.add(tf.exp(logVar0), tf.square(tf.sub(mean0, mean1))), tf.exp(logVar1));
  return tf.mul(0.5, tf.sub(tf.add(tf.sub(logVar1, logVar0), ratio), 1));
}

/** Posterior parameters of both images of n pairs, each `[n, latents]`. */
export interface PairPosteriors {
  /** Posterior means of the first images. */
  mean0: tf.Tensor2D;
  /** Posterior log-variances of the first images. */
  logVar0: tf.Tensor2D;
  /** Posterior means of the second images. */
  mean1: tf.Tensor2D;
  /** Posterior log-variances of the second images. */
  logVar1: tf.Tensor2D;
}

/** SlowVAE's transition terms of a batch of pairs. */
export interface SlowTransition {
  /** Laplace cross-entropies of both time directions, summed over latents, mean over pairs. */
  crossEntropy: tf.Scalar;
  /** Posterior entropy summed over latents, mean over all 2n images. */
  entropy: tf.Scalar;
  /** crossEntropy − entropy: what γ weights. */
  transition: tf.Scalar;
}

/**
 * The transition terms of Klindt2021 Eq. 4 in closed form, both time
 * directions (App. E): H(q_0, p(·|μ1)) + H(q_1, p(·|μ0)) − H(q). The
 * conditioning sample z_{t−1} is the other image's mean, and gradients flow
 * through it, as in the reference code.
 */
export function slowTransition(q: PairPosteriors, rate: number | tf.Scalar): SlowTransition {
  const forward = laplaceCrossEntropy(tf.sub(q.mean0, q.mean1), q.logVar0, rate);
  const backward = laplaceCrossEntropy(tf.sub(q.mean1, q.mean0), q.logVar1, rate);
  const crossEntropy = tf.mean(tf.sum(tf.add(forward, backward), 1)) as tf.Scalar;
  const entropy = tf.mean(tf.sum(gaussianEntropy(tf.concat([q.logVar0, q.logVar1], 0)), 1)) as tf.Scalar;
  return { crossEntropy, entropy, transition: tf.sub(crossEntropy, entropy) as tf.Scalar };
}

/**
 * Ada-GVAE's shared dimensions: δ_i = KL(q(z_i|x0) ‖ q(z_i|x1)) per pair and
 * dimension; a dimension is shared when δ_i < ½(max_j δ_j + min_j δ_j) (two
 * equal-width bins over the pair's range, as the reference code; when all
 * δ_i are equal none is shared). Returns a `[n, latents]` float mask, 1 on
 * shared dimensions.
 */
export function sharedDimensions(q: PairPosteriors): tf.Tensor2D {
  return tf.tidy(() => {
    const delta = gaussianPairKl(q.mean0, q.logVar0, q.mean1, q.logVar1);
    const threshold = tf.mul(0.5, tf.add(tf.max(delta, 1, true), tf.min(delta, 1, true)));
    // step(τ − δ) is 1 where δ < τ; unlike a comparison it has a (zero) gradient, so it can sit on the tape.
    return tf.step(tf.sub(threshold, delta)) as tf.Tensor2D;
  });
}

/** How Ada-VAE merges the two posteriors on shared dimensions. */
export type AdaAggregation = "gvae" | "mlvae";

/**
 * Both posteriors with their shared dimensions (`shared`, from
 * {@linkcode sharedDimensions}) replaced by one merged Gaussian:
 *   - gvae: the average, μ = ½(μ0 + μ1), σ² = ½(σ0² + σ1²);
 *   - mlvae: disentanglement_lib's MLVae, the precision-weighted mean
 *     μ = (μ0/σ0² + μ1/σ1²)/(1/σ0² + 1/σ1²) with σ² = 2/(1/σ0² + 1/σ1²),
 *     the harmonic mean of the variances. That is twice the product of
 *     experts' variance, so two identical posteriors merge into themselves.
 */
export function adaPosteriors(q: PairPosteriors, shared: tf.Tensor2D, aggregation: AdaAggregation): PairPosteriors {
  const var0 = tf.exp(q.logVar0), var1 = tf.exp(q.logVar1);
  let mean: tf.Tensor, logVar: tf.Tensor;
  if (aggregation === "gvae") {
    mean = tf.mul(0.5, tf.add(q.mean0, q.mean1));
    logVar = tf.log(tf.mul(0.5, tf.add(var0, var1)));
  } else {
    const precision = tf.add(tf.reciprocal(var0), tf.reciprocal(var1));
    mean = tf.div(tf.add(tf.div(q.mean0, var0), tf.div(q.mean1, var1)), precision);
    logVar = tf.log(tf.div(2, precision));
  }
  const isShared = tf.cast(shared, "bool");
  return {
    mean0: tf.where(isShared, mean, q.mean0) as tf.Tensor2D,
    logVar0: tf.where(isShared, logVar, q.logVar0) as tf.Tensor2D,
    mean1: tf.where(isShared, mean, q.mean1) as tf.Tensor2D,
    logVar1: tf.where(isShared, logVar, q.logVar1) as tf.Tensor2D,
  };
}

/** A reconstruction loss: decoder output and targets `[2n, h, w, c]` → mean over images (nats). */
export type ReconstructionLoss = (decoded: tf.Tensor4D, x: tf.Tensor4D) => tf.Scalar;

/** Settings of {@linkcode pairLoss}; every field has the paper's default. */
export interface PairLossOptions {
  /** Weight of KL(q ‖ N(0, I)) (1). */
  beta?: number;
  /** Weight of the transition prior: SlowVAE's Laplace terms, PM-VAE's pair KL (10). */
  gamma?: number;
  /** Rate λ of the Laplace transition prior (6). */
  rate?: number | tf.Scalar;
  /** Reconstruction term (Bernoulli logits summed over pixels, mean over images). */
  reconstruction?: ReconstructionLoss;
  /** PCL: the regression head (its parameters train with the encoder). */
  pclHead?: PclHead;
  /**
   * PCL: the shuffle of x_{t−1} across the batch, `permutation[i]` the pair
   * whose x_{t−1} is matched with x_t of pair i (default: the next pair, a
   * shuffle without fixed points).
   */
  permutation?: Int32Array;
}

function encodePairs(encoder: Encoder, x0: tf.Tensor4D, x1: tf.Tensor4D, noise: tf.Tensor2D) {
  // One pass over both halves: fewer, larger kernels.
  const x = tf.concat([x0, x1], 0);
  const q = posterior(encoder, x, noise);
  const [mean0, mean1] = tf.split(q.mean, 2, 0) as tf.Tensor2D[];
  const [logVar0, logVar1] = tf.split(q.logVar, 2, 0) as tf.Tensor2D[];
  return { x, q, pairs: { mean0, logVar0, mean1, logVar1 } };
}

/**
 * The loss of a batch of pairs for `method`, with its terms for logging.
 * `x0` holds x_{t−1} and `x1` holds x_t, both `[n, h, w, c]`; `noise` is
 * standard normal `[2n, latents]` (rows of x0, then of x1), drawn by the
 * caller from the run's seed. PCL uses neither `decoder` nor `noise`.
 *
 *   - slow_vae: 2·recon + β·KL_normal + γ·(CE_lap(μ0−μ1, σ0) + CE_lap(μ1−μ0, σ1) − H(q));
 *   - pm_vae: 2·recon + β·KL_normal + γ·(KL(q0 ‖ q1) + KL(q1 ‖ q0)), the
 *     transition prior p(z_t|z_{t−1}) = q(z_{t−1}|x_{t−1}) in both directions;
 *   - ada_gvae / ada_mlvae: recon + β·KL_normal of the merged posteriors;
 *   - pcl: the logistic loss of real against shuffled pairs on the means.
 */
export function pairLoss(
  method: PairMethod,
  encoder: Encoder,
  decoder: Decoder | null,
  x0: tf.Tensor4D,
  x1: tf.Tensor4D,
  noise: tf.Tensor2D | null,
  options: PairLossOptions = {},
): LossTerms {
  if (method === "pcl") return pclPairLoss(encoder, x0, x1, options);
  if (!decoder || !noise) throw new Error(`${method} needs a decoder and noise`);
  const beta = options.beta ?? 1, gamma = options.gamma ?? 10;
  const reconstructionLoss = options.reconstruction ?? bernoulliReconstruction;
  const { x, q, pairs } = encodePairs(encoder, x0, x1, noise);
  if (method === "ada_gvae" || method === "ada_mlvae") {
    const shared = sharedDimensions(pairs);
    const merged = adaPosteriors(pairs, shared, method === "ada_gvae" ? "gvae" : "mlvae");
    const mean = tf.concat([merged.mean0, merged.mean1], 0) as tf.Tensor2D;
    const logVar = tf.concat([merged.logVar0, merged.logVar1], 0) as tf.Tensor2D;
    const reconstruction = reconstructionLoss(decoder.decode(reparameterize(mean, logVar, noise)), x);
    const klNormal = gaussianKl(mean, logVar);
    return {
      total: tf.add(reconstruction, tf.mul(beta, klNormal)) as tf.Scalar,
      reconstruction,
      kl_normal: klNormal,
      shared_dims: tf.mean(tf.sum(shared, 1)) as tf.Scalar,
    };
  }
  // Reconstruction and KL_normal are means over the 2n images; 2·recon is their sum per pair.
  const reconstruction = reconstructionLoss(decoder.decode(q.z), x);
  const klNormal = gaussianKl(q.mean, q.logVar);
  const base = tf.add(tf.mul(2, reconstruction), tf.mul(beta, klNormal));
  const terms: LossTerms = { total: base as tf.Scalar, reconstruction, kl_normal: klNormal };
  if (method === "slow_vae") {
    const { crossEntropy, entropy, transition } = slowTransition(pairs, options.rate ?? 6);
    Object.assign(terms, { transition, cross_entropy_laplace: crossEntropy, entropy });
    terms.total = tf.add(base, tf.mul(gamma, transition)) as tf.Scalar;
  } else {
    const klPair = tf.mean(tf.sum(
      tf.add(
        gaussianPairKl(pairs.mean0, pairs.logVar0, pairs.mean1, pairs.logVar1),
        gaussianPairKl(pairs.mean1, pairs.logVar1, pairs.mean0, pairs.logVar0),
      ),
      1,
    )) as tf.Scalar;
    terms.kl_pair = klPair;
    terms.total = tf.add(base, tf.mul(gamma, klPair)) as tf.Scalar;
  }
  return terms;
}

/**
 * PCL on images (Klindt2021): h = μ(x), real pairs (h(x_t), h(x_{t−1}))
 * against pairs with x_{t−1} shuffled, through the shared {@linkcode PclHead}
 * (its quadratic weights are learned, see pcl.ts).
 */
function pclPairLoss(encoder: Encoder, x0: tf.Tensor4D, x1: tf.Tensor4D, options: PairLossOptions): LossTerms {
  if (!options.pclHead) throw new Error("pcl needs options.pclHead");
  const n = x0.shape[0];
  const permutation = options.permutation ?? Int32Array.from({ length: n }, (_, i) => (i + 1) % n);
  if (permutation.length !== n) throw new Error(`permutation has ${permutation.length} entries for ${n} pairs`);
  const { mean } = encoder.encode(tf.concat([x1, x0], 0));
  const [h1, h2] = tf.split(mean, 2, 0) as tf.Tensor2D[];
  const h2Shuffled = tf.gather(h2, tf.tensor1d(permutation, "int32")) as tf.Tensor2D;
  return pclLoss(options.pclHead, h1, h2, h2Shuffled);
}
