/**
 * A small local change that keeps every factor breaks disentanglement
 * (Zietlow2022 Ch. 4: Theorem 2, §4.2–4.3, Table 4.2; Zietlow, Rolínek &
 * Martius, ICML 2021).
 *
 * The alignment a β-VAE picks is driven by where its posterior noise is
 * cheapest (Theorem 2), and for a nonlinear decoder that is a local
 * property of the data. So a perturbation of size ε, which leaves the
 * factors and nearly all of the variance untouched, can move the preferred
 * alignment; uniform noise of the same size cannot. Data sets:
 *
 *   - synth (ours): Synth-Lin r = 1.5, the modified data
 *     adds ε·sin(ω(w₁ + w₂)) along the normal of the data plane. The
 *     orthogonality preference S(θ) (ours) flips from the factor axes
 *     to the diagonal while the added variance is 6% of the minor factor's.
 *   - dsprites, shapes3d (Table 4.2): the thesis' learned manipulation.
 *     β-VAE restarts give the most entangled (ENT) and disentangled (DIS)
 *     reference by MIG; a network m(w) (one-neuron bottleneck, the
 *     deconvolutional decoder, ε·tanh) is trained so that the manipulated
 *     images x' = reflect01(x + m(w)) are cheap for ENT's decoder and dear
 *     for DIS's; β-VAEs are then trained on the original, modified and noisy
 *     (U[−ε, ε]) data and scored.
 */
