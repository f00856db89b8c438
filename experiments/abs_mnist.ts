/**
 * Analysis by synthesis on MNIST (Schott2019 §3–7, App. A.3–A.7, Table 1):
 * ten class VAEs classify by their optimised ELBOs (ABS) and are attacked
 * beside a CNN of the same size by a foolbox-style suite, per norm the
 * smallest adversarial any attack finds; ABS's certified L2 lower bound; distal adversarials from
 * noise. Table 1's finding: ABS needs about twice the CNN's median L2
 * perturbation and more changed pixels.
 */
import { whenMeasured } from "../lib/core/claims.ts";
import { choices, type ConfigOf, integer, real } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import * as table1 from "../lib/data/abs_mnist_tables.ts";
import { checkMnistParts, MNIST_PARTS_CONFIG } from "../lib/data/mnist.ts";
import type { AttackDistance } from "../lib/attacks/types.ts";
import {
  attackAllDigits,
  attackDetails,
  attackMetrics,
  buildModels,
  distalAdversarials,
  EPSILON_LABEL,
  finite,
  mnistOf,
  MODEL_NAMES,
  type ModelName,
  NORMS,
  phaseName,
  type TrainPhase,
  trainPhase,
  trainPhases,
  type TrainResult,
  WORKER_MODULE,
} from "../lib/studies/abs_mnist.ts";
import { logEveryConfig } from "../lib/train/config.ts";
import { runPhasesOn, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "Schott2019 §3–7, App. A.3–A.7; targets Table 1 and the mean L2 lower bound";

/** Bounds of an epoch count, of a count of steps, scales or prototypes, and of a count of test digits. */
const EPOCHS = { min: 0.01, max: 10_000 }, COUNT = { min: 1, max: 100_000 }, TEST_DIGITS = { min: 1, max: 10_000 };

const config = {
  models: choices(["cnn", "abs", "binary_cnn", "binary_abs", "nn"], MODEL_NAMES, "models trained and attacked"),
  ...MNIST_PARTS_CONFIG,
  vae_epochs: real(100, "epochs of each class VAE (App. A.7 does not give them; β anneals over the first 50)", EPOCHS),
  vae_batch: integer(64, "images per class-VAE step", { min: 2, max: 4_096 }),
  vae_lr: real(1e-3, "Adam learning rate of the class VAEs (App. A.7 does not give it)", { min: 0, max: 1 }),
  beta_epochs: real(50, "epochs over which the KL weight falls linearly from 10 to 1 (App. A.7: 50)", {
    min: 0,
    max: 10_000,
  }),
  cnn_epochs: real(50, "epochs of the CNNs (App. A.7 does not give them)", EPOCHS),
  cnn_batch: integer(64, "images per CNN step", { min: 2, max: 4_096 }),
  cnn_lr: real(1e-3, "Adam learning rate of the CNNs", { min: 0, max: 1 }),
  prototypes: integer(
    8_000,
    "latent prototypes per class VAE, the start of ABS's inference (Schott2019: 8,000)",
    COUNT,
  ),
  inference_steps: integer(50, "Adam steps on each class's latent after the best prototype (Schott2019: 50)", {
    min: 0,
    max: 10_000,
  }),
  inference_lr: real(0.05, "Adam learning rate of ABS's latent search (reference get_ABS: 0.05)", { min: 0, max: 10 }),
  clean_digits: integer(
    10_000,
    "test digits the clean accuracy is measured on (the first of the test part)",
    TEST_DIGITS,
  ),
  calibration_digits: integer(2_000, "training digits α and the Binary ABS class scales are fit on", {
    min: 10,
    max: 60_000,
  }),
  attack_digits: integer(2_000, "test digits attacked (the first of the test part)", TEST_DIGITS),
  attack_batch: integer(10, "digits attacked together; finished ones are appended to attacks.jsonl", {
    min: 1,
    max: 1_000,
  }),
  bisection_steps: integer(10, "ε bisections that turn a fixed-ε attack (FGSM, BIM, PGD) into a minimal one", {
    min: 1,
    max: 50,
  }),
  bim_steps: integer(10, "steps of the L2 and L∞ BIM (foolbox: 10)", { min: 1, max: 10_000 }),
  pgd_steps: integer(40, "steps of the L∞ PGD (foolbox: 40)", { min: 1, max: 10_000 }),
  deepfool_steps: integer(50, "DeepFool steps (foolbox: 50)", { min: 1, max: 10_000 }),
  cw_binary_steps: integer(9, "C&W binary search steps over c (foolbox: 9)", { min: 1, max: 100 }),
  cw_steps: integer(10_000, "C&W Adam steps per binary search step (foolbox: 10,000)", COUNT),
  boundary_steps: integer(25_000, "Boundary Attack steps (foolbox: 25,000)", { min: 1, max: 1_000_000 }),
  latent_descent_steps: integer(
    200,
    "Latent Descent steps before a digit counts as not fooled (Schott2019 §5 steps until it is)",
    COUNT,
  ),
  boundary_models: choices(
    ["cnn", "abs", "binary_cnn", "binary_abs", "nn"],
    MODEL_NAMES,
    "models the Boundary Attack runs on (its queries are costly on ABS)",
  ),
  line_search_steps: integer(100, "grid scales of the noise and transfer line searches before their bisection", COUNT),
  sp_steps: integer(1_000, "Salt&Pepper noise steps (foolbox: 1,000)", COUNT),
  pointwise_restarts: integer(10, "Pointwise Attack restarts (Table 1: 10×)", { min: 1, max: 100 }),
  pointwise_bisection: integer(
    10,
    "passes of Pointwise's per-pixel L2 bisection after its resets (foolbox repeats them until one improves " +
      "nothing; 0: none, its result then counts for L0 only as it is)",
    { min: 0, max: 100 },
  ),
  distal_starts: integer(
    10,
    "noise images each model's distal descent starts from (target class 1, as the reference)",
    {
      min: 0,
      max: 10_000,
    },
  ),
  distal_steps: integer(
    10_000,
    "SGD steps of the distal descent at most (reference scripts/attacks.py: 10,000)",
    COUNT,
  ),
  ...logEveryConfig(50, "training steps between logged losses"),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------
// Targets and claims: Schott2019 Table 1 ("All L2/L∞/L0 attacks" rows) and the mean L2 lower bound.

type Nulls = Target<Cfg>["nulls"];
type TargetArgs = [ModelName, string, number, string, keyof typeof table1.TOLERANCES, Nulls];

/** A Table 1 target; its tolerance the scale's, or half the way to the nearest null (rounded down) where less. */
const target = (...[model, metric, paper, cell, scale, given]: TargetArgs): Target<Cfg> => {
  const untrained = table1.UNTRAINED_ABS[`${model}/${metric}`];
  const nulls = untrained === undefined ? given : [...given, { value: untrained, model: table1.NULLS.untrained }];
  const [base, step, why] = table1.TOLERANCES[scale];
  const near = nulls.reduce((a, b) => Math.abs(paper - b.value) < Math.abs(paper - a.value) ? b : a);
  const half = Number((Math.abs(paper - near.value) / 2).toFixed(4));
  return {
    metric: `${model}/${metric}`,
    paper,
    source: `Schott2019 Table 1, ${model}: ${cell}`,
    tolerance: base <= half ? base : Number((Math.floor(half / step + 1e-9) * step).toFixed(4)),
    toleranceSource: base <= half
      ? `rule: ${base} (${why}), under half the way to the nearest null (${half})`
      : `rule: half the way from ${paper} to the nearest null (${near.model}, ${near.value}), rounded down`,
    direction: "match",
    nulls,
    kind: "like-for-like",
    standIn: table1.SCALE,
    // No curve: measured once over the attacked digits (the running values logged per chunk are no learning curve).
    appliesTo: (cfg) => cfg.models.includes(model),
  };
};

const targets: Target<Cfg>[] = [
  ...MODEL_NAMES.map((model) =>
    target(model, "clean", table1.CLEAN[model], "clean accuracy", "clean", table1.NULLS.chance)
  ),
  ...MODEL_NAMES.flatMap((model) =>
    NORMS.flatMap((norm, k) =>
      table1.ALL_ATTACKS[model][k].map((paper, i) => {
        const nulls: Nulls = [...(i === 0 ? table1.NULLS.median : table1.NULLS.accuracy)];
        if (model !== "cnn") nulls.push({ value: table1.ALL_ATTACKS.cnn[k][i], model: "undefended CNN (Table 1)" });
        const [eps, cell] = [EPSILON_LABEL[norm], `All ${table1.NORM_LABEL[norm]} attacks`];
        if (i === 0) return target(model, `median_${norm}`, paper, `${cell}, median`, norm, nulls);
        return target(model, `acc_${norm}_${eps}`, paper, `${cell}, accuracy at ε = ${eps}`, "accuracy", nulls);
      })
    )
  ).filter((t) => !table1.AT_NULL.includes(t.metric)),
  ...([["abs", 2.7], ["binary_abs", 2.6]] as const).map(([model, paper]) =>
    target(model, "latent_descent/median_l2", paper, "Latent Descent, median", "l2", [
      ...table1.NULLS.median,
      { value: 1.1, model: "undefended CNN (All L2 attacks median, Table 1)" },
    ])
  ),
  // Binary ABS's bound (0.601) is left out: the re-derived bound (Schott2019 Eq. 6–8) holds for real-valued inputs
  // only.
  {
    ...target("abs", "lower_bound_l2_mean", 0.69, "", "l2", [{ value: 0, model: "trivial bound 0" }]),
    source: "Schott2019, L2 lower bound, mean over the test set (abs): 0.690 ± 0.005",
    toleranceSource:
      "rule: 0.3, under half the way to the bound 0 (0.345); Schott2019's ± 0.005 is over inference seeds",
  },
];

const TABLE1_ROW = 'Schott2019 Table 1, row "All';
/** ABS's median at least `ratio` × the CNN's: halfway from 1× to Table 1's ratio. */
const medianRatio = (norm: AttackDistance, ratio: number, cells: string): Claim<Cfg> => ({
  text: `ABS's median ${table1.NORM_LABEL[norm]} adversarial (all attacks) is at least ${ratio}× the CNN's`,
  source: `${TABLE1_ROW} ${table1.NORM_LABEL[norm]} attacks" (${cells}); margin halfway from 1×`,
  holds: (m) => whenMeasured(m, [`abs/median_${norm}`, `cnn/median_${norm}`], (abs, cnn) => abs >= ratio * cnn),
});

const claims: Claim<Cfg>[] = [
  medianRatio("l2", 1.5, "ABS 2.3 vs CNN 1.1: 2.1×"),
  medianRatio("l0", 1.4, "ABS 16.5 vs CNN 9: 1.8×"),
  medianRatio("linf", 1.9, "ABS 0.23 vs CNN 0.08: 2.9×"),
  {
    text: "ABS's accuracy under all L2 attacks at ε = 1.5 exceeds the CNN's by ≥ 0.36",
    source: `${TABLE1_ROW} L2 attacks" (ABS 80% vs CNN 8%); margin half the gap`,
    holds: (m) => whenMeasured(m, ["abs/acc_l2_1.5", "cnn/acc_l2_1.5"], (abs, cnn) => abs - cnn >= 0.36),
  },
  {
    text: "binarization buys L∞ robustness: accuracy at L∞ ε = 0.3 of the Binary CNN ≥ the CNN's + 0.32 and of " +
      "Binary ABS ≥ ABS's + 0.34 (each pair that was trained)",
    source: `${TABLE1_ROW} L∞ attacks" (Binary CNN 64% vs CNN 0%, Binary ABS 77% vs ABS 8%); margins half the gaps`,
    holds: (m) => {
      const held = ([["binary_cnn", "cnn", 0.32], ["binary_abs", "abs", 0.34]] as const)
        .map(([b, p, gap]) => whenMeasured(m, [`${b}/acc_linf_0.3`, `${p}/acc_linf_0.3`], (x, y) => x - y >= gap));
      return held.every((h) => h === undefined) ? undefined : !held.includes(false);
    },
  },
  {
    text: "ABS's certified L2 bound: 0 < mean ≤ median L2 found; every attack's best L2 ≥ the bound on ≥ 95% of digits",
    source: "Schott2019 §4, App. A.4–A.5 (Eq. 6–8 re-derived)",
    holds: (m) =>
      whenMeasured(
        m,
        ["lower_bound_l2_mean", "median_l2", "bound_respected"].map((k) => `abs/${k}`),
        (bound, median, share) => bound > 0 && bound <= median && share >= 0.95,
      ),
  },
  {
    text: "distal adversarials: ascent from noise reaches p ≥ 0.9 from ≥ 80% of starts for the CNN, ≤ 20% for ABS",
    source: "Schott2019 §7, Fig. 4",
    holds: (m) => whenMeasured(m, ["cnn/distal_reached", "abs/distal_reached"], (cnn, abs) => cnn >= 0.8 && abs <= 0.2),
  },
];

export const experiment = defineExperiment({
  name: "abs-mnist",
  finding: "Analysis by synthesis needs larger adversarials than a CNN",
  description: "Analysis by synthesis (Schott2019): ABS vs CNN on MNIST under a foolbox-style attack suite, L2 bound",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      // Wiring, not learning: every model, attack and metric on three digits in seconds. ABS infers by its best
      // prototype alone (no Adam steps; tests/models/abs_test.ts checks them); the Boundary Attack skips Binary
      // ABS, whose binarization reset then queries ABS once per changed pixel.
      train_digits: 100,
      test_digits: 20,
      vae_epochs: 1,
      vae_batch: 16,
      beta_epochs: 1,
      cnn_epochs: 1,
      prototypes: 4,
      inference_steps: 0,
      clean_digits: 20,
      calibration_digits: 20,
      // Three: with two, both latent-descent runs can fail on these tiny models and leave its median unmeasured.
      // Attacked together, so that ABS, which decodes every class at each query, is queried a third as often.
      attack_digits: 3,
      attack_batch: 3,
      line_search_steps: 3,
      bisection_steps: 2,
      bim_steps: 1,
      pgd_steps: 1,
      deepfool_steps: 2,
      cw_binary_steps: 1,
      cw_steps: 2,
      boundary_steps: 2,
      latent_descent_steps: 20,
      boundary_models: ["cnn", "abs", "binary_cnn", "nn"],
      sp_steps: 3,
      pointwise_restarts: 1,
      pointwise_bisection: 1,
      distal_starts: 2,
      distal_steps: 2,
      log_every: 1,
    },
    quick: {
      models: ["cnn", "abs"],
      // A stratified eighth of the training file keeps the VAEs' training short; clean accuracy on all 10,000 test
      // digits (ABS inference ≈ 45 ms a digit on one wasm core).
      train_digits: 8_000,
      vae_epochs: 30,
      beta_epochs: 10,
      cnn_epochs: 8,
      prototypes: 1_000,
      inference_steps: 5,
      clean_digits: 10_000,
      calibration_digits: 1_000,
      attack_digits: 30,
      bim_steps: 20,
      pgd_steps: 20,
      cw_binary_steps: 5,
      cw_steps: 1_000, // 5 × 200 leave MNIST's saturated pixels unmoved: 1.2–2.4× above 5 × 1,000 on a CNN
      boundary_steps: 1_000,
      boundary_models: ["cnn"],
      sp_steps: 100,
      pointwise_restarts: 1,
      pointwise_bisection: 0,
      line_search_steps: 25,
      distal_starts: 10,
      distal_steps: 100,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "8,000 of the 60,000 official training digits (stratified); clean accuracy on all 10,000 test digits; " +
      "10 class VAEs × 30 epochs (β 10 → 1 over 10), CNN 8 epochs; ABS with 1,000 prototypes and 5 Adam steps (paper 8,000 and 50); 30 attacked digits (paper: " +
      "the test set); reduced attack budgets (BIM/PGD 20 steps, C&W 5 × 1,000, Boundary 1,000 steps on the CNN only, " +
      "S&P 100, Pointwise 1× without its L2 bisection, line searches on 25 grid points); gradients of ABS by the envelope theorem, not the paper's finite-difference estimates",
    paper: "estimated, not run: ABS's attacks cost 37 s per digit in the quick run (1,000 prototypes, 5 steps); " +
      "inference at 8,000 prototypes and 50 steps costs about 10× as much (Adam steps dominate), so about 9 days " +
      "for 2,000 digits on this machine at the quick attack budgets and several weeks at foolbox's (Pointwise 10×, " +
      "S&P 1,000 steps); on a GPU not measured. Madry-style adversarial training is not built (its Table 1 column and claim 6 are left out); the " +
      'gradient-estimate ("w/ GE") and MIM attacks are not built',
  },
  targets,
  claims,
  validate(cfg) {
    checkMnistParts(cfg, ["attack_digits", "clean_digits"]);
    if (cfg.calibration_digits > cfg.train_digits) {
      throw new UsageError(
        `calibration_digits = ${cfg.calibration_digits} exceeds train_digits = ${cfg.train_digits}`,
      );
    }
  },
  async run(ctx, cfg) {
    const mnist = mnistOf(ctx.seed, cfg);
    const phases = trainPhases(cfg);
    const trained = await runPhasesOn<Cfg, TrainPhase, TrainResult>(
      ctx,
      phases,
      (phase) => trainPhase(ctx, cfg, phase),
      {
        parallel: {
          module: WORKER_MODULE,
          exportName: "workerPhase",
          cfg,
          workers: cfg.workers,
          cost: (phase) => phase.kind === "cnn" ? 2 : 1,
        },
      },
    );
    const built = await buildModels(cfg, mnist, trained.arrays, ctx.seed);
    try {
      const metrics: Record<string, number> = {};
      phases.forEach((phase, i) => {
        for (const [key, value] of Object.entries(trained.results[i])) metrics[`${phaseName(phase)}/${key}`] = value;
      });
      for (const m of built.models) {
        metrics[`${m.name}/clean`] = m.clean;
        metrics[`${m.name}/alpha`] = m.alpha;
        metrics[`${m.name}/eta`] = m.eta;
      }
      ctx.log(0, Object.fromEntries(built.models.map((m) => [`${m.name}/clean`, metrics[`${m.name}/clean`]])));

      const attacked = await attackAllDigits(ctx, cfg, mnist, built.models, built.cnn);
      const table = attackMetrics(attacked.records, built.models.map((m) => m.name));
      Object.assign(metrics, finite(table));
      const distal = await distalAdversarials(ctx, cfg, built.models, metrics);
      return {
        metrics,
        details: {
          ...attackDetails(attacked, built.models, table),
          distal,
          deviations: [
            "ABS gradients by the envelope theorem (z* held fixed), not the paper's finite-difference estimates",
            "latent projection keeps signs (z·min(1, 5/‖z‖)); the reference clip_to_sphere drops them",
            "decoder kernels [4,5,5,4] as the reference code (the paper's [4,5,5,3] ends at 27 px)",
            "distal adversarials: the cross-entropy gradient of class 1 by backpropagation (ABS: envelope), not the " +
            "reference's coordinate-wise estimate",
            "attacks from this toolkit's foolbox-3-style suite, not foolbox 1.3",
          ],
        },
      };
    } finally {
      built.dispose();
    }
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
