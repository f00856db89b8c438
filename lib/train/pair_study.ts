/**
 * The driver of studies of pair-trained models (slowvae-dsprites,
 * slowvae-kitti): trains a plan of models × seeds, scores each, encodes the
 * shared probe images for UDR, resumes at model granularity, and summarises
 * each model over seeds (mean and s.d., as Klindt2021's tables).
 *
 * @module
 */
import { type ConfigOf, integer, real } from "../core/config.ts";
import { meanSd } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { type GroundTruthDataset, sampleBatch } from "../data/ground_truth.ts";
import { type FactorPairs, lapPairs, uniPairs } from "../data/pair_samplers.ts";
import type { RunContext } from "../core/experiment.ts";
import { encodeImages, type Encoder } from "../models/vae.ts";
import {
  compareSelection,
  type ProbeCodes,
  type SelectionComparison,
  settingOf,
  type StudyModel,
  udrPerModel,
} from "../metrics/study.ts";
import { planWorker, runModelPlan } from "./model_plan.ts";
import { type WorkerOptions, type WorkerPhase, WORKERS_CONFIG } from "./parallel_phases.ts";
import {
  type CurveScoring,
  type PairModelConfig,
  type PairModelMethod,
  type PairSource,
  trainPairModel,
} from "./pair_model.ts";
import { CURVE_CONFIG } from "../metrics/score.ts";
import { type SavedEncoderInfo, saveEncoder } from "./saved_encoder.ts";
import { NETWORK_CONFIG } from "./vae.ts";
import { logEveryConfig } from "./config.ts";

/**
 * Config keys every pair experiment shares: the network, the optimizer, the
 * schedule, the UDR probe and the workers its models train in.
 */
export const PAIR_TRAINING_CONFIG = {
  ...NETWORK_CONFIG,
  steps: integer(300_000, "Adam steps per model", { min: 1, max: 100_000_000 }),
  pairs: integer(32, "pairs per step (64 images)", { min: 2, max: 2_048 }),
  lr: real(1e-4, "Adam learning rate (β1 0.9, β2 0.999, ε 1e-8)", { min: 0, max: 1 }),
  probe_images: integer(1_000, "shared images every model encodes for UDR", { min: 10, max: 50_000 }),
  ...logEveryConfig(100),
  ...CURVE_CONFIG,
  ...WORKERS_CONFIG,
};
type TrainingCfg = ConfigOf<typeof PAIR_TRAINING_CONFIG>;

/** A model's settings from the shared keys and its method's weights. */
export function pairModelConfig(
  cfg: ConfigOf<typeof PAIR_TRAINING_CONFIG>,
  method: PairModelMethod,
  weights: { beta: number; gamma: number; rate: number },
): PairModelConfig {
  return {
    method,
    ...weights,
    architecture: cfg.architecture,
    latents: cfg.latents,
    steps: cfg.steps,
    pairs: cfg.pairs,
    lr: cfg.lr,
    logEvery: cfg.log_every,
  };
}

/**
 * Pairs of images of a ground-truth dataset whose factors move by the given
 * transition sampler (Klindt2021 App. D: LAP, UNI); "iid" draws single frames.
 */
export function groundTruthPairSource(
  dataset: GroundTruthDataset,
  transitions: "lap" | "uni" | "iid",
  lapRate: number,
): PairSource {
  const space = { sizes: dataset.factorSizes, categorical: dataset.categorical };
  const sample = (n: number, rng: Rng): FactorPairs => {
    if (transitions === "uni") return uniPairs(space, n, rng);
    // The i.i.d. baseline draws frames, never pairs; LAP stands in so the source is total.
    return lapPairs(space, n, rng, { rate: lapRate });
  };
  const source: PairSource = {
    imageShape: dataset.imageShape,
    pairs: (n, rng) => {
      const { first, second } = sample(n, rng);
      return { x0: dataset.observations(first, rng).values, x1: dataset.observations(second, rng).values };
    },
    frames: (n, rng) => sampleBatch(dataset, n, rng).observations.values,
  };
  return source;
}

