/**
 * The six unsupervised objectives compared by Locatello et al. 2019
 * (Locatello2019 §2.3, Tables 4b–4c): one shared VAE loss — Bernoulli
 * reconstruction plus KL to N(0, I) — and per method a regularizer, as in
 * disentanglement_lib. All terms are batch means in nats.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { gaussianKlTerms, sigmoidCrossEntropyWithLogits } from "../core/kernels/fused_terms.ts";
import { defineRegistry, type Registered, type Registry } from "../core/registry.ts";
import type { Rng } from "../core/rng.ts";
import type { Decoder, Posterior } from "../models/vae.ts";
import { Mlp } from "../models/mlp.ts";
import { Params } from "../models/params.ts";
import type { LossTerms } from "./loop.ts";

/** Sigmoid cross-entropy with logits, summed over pixels, averaged over the batch. */
export function bernoulliReconstruction(logits: tf.Tensor4D, x: tf.Tensor4D): tf.Scalar {
  const perPixel = sigmoidCrossEntropyWithLogits(logits, x);
  return tf.div(tf.sum(perPixel), x.shape[0]) as tf.Scalar;
}

/** KL(q(z|x) ‖ N(0, I)) summed over latents, averaged over the batch. */
export function gaussianKl(mean: tf.Tensor2D, logVar: tf.Tensor2D): tf.Scalar {
  return tf.div(
    tf.mul(0.5, tf.sum(gaussianKlTerms(mean, logVar))),
    mean.shape[0],
  ) as tf.Scalar;
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
  /** Its weights, "discriminator/…", trained by their own optimizer. */
  readonly params = new Params();
  #mlp: Mlp;

  /** Fresh weights from `rng` for `latents`-wide codes: `layers` hidden layers of `hidden` units. */
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
  /** The objective whose regularizer joins the reconstruction. */
  method: VaeMethod;
  /** The method's swept hyperparameter (β, c_max, γ or λ_od). */
  value: number;
  /** Training step, for AnnealedVAE's capacity schedule. */
  step: number;
  /** AnnealedVAE: steps over which C grows to c_max (100,000), and γ (1000). */
  iterationThreshold?: number;
  /** AnnealedVAE: the weight γ of |KL − C|. */
  annealGamma?: number;
  /** FactorVAE: the discriminator. */
  discriminator?: FactorDiscriminator;
}

/** What a regularizer sees of one batch. */
export interface RegularizerInput {
  /** The encoder's posterior of the batch. */
  q: Posterior;
  /** KL(q ‖ N(0, I)), batch mean. */
  kl: tf.Scalar;
  /** The objective's hyperparameters for this step. */
  options: VaeLossOptions;
  /** Extra terms to log (e.g. the TC estimate). */
  terms: LossTerms;
}

/** One objective of the study: its swept hyperparameter with Table 3's grid, and its regularizer. */
export interface VaeObjective extends Registered {
  /** Its swept hyperparameter's name, and its values in Table 3. */
  hyperparameter: { name: string; grid: readonly number[] };
  /** Terms it logs besides total, reconstruction and KL. */
  terms: readonly string[];
  /** The loss minus the reconstruction: KL plus the method's penalty. */
  regularizer(input: RegularizerInput): tf.Scalar;
}

const LOCATELLO = "Locatello2019 Table 3";

