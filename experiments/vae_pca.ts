/**
 * Variational autoencoders pursue PCA directions (Zietlow2022 Ch. 3 and
 * §4.2.1; Rolínek, Zietlow & Martius, CVPR 2019).
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
 *   - beta_sweep (Fig. 3.7; the stage rule is our derivation): latents are
 *     pruned in discrete stages, latent j once β ≳ 2λ_j.
 *   - pca (Theorem 2): the linear β-VAE's decoder columns are the principal
 *     directions R e₁, R e₂, and σ_j² = β/(2λ_j).
 *   - polarized (Table 3.2): Δ_KL (3.38) below 3% for most of training, with
 *     2 latents ("dep.") and 10.
 *   - nonlin (Table 3.3, Synth-Non-Lin): MLP 60–40–20 tanh.
 *   - dsprites (Table 3.3): β-VAE (β 4), VAE, AE, β-VAE_Σ, random decoder.
 *
 * The study's data, ensembles and scores: lib/studies/vae_pca.ts.
 */
import { choices, type ConfigOf, integer, integerChoice, integers, real, reals } from "../lib/core/config.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { UsageError } from "../lib/core/errors.ts";
import { HAAR_DTO_2 } from "../lib/metrics/dto.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import { type Part, PARTS, runVaePcaStudy } from "../lib/studies/vae_pca.ts";
import { logEveryConfig } from "../lib/train/config.ts";

const SOURCE = "Zietlow2022 §3.2.2–3.2.7, §4.2.1, §5.1–5.2, Tables 3.2–3.4 (Ch. 3)";
const TABLE_3_2 = "Zietlow2022 Table 3.2";
const TABLE_3_3 = "Zietlow2022 Table 3.3";
const TABLE_3_4 = "Zietlow2022 Table 3.4";

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
  ...logEveryConfig(100),
  checkpoint_every: integer(5_000, "steps between checkpoints inside a setting (0: none)", {
    min: 0,
    max: 100_000_000,
  }),
  ...WORKERS_CONFIG,
};
export type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------------------------
// Targets and claims

/**
 * Null models in the paper preset's setting. DtO: a Gaussian decoder's V is Haar (closed form for d = 2; d = 5 from
 * 60,000 Gaussian 20×5 draws); the untrained networks were measured at step 0 by this code (--preset paper, 1 step
 * at learning rate 0, seed 0, 10 members per model). DS: a perfect code turned by a uniform angle in the factor
 * plane, the alignment the objective leaves free (Zietlow2022 §3.1–3.2.1; 36 angles × 2 data seeds on 5,000 test
 * rows), and the untrained encoders. Δ_KL is 1.29 (2 latents) and 1.36 (10) at step 0: no training time is polarized.
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
    source: "Zietlow2022 Fig. 3.7 (Synth-Lin panel); the thresholds 2λ_j are our derivation",
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
    source: "Zietlow2022 §4.2.1, §5.2 (Theorem 2)",
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

/** Where the run departs from the thesis' setting. */
const DEVIATIONS = {
  jacobian: "DtO from tf.grad per output (≤ 16 outputs), else central differences, h = 1e-2·sd of μ_j",
  ds: "DS: 1-D kNN (k 5) fitted on 80% of the test split, each A floored at the constant predictor's (on [0, 1])",
  active_rule: "active: E σ² < 0.8 (Ch. 4 rule) for beta_sweep/active; √Var μ > 0.5 (Ch. 3) inside Δ_KL",
  dsprites: "the ensemble's MLP (ReLU encoder, its widths reversed in the decoder, Bernoulli logits) in place of " +
    "mlpEncoder/mlpDecoder's tanh decoder; DtO on the decoder's logits",
};

/** The vae-pca study as a latentlab experiment. */
export const experiment = defineExperiment({
  name: "vae-pca",
  finding: "VAEs pursue PCA directions, by accident of the objective",
  description: "VAEs pursue PCA directions: DtO and DS of β-VAE, AE, β-VAE_Σ on Synth-Lin/Non-Lin (Tables 3.2–3.4)",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      parts: [...PARTS],
      samples: 500,
      ratios: [1, 1.2, 1.5],
      betas: [0.01, 1],
      beta: 1e-2,
      beta_nonlin: 1e-2,
      lr: 1e-2,
      lr_nonlin: 3e-3,
      batch: 32,
      // Two evaluations and a checkpoint inside every setting: the pipeline and its curves, not trained numbers.
      steps: 20,
      steps_nonlin: 20,
      seeds: 2,
      sweep_seeds: 1,
      nonlin_seeds: 2,
      latents_polarized: 4,
      hidden_nonlin: [8, 6],
      generator_seed: 0,
      dto_points: 20,
      random_decoders: 20,
      dsprites_hidden: 16,
      dsprites_layers: 1,
      dsprites_steps: 20,
      dsprites_seeds: 1,
      dsprites_test: 40,
      eval_every: 10,
      log_every: 10,
      checkpoint_every: 10,
    },
    // Pilot runs: β 1e-2 and Adam 1e-2 align in 10–30k steps and matched Table 3.4 in numpy; the thesis' β 1e-4
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
    smoke: "500 points, 20 steps per setting, 2 seeds: checks the pipeline, not the tables",
    quick: "β 1e-2 and Adam 1e-2 (linear) / 3e-3 (MLP), batch 100, 12,000 steps instead of β 1e-4 / 1e-3, Adam " +
      "1e-3, batch 64, 375,000 steps: the thesis' setting aligns only after 300–400k steps (pilot runs); " +
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
    const { metrics, details } = await runVaePcaStudy(ctx, cfg);
    return { metrics, details: { ...details, deviations: DEVIATIONS } };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
