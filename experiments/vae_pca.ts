/**
 * Variational autoencoders pursue PCA directions (Zietlow 2022, Ch. 3 and
 * §4.2.1; Rolínek, Zietlow & Martius, CVPR 2019; 003_4a2c49557ae8b2d0.md).
 *
 * The diagonal posterior makes the decoder's Jacobian locally orthogonal
 * (Theorem 1), which is measured as the Distance to Orthogonality (DtO, 3.25)
 * at 500 test points; alignment with the factors as the kNN Disentanglement
 * Score (DS, 3.32–3.37). Parts:
 *
 *   - ablation (Table 3.3, Synth-Lin r = 2): linear β-VAE, AE (no noise, no
 *     KL) and β-VAE_Σ (full covariance: the rotational symmetry is back), plus
 *     untrained Gaussian decoders (their DtO is that of Haar-random V).
 *   - degeneracy (Table 3.4): ratios 1 / 1.2 / 1.5; equal factor scales leave
 *     the alignment arbitrary.
 *   - beta_sweep (Fig. 3.7, §7.1 F): latents are pruned in discrete stages,
 *     latent j once β ≳ 2λ_j.
 *   - pca (Theorem 2): the linear β-VAE's decoder columns are the principal
 *     directions R e₁, R e₂, and σ_j² = β/(2λ_j).
 *   - polarized (Table 3.2): Δ_KL (3.38) below 3% for most of training, with
 *     2 latents ("dep.") and 10.
 *   - nonlin (Table 3.3, Synth-Non-Lin): MLP 60–40–20 tanh.
 *   - dsprites (Table 3.3): β-VAE (β 4), VAE, AE, β-VAE_Σ, random decoder.
 *
 * Every setting's seeds train together as one ensemble (K VAEs in one graph,
 * lib/models/ensemble.ts); member k's weights, batches and noise come from its
 * own seed, so its numbers do not depend on its neighbours.
 */
