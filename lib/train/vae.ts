/**
 * Training one VAE-family model of Locatello et al. 2019
 * (Locatello2019 §2.3: objectives, Table 2 architecture, Table 4a
 * optimizer) on a ground-truth dataset: its config keys, and the training
 * loop with checkpoints, media and resume, which keeps the trained encoder
 * in the run. Objectives that are means over examples can train data-parallel
 * over workers (lib/train/data_parallel.ts).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { choice, type ConfigOf, integer, integerChoice, real } from "../core/config.ts";
import type { RunContext } from "../core/experiment.ts";
import type { Image } from "../core/png.ts";
import { Rng, type RngState } from "../core/rng.ts";
import type { LoadedCheckpoint } from "../core/run_checkpoints.ts";
import { type GroundTruthDataset, sampleBatch } from "../data/ground_truth.ts";
import { imageGrid } from "../data/preview.ts";
import { DATASET_NAMES } from "../data/registry.ts";
import { vaeNetworks } from "../models/dislib_vae.ts";
import { type Decoder, type Encoder, posterior } from "../models/vae.ts";
import { type LossTerms, optimizerState, restoreOptimizer, trainPhase } from "./loop.ts";
import { DataParallel, type Replica, resolveDataParallelWorkers } from "./data_parallel.ts";
import { CURVE_CONFIG, curveScores, SCORE_CONFIG, scoreConfig } from "../metrics/score.ts";
import { saveEncoder } from "./saved_encoder.ts";
import {
  discriminatorLoss,
  FactorDiscriminator,
  permuteDims,
  VAE_METHODS,
  VAE_OBJECTIVES,
  vaeLoss,
  type VaeMethod,
} from "./vae_objectives.ts";
import { checkpointEveryConfig, logEveryConfig } from "./config.ts";

/** The network keys every image experiment shares. */
export const NETWORK_CONFIG = {
  resolution: integerChoice(64, [64, 32], "image side; 32 drops one stride-2 stage"),
  architecture: choice("conv", ["conv", "mlp"], "Table 2 conv nets, or the β-VAE paper's MLPs"),
  latents: integer(10, "latent dimensions", { min: 1, max: 64 }),
};

/** The keys of one VAE-family model's training and scoring. */
export const VAE_CONFIG = {
  method: choice("beta_vae", VAE_METHODS, "objective (Locatello et al. 2019 §2.3)"),
  value: real(4, "the method's hyperparameter: β, c_max, γ or λ_od (Table 3 grid)", { min: 0 }),
  dataset: choice("dsprites", DATASET_NAMES, "ground-truth dataset"),
  ...NETWORK_CONFIG,
  steps: integer(300_000, "Adam steps", { min: 1, max: 100_000_000 }),
  batch: integer(64, "images per step", { min: 2, max: 4_096 }),
  lr: real(1e-4, "Adam learning rate (β1 0.9, β2 0.999, ε 1e-8)", { min: 0, max: 1 }),
  anneal_steps: integer(100_000, "AnnealedVAE: steps for the capacity to reach c_max", { min: 1, max: 100_000_000 }),
  discriminator_hidden: integer(1_000, "FactorVAE discriminator units per layer (Table 4b: 1,000)", {
    min: 1,
    max: 4_096,
  }),
  discriminator_layers: integer(6, "FactorVAE discriminator hidden layers (disentanglement_lib: 6)", {
    min: 1,
    max: 16,
  }),
  ...SCORE_CONFIG,
  ...CURVE_CONFIG,
  ...logEveryConfig(100),
  media_every: integer(5_000, "steps between reconstruction and traversal images", { min: 1, max: 100_000_000 }),
  ...checkpointEveryConfig(5_000),
};

/** The smallest training and scoring of VAE_CONFIG: every experiment built on it shares this smoke preset. */
export const VAE_SMOKE_PRESET = {
  resolution: 32,
  steps: 4,
  batch: 8,
  eval_samples: 100,
  score_points: 20,
  score_batch: 4,
  log_every: 2,
  media_every: 4,
} as const;

/** The resolved config of one VAE-family model. */
export type VaeConfig = ConfigOf<typeof VAE_CONFIG>;
type Cfg = VaeConfig;

/** Checkpoint state besides the arrays. */
interface VaeState {
  step: number;
  batchRng: RngState;
}