/** One entry of a plan: a named model setting and a seed. */
export interface PlannedModel {
  /** Setting name, recorded as the study model's method: e.g. "slowvae_lap" or "slowvae_lap(γ=10,λ=6)". */
  method: string;
  /** Its swept value, for the study tables (0 when it has none). */
  value: number;
  /** Seed of the model's weights and batches. */
  seed: number;
  /** The model's settings. */
  config: PairModelConfig;
  /** Its training images. */
  source: PairSource;
}

/**
 * The learning curve of a study's target `<setting>/<metric>`: the metric
 * each seed's model logged in training (`<setting>/seed<seed>/<metric>`),
 * averaged over seeds.
 */
export function seedsCurve(metric: string): string {
  const at = metric.indexOf("/");
  return `${metric.slice(0, at)}/seed*/${metric.slice(at + 1)}`;
}

/** What the driver needs besides the plan. */
export interface PairStudyOptions {
  /** Scores of a trained encoder. */
  score(encoder: Encoder, seed: number): Promise<Record<string, number>>;
  /** Headline metrics logged during training, each model's learning curve. */
  curve?: CurveScoring;
  /** The shared probe images `[n, h, w, c]` for UDR. */
  probe: { images: Float32Array; n: number; shape: [number, number, number] };
  /**
   * When the models' data is a registered ground-truth dataset: what rebuilds
   * and scores a kept encoder; each model is then kept as models/<setting>-seed<seed>/.
   */
  keep?: Omit<SavedEncoderInfo, "seed">;
}

/** One planned model trained, scored, kept (when asked) and encoding the probe images for UDR. */
async function trainAndScore(ctx: RunContext, planned: PlannedModel, index: number, options: PairStudyOptions) {
  const { method, seed, config, source } = planned;
  const { encoder, last } = await trainPairModel(ctx, source, config, {
    label: `${method}/seed${seed}`,
    seed,
    curve: options.curve,
  });
  const metrics = await options.score(encoder, seed);
  if (options.keep) await saveEncoder(ctx, `${method}-seed${seed}`, encoder, { ...options.keep, seed });
  const { mean, klPerCode } = await encodeImages(encoder, options.probe.images, options.probe.n, options.probe.shape);
  encoder.params.dispose();
  for (const key of ["reconstruction", "kl_normal", "kl", "transition", "kl_pair", "accuracy"]) {
    if (Number.isFinite(last[key])) metrics[`train_${key}`] = last[key];
  }
  // The probe codes of each model, kept for UDR at the end.
  return {
    metrics,
    arrays: {
      [`probe/${index}/codes`]: { data: Float32Array.from(mean.data), shape: [mean.rows, mean.cols] },
      [`probe/${index}/kl`]: { data: Float32Array.from(klPerCode), shape: [mean.cols] },
    },
  };
}

/** A study's plan and options, as an experiment builds them from its config and seed (in a worker too). */
export interface PairStudySetup {
  /** The models to train, in order. */
  plan: PlannedModel[];
  /** How each is scored, probed and kept. */
  options: PairStudyOptions;
}

/** The worker side of {@linkcode runPairStudy}: model `index` of the study `setup` rebuilds. */
export function pairStudyModel<C>(
  setup: (ctx: RunContext, cfg: C) => PairStudySetup,
): WorkerPhase<C, number, StudyModel> {
  return planWorker((ctx: RunContext, cfg: C) => {
    const { plan, options } = setup(ctx, cfg);
    return { plan, run: (ctx, entry, index) => trainAndScore(ctx, entry, index, options) };
  });
}

