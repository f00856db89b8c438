/**
 * One VAE-family model on a ground-truth dataset, as in Locatello et al.
 * 2019 (002_e32ada0b3d473046.md §2: objectives, Table 2 architecture, Table
 * 4a optimizer): trains one method at one hyperparameter value, logs the
 * reconstruction, KL and the method's own terms, saves reconstructions and
 * latent traversals, and scores the mean representation with the
 * disentanglement metrics.
 */
import * as tf from "@tensorflow/tfjs";
import { choice, type ConfigOf, integer, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { Rng, type RngState } from "../lib/core/rng.ts";
import { join } from "node:path";
import { UsageError } from "../lib/core/errors.ts";
import { type LoadedCheckpoint, loadLatestCheckpoint, readRunInfo } from "../lib/core/run_store.ts";
import type { Image } from "../lib/core/png.ts";
import { type GroundTruthDataset, sampleBatch } from "../lib/data/ground_truth.ts";
import { imageGrid } from "../lib/data/preview.ts";
import { DATASET_NAMES, type DatasetName, loadDataset } from "../lib/data/registry.ts";
import { evaluateArrays } from "../lib/metrics/evaluate.ts";
import { type Matrix, meanCorrelationCoefficient } from "../lib/metrics/mcc.ts";
import { unsupervisedScores } from "../lib/metrics/unsupervised.ts";
import { betaVaeScore, type Representation } from "../lib/metrics/beta_vae_score.ts";
import { factorVaeScore } from "../lib/metrics/factor_vae_score.ts";
import { irs } from "../lib/metrics/irs.ts";
import { type Architecture, type Decoder, type Encoder, vaeNetworks } from "../lib/models/dislib_vae.ts";
import { optimizerState, restoreOptimizer, trainPhase } from "../lib/train/loop.ts";
import {
  discriminatorLoss,
  encodeImages,
  FactorDiscriminator,
  permuteDims,
  posterior,
  VAE_METHODS,
  vaeLoss,
  type VaeMethod,
} from "../lib/train/vae_objectives.ts";

const SOURCE = "002_e32ada0b3d473046.md §2 (Locatello et al. 2019); targets: 000_306f4209a39c5a17.md Table 16";

/** The network keys every image experiment shares. */
export const NETWORK_CONFIG = {
  resolution: choice("64", ["64", "32"], "image side; 32 drops one stride-2 stage"),
  architecture: choice("conv", ["conv", "mlp"], "Table 2 conv nets, or the β-VAE paper's MLPs"),
  latents: integer(10, "latent dimensions", { min: 1, max: 64 }),
};

/** The keys of one VAE-family model's training and scoring. */
export const VAE_CONFIG = {
  method: choice("beta_vae", VAE_METHODS, "objective (Locatello et al. 2019 §2.3)"),
  value: real(4, "the method's hyperparameter: β, c_max, γ or λ_od (Table 3 grid)", { min: 0 }),
  dataset: choice("dsprites", DATASET_NAMES, "ground-truth dataset"),
  ...NETWORK_CONFIG,
  steps: integer(300_000, "Adam steps", { min: 1 }),
  batch: integer(64, "images per step", { min: 2 }),
  lr: real(1e-4, "Adam learning rate (β1 0.9, β2 0.999, ε 1e-8)", { min: 0, max: 1 }),
  anneal_steps: integer(100_000, "AnnealedVAE: steps for the capacity to reach c_max", { min: 1 }),
  discriminator_hidden: integer(1_000, "FactorVAE discriminator units per layer (Table 4b: 1,000)", { min: 1 }),
  discriminator_layers: integer(6, "FactorVAE discriminator hidden layers (disentanglement_lib: 6)", { min: 1 }),
  eval_samples: integer(10_000, "observations scored by the array metrics (MIG, DCI, SAP, ...)", { min: 20 }),
  score_points: integer(10_000, "BetaVAE/FactorVAE training points (half as many evaluation points)", { min: 2 }),
  score_batch: integer(64, "images per BetaVAE/FactorVAE point", { min: 2 }),
  log_every: integer(100, "steps between logged losses", { min: 1 }),
  media_every: integer(5_000, "steps between reconstruction and traversal images", { min: 1 }),
  checkpoint_every: integer(5_000, "steps between checkpoints (0: none)", { min: 0 }),
};
type Cfg = ConfigOf<typeof VAE_CONFIG>;

/** Median scores of β-VAE on dSprites (Locatello et al. 2020 via Paper A Table 16), as fractions. */
const targets: Target[] = [
  {
    metric: "beta_vae_score",
    paper: 0.823,
    source: "000_306f4209a39c5a17.md Table 16, β-VAE (i.i.d.) median",
    tolerance: 0.05,
  },
  {
    metric: "factor_vae_score",
    paper: 0.66,
    source: "000_306f4209a39c5a17.md Table 16, β-VAE median",
    tolerance: 0.05,
  },
  { metric: "mig", paper: 0.102, source: "000_306f4209a39c5a17.md Table 16, β-VAE (i.i.d.) median", tolerance: 0.05 },
  {
    metric: "dci_disentanglement",
    paper: 0.186,
    source: "000_306f4209a39c5a17.md Table 16, β-VAE median",
    tolerance: 0.05,
  },
  { metric: "modularity", paper: 0.822, source: "000_306f4209a39c5a17.md Table 16, β-VAE median", tolerance: 0.05 },
  { metric: "sap", paper: 0.049, source: "000_306f4209a39c5a17.md Table 16, β-VAE median", tolerance: 0.02 },
];

const claims: Claim[] = [
  {
    text: "the Gaussian TC of the sampled representation is below that of the mean representation for β > 1",
    source: "002_e32ada0b3d473046.md §5.3 (Figs. 2–4)",
    holds: (m) => (m.beta === undefined || m.beta <= 1 ? undefined : m.tc_sampled < m.tc_mean),
  },
];

/** Checkpoint state besides the arrays. */
interface VaeState {
  step: number;
  batchRng: RngState;
}

function models(rng: Rng, cfg: Cfg, channels: number) {
  const options = { size: Number(cfg.resolution) as 32 | 64, channels, latents: cfg.latents };
  const { encoder, decoder } = vaeNetworks(rng, cfg.architecture as Architecture, options);
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
  /** Whether it saves periodic and final checkpoints (a study keeps its own). */
  checkpoints: boolean;
  /** Prefix of its media names, so that many models share one run. */
  mediaPrefix: string;
}

/** Trains one VAE-family model on `dataset`; returns its networks and last logged terms. */
export async function trainVae(ctx: RunContext, cfg: Cfg, dataset: GroundTruthDataset, training: VaeTraining) {
  const [h, w, c] = dataset.imageShape;
  const { encoder, decoder, discriminator } = models(Rng.derive(training.seed, "model"), cfg, c);
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

  const last = await trainPhase(ctx, {
    label: training.label,
    steps: cfg.steps,
    startStep: saved?.step ?? 0,
    variables: vaeParams,
    optimizer,
    logEvery: cfg.log_every,
    loss: (step) => {
      const { observations } = sampleBatch(dataset, cfg.batch, batchRng);
      const x = tf.tensor4d(observations.values, [cfg.batch, h, w, c]);
      const q = posterior(
        encoder,
        x,
        tf.tensor2d(batchRng.normalArray(cfg.batch * cfg.latents), [cfg.batch, cfg.latents]),
      );
      if (discriminator) lastZ = tf.keep(q.z);
      return vaeLoss(decoder, x, q, {
        method: cfg.method as VaeMethod,
        value: cfg.value,
        step,
        iterationThreshold: cfg.anneal_steps,
        discriminator: discriminator ?? undefined,
      });
    },
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
    evaluateEvery: cfg.media_every,
    evaluate: async (step) => {
      const images = await mediaImages(encoder, decoder, dataset, mediaRng);
      ctx.image(`${training.mediaPrefix}reconstructions`, step, images.reconstructions);
      ctx.image(`${training.mediaPrefix}traversals`, step, images.traversals);
      return {};
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
  });
  // A final checkpoint holds the trained weights for export-codes and eval --run.
  if (training.checkpoints) {
    await ctx.checkpoint(cfg.steps, entries(), { step: cfg.steps, batchRng: batchRng.state() } satisfies VaeState);
  }
  optimizer.dispose();
  discriminatorOptimizer.dispose();
  return {
    encoder,
    last,
    dispose: () => {
      encoder.params.dispose();
      decoder.params.dispose();
      discriminator?.params.dispose();
    },
  };
}

/** The resolved config of a vae-dsprites run. */
export type VaeConfig = Cfg;

/** Mean and sampled codes of fresh i.i.d. samples, with their factors (the representation every metric reads). */
export async function sampleCodes(encoder: Encoder, dataset: GroundTruthDataset, samples: number, rng: Rng) {
  const { factors, observations } = sampleBatch(dataset, samples, rng);
  const codes = await encodeImages(encoder, observations.values, observations.n, observations.shape, rng);
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
 * Every metric of a trained encoder: the array metrics on the mean code of
 * `eval_samples` fresh samples, TC of the mean and the sampled code, and the
 * BetaVAE, FactorVAE and IRS scores.
 */
export async function scoreVae(
  encoder: Encoder,
  dataset: GroundTruthDataset,
  cfg: Pick<Cfg, "eval_samples" | "score_points" | "score_batch" | "latents" | "method" | "value">,
  seed: number,
) {
  const codes = await sampleCodes(encoder, dataset, cfg.eval_samples, Rng.derive(seed, "evaluation"));
  const { values, seconds } = evaluateArrays(codes.mean, codes.factors, [
    "mig",
    "dci",
    "sap",
    "modularity",
    "tc",
  ]);
  const dciScores = values.dci as Record<string, number>;
  const metrics: Record<string, number> = {
    mig: values.mig as number,
    dci_disentanglement: dciScores.disentanglement,
    dci_completeness: dciScores.completeness,
    dci_informativeness_test: dciScores.informativeness_test,
    sap: values.sap as number,
    modularity: values.modularity as number,
    explicitness: values.explicitness as number,
    ...mccWithFactors(codes.factors, codes.mean, dataset.factorNames),
    tc_mean: values.tc as number,
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
  metrics.irs = irs(codes.mean, codes.factors).avg_score;
  seconds.interventional = (performance.now() - started) / 1000;
  if (cfg.method === "beta_vae" || cfg.method === "beta_tc_vae") metrics.beta = cfg.value;
  return { metrics, seconds };
}

/**
 * The trained encoder of a finished vae-dsprites run, rebuilt from its
 * config and seed and loaded from its final checkpoint, with its dataset.
 */
export function loadTrainedVae(dir: string): { encoder: Encoder; dataset: GroundTruthDataset; cfg: Cfg; seed: number } {
  const info = readRunInfo(dir);
  if (info.experiment !== "vae-dsprites") throw new UsageError(`${dir}: a ${info.experiment} run, not vae-dsprites`);
  if (info.status !== "completed") throw new UsageError(`${dir}: the run is ${info.status}, not completed`);
  const cfg = JSON.parse(Deno.readTextFileSync(join(dir, "config.json"))) as Cfg;
  const checkpoint = loadLatestCheckpoint(dir);
  if (!checkpoint || (checkpoint.state as VaeState).step !== cfg.steps) {
    throw new UsageError(`${dir}: has no final checkpoint (runs save one at their last step)`);
  }
  const dataset = loadDataset(cfg.dataset as DatasetName, { size: Number(cfg.resolution) as 32 | 64 });
  const { encoder, decoder, discriminator } = models(Rng.derive(info.seed, "model"), cfg, dataset.imageShape[2]);
  encoder.params.load(checkpoint.arrays, "encoder/");
  decoder.params.dispose();
  discriminator?.params.dispose();
  return { encoder, dataset, cfg, seed: info.seed };
}

/** One VAE-family model on a ground-truth dataset, trained and scored. */
export const experiment = defineExperiment({
  name: "vae-dsprites",
  description: "One VAE-family model (β-VAE, FactorVAE, DIP-VAE-I/II, β-TCVAE, AnnealedVAE) on dSprites, scored",
  source: SOURCE,
  config: VAE_CONFIG,
  presets: {
    smoke: {
      resolution: "32",
      steps: 4,
      batch: 8,
      eval_samples: 100,
      score_points: 20,
      score_batch: 4,
      log_every: 2,
      media_every: 4,
      checkpoint_every: 2,
    },
    quick: {
      resolution: "32",
      steps: 5_000,
      lr: 5e-4,
      discriminator_hidden: 256,
      discriminator_layers: 3,
      eval_samples: 2_000,
      score_points: 300,
      log_every: 50,
      media_every: 1_000,
      checkpoint_every: 1_000,
    },
    paper: {},
  },
  targets,
  claims,
  async run(ctx, cfg) {
    const dataset = loadDataset(cfg.dataset as DatasetName, { size: Number(cfg.resolution) as 32 | 64 });
    const training = { label: cfg.method, seed: ctx.seed, resumed: ctx.resumed, checkpoints: true, mediaPrefix: "" };
    const { encoder, dispose } = await trainVae(ctx, cfg, dataset, training);
    const { metrics, seconds } = await scoreVae(encoder, dataset, cfg as VaeConfig, ctx.seed);
    dispose();
    return { metrics, details: { metric_seconds: seconds, dataset: dataset.description } };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