function vaeModels(rng: Rng, cfg: Cfg, channels: number) {
  const options = { size: cfg.resolution, channels, latents: cfg.latents };
  const { encoder, decoder } = vaeNetworks(rng, cfg.architecture, options);
  const discriminator = cfg.method === "factor_vae"
    ? new FactorDiscriminator(rng, cfg.latents, cfg.discriminator_hidden, cfg.discriminator_layers)
    : null;
  return { encoder, decoder, discriminator };
}

/** Originals (top row) over their reconstructions, and one row per latent traversed over [−2, 2]. */
async function mediaImages(encoder: Encoder, decoder: Decoder, dataset: GroundTruthDataset, rng: Rng) {
  const [h, w, c] = dataset.imageShape;
  const { observations } = sampleBatch(dataset, 8, rng);
  const steps = 9;
  const [reconstructions, traversals, d] = tf.tidy(() => {
    const x = tf.tensor4d(observations.values, [8, h, w, c]);
    const { mean } = encoder.encode(x);
    const latents = mean.shape[1];
    const anchor = tf.slice(mean, [0, 0], [1, latents]);
    const offsets = new Float32Array(latents * steps * latents);
    for (let l = 0; l < latents; l++) {
      for (let s = 0; s < steps; s++) offsets[(l * steps + s) * latents + l] = -2 + (4 * s) / (steps - 1);
    }
    // Each traversal row sets one latent of the first image's mean code to −2 … 2.
    const base = tf.tile(anchor, [latents * steps, 1]);
    const mask = tf.tensor2d(offsets.map((v) => (v === 0 ? 1 : 0)), [latents * steps, latents]);
    const codes = tf.add(tf.mul(base, mask), tf.tensor2d(offsets, [latents * steps, latents]));
    return [tf.sigmoid(decoder.decode(mean)), tf.sigmoid(decoder.decode(codes as tf.Tensor2D)), latents] as const;
  });
  const recon = await reconstructions.data() as Float32Array;
  const both = new Float32Array(16 * h * w * c);
  both.set(observations.values);
  both.set(recon, 8 * h * w * c);
  const travel = await traversals.data() as Float32Array;
  tf.dispose([reconstructions, traversals]);
  const shape: [number, number, number] = [h, w, c];
  return {
    reconstructions: imageGrid(both, 16, shape, 8) as Image,
    traversals: imageGrid(travel, d * steps, shape, steps) as Image,
  };
}

/** How one model is trained inside a run: its metric label, seed, and what it saves. */
export interface VaeTraining {
  /** Metric prefix of its loss terms, e.g. "beta_vae". */
  label: string;
  /** Seed of its weights, batches and media. */
  seed: number;
  /** The checkpoint it continues from, or null. */
  resumed: LoadedCheckpoint | null;
  /** Whether it saves periodic checkpoints (a study keeps its own). */
  checkpoints: boolean;
  /** Keeps the trained encoder as models/<name>/ for `eval --run` and `export-codes` (absent: not kept). */
  saveAs?: string;
  /** Prefix of its media names, so that many models share one run. */
  mediaPrefix: string;
  /**
   * Cores it trains on, as DATA_PARALLEL_CONFIG's `workers` (0: one per
   * core); absent: 1, as in a study that trains its models side by side.
   */
  workers?: number;
}

/**
 * Methods whose loss is a mean of per-example terms, so that a batch can be
 * split over data-parallel workers. Not AnnealedVAE (γ·|KL − C| of the batch
 * mean KL), the DIP-VAEs (batch covariances), β-TCVAE (minibatch-weighted
 * sampling over the batch) nor FactorVAE (a discriminator on codes permuted
 * across the batch).
 */
export const DATA_PARALLEL_METHODS: readonly VaeMethod[] = ["beta_vae"];

/** The loss of a batch given as tensors `x` `[n, h, w, c]` and reparameterisation noise `eps` `[n, latents]`. */
function batchLoss(encoder: Encoder, decoder: Decoder, cfg: Cfg) {
  return (inputs: Record<string, tf.Tensor>, step: number): LossTerms => {
    const x = inputs.x as tf.Tensor4D;
    const q = posterior(encoder, x, inputs.eps as tf.Tensor2D);
    return vaeLoss(decoder, x, q, {
      method: cfg.method,
      value: cfg.value,
      step,
      iterationThreshold: cfg.anneal_steps,
    });
  };
}