import * as tf from "@tensorflow/tfjs";
import { choices, type ConfigOf, integer, integerChoice, integers, real, reals } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Matrix, meanSd } from "../lib/core/matrix.ts";
import { Rng } from "../lib/core/rng.ts";
import type { GroundTruthDataset } from "../lib/data/ground_truth.ts";
import { loadDataset } from "../lib/data/registry.ts";
import { type PreparedData, prepareSynth, type TestSet } from "../lib/data/synth_sets.ts";
import {
  defaultGeneratorSeed,
  preferenceScore,
  synthLinear,
  synthNonLinear,
  synthRotation,
} from "../lib/data/synth.ts";
import { corrGap, disentanglementScore, type FactorKind, migBinned } from "../lib/metrics/disentanglement_score.ts";
import { distanceToOrthogonality, HAAR_DTO_2 } from "../lib/metrics/dto.ts";
import { linearPosteriorVariance, polarizedFraction, polarizedKl } from "../lib/metrics/polarized.ts";
import { type EnsembleKind, type EnsembleOptions, EnsembleVae } from "../lib/models/ensemble.ts";
import {
  type EnsembleTraining,
  memberCodes,
  type MemberSampler,
  rowSampler,
  trainEnsemble,
} from "../lib/train/ensemble_training.ts";
import { decoderJacobians } from "../lib/train/jacobian.ts";
import type { PhaseCheckpoints } from "../lib/train/phases.ts";
import { runPhasesOn, type WorkerPhase, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import type { ResultTable } from "../lib/core/scorecard.ts";

const SOURCE = "003_4a2c49557ae8b2d0.md §2.4–2.7, §5.1–5.4, §7.1–7.2 (Zietlow 2022, Ch. 3, §4.2.1)";
const TABLE_3_2 = "003_4a2c49557ae8b2d0.md §5.1 Table 3.2";
const TABLE_3_3 = "003_4a2c49557ae8b2d0.md §5.2 Table 3.3";
const TABLE_3_4 = "003_4a2c49557ae8b2d0.md §5.4 Table 3.4";

export const PARTS = ["ablation", "degeneracy", "beta_sweep", "pca", "polarized", "nonlin", "dsprites"] as const;
type Part = typeof PARTS[number];

const config = {
  parts: choices([...PARTS], PARTS, "parts of the study (Tables 3.2–3.4, Fig. 3.7, Theorem 2)"),
  samples: integer(50_000, "Synth data points per data set (80/10/10 split; numbers on the test split)", {
    min: 100,
    max: 10_000_000,
  }),
  ratio: real(2, "Synth-Lin stretch r of the ablation, β sweep, PCA and polarized parts (Table 3.3: 2)", {
    min: 1,
    max: 10,
  }),
  ratios: reals([1, 1.2, 1.5], "degeneracy part: stretch ratios (Table 3.4)", { min: 1, max: 10 }),
  beta: real(1e-4, "β of the Synth-Lin β-VAE and β-VAE_Σ (thesis: 1e-4)", { min: 0 }),
  beta_nonlin: real(1e-3, "β of the Synth-Non-Lin β-VAE and β-VAE_Σ (thesis: 1e-3)", { min: 0 }),
  betas: reals([0.01, 0.03, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1], "β sweep values (Fig. 3.7)", { min: 0 }),
  lr: real(1e-3, "Adam learning rate of the linear models", { min: 0, max: 1 }),
  lr_nonlin: real(1e-3, "Adam learning rate of the Synth-Non-Lin MLPs", { min: 0, max: 1 }),
  batch: integer(64, "observations per step", { min: 2, max: 16_384 }),
  steps: integer(375_000, "Adam steps of the linear models (600 epochs of 40,000)", { min: 1, max: 100_000_000 }),
  steps_nonlin: integer(375_000, "Adam steps of the Synth-Non-Lin MLPs", { min: 1, max: 100_000_000 }),
  seeds: integer(10, "seeds per linear setting: --seed·100 + 0, 1, …", { min: 1, max: 99 }),
  sweep_seeds: integer(3, "seeds per β of the sweep", { min: 1, max: 99 }),
  nonlin_seeds: integer(10, "seeds per Synth-Non-Lin model", { min: 1, max: 99 }),
  latents: integer(2, "latents of the Synth models (the factors: Table 3.3's dep. setting)", { min: 2, max: 64 }),
  latents_polarized: integer(10, "latents of the polarized part's second setting (Table 3.2: 10)", {
    min: 2,
    max: 64,
  }),
  hidden_nonlin: integers([60, 40, 20], "Synth-Non-Lin encoder widths, tanh (decoder reversed; Table 3.1)", {
    min: 1,
    max: 4_096,
  }),
  generator_seed: integer(-1, "Synth-Non-Lin generator (−1: the first in 0…99 whose S(45°) − S(0°) ≥ 0.05)", {
    min: -1,
    max: 1_000_000,
  }),
  dto_points: integer(500, "test points whose decoder Jacobians give the DtO", { min: 1, max: 100_000 }),
  random_decoders: integer(1_000, "untrained N(0, 1) linear decoders of the random baseline", {
    min: 1,
    max: 1_000_000,
  }),
  dsprites_resolution: integerChoice(32, [32, 64], "dsprites part: image side"),
  dsprites_hidden: integer(1_200, "dsprites part: encoder hidden width, ReLU (decoder reversed)", {
    min: 1,
    max: 4_096,
  }),
  dsprites_layers: integer(2, "dsprites part: hidden layers of each MLP", { min: 1, max: 16 }),
  dsprites_latents: integer(5, "dsprites part: latents (the 5 factors)", { min: 2, max: 64 }),
  dsprites_beta: real(4, "dsprites part: β of the β-VAE and β-VAE_Σ (Table 3.3: 4)", { min: 0 }),
  dsprites_steps: integer(576_000, "dsprites part: AdaGrad steps (50 epochs of 737,280 at batch 64)", {
    min: 1,
    max: 100_000_000,
  }),
  dsprites_lr: real(1e-2, "dsprites part: AdaGrad learning rate", { min: 0, max: 1 }),
  dsprites_seeds: integer(5, "dsprites part: seeds per model", { min: 1, max: 99 }),
  dsprites_test: integer(5_000, "dsprites part: test images (DS fits on 80%)", { min: 10, max: 1_000_000 }),
  eval_every: integer(500, "steps between evaluations: learning curves and Δ_KL (Table 3.2: every 500)", {
    min: 1,
    max: 100_000_000,
  }),
  log_every: integer(100, "steps between logged losses", { min: 1, max: 100_000_000 }),
  checkpoint_every: integer(5_000, "steps between checkpoints inside a setting (0: none)", {
    min: 0,
    max: 100_000_000,
  }),
  ...WORKERS_CONFIG,
};
export type Cfg = ConfigOf<typeof config>;

const MODELS = ["beta_vae", "ae", "beta_vae_sigma"] as const;
type SynthModel = typeof MODELS[number];
const KIND: Record<SynthModel, EnsembleKind> = { beta_vae: "vae", ae: "ae", beta_vae_sigma: "full" };

/** Number formatting of keys: `1.2`, `0.01`. */
const key = (v: number) => String(v);

// ---------------------------------------------------------------------------------------------------------------
// Targets and claims

/**
 * Null models in the paper preset's setting. DtO: a Gaussian decoder's V is Haar (closed form for d = 2; d = 5 from
 * 60,000 Gaussian 20×5 draws); the untrained networks were measured at step 0 by this code (--preset paper, 1 step
 * at learning rate 0, seed 0, 10 members per model). DS: a perfect code turned by a uniform angle in the factor
 * plane, the alignment the objective leaves free (report §2.2; 36 angles × 2 data seeds on 5,000 test rows), and
 * the untrained encoders. Δ_KL is 1.29 (2 latents) and 1.36 (10) at step 0: no training time is polarized.
 */
const STEP0 = "untrained decoders, step 0 (measured, paper preset";
const HAAR2 = { value: HAAR_DTO_2, model: "random Gaussian decoder (Haar V, d 2), closed form" };
const LIN0 = { value: 0.573, model: `${STEP0}, 10 members each; β-VAE / AE / β-VAE_Σ 0.524 / 0.583 / 0.613)` };
const NONLIN0 = { value: 0.637, model: `${STEP0}, 10 members each; β-VAE / AE / β-VAE_Σ 0.800 / 0.682 / 0.429)` };
const rot = (value: number) => ({ value, model: "perfect code at a uniform in-plane angle (computed, 5,000 rows)" });
const ds0 = (value: number) => ({ value, model: "untrained encoder, step 0 (measured, paper preset, 10 members)" });
const POLAR0 = { value: 0, model: "untrained network, step 0 (measured: Δ_KL 1.29 / 1.36, never below 3%)" };
const DSPRITES0 = [
  { value: 1.6175, model: "random decoders: the untrained β-VAE decoders at z ~ N(0, I) (measured, 5 members)" },
  { value: 1.619, model: `${STEP0}, β-VAE and VAE, 10 members, at the test codes)` },
  { value: 1.635, model: "random Gaussian decoder (Haar V, d 5), computed" },
];
const SD = "the published s.d. over seeds";
const half = (what: string, d: number, sd: number) =>
  `rule: below half the distance to the ${what} null (${d}); the published s.d. ${sd} is wider`;
const POLAR = "rule: 0.05 on a fraction (Table 3.2 gives no spread), far inside half the way to the null";
const STAND_IN: Partial<Record<Part, string>> = {
  nonlin: "our draw of the thesis' random ℝ²→10→ℝ⁶ tanh generator (picked by preference score) for its draw",
  dsprites: "a procedural 32×32 dSprites and an MLP with a ReLU decoder for DeepMind's 64×64 dSprites and the " +
    "thesis' tanh 1200–1200–1200 decoder",
};

// Ratio 1 (DtO 0.49, DS 0.51) and the Synth-Non-Lin AE and β-VAE_Σ (DtO 0.54, 0.55; DS 0.59, 0.42) sit at the
// arbitrary-alignment nulls, the dSprites AE and β-VAE_Σ (DtO 1.62, 1.73) at the random decoders': no targets;
// claims (2), (6) and (7) compare them with the β-VAE.
const TARGET_ROWS: [string, number, number, string, Target["nulls"]][] = [
  // metric, published, tolerance, its source, nulls
  ["degeneracy/dto@1.2", 0.20, 0.15, half("Haar", 0.174, 0.24), [HAAR2, LIN0]],
  ["degeneracy/ds@1.2", 0.76, 0.11, half("rotation", 0.112, 0.25), [rot(0.536), ds0(0.343)]],
  ["degeneracy/dto@1.5", 0.01, 0.05, "rule: 0.05 on DtO, within the published s.d. 0.06", [HAAR2, LIN0]],
  ["degeneracy/ds@1.5", 0.98, 0.05, "rule: 0.05 on DS, within the published s.d. 0.06", [rot(0.523), ds0(0.342)]],
  ["ablation/dto/beta_vae", 0.0, 0.05, "rule: 0.05 on DtO (the published s.d. rounds to 0.00)", [HAAR2, LIN0]],
  ["ablation/ds/beta_vae", 0.99, 0.01, SD, [rot(0.484), ds0(0.331)]],
  ["ablation/dto/ae", 0.33, 0.1, half("Haar", 0.109, 0.18), [HAAR2, LIN0]],
  ["ablation/ds/ae", 0.71, 0.11, half("rotation", 0.113, 0.19), [rot(0.484), ds0(0.165)]],
  ["ablation/dto/beta_vae_sigma", 0.34, 0.1, half("Haar", 0.104, 0.35), [HAAR2, LIN0]],
  ["ablation/ds/beta_vae_sigma", 0.71, 0.11, half("rotation", 0.113, 0.31), [rot(0.484), ds0(0.358)]],
  ["nonlin/dto/beta_vae", 0.18, 0.02, SD, [HAAR2, NONLIN0]],
  ["nonlin/ds/beta_vae", 0.73, 0.09, half("rotation", 0.093, 0.16), [rot(0.544), ds0(0.172)]],
  ["polarized/synth_lin/dep", 0.998, 0.05, POLAR, [POLAR0]],
  ["polarized/synth_lin/10", 0.967, 0.05, POLAR, [POLAR0]],
  ["dsprites/dto/beta_vae", 0.76, 0.08, SD, DSPRITES0],
  ["dsprites/dto/vae", 1.08, 0.15, SD, DSPRITES0],
];

/** Where a target's number is printed: its table, row and column. */
function sourceOf(metric: string): string {
  const [part, score, rest] = metric.split(/[/@]/);
  if (part === "degeneracy") return `${TABLE_3_4}, ratio ${rest}, ${score === "dto" ? "DtO" : "DS"}`;
  if (part === "polarized") return `${TABLE_3_2}, Synth. Lin., β-VAE (${rest === "dep" ? "dep." : rest})`;
  const data = { ablation: "Synth. Lin.", nonlin: "Synth. Non-Lin.", dsprites: "dSprites" }[part];
  return `${TABLE_3_3}, ${data} ${score === "dto" ? "DtO" : "DS"}, ${rest}`;
}

const targets: Target<Cfg>[] = TARGET_ROWS.map(([metric, paper, tolerance, toleranceSource, nulls]) => {
  const part = metric.split("/")[0] as Part;
  // The disentangling models' numbers are near the ideal (DtO 0, DS 1, Δ_KL always < 3%): beating them is no failure
  // to reproduce. The others are levels to match: an AE more or less orthogonal than the thesis' differs.
  const ideal = part === "polarized" || (part !== "dsprites" && /beta_vae$|@1\.5$/.test(metric));
  const standIn = STAND_IN[part];
  return {
    metric,
    paper,
    tolerance,
    toleranceSource,
    nulls,
    direction: !ideal ? "match" : metric.includes("/dto") ? "lower" : "higher",
    source: sourceOf(metric),
    kind: standIn ? "analogue" : "like-for-like",
    standIn: standIn ?? "the thesis' Synth-Lin and linear VAE (quick: β 1e-2 for 1e-4, 12,000 for 375,000 steps)",
    // The polarized fraction so far, as if training ended at each evaluation.
    curve: { dep: "ablation/polarized/beta_vae", 10: "latents10/polarized" }[metric.split("/")[2]],
    appliesTo: (cfg) =>
      cfg.parts.includes(part) && (part !== "degeneracy" || cfg.ratios.includes(+metric.split("@")[1])),
  };
});

const has = (m: Record<string, number>, keys: string[]) => keys.every((k) => m[k] !== undefined);

const claims: Claim<Cfg>[] = [
  {
    text: "(1) the β-VAE's decoder is orthogonal (DtO < 0.05) and at least 0.2 below both the AE's and β-VAE_Σ's",
    source: `${TABLE_3_3}, Synth. Lin. DtO row: 0.00 vs 0.33 ± 0.18, 0.34 ± 0.35`,
    holds: (m) => {
      const k = ["ablation/dto/beta_vae", "ablation/dto/ae", "ablation/dto/beta_vae_sigma"];
      return has(m, k) ? m[k[0]] < 0.05 && m[k[0]] <= Math.min(m[k[1]], m[k[2]]) - 0.2 : undefined;
    },
  },
  {
    text: "(2) degenerate scales leave the alignment arbitrary: at ratio 1 the DtO is at least 0.2 above and the DS " +
      "at least 0.2 below ratio 1.5's",
    source: `${TABLE_3_4}: DtO 0.49 ± 0.32 vs 0.01 ± 0.06, DS 0.51 ± 0.28 vs 0.98 ± 0.06`,
    holds: (m) => {
      const k = ["dto@1", "dto@1.5", "ds@1", "ds@1.5"].map((s) => `degeneracy/${s}`);
      return has(m, k) ? m[k[0]] >= m[k[1]] + 0.2 && m[k[2]] <= m[k[3]] - 0.2 : undefined;
    },
  },
  {
    text: "(3) r = 2: latents are pruned in stages, 2 / 1 / 0 active (E σ² < 0.8) at β 0.1 / 0.3 / 1 " +
      "(latent j pruned once β ≳ 2λ_j = 0.167, 0.667)",
    source: "003_4a2c49557ae8b2d0.md §7.1 F, Fig. 3.7 (Synth-Lin panel)",
    holds: (m) => {
      const k = ["0.1", "0.3", "1"].map((b) => `beta_sweep/active@${b}`);
      return has(m, k)
        ? Math.abs(m[k[0]] - 2) < 0.5 && Math.abs(m[k[1]] - 1) < 0.5 && Math.abs(m[k[2]]) < 0.5
        : undefined;
    },
  },
  {
    text: "(4) the linear β-VAE is PCA: decoder columns along R e₁, R e₂ (|cos| ≥ 0.99) and σ_j² within 10% of " +
      "β/(2λ_j) (at the optimum s_j² = λ_j − β/2; derived and checked in tests/metrics/linear_posterior_variance_test.ts)",
    source: "003_4a2c49557ae8b2d0.md §2.7 (Theorem 2), §7.2",
    holds: (m) =>
      has(m, ["pca/cos_min", "pca/sigma2_rel_err"])
        ? m["pca/cos_min"] >= 0.99 && m["pca/sigma2_rel_err"] <= 0.1
        : undefined,
  },
  {
    text: "(5) the polarized regime holds: Δ_KL < 3% for more than 90% of training (2 and 10 latents)",
    source: `${TABLE_3_2}, Synth. Lin. row: 99.8% (dep.), 96.7% (10)`,
    holds: (m) =>
      has(m, ["polarized/synth_lin/dep", "polarized/synth_lin/10"])
        ? m["polarized/synth_lin/dep"] > 0.9 && m["polarized/synth_lin/10"] > 0.9
        : undefined,
  },
  {
    text: "(6) dSprites: the β-VAE's and the VAE's DtO lie at least 0.3 below the AE's, β-VAE_Σ's and the random " +
      "decoders'",
    source: `${TABLE_3_3}, dSprites DtO row: 0.76 ± 0.08, 1.08 ± 0.15 vs 1.62 ± 0.03, 1.73 ± 0.14, 1.86 ± 0.11`,
    holds: (m) => {
      const k = ["beta_vae", "vae", "ae", "beta_vae_sigma", "random"].map((s) => `dsprites/dto/${s}`);
      return has(m, k) ? Math.max(m[k[0]], m[k[1]]) <= Math.min(m[k[2]], m[k[3]], m[k[4]]) - 0.3 : undefined;
    },
  },
  {
    text: "(7) Synth-Non-Lin: the β-VAE's DtO is at least 0.2 below both the AE's and β-VAE_Σ's",
    source: `${TABLE_3_3}, Synth. Non-Lin. DtO row: 0.18 ± 0.02 vs 0.54 ± 0.13, 0.55 ± 0.02`,
    holds: (m) => {
      const k = ["beta_vae", "ae", "beta_vae_sigma"].map((s) => `nonlin/dto/${s}`);
      return has(m, k) ? m[k[0]] <= Math.min(m[k[1]], m[k[2]]) - 0.2 : undefined;
    },
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Data

/** Data sets of a run, built once per process (a worker builds those of its own phases). */
const prepared = new Map<string, PreparedData>();
function linearData(seed: number, cfg: Cfg, ratio: number): PreparedData {
  const id = `${seed}/lin/${ratio}/${cfg.samples}`;
  if (!prepared.has(id)) {
    prepared.set(
      id,
      prepareSynth(synthLinear({ ratio, n: cfg.samples }, Rng.derive(seed, "data", "lin", ratio)), seed),
    );
  }
  return prepared.get(id)!;
}

function generatorSeed(cfg: Cfg): number {
  return cfg.generator_seed >= 0 ? cfg.generator_seed : defaultGeneratorSeed();
}

function nonLinearData(seed: number, cfg: Cfg): PreparedData {
  const g = generatorSeed(cfg);
  const id = `${seed}/nonlin/${g}/${cfg.samples}`;
  if (!prepared.has(id)) {
    const d = synthNonLinear({ n: cfg.samples, generatorSeed: g }, Rng.derive(seed, "data", "nonlin"));
    prepared.set(id, prepareSynth(d, seed));
  }
  return prepared.get(id)!;
}

const datasets = new Map<string, GroundTruthDataset>();
function dspritesDataset(cfg: Cfg): GroundTruthDataset {
  const id = `dsprites/${cfg.dsprites_resolution}`;
  if (!datasets.has(id)) datasets.set(id, loadDataset("dsprites", { size: cfg.dsprites_resolution }));
  return datasets.get(id)!;
}

function dspritesTest(seed: number, cfg: Cfg): TestSet & { kinds: FactorKind[] } {
  const dataset = dspritesDataset(cfg);
  const rng = Rng.derive(seed, "dsprites-test");
  const factors = dataset.sampleFactors(cfg.dsprites_test, rng);
  const x = dataset.observations(factors, rng).values;
  const f = dataset.factorNames.length;
  return {
    x,
    w: { data: Float64Array.from(factors.values), rows: factors.n, cols: f },
    rows: factors.n,
    kinds: dataset.factorNames.map((_, i) => dataset.categorical.includes(i) ? "classification" : "regression"),
  };
}

function dspritesSampler(cfg: Cfg): MemberSampler {
  const dataset = dspritesDataset(cfg);
  const [h, w, c] = dataset.imageShape;
  return {
    input: h * w * c,
    sample(_k, batch, rng, out, offset) {
      out.set(dataset.observations(dataset.sampleFactors(batch, rng), rng).values, offset);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Phases: one ensemble each

/** Member seeds of a setting: --seed·100 + 0, 1, … (the same offsets in every setting). */
const memberSeeds = (seed: number, count: number) => Array.from({ length: count }, (_, i) => seed * 100 + i);

/** What one ensemble member is: its labels in the metric keys and its data. */
interface Member {
  seed: number;
  beta: number;
  /** Keys this member's scores are averaged under, e.g. "degeneracy/{}@1.2" with {} the score's name. */
  group: string;
  data: PreparedData;
}

interface PhaseSpec {
  id: string;
  kind: EnsembleKind;
  members: Member[];
  hidden: number[];
  activation: "tanh" | "relu";
  latents: number;
  loss: "squared" | "bernoulli";
  steps: number;
  lr: number;
  optimizer: "adam" | "adagrad";
  /** Test data shared by every member when they share one (dsprites). */
  test?: TestSet;
  /** Scores to compute at each evaluation (the final one computes every score). */
  curve: ("dto" | "ds" | "delta_kl")[];
}

/** The phases the parts need, in order. */
export function phaseIds(cfg: Cfg): string[] {
  const ids: string[] = [];
  const parts = new Set<Part>(cfg.parts);
  if (parts.has("ablation") || parts.has("pca") || parts.has("polarized")) ids.push("ablation/beta_vae");
  if (parts.has("ablation")) ids.push("ablation/ae", "ablation/beta_vae_sigma");
  if (parts.has("degeneracy")) ids.push("degeneracy");
  if (parts.has("beta_sweep")) ids.push("beta_sweep");
  if (parts.has("polarized")) ids.push("polarized/10");
  if (parts.has("nonlin")) ids.push(...MODELS.map((m) => `nonlin/${m}`));
  if (parts.has("dsprites")) ids.push("dsprites/vae", "dsprites/ae", "dsprites/beta_vae_sigma");
  return ids;
}

function phaseSpec(seed: number, cfg: Cfg, id: string): PhaseSpec {
  const linear = {
    hidden: [],
    activation: "tanh" as const,
    loss: "squared" as const,
    lr: cfg.lr,
    optimizer: "adam" as const,
  };
  const seeds = memberSeeds(seed, cfg.seeds);
  const [part, model] = id.split("/") as [string, string | undefined];
  if (part === "ablation") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: KIND[model as SynthModel],
      members: seeds.map((s) => ({ seed: s, beta: cfg.beta, group: `ablation/{}/${model}`, data })),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: model === "beta_vae" ? ["dto", "ds", "delta_kl"] : ["dto", "ds"],
      ...linear,
    };
  }
  if (part === "degeneracy") {
    return {
      id,
      kind: "vae",
      members: cfg.ratios.flatMap((r) =>
        seeds.map((s) => ({
          seed: s,
          beta: cfg.beta,
          group: `degeneracy/{}@${key(r)}`,
          data: linearData(seed, cfg, r),
        }))
      ),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: ["dto", "ds"],
      ...linear,
    };
  }
  if (part === "beta_sweep") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: "vae",
      members: cfg.betas.flatMap((b) =>
        memberSeeds(seed, cfg.sweep_seeds).map((s) => ({ seed: s, beta: b, group: `beta_sweep/{}@${key(b)}`, data }))
      ),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: ["ds"],
      ...linear,
    };
  }
  if (part === "polarized") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: "vae",
      members: seeds.map((s) => ({ seed: s, beta: cfg.beta, group: "latents10/{}", data })),
      latents: cfg.latents_polarized,
      steps: cfg.steps,
      curve: ["delta_kl"],
      ...linear,
    };
  }
  if (part === "nonlin") {
    const data = nonLinearData(seed, cfg);
    return {
      id,
      kind: KIND[model as SynthModel],
      members: memberSeeds(seed, cfg.nonlin_seeds).map((s) => ({
        seed: s,
        beta: cfg.beta_nonlin,
        group: `nonlin/{}/${model}`,
        data,
      })),
      hidden: cfg.hidden_nonlin,
      activation: "tanh",
      latents: cfg.latents,
      loss: "squared",
      steps: cfg.steps_nonlin,
      lr: cfg.lr_nonlin,
      optimizer: "adam",
      curve: ["dto", "ds"],
    };
  }
  // dsprites: β-VAE and VAE share one ensemble (diagonal posterior, β per member).
  const test = dspritesTest(seed, cfg);
  const data: PreparedData = { train: new Float32Array(0), input: test.x.length / test.rows, test, kinds: test.kinds };
  const dsSeeds = memberSeeds(seed, cfg.dsprites_seeds);
  const members: Member[] = model === "vae"
    ? [
      ...dsSeeds.map((s) => ({ seed: s, beta: cfg.dsprites_beta, group: "dsprites/{}/beta_vae", data })),
      ...dsSeeds.map((s) => ({ seed: s, beta: 1, group: "dsprites/{}/vae", data })),
    ]
    : dsSeeds.map((s) => ({ seed: s, beta: cfg.dsprites_beta, group: `dsprites/{}/${model}`, data }));
  return {
    id,
    kind: model === "vae" ? "vae" : KIND[model as SynthModel],
    members,
    hidden: Array.from({ length: cfg.dsprites_layers }, () => cfg.dsprites_hidden),
    activation: "relu",
    latents: cfg.dsprites_latents,
    loss: "bernoulli",
    steps: cfg.dsprites_steps,
    lr: cfg.dsprites_lr,
    optimizer: "adagrad",
    test,
    curve: ["dto", "ds"],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Scores of one member

type Scores = Record<string, number>;

/** DtO at the first `dto_points` test codes, DS, corr-gap, MIG-binned, Δ_KL and active counts of member k. */
async function scoreMember(
  model: EnsembleVae,
  k: number,
  member: Member,
  cfg: Cfg,
  which: readonly string[],
): Promise<Scores> {
  const test = member.data.test;
  const codes = await memberCodes(model, k, test.x, test.rows);
  const mean: Matrix = { data: codes.mean, rows: test.rows, cols: codes.cols };
  const out: Scores = {};
  // Over all latents, as the thesis' setting has as many latents as factors (report §2.5 step 1); a code wider
  // than the data (Table 3.2's 10 latents on 3-D data) has no orthogonal Jacobian to measure.
  if (which.includes("dto") && codes.cols <= (member.data.synth?.dim ?? test.x.length / test.rows)) {
    const points = Math.min(cfg.dto_points, test.rows);
    const z: Matrix = { data: codes.mean.subarray(0, points * codes.cols), rows: points, cols: codes.cols };
    const j = await decoderJacobians(model.memberDecoder(k), z, { method: "auto" });
    const dto = distanceToOrthogonality(j.jac, j.n, j.rows, j.cols);
    out.dto = dto.dto;
    out.sv_gap = dto.svGap;
  }
  if (which.includes("ds")) {
    out.ds = disentanglementScore(mean, test.w, member.data.kinds).ds;
    out.corr_gap = corrGap(mean, test.w).gap;
    if (member.data.synth) out.mig_binned = migBinned(mean, test.w).mig;
  }
  if (which.includes("delta_kl") && codes.logVar) {
    const p = polarizedKl(mean, { data: codes.logVar, rows: test.rows, cols: codes.cols });
    out.delta_kl = p.deltaKl;
    out.active_std = p.activeStd.filter(Boolean).length;
    out.active = p.activeVar.filter(Boolean).length;
  }
  return out;
}

/** The linear decoder's columns c_j = dec(e_j) − dec(0) of member k, [outputs][latents]. */
async function decoderColumns(model: EnsembleVae, k: number, latents: number): Promise<number[][]> {
  const decoded = tf.tidy(() =>
    model.memberDecoder(k)(tf.concat([tf.zeros([1, latents]), tf.eye(latents)], 0) as tf.Tensor2D)
  );
  const values = await decoded.array() as number[][];
  decoded.dispose();
  return values[0].map((_, r) => values.slice(1).map((row) => row[r] - values[0][r]));
}

/** Mean over the rows of exp(log σ_j²) per latent: E σ_j², the posterior noise of latent j. */
function meanPosteriorVariance(logVar: Float32Array, rows: number, latents: number): number[] {
  return Array.from({ length: latents }, (_, j) => {
    let s = 0;
    for (let i = 0; i < rows; i++) s += Math.exp(logVar[i * latents + j]);
    return s / rows;
  });
}

/**
 * Theorem 2 check of one linear β-VAE member: |cos| of its columns with R e₁, R e₂, and its E σ_j² (`sigma2`)
 * against β/(2λ_j) of the axis it matches.
 */
async function pcaCheck(model: EnsembleVae, k: number, member: Member, ratio: number, sigma2: number[]) {
  const columns = await decoderColumns(model, k, 2);
  const rotation = synthRotation();
  const axes = [0, 1].map((a) => rotation.map((row) => row[a]));
  const cos = (j: number, a: number) => {
    const c = columns.map((row) => row[j]);
    const dot = c.reduce((s, v, i) => s + v * axes[a][i], 0);
    return Math.abs(dot) / Math.hypot(...c);
  };
  // Latent j ↔ axis π(j): the better of the two matchings.
  const straight = cos(0, 0) + cos(1, 1), crossed = cos(0, 1) + cos(1, 0);
  const axisOf = straight >= crossed ? [0, 1] : [1, 0];
  const lambda = [ratio * ratio / 12, 1 / 12];
  const relErr = Math.max(...[0, 1].map((j) => {
    const predicted = linearPosteriorVariance(member.beta, lambda[axisOf[j]]);
    return Math.abs(sigma2[j] - predicted) / predicted;
  }));
  return { cos_min: Math.min(cos(0, axisOf[0]), cos(1, axisOf[1])), sigma2_rel_err: relErr };
}

/** Means over members of each score, keyed by the members' groups ({} replaced by the score's name). */
function groupMeans(spec: PhaseSpec, perMember: Scores[]): Record<string, number> {
  const sums = new Map<string, number[]>();
  spec.members.forEach((member, k) => {
    for (const [name, value] of Object.entries(perMember[k])) {
      const id = member.group.replace("{}", name);
      if (!sums.has(id)) sums.set(id, []);
      sums.get(id)!.push(value);
    }
  });
  return Object.fromEntries([...sums].map(([id, values]) => [id, values.reduce((a, b) => a + b, 0) / values.length]));
}

/** The result of a phase: every member's final scores and, for the polarized statistics, its Δ_KL history. */
interface PhaseResult {
  id: string;
  members: { seed: number; beta: number; group: string; scores: Scores }[];
}

/** Δ_KL per member at each evaluated step. */
type KlHistory = { steps: number[]; deltas: number[][] };

async function runPhase(ctx: RunContext, cfg: Cfg, id: string, checkpoints: PhaseCheckpoints): Promise<PhaseResult> {
  const spec = phaseSpec(ctx.seed, cfg, id);
  const sampler = spec.id.startsWith("dsprites")
    ? dspritesSampler(cfg)
    : rowSampler(spec.members.map((m) => m.data.train), spec.members[0].data.input);
  const model: EnsembleOptions = {
    seeds: spec.members.map((m) => m.seed),
    input: sampler.input,
    latents: spec.latents,
    hidden: spec.hidden,
    activation: spec.activation,
    kind: spec.kind,
    betas: spec.members.map((m) => m.beta),
    loss: spec.loss,
  };
  let history: KlHistory = { steps: [], deltas: spec.members.map(() => []) };
  const tracksKl = spec.curve.includes("delta_kl") && spec.kind === "vae";
  const fractions = (total: number) => history.deltas.map((d) => polarizedFraction(history.steps, d, total));
  const training: EnsembleTraining = {
    label: spec.id,
    model,
    data: sampler,
    steps: spec.steps,
    batch: cfg.batch,
    lr: spec.lr,
    optimizer: spec.optimizer,
    logEvery: cfg.log_every,
    evaluateEvery: cfg.eval_every,
    checkpointEvery: cfg.checkpoint_every,
    evaluate: async (ensemble, step) => {
      const perMember: Scores[] = [];
      for (let k = 0; k < spec.members.length; k++) {
        perMember.push(await scoreMember(ensemble, k, spec.members[k], cfg, spec.curve));
      }
      const logged: Record<string, number> = {};
      if (tracksKl) {
        history.steps.push(step);
        perMember.forEach((s, k) => history.deltas[k].push(s.delta_kl));
        // The polarized fraction as if training ended here: its learning curve.
        const f = fractions(step);
        f.forEach((value, k) => (perMember[k].polarized = value));
      }
      for (const [name, value] of Object.entries(groupMeans(spec, perMember))) logged[name] = value;
      // Logged under the final keys (not the phase label), so each target's curve is its own metric.
      ctx.log(step, logged);
      return {};
    },
  };
  const ensemble = await trainEnsemble(ctx, training, checkpoints, {
    get: () => history,
    set: (value: KlHistory) => (history = value),
  });
  try {
    const members: PhaseResult["members"] = [];
    const f = tracksKl ? fractions(spec.steps) : [];
    for (let k = 0; k < spec.members.length; k++) {
      const member = spec.members[k];
      const scores = await scoreMember(ensemble, k, member, cfg, ["dto", "ds", "delta_kl"]);
      if (tracksKl) scores.polarized = f[k];
      if (spec.id === "ablation/beta_vae" || spec.id === "beta_sweep") {
        const test = member.data.test;
        const codes = await memberCodes(ensemble, k, test.x, test.rows);
        const sigma2 = meanPosteriorVariance(codes.logVar!, test.rows, spec.latents);
        sigma2.forEach((v, j) => (scores[`sigma2_${j}`] = v));
        if (spec.id === "ablation/beta_vae" && spec.latents === 2) {
          Object.assign(scores, await pcaCheck(ensemble, k, member, cfg.ratio, sigma2));
        }
      }
      members.push({ seed: member.seed, beta: member.beta, group: member.group, scores });
    }
    if (spec.id === "dsprites/ae") members.push(...await randomImageDecoders(ctx.seed, cfg, spec, model));
    return { id, members };
  } finally {
    ensemble.dispose();
  }
}

/** The dsprites part's random decoders: the β-VAE's untrained decoders, at codes z ~ N(0, I). */
async function randomImageDecoders(seed: number, cfg: Cfg, spec: PhaseSpec, trained: EnsembleOptions) {
  const untrained = new EnsembleVae({ ...trained, kind: "vae", betas: trained.seeds.map(() => cfg.dsprites_beta) });
  try {
    const out: PhaseResult["members"] = [];
    const rng = Rng.derive(seed, "random-codes");
    const points = Math.min(cfg.dto_points, spec.test!.rows);
    for (let k = 0; k < spec.members.length; k++) {
      const z: Matrix = { data: rng.normalArray(points * spec.latents), rows: points, cols: spec.latents };
      const j = await decoderJacobians(untrained.memberDecoder(k), z, { method: "auto" });
      out.push({
        seed: spec.members[k].seed,
        beta: 0,
        group: "dsprites/{}/random",
        scores: { dto: distanceToOrthogonality(j.jac, j.n, j.rows, j.cols).dto },
      });
    }
    return out;
  } finally {
    untrained.dispose();
  }
}

/** The random baseline of the ablation: DtO of `count` untrained linear 3×2 decoders with N(0, 1) weights. */
function randomLinearDto(seed: number, count: number, outputs = 3, latents = 2): { mean: number; sd: number } {
  const rng = Rng.derive(seed, "random-decoders");
  const jac = rng.normalArray(count * outputs * latents);
  const { perSample } = distanceToOrthogonality(jac, count, outputs, latents);
  const { mean, sd } = meanSd(perSample);
  return { mean, sd };
}

/** A phase as a worker runs it (lib/train/parallel_phases.ts): no checkpoints inside it. */
export const workerPhase: WorkerPhase<Cfg, string, PhaseResult> = async (ctx, cfg, id) => ({
  result: await runPhase(ctx, cfg, id, { resumed: null, save: () => Promise.resolve() }),
});

/** Relative cost of a phase: members × steps × a width factor. */
function phaseCost(cfg: Cfg, id: string): number {
  if (id.startsWith("nonlin")) return cfg.nonlin_seeds * cfg.steps_nonlin * 6;
  if (id.startsWith("dsprites")) return cfg.dsprites_seeds * cfg.dsprites_steps * 400;
  const members = id === "degeneracy"
    ? cfg.ratios.length * cfg.seeds
    : id === "beta_sweep"
    ? cfg.betas.length * cfg.sweep_seeds
    : cfg.seeds;
  return (members + 10) * cfg.steps * (id === "polarized/10" ? 2 : 1);
}

// ---------------------------------------------------------------------------------------------------------------

/** Table 3.3/3.4's settings beside the thesis' values, and the β sweep, as the command prints them. */
function resultTables(m: Record<string, number>): ResultTable[] {
  const pm = (key: string) =>
    m[key] === undefined
      ? null
      : m[`${key.replace(/\/(dto|ds)([/@])/, "/$1_sd$2")}`] === undefined
      ? m[key].toFixed(3)
      : `${m[key].toFixed(3)} ± ${m[key.replace(/\/(dto|ds)([/@])/, "/$1_sd$2")].toFixed(3)}`;
  const rows: ResultTable["rows"] = [];
  const row = (setting: string, dto: string, ds: string, paper: [string, string]) => {
    if (m[dto] !== undefined) {
      rows.push({ setting, DtO: pm(dto), "DtO (thesis)": paper[0], DS: pm(ds), "DS (thesis)": paper[1] });
    }
  };
  // Setting, its keys with {} for dto / ds, Table 3.3–3.4's DtO and DS.
  for (
    const [setting, keys, dto, ds] of [
      ["Synth-Lin r 2, β-VAE", "ablation/{}/beta_vae", "0.00 ± 0.00", "0.99 ± 0.01"],
      ["Synth-Lin r 2, AE", "ablation/{}/ae", "0.33 ± 0.18", "0.71 ± 0.19"],
      ["Synth-Lin r 2, β-VAE_Σ", "ablation/{}/beta_vae_sigma", "0.34 ± 0.35", "0.71 ± 0.31"],
      ["Synth-Lin r 2, untrained decoders", "ablation/{}/random", "0.79 ± 0.21", "—"],
      ["Synth-Lin r 1, β-VAE", "degeneracy/{}@1", "0.49 ± 0.32", "0.51 ± 0.28"],
      ["Synth-Lin r 1.2, β-VAE", "degeneracy/{}@1.2", "0.20 ± 0.24", "0.76 ± 0.25"],
      ["Synth-Lin r 1.5, β-VAE", "degeneracy/{}@1.5", "0.01 ± 0.06", "0.98 ± 0.06"],
      ["Synth-Non-Lin, β-VAE", "nonlin/{}/beta_vae", "0.18 ± 0.02", "0.73 ± 0.16"],
      ["Synth-Non-Lin, AE", "nonlin/{}/ae", "0.54 ± 0.13", "0.59 ± 0.30"],
      ["Synth-Non-Lin, β-VAE_Σ", "nonlin/{}/beta_vae_sigma", "0.55 ± 0.02", "0.42 ± 0.24"],
      ["dSprites, beta_vae", "dsprites/{}/beta_vae", "0.76 ± 0.08", "0.33 ± 0.15"],
      ["dSprites, vae", "dsprites/{}/vae", "1.08 ± 0.15", "0.21 ± 0.10"],
      ["dSprites, ae", "dsprites/{}/ae", "1.62 ± 0.03", "0.09 ± 0.04"],
      ["dSprites, beta_vae_sigma", "dsprites/{}/beta_vae_sigma", "1.73 ± 0.14", "0.12 ± 0.06"],
      ["dSprites, random", "dsprites/{}/random", "1.86 ± 0.11", "—"],
    ]
  ) row(setting, keys.replace("{}", "dto"), keys.replace("{}", "ds"), [dto, ds]);
  const sweep = Object.keys(m).filter((k) => /^beta_sweep\/active@/.test(k)).map((k) =>
    k.slice("beta_sweep/active@".length)
  );
  const tables: ResultTable[] = [{ title: "DtO and DS, mean ± s.d. over seeds, beside Tables 3.3–3.4", rows }];
  if (sweep.length > 0) {
    tables.push({
      title: "β sweep (Fig. 3.7): active latents (E σ² < 0.8), DS, DtO; pruning predicted at β ≳ 2λ_j = 0.167, 0.667",
      rows: sweep.map((b) => ({
        β: b,
        active: m[`beta_sweep/active@${b}`],
        DS: m[`beta_sweep/ds@${b}`] ?? null,
        DtO: m[`beta_sweep/dto@${b}`] ?? null,
      })),
    });
  }
  const extra: ResultTable["rows"] = [];
  if (m["pca/cos_min"] !== undefined) {
    extra.push({ check: "decoder columns vs R e₁, R e₂: min |cos| (claim ≥ 0.99)", value: m["pca/cos_min"] });
    extra.push({
      check: "σ_j² vs β/(2λ_j): largest relative error (claim ≤ 0.1)",
      value: m["pca/sigma2_rel_err"],
    });
  }
  if (m["polarized/synth_lin/dep"] !== undefined) {
    extra.push({
      check: "Δ_KL < 3% to the end, share of training, 2 latents (Table 3.2: 0.998)",
      value: m["polarized/synth_lin/dep"],
    });
    extra.push({ check: "the same, 10 latents (Table 3.2: 0.967)", value: m["polarized/synth_lin/10"] });
  }
  if (extra.length > 0) tables.push({ title: "Theorem 2 and the polarized regime", rows: extra });
  return tables;
}

/** The vae-pca study as a latentlab experiment. */
export const experiment = defineExperiment({
  name: "vae-pca",
  description: "VAEs pursue PCA directions: DtO and DS of β-VAE, AE, β-VAE_Σ on Synth-Lin/Non-Lin (Tables 3.2–3.4)",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      parts: [...PARTS],
      samples: 2_000,
      ratios: [1, 1.2, 1.5],
      betas: [0.01, 1],
      beta: 1e-2,
      beta_nonlin: 1e-2,
      lr: 1e-2,
      lr_nonlin: 3e-3,
      batch: 32,
      // Enough for the linear latents to become active (√Var μ > 0.5), so that the DtO is defined.
      steps: 300,
      steps_nonlin: 200,
      seeds: 2,
      sweep_seeds: 1,
      nonlin_seeds: 2,
      latents_polarized: 4,
      hidden_nonlin: [8, 6],
      generator_seed: 0,
      dto_points: 50,
      random_decoders: 50,
      dsprites_hidden: 16,
      dsprites_layers: 1,
      dsprites_steps: 200,
      dsprites_seeds: 1,
      dsprites_test: 100,
      eval_every: 100,
      log_every: 50,
      checkpoint_every: 150,
    },
    // §7.1 B–D: β 1e-2 and Adam 1e-2 align in 10–30k steps and matched Table 3.4 in numpy; the thesis' β 1e-4
    // and Adam 1e-3 need 300–400k.
    quick: {
      parts: ["ablation", "degeneracy", "beta_sweep", "pca", "polarized", "nonlin"],
      beta: 1e-2,
      beta_nonlin: 1e-2,
      lr: 1e-2,
      lr_nonlin: 3e-3,
      batch: 100,
      steps: 12_000,
      steps_nonlin: 12_000,
      nonlin_seeds: 3,
      checkpoint_every: 4_000,
      workers: 2,
    },
    // Where quick stops: Δ_KL leaves the 3% band only in the first ~3,000 steps at lr 1e-2, and σ_j² still moves.
    long: {
      parts: ["ablation", "pca", "polarized"],
      beta: 1e-2,
      lr: 1e-2,
      batch: 100,
      steps: 48_000,
      eval_every: 500,
      checkpoint_every: 8_000,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    smoke: "2,000 points, 300 linear and 200 MLP steps, 2 seeds: checks the pipeline, not the tables",
    quick: "β 1e-2 and Adam 1e-2 (linear) / 3e-3 (MLP), batch 100, 12,000 steps instead of β 1e-4 / 1e-3, Adam " +
      "1e-3, batch 64, 375,000 steps: the thesis' setting aligns only after 300–400k steps (report §7.1 A–B); " +
      "3 Synth-Non-Lin seeds instead of 10; no dsprites part",
    long: "the ablation, PCA and polarized parts at 4× quick's steps (48,000), same β and learning rate. Measured " +
      "(605 s): the AE's and β-VAE_Σ's DtO fall to 0.376 and 0.435 (Table 3.3: 0.33, 0.34), Δ_KL stays below 3% " +
      "for 94% / 96% of training (2 / 10 latents); with --parts pca (seed 0) σ_j² lies 3.4% ± 2.2% from β/(2λ_j) " +
      "and DS is 0.991 ± 0.005",
    paper: "not run: 375,000 steps per Synth setting and 576,000 AdaGrad steps per dSprites model. Estimates from " +
      "the bench's ensemble steps (not measured end to end): the six linear settings ≈ 15 min each, the three " +
      "Synth-Non-Lin ensembles of 10 ≈ 1 h each, the dSprites ensembles (MLP 1200–1200 on 1,024 pixels, 1.1 GFLOP " +
      "per member and step) ≈ 0.3 s per step of 5 members, ≈ 48 h each: ≈ 150 h on one wasm core",
  },
  targets,
  claims,
  validate(cfg) {
    if (cfg.parts.length === 0) throw new UsageError(`parts must name at least one of: ${PARTS.join(", ")}`);
    for (const r of [cfg.ratio, ...cfg.ratios]) {
      if (!(r >= 1 && r <= 10)) throw new UsageError(`ratio ${r} is outside the allowed [1, 10]`);
    }
    if (cfg.parts.includes("pca") && cfg.latents !== 2) {
      throw new UsageError(
        `the pca part compares 2 decoder columns with R e₁, R e₂: latents must be 2, got ${cfg.latents}`,
      );
    }
    // splitIndices gives the test split ⌊n/10⌋ rows.
    const testRows = Math.floor(cfg.samples / 10);
    const synthParts = cfg.parts.filter((p) => p !== "dsprites");
    if (synthParts.length > 0 && cfg.dto_points > testRows) {
      throw new UsageError(
        `dto_points ${cfg.dto_points} exceeds the test split (${testRows} of ${cfg.samples} samples); allowed ≤ ${testRows}`,
      );
    }
    if (cfg.parts.includes("dsprites") && cfg.dto_points > cfg.dsprites_test) {
      throw new UsageError(`dto_points ${cfg.dto_points} exceeds dsprites_test ${cfg.dsprites_test}`);
    }
  },
  async run(ctx, cfg) {
    const metrics: Record<string, number> = {};
    const details: Record<string, unknown> = {};
    if (cfg.parts.includes("ablation")) {
      const random = randomLinearDto(ctx.seed, cfg.random_decoders);
      metrics["ablation/dto/random"] = random.mean;
      metrics["ablation/dto_sd/random"] = random.sd;
      ctx.log(0, { "ablation/dto/random": random.mean });
    }
    if (cfg.parts.includes("nonlin")) {
      const d = nonLinearData(ctx.seed, cfg).synth!;
      const [s0, s45] = preferenceScore(d, [0, 45]);
      metrics["nonlin/preference_gap"] = s45 - s0;
      details.nonlin_generator = { generator_seed: generatorSeed(cfg), s0, s45 };
    }
    const ids = phaseIds(cfg);
    const { results } = await runPhasesOn<Cfg, string, PhaseResult>(
      ctx,
      ids,
      async (id, _, checkpoints) => ({ result: await runPhase(ctx, cfg, id, checkpoints) }),
      {
        stride: Math.max(cfg.steps, cfg.steps_nonlin, cfg.parts.includes("dsprites") ? cfg.dsprites_steps : 0),
        parallel: {
          module: import.meta.url,
          exportName: "workerPhase",
          cfg,
          workers: cfg.workers,
          cost: (id) => phaseCost(cfg, id),
        },
      },
    );
    const table: Record<string, unknown>[] = [];
    for (const result of results) {
      // Means and s.d. over the members of each group.
      const groups = new Map<string, Scores[]>();
      for (const m of result.members) {
        if (!groups.has(m.group)) groups.set(m.group, []);
        groups.get(m.group)!.push(m.scores);
        table.push({ phase: result.id, seed: m.seed, beta: m.beta, group: m.group, ...m.scores });
      }
      for (const [group, all] of groups) {
        for (const name of Object.keys(all[0])) {
          const values = all.map((s) => s[name]);
          const { mean, sd } = meanSd(values);
          metrics[group.replace("{}", name)] = mean;
          if (values.length > 1) metrics[group.replace("{}", `${name}_sd`)] = sd;
        }
      }
    }
    // The ablation's β-VAE is also the PCA check and Table 3.2's dep. setting.
    const ablation = results.find((r) => r.id === "ablation/beta_vae");
    if (ablation) {
      if (cfg.parts.includes("pca") && cfg.latents === 2) {
        metrics["pca/cos_min"] = metrics["ablation/cos_min/beta_vae"];
        metrics["pca/sigma2_rel_err"] = metrics["ablation/sigma2_rel_err/beta_vae"];
      }
      if (cfg.parts.includes("polarized")) metrics["polarized/synth_lin/dep"] = metrics["ablation/polarized/beta_vae"];
    }
    if (cfg.parts.includes("polarized")) metrics["polarized/synth_lin/10"] = metrics["latents10/polarized"];
    details.members = table;
    details.results = resultTables(metrics);
    details.deviations = {
      jacobian: "DtO from tf.grad per output (≤ 16 outputs), else central differences, h = 1e-2·sd of μ_j",
      ds: "DS: 1-D kNN (k 5) fitted on 80% of the test split, each A floored at the constant predictor's (on [0, 1])",
      active_rule: "active: E σ² < 0.8 (Ch. 4 rule) for beta_sweep/active; √Var μ > 0.5 (Ch. 3) inside Δ_KL",
      dsprites: "the ensemble's MLP (ReLU encoder, its widths reversed in the decoder, Bernoulli logits) in place of " +
        "mlpEncoder/mlpDecoder's tanh decoder; DtO on the decoder's logits",
    };
    return { metrics, details };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
