/**
 * SlowVAE on dSprites pairs (Klindt2021 §3–4, App. A–F methods, Table 1
 * and Tables 14–16 targets): SlowVAE on LAP and UNI transitions, the PM-VAE
 * ablation, Ada-GVAE, PCL and the i.i.d. β-VAE, over seeds; every
 * disentanglement metric, per-factor correlations, and selection by UDR
 * beside selection by MCC.
 */
import { choices, type ConfigOf, integer, integers, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { Rng } from "../lib/core/rng.ts";
import { type GroundTruthDataset, sampleBatch } from "../lib/data/ground_truth.ts";
import { loadDataset } from "../lib/data/registry.ts";
import { clearlyAbove } from "../lib/metrics/seed_comparison.ts";
import { curveScores, SCORE_CONFIG, scoreConfig, scoreVae } from "../lib/metrics/score.ts";
import { loadSavedEncoder } from "../lib/train/saved_encoder.ts";
import type { PairModelMethod } from "../lib/train/pair_model.ts";
import {
  groundTruthPairSource,
  PAIR_TRAINING_CONFIG,
  pairModelConfig,
  pairStudyModel,
  pairStudyResult,
  type PairStudySetup,
  type PlannedModel,
  seedsCurve,
} from "../lib/train/pair_study.ts";
import { settingSeeds } from "../lib/train/pair_seeds.ts";

const SOURCE = "Klindt2021 §3–4, App. A–F (SlowVAE), targets Tables 1, 14";

/** Model settings: method and transitions. */
export const DSPRITES_PAIR_MODELS: Record<string, { method: PairModelMethod; transitions: "lap" | "uni" | "iid" }> = {
  slowvae_lap: { method: "slow_vae", transitions: "lap" },
  slowvae_uni: { method: "slow_vae", transitions: "uni" },
  pmvae_lap: { method: "pm_vae", transitions: "lap" },
  adagvae_lap: { method: "ada_gvae", transitions: "lap" },
  adagvae_uni: { method: "ada_gvae", transitions: "uni" },
  adamlvae_lap: { method: "ada_mlvae", transitions: "lap" },
  pcl_lap: { method: "pcl", transitions: "lap" },
  pcl_uni: { method: "pcl", transitions: "uni" },
  betavae: { method: "beta_vae", transitions: "iid" },
};

const config = {
  models: choices(
    ["slowvae_lap", "slowvae_uni", "pmvae_lap", "adagvae_lap", "pcl_lap", "betavae"],
    Object.keys(DSPRITES_PAIR_MODELS),
    "model settings: method_transitions (LAP, UNI; the β-VAE sees i.i.d. images)",
  ),
  seeds: integer(10, "seeds per model: --seed, --seed + 1, … (Klindt2021: 10)", { min: 1, max: 1000 }),
  gammas: integers([10], "SlowVAE γ values; several with --rates form the grid UDR selects from", { min: 1 }),
  rates: integers([6], "SlowVAE Laplace rates λ", { min: 1 }),
  pm_gamma: real(10, "PM-VAE γ (Tables 14–15 sweep 1–16)", { min: 0 }),
  ada_beta: real(4, "Ada-GVAE/-MLVAE β (Klindt2021 selects from 1–16 by reconstruction)", { min: 0 }),
  vae_beta: real(4, "β of the i.i.d. β-VAE", { min: 0 }),
  lap_rate: real(1, "LAP data rate λ: scale ln(n)/λ per factor (App. D.2)", { min: 0.01 }),
  ...SCORE_CONFIG,
  ...PAIR_TRAINING_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

const TABLE_1 = "Klindt2021 Table 1";
const TABLE_14 = "Klindt2021 Table 14";
const TABLE_16 = "Klindt2021 Table 16";

/**
 * What trivial encoders score on each metric: the untrained conv encoder at step 0, scored by the same code on
 * dSprites at 32×32 with the quick preset's sample sizes (seeds 0–2, the seeds a quick run trains) and the long
 * preset's (seeds 0–1); the highest, and for MCC also the quick seeds' mean, which is what a quick run of untrained
 * models reports; and chance for the BetaVAE and FactorVAE scores' classifiers over dSprites' 5 factors. The
 * untrained encoder's FactorVAE score is 0: no latent's s.d. reaches the 0.05 below which the score drops it.
 */
const UNTRAINED = "untrained encoder, step 0 (measured, quick and long scoring";
const DSPRITES_NULLS: Record<string, { value: number; model: string }[]> = {
  mcc: [
    { value: 0.366, model: `${UNTRAINED}: highest)` },
    { value: 0.337, model: `${UNTRAINED}: mean of quick's seeds 0–2)` },
  ],
  dci_disentanglement: [{ value: 0.021, model: `${UNTRAINED}: highest)` }],
  beta_vae_score: [
    { value: 0.2, model: "chance: 1/5 factors" },
    { value: 0.367, model: `${UNTRAINED}: highest)` },
  ],
  factor_vae_score: [
    { value: 0.2, model: "chance: 1/5 factors" },
    { value: 0, model: `${UNTRAINED}; no active latent)` },
  ],
  mig: [{ value: 0.019, model: `${UNTRAINED}: highest)` }],
};
const spread = (table: string, sd: string) => `${table}'s s.d. over 10 seeds (${sd})`;

// SlowVAE's rows are reproduced when reached or beaten; a baseline's when matched, since a baseline beating its
// published number changes the comparison the paper makes. Each target's curve is its setting's seeds' mean.
const targets: Target<Cfg>[] = ([
  {
    metric: "slowvae_lap/mcc",
    paper: 0.698,
    source: `${TABLE_1}, SlowVAE dSprites (LAP) MCC 69.8 (2.3)`,
    tolerance: 0.023,
    toleranceSource: spread("Table 1", "2.3"),
    direction: "higher",
  },
  {
    metric: "slowvae_lap/dci_disentanglement",
    paper: 0.654,
    source: `${TABLE_1}, SlowVAE (LAP) DCI 65.4 (3.6)`,
    tolerance: 0.036,
    toleranceSource: spread("Table 1", "3.6"),
    direction: "higher",
  },
  {
    metric: "slowvae_lap/beta_vae_score",
    paper: 1.0,
    source: `${TABLE_1}, SlowVAE (LAP) BetaVAE 100.0 (0.0)`,
    tolerance: 0.02,
    toleranceSource: "rule: Table 1's s.d. is 0.0 (all 10 seeds 100%); 0.02, the score's sampling error on the " +
      "quick preset's 100 evaluation points",
    direction: "higher",
  },
  {
    metric: "slowvae_lap/factor_vae_score",
    paper: 0.975,
    source: `${TABLE_1}, SlowVAE (LAP) FactorVAE 97.5 (3.0)`,
    tolerance: 0.03,
    toleranceSource: spread("Table 1", "3.0"),
    direction: "higher",
  },
  {
    metric: "slowvae_lap/mig",
    paper: 0.295,
    source: `${TABLE_1}, SlowVAE (LAP) MIG 29.5 (9.3)`,
    tolerance: 0.093,
    toleranceSource: spread("Table 1", "9.3"),
    direction: "higher",
  },
  {
    metric: "slowvae_uni/mcc",
    paper: 0.588,
    source: `${TABLE_1}, SlowVAE dSprites (UNI) MCC 58.8 (8.9)`,
    tolerance: 0.089,
    toleranceSource: spread("Table 1", "8.9"),
    direction: "higher",
  },
  {
    metric: "pmvae_lap/mcc",
    paper: 0.492,
    source: `${TABLE_14}, PM-VAE(γ=10) dSprites (LAP) MCC 49.2`,
    tolerance: 0.05,
    toleranceSource: "rule: 0.05 (Table 14 gives no spread), below half the way (0.063) to the untrained encoder",
    direction: "match",
  },
  {
    metric: "pmvae_lap/dci_disentanglement",
    paper: 0.136,
    source: `${TABLE_14}, PM-VAE(γ=10) DCI 13.6`,
    tolerance: 0.05,
    toleranceSource: "rule: 0.05 (Table 14 gives no spread), below half the way (0.058) to the untrained encoder",
    direction: "match",
  },
  {
    metric: "adagvae_lap/mcc",
    paper: 0.569,
    source: `${TABLE_1}, Ada-GVAE dSprites (LAP) MCC 56.9 (4.2)`,
    tolerance: 0.042,
    toleranceSource: spread("Table 1", "4.2"),
    direction: "match",
  },
  {
    metric: "pcl_lap/mcc",
    paper: 0.679,
    source: `${TABLE_1}, PCL dSprites (LAP) MCC 67.9 (3.3)`,
    tolerance: 0.033,
    toleranceSource: spread("Table 1", "3.3"),
    direction: "match",
  },
] satisfies Omit<Target<Cfg>, "nulls" | "kind">[]).map((t): Target<Cfg> => ({
  ...t,
  nulls: DSPRITES_NULLS[t.metric.slice(t.metric.indexOf("/") + 1)],
  kind: "analogue",
  standIn: "a procedural dSprites-like renderer (the same 3·6·40·32·32 factor grid; DeepMind's file where " +
    "present) at 32×32 with one conv stage fewer, 1,000–8,000 steps for 300,000 at 64×64",
  curve: seedsCurve(t.metric),
  // A preset that trains a subset of the models (long) leaves the others' rows out instead of "not measured".
  appliesTo: (cfg) => cfg.models.includes(t.metric.split("/")[0]),
}));

const both = (
  x: boolean | undefined,
  y: boolean | undefined,
) => (x === undefined || y === undefined ? undefined : x && y);
const BEYOND = "by more than 0.05 and twice the seeds' standard error";
const claims: Claim<Cfg>[] = [
  {
    // The document gives no MCC of the β-VAE: its MCC comparison of Tables 1 and 14 is with PM-VAE.
    text: `SlowVAE (LAP)'s MCC exceeds PM-VAE(γ=10)'s ${BEYOND} (69.8 vs 49.2)`,
    source: `${TABLE_1}, SlowVAE (LAP) MCC; ${TABLE_14}, PM-VAE(γ=10) MCC`,
    holds: (m, cfg) => clearlyAbove(m, "slowvae_lap/mcc", "pmvae_lap/mcc", 0.05, cfg.seeds),
  },
  {
    // Table 16 sets the i.i.d. β-VAE (Locatello et al.'s median) beside SlowVAE on the DisLib metrics, DCI among them.
    text: `SlowVAE (LAP)'s DCI disentanglement exceeds PM-VAE(γ=10)'s and the i.i.d. β-VAE's ${BEYOND} ` +
      "(65.4 vs 13.6 and 18.6)",
    source: `${TABLE_1}, SlowVAE (LAP) DCI; ${TABLE_14}, PM-VAE(γ=10) DCI; ${TABLE_16}, β-VAE (i.i.d.) DCI`,
    holds: (m, cfg) =>
      both(
        clearlyAbove(m, "slowvae_lap/dci_disentanglement", "pmvae_lap/dci_disentanglement", 0.05, cfg.seeds),
        clearlyAbove(m, "slowvae_lap/dci_disentanglement", "betavae/dci_disentanglement", 0.05, cfg.seeds),
      ),
  },
  {
    text: `SlowVAE's MCC is higher on LAP than on UNI transitions ${BEYOND} (69.8 (2.3) vs 58.8 (8.9))`,
    source: `${TABLE_1}, SlowVAE dSprites (LAP) and (UNI) MCC`,
    holds: (m, cfg) => clearlyAbove(m, "slowvae_lap/mcc", "slowvae_uni/mcc", 0.05, cfg.seeds),
  },
];

/** The plan: each model setting (SlowVAE once per γ, λ of the grid) × seeds. */
export function dspritesPlan(cfg: Cfg, dataset: GroundTruthDataset, firstSeed: number): PlannedModel[] {
  const grid = cfg.gammas.flatMap((gamma) => cfg.rates.map((rate) => ({ gamma, rate })));
  return cfg.models.flatMap((name) => {
    const { method, transitions } = DSPRITES_PAIR_MODELS[name];
    const settings = method === "slow_vae"
      ? grid.map(({ gamma, rate }) => ({ name: grid.length > 1 ? `${name}(γ=${gamma},λ=${rate})` : name, gamma, rate }))
      : [{ name, gamma: cfg.pm_gamma, rate: 6 }];
    const beta = method === "beta_vae" ? cfg.vae_beta : method.startsWith("ada_") ? cfg.ada_beta : 1;
    const source = groundTruthPairSource(dataset, transitions, cfg.lap_rate);
    return settings.flatMap((setting) => {
      const config = pairModelConfig(cfg, method, { beta, gamma: setting.gamma, rate: setting.rate });
      return settingSeeds(setting.name, firstSeed, cfg.seeds, source, config);
    });
  });
}

/** The study's plan and scoring, from the config and the run's seed (the same in every worker). */
function dspritesStudy(ctx: RunContext, cfg: Cfg): PairStudySetup & { dataset: GroundTruthDataset } {
  const dataset = loadDataset("dsprites", { size: cfg.resolution });
  const probe = sampleBatch(dataset, cfg.probe_images, Rng.derive(ctx.seed, "probe")).observations;
  return {
    dataset,
    plan: dspritesPlan(cfg, dataset, ctx.seed),
    options: {
      score: async (encoder, seed) => (await scoreVae(encoder, dataset, cfg, seed)).metrics,
      curve: {
        every: cfg.curve_every,
        score: (encoder, seed) => curveScores(encoder, dataset, cfg.curve_samples, seed),
      },
      probe: { images: probe.values, n: probe.n, shape: probe.shape },
      keep: {
        architecture: cfg.architecture,
        size: cfg.resolution,
        channels: dataset.imageShape[2],
        latents: cfg.latents,
        dataset: "dsprites",
        scoring: scoreConfig(cfg),
      },
    },
  };
}

/** SlowVAE and its baselines on dSprites pairs, over seeds. */
export const experiment = defineExperiment({
  name: "slowvae-dsprites",
  finding: "Sparse (Laplace) transitions let SlowVAE identify dSprites' factors",
  description: "SlowVAE (LAP, UNI) vs PM-VAE, Ada-GVAE, PCL and β-VAE on dSprites pairs (Klindt et al. 2021 Table 1)",
  source: SOURCE,
  config,
  presets: {
    // Every model once, two steps each, scored on the fewest points: the pipeline and its curves, not trained numbers.
    smoke: {
      models: ["slowvae_lap", "slowvae_uni", "pmvae_lap", "adagvae_lap", "pcl_lap", "betavae"],
      seeds: 1,
      resolution: 32,
      latents: 5,
      steps: 2,
      pairs: 2,
      eval_samples: 20,
      score_points: 4,
      score_batch: 2,
      probe_images: 10,
      log_every: 1,
      curve_every: 1,
      curve_samples: 20,
    },
    quick: {
      models: ["slowvae_lap", "slowvae_uni", "pmvae_lap", "adagvae_lap", "pcl_lap", "betavae"],
      seeds: 3,
      resolution: 32,
      steps: 1_000,
      lr: 5e-4,
      eval_samples: 2_000,
      score_points: 200,
      probe_images: 500,
      log_every: 50,
      curve_every: 200,
      workers: 2,
    },
    // Where quick stops: SlowVAE (LAP) against the two models its claims compare it with, one seed, 8× the steps.
    long: {
      models: ["slowvae_lap", "pmvae_lap", "betavae"],
      seeds: 1,
      resolution: 32,
      steps: 8_000,
      lr: 5e-4,
      // The array metrics train on disentanglement_lib's 10,000 points (the 0.8 split of 12,500): on one quick
      // SlowVAE, DCI reads 0.056, 0.092 and 0.129 with 1,600, 4,000 and 8,000 training points.
      eval_samples: 12_500,
      score_points: 1_000,
      probe_images: 500,
      log_every: 100,
      curve_every: 1_000,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "1,000 steps at 32×32 against Table 1's 300,000 at 64×64: absolute scores (MCC, DCI) and per-factor " +
      "correlations > 0.9 are out of reach; every model's DCI stays near that of an untrained encoder (budget, not " +
      "objective: the SlowVAE loss matches the reference solver term by term), and lowered by scoring: the array " +
      "metrics train on 1,600 points where disentanglement_lib uses 10,000 (this SlowVAE's DCI: 0.056 at 1,600, " +
      "0.092 at 4,000, 0.129 at 8,000)",
    long: "8,000 steps, one seed, SlowVAE (LAP), PM-VAE and the β-VAE only (the UNI, Ada-GVAE and PCL targets are " +
      "left out). Measured: SlowVAE's MIG reaches Table 1 (0.253 vs 0.295), it leads PM-VAE and the β-VAE in " +
      "MCC and DCI, x and y pass 0.9 (0.99); scale (0.72), MCC (0.563 vs 0.698) and DCI (0.282 vs 0.654) do not, " +
      "and their curves were still moving at 8,000 steps",
  },
  targets,
  claims,
  load: loadSavedEncoder,
  run: (ctx, cfg) => pairStudyResult(ctx, cfg, dspritesStudy(ctx, cfg), import.meta.url),
});

/** Model `index` of the study, as a worker trains it. */
export const workerModel = pairStudyModel(dspritesStudy);

if (import.meta.main) await runFromCli(experiment, Deno.args);