/**
 * A data-parallel worker's copy of the VAE of `cfg` (the master's values
 * overwrite its initial ones before every step): its variables in
 * {@linkcode trainVae}'s order and the loss of a shard.
 */
export function vaeReplica(args: unknown): Replica {
  const { cfg, channels } = args as { cfg: Cfg; channels: number };
  const { encoder, decoder } = vaeModels(new Rng(0), cfg, channels);
  return {
    variables: [...encoder.params.list(), ...decoder.params.list()],
    loss: batchLoss(encoder, decoder, cfg),
  };
}

/** The workers a model trains on: the requested number, or 1 where its objective cannot be split (with a note). */
function dataParallelWorkers(ctx: RunContext, cfg: Cfg, training: VaeTraining): number {
  const workers = resolveDataParallelWorkers(training.workers ?? 1, ctx.backend.name);
  if (workers > 1 && !DATA_PARALLEL_METHODS.includes(cfg.method)) {
    console.error(
      `${training.label}: ${cfg.method}'s loss is not a mean over examples, so it trains in one worker ` +
        `(data-parallel: ${DATA_PARALLEL_METHODS.join(", ")})`,
    );
    return 1;
  }
  // The MLP VAE's 14.2M parameters cost more to exchange per step than a second core saves (943–1,083 against
  // 623–739 ms per step measured): "auto" keeps it in one worker; an explicit --workers is honoured.
  if (training.workers === 0 && cfg.architecture === "mlp") return 1;
  // A shard holds at least one image.
  return Math.min(workers, cfg.batch);
}

function greatestCommonDivisor(a: number, b: number): number {
  return b === 0 ? a : greatestCommonDivisor(b, a % b);
}

/** A trained VAE-family model ({@linkcode trainVae}). */
export interface TrainedVae {
  /** The trained encoder. */
  encoder: Encoder;
  /** The trained decoder. */
  decoder: Decoder;
  /** The last logged loss terms by name. */
  last: Record<string, number>;
  /** Frees the encoder's, the decoder's and (FactorVAE) the discriminator's weights. */
  dispose: () => void;
}

