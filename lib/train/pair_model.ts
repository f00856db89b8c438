/**
 * Training of one model on pairs of temporally adjacent images
 * (Klindt2021 §3, App. E): SlowVAE, PM-VAE, Ada-GVAE/-MLVAE and
 * PCL on the pairs a source gives, and the β-VAE baseline on i.i.d. images
 * from the same source, all with the Locatello et al. encoder/decoder.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import { type Architecture, vaeNetworks } from "../models/dislib_vae.ts";
import { Params } from "../models/params.ts";
import { trainPhase } from "./loop.ts";
import { PclHead } from "./pcl.ts";
import { PAIR_METHODS, pairLoss, type PairMethod } from "./slow_vae.ts";
import { type Encoder, posterior } from "../models/vae.ts";
import { vaeLoss } from "./vae_objectives.ts";

/** Pair methods plus the i.i.d. β-VAE baseline. */
export const PAIR_MODEL_METHODS = [...PAIR_METHODS, "beta_vae"] as const;
/** A method of {@linkcode PAIR_MODEL_METHODS}. */
export type PairModelMethod = typeof PAIR_MODEL_METHODS[number];

/** Where training images come from: pairs `(x_{t−1}, x_t)` and i.i.d. frames, flat `[n, h, w, c]`. */
export interface PairSource {
  /** One image's shape `[h, w, c]`. */
  imageShape: [number, number, number];
  /** `n` pairs: `x0` the earlier frames, `x1` the later ones, each flat `[n, h, w, c]`. */
  pairs(n: number, rng: Rng): { x0: Float32Array; x1: Float32Array };
  /** `n` i.i.d. frames, flat `[n, h, w, c]`. */
  frames(n: number, rng: Rng): Float32Array;
}

/** The settings of one pair model. */
export interface PairModelConfig {
  /** A pair objective, or the β-VAE baseline on i.i.d. frames. */
  method: PairModelMethod;
  /** Weight of KL(q ‖ N(0, I)); β of the β-VAE and Ada-GVAE baselines. */
  beta: number;
  /** Weight of the transition prior (SlowVAE, PM-VAE). */
  gamma: number;
  /** Rate λ of SlowVAE's Laplace transition prior. */
  rate: number;
  /** Encoder and decoder architecture. */
  architecture: Architecture;
  /** Latent dimensions. */
  latents: number;
  /** Optimizer steps. */
  steps: number;
  /** Pairs per step (the β-VAE sees twice as many i.i.d. images, the same image count). */
  pairs: number;
  /** Adam learning rate. */
  lr: number;
  /** Steps between logged loss terms. */
  logEvery: number;
}

/** Headline metrics of an encoder under training, logged every `every` steps and at the end: its learning curve. */
export interface CurveScoring {
  /** Steps between two scorings. */
  every: number;
  /** Scores `encoder` (which stays the caller's to keep); `seed` draws its samples. */
  score(encoder: Encoder, seed: number): Promise<Record<string, number>>;
}

/** Trains one model; returns its encoder and the last logged terms. */
export async function trainPairModel(
  ctx: RunContext,
  source: PairSource,
  cfg: PairModelConfig,
  training: { label: string; seed: number; curve?: CurveScoring },
): Promise<{ encoder: Encoder; last: Record<string, number> }> {
  const [h, w, c] = source.imageShape;
  const { encoder, decoder } = vaeNetworks(Rng.derive(training.seed, "model"), cfg.architecture, {
    size: h as 32 | 64,
    channels: c,
    latents: cfg.latents,
  });
  const headParams = new Params();
  const pclHead = cfg.method === "pcl" ? new PclHead(headParams, cfg.latents) : undefined;
  // PCL trains the encoder and its regression head only.
  const variables = [
    ...encoder.params.list(),
    ...(cfg.method === "pcl" ? headParams.list() : decoder.params.list()),
  ];
  const optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
  const rng = Rng.derive(training.seed, "batches");
  const n = cfg.pairs;
  const last = await trainPhase(ctx, {
    label: training.label,
    steps: cfg.steps,
    startStep: 0,
    variables,
    optimizer,
    logEvery: cfg.logEvery,
    loss: () => {
      const noise = tf.tensor2d(rng.normalArray(2 * n * cfg.latents), [2 * n, cfg.latents]);
      if (cfg.method === "beta_vae") {
        const x = tf.tensor4d(source.frames(2 * n, rng), [2 * n, h, w, c]);
        return vaeLoss(decoder, x, posterior(encoder, x, noise), { method: "beta_vae", value: cfg.beta, step: 0 });
      }
      const { x0, x1 } = source.pairs(n, rng);
      return pairLoss(
        cfg.method as PairMethod,
        encoder,
        decoder,
        tf.tensor4d(x0, [n, h, w, c]),
        tf.tensor4d(x1, [n, h, w, c]),
        noise,
        { beta: cfg.beta, gamma: cfg.gamma, rate: cfg.rate, pclHead, permutation: derangement(n, rng) },
      );
    },
    ...(training.curve && training.curve.every > 0
      ? { evaluateEvery: training.curve.every, evaluate: () => training.curve!.score(encoder, training.seed) }
      : {}),
  });
  optimizer.dispose();
  decoder.params.dispose();
  headParams.dispose();
  return { encoder, last };
}

/** A uniformly random permutation of 0..n−1 without fixed points (PCL's shuffled pairs). */
function derangement(n: number, rng: Rng): Int32Array {
  for (;;) {
    const p = Int32Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [p[i], p[j]] = [p[j], p[i]];
    }
    if (p.every((v, i) => v !== i)) return p;
  }
}