/** A pair study's outcome ({@linkcode runPairStudy}). */
export interface PairStudyOutcome {
  /** Each metric's mean and s.d. over seeds per setting (`<setting>/<metric>`, `…_sd`); the UDR choice's MCC rank. */
  metrics: Record<string, number>;
  /** Every model of the plan with its scores, UDR included. */
  models: StudyModel[];
  /** The settings UDR and MCC choose; null with fewer than two settings or no finite UDR. */
  selection: SelectionComparison | null;
}

/**
 * Trains and scores every planned model not yet done; returns every model,
 * the per-setting mean and s.d. over seeds with UDR, and the comparison of
 * selection by UDR with selection by MCC. With `parallel.workers` > 1 the
 * models train that many at once, in workers that call the function the
 * experiment exports with {@linkcode pairStudyModel}: same numbers.
 */
export async function runPairStudy<C>(
  ctx: RunContext,
  { plan, options }: PairStudySetup,
  parallel?: WorkerOptions<C>,
): Promise<PairStudyOutcome> {
  const { models, arrays } = await runModelPlan(
    ctx,
    plan,
    (entry, index) => trainAndScore(ctx, entry, index, options),
    parallel,
  );
  const probes: ProbeCodes[] = models.map((_, i) => {
    const codes = arrays[`probe/${i}/codes`], kl = arrays[`probe/${i}/kl`];
    return {
      codes: { data: Float64Array.from(codes.data), rows: codes.shape[0], cols: codes.shape[1] },
      klPerCode: Float64Array.from(kl.data),
    };
  });
  const selection = udrSelection(models, probes, "mcc");
  const metrics = seedSummary(models);
  if (selection) metrics["selection/mcc_rank_of_udr_choice"] = selection.supervisedRankOfUnsupervisedChoice;
  return { metrics, models, selection };
}

/**
 * A pair-study experiment's run: its models, `cfg.workers` at a time (the
 * experiment's `module` exports the worker side as `workerModel`, made with
 * {@linkcode pairStudyModel}), and the summary's details.
 */
export async function pairStudyResult<C extends { workers: number }>(
  ctx: RunContext,
  cfg: C,
  study: PairStudySetup & { dataset: { description: string } },
  module: string,
): Promise<{ metrics: Record<string, number>; details: { dataset: string } & Omit<PairStudyOutcome, "metrics"> }> {
  const { metrics, models, selection } = await runPairStudy(ctx, study, {
    module,
    exportName: "workerModel",
    cfg,
    workers: cfg.workers,
  });
  return { metrics, details: { dataset: study.dataset.description, models, selection } };
}

/** Mean and s.d. over seeds of each metric, per setting, as `<setting>/<metric>` and `<setting>/<metric>_sd`. */
export function seedSummary(models: readonly StudyModel[]): Record<string, number> {
  const out: Record<string, number> = {};
  const settings = [...new Set(models.map((m) => m.method))];
  for (const setting of settings) {
    const ofSetting = models.filter((m) => m.method === setting);
    for (const metric of Object.keys(ofSetting[0].metrics)) {
      const values = ofSetting.map((m) => m.metrics[metric]).filter(Number.isFinite);
      if (values.length === 0) continue;
      const { mean, sd } = meanSd(values);
      out[`${setting}/${metric}`] = mean;
      if (values.length > 1) out[`${setting}/${metric}_sd`] = sd;
    }
  }
  return out;
}

/**
 * UDR of every model among its setting's seeds, and model selection by UDR
 * beside selection by a supervised metric (Klindt2021 §5.1 selects γ, λ by UDR).
 */
export function udrSelection(
  models: StudyModel[],
  probes: ProbeCodes[],
  supervised: string,
): SelectionComparison | null {
  const scores = udrPerModel(models, probes);
  models.forEach((m, i) => {
    if (Number.isFinite(scores[i])) m.metrics.udr = scores[i];
  });
  const settings = new Set(models.map(settingOf));
  if (settings.size < 2 || !models.some((m) => Number.isFinite(m.metrics.udr))) return null;
  return compareSelection(models, "udr", supervised);
}