/** Trains one VAE-family model on `dataset`; returns its networks and last logged terms. */
export async function trainVae(
  ctx: RunContext,
  cfg: VaeConfig,
  dataset: GroundTruthDataset,
  training: VaeTraining,
): Promise<TrainedVae> {
  const workers = dataParallelWorkers(ctx, cfg, training);
  const [h, w, c] = dataset.imageShape;
  const { encoder, decoder, discriminator } = vaeModels(Rng.derive(training.seed, "model"), cfg, c);
  const vaeParams = [...encoder.params.list(), ...decoder.params.list()];
  const optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
  const discriminatorOptimizer = tf.train.adam(1e-4, 0.5, 0.9, 1e-8);
  const resumed = training.resumed;
  const saved = resumed?.state as VaeState | undefined;
  const entries = () => ({
    ...encoder.params.entries("encoder/"),
    ...decoder.params.entries("decoder/"),
    ...(discriminator?.params.entries("discriminator/") ?? {}),
  });
  if (resumed && saved) {
    encoder.params.load(resumed.arrays, "encoder/");
    decoder.params.load(resumed.arrays, "decoder/");
    discriminator?.params.load(resumed.arrays, "discriminator/");
    await restoreOptimizer(optimizer, resumed.arrays, "optimizer/");
    if (discriminator) await restoreOptimizer(discriminatorOptimizer, resumed.arrays, "discriminator_optimizer/");
  }
  const batchRng = saved ? Rng.fromState(saved.batchRng) : Rng.derive(training.seed, "batches");
  const mediaRng = Rng.derive(training.seed, "media");
  let lastZ: tf.Tensor2D | null = null;
  const parallel = workers > 1
    ? new DataParallel({
      module: import.meta.url,
      exportName: "vaeReplica",
      args: { cfg, channels: c },
      workers,
      backend: ctx.backend.name,
      variables: vaeParams,
      loss: batchLoss(encoder, decoder, cfg),
      signal: ctx.stopRequested,
    })
    : null;
  // Every draw on this thread, in the order of one process: the numbers depend on the worker count only through
  // float32 summation order.
  const drawBatch = () => {
    const { observations } = sampleBatch(dataset, cfg.batch, batchRng);
    return { x: observations.values, eps: batchRng.normalArray(cfg.batch * cfg.latents) };
  };

  const last = await trainPhase(ctx, {
    label: training.label,
    steps: cfg.steps,
    startStep: saved?.step ?? 0,
    variables: vaeParams,
    optimizer,
    logEvery: cfg.log_every,
    loss: (step) => {
      const batch = drawBatch();
      const x = tf.tensor4d(batch.x, [cfg.batch, h, w, c]);
      const q = posterior(encoder, x, tf.tensor2d(batch.eps, [cfg.batch, cfg.latents]));
      if (discriminator) lastZ = tf.keep(q.z);
      return vaeLoss(decoder, x, q, {
        method: cfg.method,
        value: cfg.value,
        step,
        iterationThreshold: cfg.anneal_steps,
        discriminator: discriminator ?? undefined,
      });
    },
    gradients: parallel
      ? (step) => {
        const batch = drawBatch();
        return parallel.gradients(step, {
          x: { data: batch.x, shape: [cfg.batch, h, w, c] },
          eps: { data: batch.eps, shape: [cfg.batch, cfg.latents] },
        });
      }
      : undefined,
    extraLogs: parallel ? () => ({ dp_workers: workers, dp_comm_share: parallel.takeCommunicationShare() }) : undefined,
    afterStep: discriminator
      ? () => {
        // Same batch for the discriminator, as disentanglement_lib; z is a constant here.
        const z = lastZ!;
        const cost = discriminatorOptimizer.minimize(
          () => discriminatorLoss(discriminator, z, permuteDims(z, batchRng)),
          true,
          discriminator.params.list(),
        );
        tf.dispose([cost!, z]);
        lastZ = null;
      }
      : undefined,
    // Media and learning-curve points have their own intervals; both come at the last step.
    evaluateEvery: cfg.curve_every > 0 ? greatestCommonDivisor(cfg.media_every, cfg.curve_every) : cfg.media_every,
    evaluate: async (step) => {
      const last = step === cfg.steps;
      if (last || step % cfg.media_every === 0) {
        const images = await mediaImages(encoder, decoder, dataset, mediaRng);
        ctx.image(`${training.mediaPrefix}reconstructions`, step, images.reconstructions);
        ctx.image(`${training.mediaPrefix}traversals`, step, images.traversals);
      }
      const curvePoint = cfg.curve_every > 0 && (last || step % cfg.curve_every === 0);
      return curvePoint ? await curveScores(encoder, dataset, cfg.curve_samples, training.seed) : {};
    },
    checkpointEvery: training.checkpoints ? cfg.checkpoint_every : 0,
    checkpoint: async (step) => {
      const arrays = {
        ...entries(),
        ...await optimizerState(optimizer, "optimizer/"),
        ...(discriminator ? await optimizerState(discriminatorOptimizer, "discriminator_optimizer/") : {}),
      };
      await ctx.checkpoint(step, arrays, { step, batchRng: batchRng.state() } satisfies VaeState);
    },
  }).finally(() => parallel?.terminate());
  if (training.saveAs !== undefined) {
    await saveEncoder(ctx, training.saveAs, encoder, {
      architecture: cfg.architecture,
      size: cfg.resolution,
      channels: c,
      latents: cfg.latents,
      dataset: cfg.dataset,
      seed: training.seed,
      scoring: scoreConfig(cfg),
    });
  }
  optimizer.dispose();
  discriminatorOptimizer.dispose();
  return {
    encoder,
    decoder,
    last,
    dispose: () => {
      encoder.params.dispose();
      decoder.params.dispose();
      discriminator?.params.dispose();
    },
  };
}

/** The models of a study, in training order: method, then each value at the `grid` positions of Table 3, then seed. */
export function vaeStudyPlan(
  cfg: { methods: readonly VaeMethod[]; grid: readonly number[]; seeds: number },
  firstSeed: number,
): { method: VaeMethod; value: number; seed: number }[] {
  return cfg.methods.flatMap((method) =>
    cfg.grid.map((position) => VAE_OBJECTIVES.get(method).hyperparameter.grid[position]).flatMap((value) =>
      Array.from({ length: cfg.seeds }, (_, i) => ({ method, value, seed: firstSeed + i }))
    )
  );
}