/** The objectives' entries, in disentanglement_lib's sweep order; their literal names type {@linkcode VaeMethod}. */
export const VAE_OBJECTIVE_ENTRIES = [
  {
    name: "beta_vae",
    description: "β-VAE: β·KL",
    source: LOCATELLO,
    hyperparameter: { name: "beta", grid: [1, 2, 4, 6, 8, 16] },
    terms: [],
    regularizer: ({ kl, options }) => tf.mul(options.value, kl) as tf.Scalar,
  },
  {
    name: "factor_vae",
    description: "FactorVAE: KL + γ·TC estimated by a discriminator on permuted codes",
    source: LOCATELLO,
    hyperparameter: { name: "gamma", grid: [10, 20, 30, 40, 50, 100] },
    terms: ["tc_estimate"],
    regularizer: ({ q, kl, options, terms }) => {
      const logits = options.discriminator!.logits(q.z);
      const [real, permuted] = tf.split(logits, 2, 1);
      terms.tc_estimate = tf.mean(tf.sub(real, permuted)) as tf.Scalar;
      return tf.add(kl, tf.mul(options.value, terms.tc_estimate)) as tf.Scalar;
    },
  },
  {
    name: "dip_vae_i",
    description: "DIP-VAE-I: KL + λ_od Σ Cov(μ)²_off + 10 λ_od Σ (Cov(μ)_ii − 1)²",
    source: LOCATELLO,
    hyperparameter: { name: "lambda_od", grid: [1, 2, 5, 10, 20, 50] },
    terms: ["dip_penalty"],
    regularizer: ({ q, kl, options, terms }) => {
      terms.dip_penalty = dipPenalty(covariance(q.mean), options.value, 10 * options.value);
      return tf.add(kl, terms.dip_penalty) as tf.Scalar;
    },
  },
  {
    name: "dip_vae_ii",
    description: "DIP-VAE-II: the DIP penalty on Cov(μ) + E[diag σ²], λ_d = λ_od",
    source: LOCATELLO,
    hyperparameter: { name: "lambda_od", grid: [1, 2, 5, 10, 20, 50] },
    terms: ["dip_penalty"],
    regularizer: ({ q, kl, options, terms }) => {
      // tfjs has no gradient for Diag: a broadcast against the identity builds the same matrix.
      const cov = tf.add(covariance(q.mean), tf.mul(tf.eye(q.mean.shape[1]), tf.mean(tf.exp(q.logVar), 0)));
      terms.dip_penalty = dipPenalty(cov as tf.Tensor2D, options.value, options.value);
      return tf.add(kl, terms.dip_penalty) as tf.Scalar;
    },
  },
  {
    name: "beta_tc_vae",
    description: "β-TCVAE: KL + (β − 1)·TC by minibatch weighted sampling",
    source: LOCATELLO,
    hyperparameter: { name: "beta", grid: [1, 2, 4, 6, 8, 10] },
    terms: ["tc_estimate"],
    regularizer: ({ q, kl, options, terms }) => {
      terms.tc_estimate = minibatchTotalCorrelation(q);
      return tf.add(kl, tf.mul(options.value - 1, terms.tc_estimate)) as tf.Scalar;
    },
  },
  {
    name: "annealed_vae",
    description: "AnnealedVAE: γ·|KL − C| with the capacity C growing linearly to c_max",
    source: LOCATELLO,
    hyperparameter: { name: "c_max", grid: [5, 10, 25, 50, 75, 100] },
    terms: ["capacity"],
    regularizer: ({ kl, options, terms }) => {
      const { value, step } = options;
      const capacity = Math.min(value, (value * step) / (options.iterationThreshold ?? 100_000));
      terms.capacity = tf.scalar(capacity);
      return tf.mul(options.annealGamma ?? 1000, tf.abs(tf.sub(kl, capacity))) as tf.Scalar;
    },
  },
] as const satisfies readonly VaeObjective[];
/** A registered VAE objective, with its literal name and grid. */
export type VaeObjectiveEntry = typeof VAE_OBJECTIVE_ENTRIES[number];
/** The six objectives, in disentanglement_lib's sweep order, each with its Table 3 grid. */
export const VAE_OBJECTIVES: Registry<VaeObjectiveEntry> = defineRegistry("VAE objective", VAE_OBJECTIVE_ENTRIES);

/** Method names, in disentanglement_lib's sweep order. */
export const VAE_METHODS: readonly VaeMethod[] = VAE_OBJECTIVES.names;
/** A method name. */
export type VaeMethod = VaeObjectiveEntry["name"];

/**
 * The loss of one batch for `method`: reconstruction + KL + regularizer, as
 * disentanglement_lib minimizes it. Returns every term for logging.
 */
export function vaeLoss(decoder: Decoder, x: tf.Tensor4D, q: Posterior, options: VaeLossOptions): LossTerms {
  const reconstruction = bernoulliReconstruction(decoder.decode(q.z), x);
  const kl = gaussianKl(q.mean, q.logVar);
  const terms: LossTerms = { total: reconstruction, reconstruction, kl };
  const regularized = VAE_OBJECTIVES.find(options.method).regularizer({ q, kl, options, terms });
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