import { choices, type ConfigOf, integer, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { UsageError } from "../lib/core/errors.ts";
import {
  DATASETS,
  type ImageDataset,
  type PublishedMig,
  runVaeManipulation,
  type Variant,
  VARIANTS,
} from "../lib/studies/vae_manipulation.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import { VAE_CONFIG, VAE_SMOKE_PRESET } from "../lib/train/vae.ts";

const SOURCE = "Zietlow2022 Ch. 4 (Theorem 2, §4.2–4.3), Table 4.2";
const TABLE_4_2 = "Zietlow2022 Table 4.2";

const { method: _method, value: _value, dataset: _dataset, ...imageTraining } = VAE_CONFIG;

const config = {
  datasets: choices(["synth"], DATASETS, "data sets: synth (ours), dsprites and shapes3d (Table 4.2)"),
  // Synth
  samples: integer(50_000, "synth: data points (80/10/10 split; numbers on the test split)", {
    min: 100,
    max: 10_000_000,
  }),
  ratio: real(1.5, "synth: Synth-Lin stretch r", { min: 1, max: 10 }),
  eps: real(0.1, "synth: size ε of the wiggle and of the uniform noise", { min: 0, max: 0.5 }),
  omega: real(20, "synth: frequency ω of the wiggle sin(ω(w₁ + w₂))", { min: 0 }),
  hidden: integer(64, "synth: hidden width of the encoder and decoder MLPs, tanh", { min: 1, max: 4_096 }),
  hidden_layers: integer(2, "synth: hidden layers of each MLP", { min: 1, max: 16 }),
  synth_latents: integer(2, "synth: latents", { min: 2, max: 64 }),
  beta: real(1e-2, "synth: β of the β-VAE", { min: 0 }),
  synth_lr: real(3e-3, "synth: Adam learning rate", { min: 0, max: 1 }),
  synth_batch: integer(100, "synth: observations per step", { min: 2, max: 16_384 }),
  synth_steps: integer(12_000, "synth: Adam steps", { min: 1, max: 100_000_000 }),
  synth_seeds: integer(10, "synth: seeds per variant: --seed·100 + 0, 1, …", { min: 1, max: 99 }),
  dto_points: integer(500, "synth: test points of the DtO", { min: 1, max: 100_000 }),
  eval_every: integer(500, "synth: steps between evaluations (the learning curves)", { min: 1, max: 100_000_000 }),
  // Images
  ...imageTraining,
  beta_dsprites: real(8, "dsprites: β of the β-VAE (Table 4.1)", { min: 0 }),
  beta_shapes3d: real(32, "shapes3d: β of the β-VAE (Table 4.1)", { min: 0 }),
  image_seeds: integer(10, "images: β-VAEs per variant (Table 4.2: 10)", { min: 1, max: 50 }),
  restarts: integer(10, "images: β-VAE restarts the references are chosen from", { min: 2, max: 49 }),
  references: integer(1, "images: ENT and DIS references each (the lowest and highest MIG; Shapes3D: 4)", {
    min: 1,
    max: 49,
  }),
  eps_dsprites: real(0.1, "dsprites: ε of the manipulation and the noise", { min: 0, max: 0.5 }),
  eps_shapes3d: real(0.175, "shapes3d: ε of the manipulation and the noise", { min: 0, max: 0.5 }),
  perturbation_steps: integer(5_000, "images: steps of m (its decoders take 3 batches per step)", {
    min: 1,
    max: 100_000_000,
  }),
  perturbation_batch: integer(64, "images: images per step of m", { min: 2, max: 4_096 }),
  perturbation_lr: real(1e-4, "images: Adam learning rate of m and the decoders", { min: 0, max: 1 }),
  perturbation_points: integer(4_096, "images: values of m's scalar s tabulated; each image interpolates between", {
    min: 2,
    max: 16_384,
  }),
  ...WORKERS_CONFIG,
};
export type Cfg = ConfigOf<typeof config>;

const TABLE_4_2_MIG: PublishedMig = {
  dsprites: { orig: 0.23, mod: 0.07, noise: 0.14 },
  shapes3d: { orig: 0.60, mod: 0.09, noise: 0.66 },
};
/**
 * Tolerance, its source and two nulls per target: the MIG of the untrained encoder at step 0 in the paper preset's
 * setting (conv encoder at 64×64, 10 latents, 10,000 points; mean of seeds 0–2, measured with this code's
 * vaeNetworks, sampleCodes and MIG: dSprites 0.008 / 0.013 / 0.014, Shapes3D 0.013 / 0.041 / 0.023 on the original
 * data) and Table 4.2's AE row, "the random-alignment baseline". The modified data's β-VAE MIG (dSprites 0.07,
 * Shapes3D 0.09) sits at both (AE 0.05): no target; the claims compare it with the original and noisy data instead.
 */
const halfAe = (d: number, sd: number) =>
  `rule: half the distance to the AE null (${d}); the published s.d. ${sd} is wider`;
const IMAGE_TARGETS: [ImageDataset, Variant, number, string, number, number][] = [
  // data set, variant, tolerance, its source, untrained MIG, AE MIG
  ["dsprites", "orig", 0.07, halfAe(0.07, 0.08), 0.011, 0.09],
  ["dsprites", "noise", 0.04, halfAe(0.04, 0.07), 0.009, 0.06],
  [
    "shapes3d",
    "orig",
    0.15,
    "rule: 0.15, below half the way to the AE null (0.27) and the published s.d. 0.31",
    0.026,
    0.06,
  ],
  ["shapes3d", "noise", 0.05, "the published s.d. over 10 seeds", 0.020, 0.07],
];
const NAME: Record<ImageDataset, string> = { dsprites: "dSprites", shapes3d: "Shapes3D" };

const targets: Target<Cfg>[] = IMAGE_TARGETS.map(([dataset, variant, tolerance, toleranceSource, untrained, ae]) => ({
  metric: `${dataset}/mig/beta_vae/${variant}`,
  paper: TABLE_4_2_MIG[dataset][variant],
  source: `${TABLE_4_2}, β-VAE, ${NAME[dataset]} ${variant}.`,
  tolerance,
  toleranceSource,
  direction: "match",
  nulls: [
    { value: untrained, model: "untrained encoder, step 0 (measured, paper preset, 3 seeds)" },
    { value: ae, model: `AE, Table 4.2's random-alignment baseline (${NAME[dataset]} ${variant}.)` },
  ],
  kind: "analogue",
  standIn: `a procedural ${NAME[dataset]} renderer (the original file where supplied) for DeepMind's; 10 latents ` +
    `(the config's default) for the thesis' ${dataset === "dsprites" ? 5 : 6}; our learned m for the thesis'`,
  appliesTo: (cfg: Cfg) => cfg.datasets.includes(dataset),
  // Each model's learning curve (MIG of the same observations every curve_every steps), averaged over seeds.
  curve: `${dataset}/beta_vae/${variant}/*/mig`,
}));

const mig = (m: Record<string, number>, dataset: ImageDataset) =>
  VARIANTS.map((v) => m[`${dataset}/mig/beta_vae/${v}`]) as [number, number, number];

const claims: Claim<Cfg>[] = [
  {
    text: "(8) synth: the wiggle breaks the alignment (corr-gap mod ≤ orig − 0.2) and noise of the same size does " +
      "not (noise ≥ orig − 0.1); undefined when the decoders do not fit the wiggle (wiggle_fit_r2 < 0.5)",
    source: `${TABLE_4_2}, β-VAE row's pattern (Shapes3D 0.60 → 0.09, noise 0.66); the synth analogue is ours`,
    holds: (m) => {
      const [orig, mod, noise, fit] = ["orig", "mod", "noise"].map((v) => m[`synth/corr_gap/${v}`])
        .concat(m["synth/wiggle_fit_r2/mod"]);
      if ([orig, mod, noise, fit].some((v) => v === undefined) || fit < 0.5) return undefined;
      return mod <= orig - 0.2 && noise >= orig - 0.1;
    },
  },
  {
    text: "dsprites: the manipulation lowers the β-VAE's MIG by at least 0.1 (mod ≤ orig − 0.1)",
    source: `${TABLE_4_2}, β-VAE row, dSprites: orig 0.23 ± 0.08, mod 0.07 ± 0.09 (10 seeds)`,
    holds: (m) => {
      const [orig, mod] = mig(m, "dsprites");
      return orig === undefined || mod === undefined ? undefined : mod <= orig - 0.1;
    },
  },
  {
    text: "shapes3d: the manipulated data's β-VAE MIG lies at least 0.3 below both the original's and the noisy data's",
    source: `${TABLE_4_2}, β-VAE row, Shapes3D: orig 0.60 ± 0.31, mod 0.09 ± 0.14, noise 0.66 ± 0.05 (10 seeds)`,
    holds: (m) => {
      const [orig, mod, noise] = mig(m, "shapes3d");
      return [orig, mod, noise].some((v) => v === undefined) ? undefined : mod <= Math.min(orig, noise) - 0.3;
    },
  },
];

/** The manipulation study as a latentlab experiment. */
export const experiment = defineExperiment({
  name: "vae-manipulation",
  finding: "A local change keeping every factor breaks β-VAE disentanglement",
  description: "A local change keeping every factor breaks a β-VAE's disentanglement; noise does not (Table 4.2)",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      datasets: [...DATASETS],
      samples: 2_000,
      hidden: 8,
      hidden_layers: 1,
      synth_steps: 40,
      synth_batch: 32,
      synth_seeds: 2,
      dto_points: 50,
      eval_every: 20,
      ...VAE_SMOKE_PRESET,
      architecture: "conv",
      latents: 2,
      steps: 2,
      curve_every: 1,
      curve_samples: 20,
      eval_samples: 20,
      score_points: 2,
      score_batch: 2,
      image_seeds: 1,
      restarts: 2,
      perturbation_steps: 1,
      perturbation_batch: 2,
      perturbation_points: 16,
      log_every: 10,
      checkpoint_every: 20,
    },
    // The synth analogue only (ours): MLP 64–64 tanh, 2 latents, β 1e-2, Adam 3e-3, 12,000 steps,
    // 3 seeds per variant in one ensemble.
    quick: {
      datasets: ["synth"],
      synth_seeds: 3,
      log_every: 200,
      checkpoint_every: 4_000,
    },
    // Where quick stops: at β 1e-2 the posterior noise along the minor factor (≈ 0.07 in w) blurs a wiggle of period
    // 2π/20 ≈ 0.31 and the decoders do not fit it; β 1e-3 shrinks that noise by √10.
    long: {
      datasets: ["synth"],
      beta: 1e-3,
      synth_steps: 20_000,
      synth_seeds: 3,
      log_every: 200,
      checkpoint_every: 4_000,
    },
    paper: {
      datasets: ["dsprites", "shapes3d"],
      resolution: 64,
      architecture: "conv",
      steps: 300_000,
      batch: 64,
      lr: 1e-4,
      curve_every: 10_000,
    },
  },
  presetLimits: {
    smoke: "2,000 synth points and 40 steps; 2 image steps per β-VAE, 2 restarts, 1 step of m tabulated at 16 " +
      "points: the pipeline only",
    quick: "the synth analogue (ours) in place of Table 4.2's images: a hand-made wiggle of " +
      "size 0.1 instead of the learned m, 3 seeds per variant",
    long: "β 1e-3 instead of quick's 1e-2 (ours), 20,000 steps. Measured (481 s): the decoders fit the wiggle " +
      "(R² 0.93) and the β-VAEs on the modified data lose their alignment (corr-gap 0.668 ± 0.165 against 0.965 on the " +
      "original data, MIG-binned 0.418 against 0.755) while those on noise of the same size keep it (0.952); the " +
      "modified data's corr-gap was still rising (0.617 at step 10,000, 0.668 at 20,000)",
    paper: "not run: per data set 10 restarts + 30 β-VAEs of 300,000 steps at 64×64 and 5,000 steps of m " +
      "(40 conv models, ≈ 12M steps); Shapes3D's 4 + 4 references need --references 4. At vae-dsprites long's " +
      "0.56 s per 32×32 step (with scoring), ×4 for 64×64: ≈ 6,700 h on this CPU (an estimate, not measured)",
  },
  targets,
  claims,
  validate(cfg) {
    if (cfg.datasets.length === 0) throw new UsageError(`datasets must name at least one of: ${DATASETS.join(", ")}`);
    for (
      const [name, eps] of [["eps", cfg.eps], ["eps_dsprites", cfg.eps_dsprites], ["eps_shapes3d", cfg.eps_shapes3d]]
    ) {
      if (!((eps as number) > 0 && (eps as number) <= 0.5)) {
        throw new UsageError(`${name} must be in (0, 0.5], got ${eps}`);
      }
    }
    if (!(cfg.omega > 0)) throw new UsageError(`omega must be > 0, got ${cfg.omega}`);
    if (!(cfg.ratio >= 1 && cfg.ratio <= 10)) throw new UsageError(`ratio must be in [1, 10], got ${cfg.ratio}`);
    // splitIndices gives the test split ⌊n/10⌋ rows.
    const testRows = Math.floor(cfg.samples / 10);
    if (cfg.datasets.includes("synth") && cfg.dto_points > testRows) {
      throw new UsageError(`dto_points ${cfg.dto_points} exceeds the test split (${testRows}); allowed ≤ ${testRows}`);
    }
    if (cfg.references * 2 > cfg.restarts) {
      throw new UsageError(
        `references ${cfg.references} ENT + ${cfg.references} DIS need ≥ ${2 * cfg.references} restarts`,
      );
    }
  },
  run: (ctx, cfg) => runVaeManipulation(ctx, cfg, TABLE_4_2_MIG),
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
