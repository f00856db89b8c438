/**
 * SlowVAE on KITTI-Masks-like pedestrian pairs (Klindt2021 App. D.5 KITTI
 * Masks, Table 2 and Tables 14–15): pairs at most Δ frames apart, Δ = 1
 * (mean Δt 0.05 s) vs Δ = 5 (0.15 s); MCC of the mean code against the
 * continuous x, y and area.
 */
import { choices, type ConfigOf, flag, integer, integers, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { Rng } from "../lib/core/rng.ts";
import { KittiMasksPairs } from "../lib/data/kitti_masks.ts";
import { clearlyAbove } from "../lib/metrics/seed_comparison.ts";
import { mccWithFactors } from "../lib/metrics/score.ts";
import { encodeImages } from "../lib/models/vae.ts";
import type { PairModelMethod, PairSource } from "../lib/train/pair_model.ts";
import {
  PAIR_TRAINING_CONFIG,
  pairModelConfig,
  pairStudyModel,
  pairStudyResult,
  type PairStudySetup,
  seedsCurve,
} from "../lib/train/pair_study.ts";
import { settingSeeds } from "../lib/train/pair_seeds.ts";

const SOURCE = "Klindt2021 App. D.5 (KITTI Masks), targets Table 2 and Table 15";

const KITTI_MODELS: Record<string, PairModelMethod> = {
  slowvae: "slow_vae",
  pmvae: "pm_vae",
  adagvae: "ada_gvae",
  pcl: "pcl",
  betavae: "beta_vae",
};

const config = {
  models: choices(["slowvae", "pmvae", "adagvae", "pcl"], Object.keys(KITTI_MODELS), "methods to train"),
  max_deltas: integers([1, 5], "max(Δframes) settings: 1 ≈ mean Δt 0.05 s, 5 ≈ 0.15 s", { min: 1, max: 40 }),
  seeds: integer(10, "seeds per model and Δ: --seed, --seed + 1, …", { min: 1, max: 1000 }),
  gamma: real(10, "SlowVAE and PM-VAE γ", { min: 0 }),
  rate: real(6, "SlowVAE Laplace rate λ", { min: 0 }),
  ada_beta: real(4, "Ada-GVAE β", { min: 0 }),
  vae_beta: real(4, "β of the i.i.d. β-VAE", { min: 0 }),
  sequences: integer(2_120, "pedestrian sequences (KITTI Masks: 2,120)", { min: 1, max: 100_000 }),
  length: integer(40, "frames per sequence (KITTI Masks: 40 on average)", { min: 2, max: 1_000 }),
  augment: flag(true, "±5 px shifts, ±2° rotation and flips shared by a pair"),
  eval_samples: integer(10_000, "frames scored by MCC", { min: 20, max: 50_000 }),
  ...PAIR_TRAINING_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

const TABLE_2 = "Klindt2021 Table 2";
const TABLE_15 = "Klindt2021 Table 15";
// MCC of the untrained conv encoder (step 0) on the quick preset's 2,000 evaluation frames, measured by the same
// scoring: 0.365–0.495 over 12 initialisations (mean 0.442); a quick run averages 2 seeds, whose mean reached 0.468.
const KITTI_NULLS = [
  { value: 0.442, model: "untrained encoder, step 0: mean of 12 initialisations (measured, quick preset's frames)" },
  { value: 0.468, model: "untrained encoder, step 0: highest mean of the 2 seeds a quick run averages (measured)" },
  { value: 0.043, model: "random code: 10 Gaussian latents, mean of 12 draws (measured, 2,000 frames)" },
];
const target = (
  metric: string,
  paper: number,
  what: string,
  tolerance: number,
  toleranceSource: string,
): Target<Cfg> => ({
  metric,
  paper,
  source: `${metric.startsWith("pmvae") ? TABLE_15 : TABLE_2}, ${what}`,
  tolerance,
  toleranceSource,
  nulls: KITTI_NULLS,
  kind: "analogue",
  standIn: "procedural walking-silhouette sequences (x, y and area as random walks with generalized-Laplace " +
    "steps) at 32×32 for the KITTI-MOTS/MOTSChallenge pedestrian masks at 64×64; 600–2,400 steps for 300,000",
  // SlowVAE's rows are reproduced when reached or beaten; a baseline's when matched.
  direction: metric.startsWith("slowvae") ? "higher" : "match",
  curve: seedsCurve(metric),
  // A preset that trains a subset of the models (long) leaves the others' rows out instead of "not measured".
  appliesTo: (cfg) => {
    const [, model, delta] = /^([a-z]+)_d(\d+)\//.exec(metric)!;
    return cfg.models.includes(model) && cfg.max_deltas.includes(Number(delta));
  },
});
const sd = (row: string) => `Table 2's s.d. over 10 seeds (${row})`;
const half = "rule: half the way from the published value to the untrained encoder's 0.468";
const targets: Target<Cfg>[] = [
  target("slowvae_d1/mcc", 0.661, "SlowVAE KITTI mean(Δt)=0.05 s MCC 66.1 (4.5)", 0.045, sd("SlowVAE, 4.5")),
  target("slowvae_d5/mcc", 0.796, "SlowVAE KITTI mean(Δt)=0.15 s MCC 79.6 (5.8)", 0.058, sd("SlowVAE, 5.8")),
  // Table 15 gives PM-VAE no spread.
  target(
    "pmvae_d1/mcc",
    0.574,
    "PM-VAE(γ=10) KITTI 0.05 s MCC 57.4",
    0.05,
    "rule: 0.05, below half the way (0.053) to the untrained encoder's 0.468",
  ),
  target(
    "pmvae_d5/mcc",
    0.782,
    "PM-VAE(γ=10) KITTI 0.15 s MCC 78.2",
    0.05,
    "rule: 0.05 on a [0, 1] score (Table 15 gives no spread)",
  ),
  target("adagvae_d1/mcc", 0.626, "Ada-GVAE KITTI 0.05 s MCC 62.6 (7.5)", 0.075, sd("Ada-GVAE, 7.5")),
  target("adagvae_d5/mcc", 0.676, "Ada-GVAE KITTI 0.15 s MCC 67.6 (6.7)", 0.067, sd("Ada-GVAE, 6.7")),
  // Table 2's s.d. 5.1 would reach the untrained encoder: the half-way rule wins.
  target("pcl_d1/mcc", 0.526, "PCL KITTI 0.05 s MCC 52.6 (5.1)", 0.029, `${half} (Table 2's s.d. 5.1 is wider)`),
  target("pcl_d5/mcc", 0.585, "PCL KITTI 0.15 s MCC 58.5 (3.3)", 0.033, sd("PCL, 3.3")),
];

const claims: Claim<Cfg>[] = [
  {
    text: "SlowVAE's MCC rises from max Δ = 1 to max Δ = 5 by more than 0.05 and twice the seeds' standard error " +
      "(66.1 (4.5) → 79.6 (5.8))",
    source: `${TABLE_2}, SlowVAE row`,
    holds: (m, cfg) => clearlyAbove(m, "slowvae_d5/mcc", "slowvae_d1/mcc", 0.05, cfg.seeds),
  },
  {
    // At Δ = 5 the document's gap (79.6 vs 78.2) is within SlowVAE's s.d. of 5.8: only Δ = 1 is a finding.
    text: "at max Δ = 1, SlowVAE's MCC exceeds PM-VAE(γ=10)'s by more than 0.05 and twice the seeds' standard " +
      "error (66.1 vs 57.4)",
    source: `${TABLE_2}, SlowVAE 0.05 s; ${TABLE_15}, PM-VAE(γ=10) 0.05 s`,
    holds: (m, cfg) => clearlyAbove(m, "slowvae_d1/mcc", "pmvae_d1/mcc", 0.05, cfg.seeds),
  },
];

/** Frames and pairs of one KITTI-Masks-like dataset as a training source. */
function kittiSource(dataset: KittiMasksPairs): PairSource {
  return {
    imageShape: dataset.imageShape,
    pairs: (n, rng) => {
      const { x0, x1 } = dataset.samplePairs(n, rng);
      return { x0, x1 };
    },
    frames: (n, rng) => dataset.sampleFrames(n, rng).observations,
  };
}

function datasets(cfg: Cfg, seed: number): Map<number, KittiMasksPairs> {
  // The same sequences for every Δ: only the frame gap of the pairs differs.
  return new Map(cfg.max_deltas.map((maxDelta) => [
    maxDelta,
    new KittiMasksPairs({
      size: cfg.resolution,
      sequences: cfg.sequences,
      length: cfg.length,
      maxDelta,
      augment: cfg.augment,
    }, Rng.derive(seed, "kitti")),
  ]));
}

/** The study's plan and scoring, from the config and the run's seed (the same in every worker). */
function kittiStudy(ctx: RunContext, cfg: Cfg): PairStudySetup & { dataset: KittiMasksPairs } {
  const byDelta = datasets(cfg, ctx.seed);
  const plan = cfg.models.flatMap((model) => {
    const method = KITTI_MODELS[model];
    const beta = method === "beta_vae" ? cfg.vae_beta : method === "ada_gvae" ? cfg.ada_beta : 1;
    const config = pairModelConfig(cfg, method, { beta, gamma: cfg.gamma, rate: cfg.rate });
    return cfg.max_deltas.flatMap((maxDelta) =>
      settingSeeds(`${model}_d${maxDelta}`, ctx.seed, cfg.seeds, kittiSource(byDelta.get(maxDelta)!), config)
    );
  });
  // Every model is scored on the same frames, so Δ settings differ only in training.
  const dataset = byDelta.get(cfg.max_deltas[0])!;
  const evaluation = dataset.sampleFrames(cfg.eval_samples, Rng.derive(ctx.seed, "evaluation"));
  const factors = { data: evaluation.factors, rows: evaluation.n, cols: 3 };
  const probe = dataset.sampleFrames(cfg.probe_images, Rng.derive(ctx.seed, "probe"));
  return {
    dataset,
    plan,
    options: {
      score: async (encoder) => {
        const { mean } = await encodeImages(encoder, evaluation.observations, evaluation.n, evaluation.shape);
        return mccWithFactors(factors, mean, dataset.factorNames);
      },
      // The curve's points score the first curve_samples of the same frames.
      curve: {
        every: cfg.curve_every,
        score: async (encoder) => {
          const n = Math.min(cfg.curve_samples, evaluation.n);
          const pixels = evaluation.shape.reduce((a, b) => a * b, 1);
          const images = evaluation.observations.subarray(0, n * pixels);
          const { mean } = await encodeImages(encoder, images, n, evaluation.shape);
          return mccWithFactors(
            { ...factors, data: factors.data.subarray(0, n * 3), rows: n },
            mean,
            dataset.factorNames,
          );
        },
      },
      probe: { images: probe.observations, n: probe.n, shape: probe.shape },
    },
  };
}

/** SlowVAE and its baselines on KITTI-Masks-like pairs, per Δ and seed. */
export const experiment = defineExperiment({
  name: "slowvae-kitti",
  finding: "SlowVAE identifies natural mask transitions, better at larger Δ",
  description: "SlowVAE vs PM-VAE, Ada-GVAE, PCL on KITTI-Masks-like pedestrian pairs, Δ = 1 vs 5 (Klindt2021 Table 2)",
  source: SOURCE,
  config,
  presets: {
    // Every target's setting once, two steps each: the pipeline and its curves, not trained numbers.
    smoke: {
      models: ["slowvae", "pmvae", "adagvae", "pcl"],
      seeds: 1,
      sequences: 4,
      length: 10,
      resolution: 32,
      steps: 2,
      pairs: 2,
      eval_samples: 20,
      probe_images: 10,
      log_every: 1,
      curve_every: 1,
      curve_samples: 20,
    },
    quick: {
      models: ["slowvae", "pmvae", "adagvae", "pcl"],
      seeds: 2,
      resolution: 32,
      steps: 600,
      lr: 5e-4,
      eval_samples: 2_000,
      probe_images: 500,
      log_every: 50,
      curve_every: 100,
      workers: 2,
    },
    // Where quick stops: SlowVAE against PM-VAE, the comparison quick cannot decide, at 4× the steps.
    long: {
      models: ["slowvae", "pmvae"],
      seeds: 2,
      resolution: 32,
      steps: 2_400,
      lr: 5e-4,
      eval_samples: 2_000,
      probe_images: 500,
      log_every: 100,
      curve_every: 400,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "600 steps × 2 seeds at 32×32 against Table 2's 300,000 × 10 at 64×64: the models' MCC are within each " +
      "other's seed spread, so SlowVAE > PM-VAE is not decided at this budget; SlowVAE's MCC rises from Δ = 1 to 5 " +
      "(0.653 → 0.673), but by less than twice the seeds' standard error",
    long: "2,400 steps × 2 seeds, SlowVAE and PM-VAE only (the Ada-GVAE and PCL targets are left out). " +
      "Measured: SlowVAE's mean MCC is above PM-VAE's at both Δ from step 800 on (final 0.683 vs 0.671 at Δ = 1, " +
      "0.700 vs 0.671 at Δ = 5), but at Δ = 1 by a tenth of the seeds' s.d. (0.110): 2 seeds do not decide the " +
      "published 8.7-point gap; the Δ = 5 curves flatten near 0.70, below the published 0.796 and 0.782",
  },
  targets,
  claims,
  run: (ctx, cfg) => pairStudyResult(ctx, cfg, kittiStudy(ctx, cfg), import.meta.url),
});

/** Model `index` of the study, as a worker trains it. */
export const workerModel = pairStudyModel(kittiStudy);

if (import.meta.main) await runFromCli(experiment, Deno.args);
