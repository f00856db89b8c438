/**
 * Scoring a trained encoder on a ground-truth dataset with every
 * disentanglement metric, as the VAE-family experiments report it.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type ConfigOf, integer } from "../core/config.ts";
import { checkMatrix, type Matrix } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import { type GroundTruthDataset, sampleBatch } from "../data/ground_truth.ts";
import { encodeImages, type Encoder } from "../models/vae.ts";
import { betaVaeScore } from "./beta_vae_score.ts";
import { evaluateArrays } from "./evaluate.ts";
import { factorVaeScore } from "./factor_vae_score.ts";
import { meanCorrelationCoefficient } from "./mcc.ts";
import type { Representation } from "./representation.ts";
import { unsupervisedScores } from "./unsupervised.ts";

/** Codes of `n` fresh samples with their factors ({@linkcode sampleCodes}). */
export interface SampledCodes {
  /** Posterior means `[n, latents]`. */
  mean: Matrix;
  /** Posterior samples `[n, latents]`. */
  sampled: Matrix;
  /** Factor values `[n, factors]`, as floats. */
  factors: Matrix;
  /** The same factor values as integers, row-major. */
  factorValues: Int32Array;
}

/** Mean and sampled codes of fresh i.i.d. samples, with their factors (the representation every metric reads). */
export async function sampleCodes(
  encoder: Encoder,
  dataset: GroundTruthDataset,
  samples: number,
  rng: Rng,
): Promise<SampledCodes> {
  const { factors, observations } = sampleBatch(dataset, samples, rng);
  const codes = await encodeImages(encoder, observations.values, observations.n, observations.shape, rng);
  // A diverged encoder's NaN codes would read as constant columns and score 0, as if measured.
  checkMatrix(codes.mean, "the encoder's mean codes (the model diverged; no score is measured)");
  const factorMatrix: Matrix = {
    data: Float64Array.from(factors.values),
    rows: factors.n,
    cols: dataset.factorSizes.length,
  };
  return { mean: codes.mean, sampled: codes.sampled!, factors: factorMatrix, factorValues: factors.values };
}

/** MCC, and as `mcc/<factor>` the |corr| of each factor with the code matched to it by MCC's assignment. */
export function mccWithFactors(factors: Matrix, codes: Matrix, names: readonly string[]): Record<string, number> {
  const { mcc, perSource } = meanCorrelationCoefficient(factors, codes);
  return { mcc, ...Object.fromEntries(names.map((name, i) => [`mcc/${name}`, perSource[i]])) };
}

/**
 * Bounds of a count of observations scored at once (`eval_samples`, `curve_samples`, and the keys that feed them):
 * 50,000 images of 64×64×3 float32 are 2.3 GiB.
 */
export const SCORED_OBSERVATIONS = { min: 20, max: 50_000 };

/** The config keys of how much data scoring uses, shared by every experiment that scores with {@linkcode scoreVae}. */
export const SCORE_CONFIG = {
  eval_samples: integer(10_000, "observations scored by the array metrics (MIG, DCI, SAP, ...)", SCORED_OBSERVATIONS),
  score_points: integer(10_000, "BetaVAE/FactorVAE training points (half as many evaluation points)", {
    min: 2,
    max: 100_000,
  }),
  score_batch: integer(64, "images per BetaVAE/FactorVAE point", { min: 2, max: 4_096 }),
};

/** How much data scoring uses ({@linkcode SCORE_CONFIG}'s keys), and the code size. */
export type ScoreConfig = ConfigOf<typeof SCORE_CONFIG> & { latents: number };

/** The config keys of learning curves: how often and on how much data the headline metrics are measured in training. */
export const CURVE_CONFIG = {
  curve_every: integer(0, "steps between headline-metric evaluations in training, the learning curve (0: end only)", {
    min: 0,
    max: 100_000_000,
  }),
  curve_samples: integer(
    1_000,
    "observations each learning-curve evaluation scores (the same ones each time)",
    SCORED_OBSERVATIONS,
  ),
};

/**
 * The headline metrics of a learning-curve point: MCC (and per factor), MIG,
 * DCI, SAP and modularity of the mean code of the same `samples` observations
 * at every call (drawn from a stream of `seed`), so that a curve's changes
 * come from training alone. The interventional scores are left to the end.
 */
export async function curveScores(
  encoder: Encoder,
  dataset: GroundTruthDataset,
  samples: number,
  seed: number,
): Promise<Record<string, number>> {
  const codes = await sampleCodes(encoder, dataset, samples, Rng.derive(seed, "curve"));
  const { values } = evaluateArrays(codes.mean, codes.factors, ["mig", "dci", "sap", "modularity"]);
  return { ...values, ...mccWithFactors(codes.factors, codes.mean, dataset.factorNames) };
}

/** The scoring keys of a larger config, as a kept model records them. */
export function scoreConfig(cfg: ScoreConfig): ScoreConfig {
  return {
    eval_samples: cfg.eval_samples,
    score_points: cfg.score_points,
    score_batch: cfg.score_batch,
    latents: cfg.latents,
  };
}

/** A trained encoder read back from a completed run, with the data and settings to score it. */
export interface TrainedEncoder {
  /** The encoder. */
  encoder: Encoder;
  /** The ground-truth dataset to score it on. */
  dataset: GroundTruthDataset;
  /** How much data scoring uses. */
  scoring: ScoreConfig;
  /** The run's seed: scoring draws from streams derived from it. */
  seed: number;
  /** Frees the encoder's weights. */
  dispose(): void;
}

/**
 * Every metric of a trained encoder: the array metrics (IRS included) on the
 * mean code of `eval_samples` fresh samples, TC of the mean and the sampled
 * code, and the BetaVAE and FactorVAE scores.
 */
export async function scoreVae(
  encoder: Encoder,
  dataset: GroundTruthDataset,
  cfg: ScoreConfig,
  seed: number,
): Promise<{ metrics: Record<string, number>; seconds: Record<string, number> }> {
  const codes = await sampleCodes(encoder, dataset, cfg.eval_samples, Rng.derive(seed, "evaluation"));
  const { values, seconds } = evaluateArrays(codes.mean, codes.factors, [
    "mig",
    "dci",
    "sap",
    "modularity",
    "tc",
    "irs",
  ]);
  const { tc, ...scores } = values;
  const metrics: Record<string, number> = {
    ...scores,
    ...mccWithFactors(codes.factors, codes.mean, dataset.factorNames),
    tc_mean: tc,
    tc_sampled: unsupervisedScores(codes.sampled).gaussian_total_correlation,
  };
  // The interventional scores encode their own batches of images through the trained encoder.
  const encode: Representation = async (batch) => {
    const mean = tf.tidy(() => encoder.encode(tf.tensor4d(batch.values, [batch.n, ...batch.shape])).mean);
    const data = Float64Array.from(await mean.data());
    mean.dispose();
    return { data, rows: batch.n, cols: cfg.latents };
  };
  const points = {
    batchSize: cfg.score_batch,
    numTrain: cfg.score_points,
    numEval: Math.max(1, cfg.score_points >> 1),
  };
  const started = performance.now();
  metrics.beta_vae_score =
    (await betaVaeScore(dataset, encode, Rng.derive(seed, "beta_vae_score"), points)).eval_accuracy;
  metrics.factor_vae_score = (await factorVaeScore(dataset, encode, Rng.derive(seed, "factor_vae_score"), {
    ...points,
    numVarianceEstimate: cfg.eval_samples,
  })).eval_accuracy;
  seconds.interventional = (performance.now() - started) / 1000;
  return { metrics, seconds };
}
