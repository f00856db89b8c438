/**
 * Gaussian and adversarial noise training on MNIST (Rusak2020
 * §3.1–3.3, App. A–B): a classifier pretrained on clean digits is fine-tuned
 * once per regime (vanilla, GNT at several σ, GNT_mult, speckle, ANT with a
 * learned noise generator) and each is scored on MNIST-C, on the 15 common
 * corruptions × 5 severities (relative mCE against the vanilla model), by ε*
 * along Gaussian, uniform and learned adversarial noise, and under PGD (L∞)
 * and DDN (L2). App. E's finding: noise training lifts MNIST-C (86.9 → 92.4)
 * without costing clean accuracy.
 */
import { whenMeasured } from "../lib/core/claims.ts";
import { choice, choices, type ConfigOf, integer, real, reals } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { checkMnistParts, MNIST_PARTS_CONFIG } from "../lib/data/mnist.ts";
import { mnistCPreview } from "../lib/data/preview.ts";
import {
  addCorruptionMetrics,
  mnistOf,
  type Phase,
  type PhaseResult,
  pretrainOnce,
  REGIME_KINDS,
  regimesOf,
  runPhase,
  summaryTable,
  testDigits,
  WORKER_MODULE,
} from "../lib/studies/noise_training.ts";
import { logEveryConfig } from "../lib/train/config.ts";
import { runPhasesOn, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "Rusak2020 §3.1–3.3, App. A–B; targets App. E Table 6, App. F Table 7, " +
  "Table 2, App. D Table 5";

const config = {
  regimes: choices(
    ["vanilla", "gnt", "gnt_mult", "speckle", "ant_1x1", "ant_3x3"],
    REGIME_KINDS,
    "fine-tuning regimes; gnt is one model per σ of `sigmas`",
  ),
  sigmas: reals([0.08, 0.12, 0.18, 0.26, 0.38, 0.5, 0.6, 0.7], "σ of the single-σ GNT models (App. G, Fig. 3)", {
    min: 0,
    max: 10,
  }),
  model: choice("madry_cnn", ["small_cnn", "madry_cnn"], "classifier (Madry: App. B; small_cnn: 3.4× cheaper)"),
  ...MNIST_PARTS_CONFIG,
  pretrain_epochs: real(10, "epochs on clean digits before any regime", { min: 0, max: 10_000 }),
  epochs: real(500, "fine-tuning epochs per regime (App. B: 500–600 until convergence)", { min: 0.01, max: 10_000 }),
  batch: integer(300, "images per classifier step (App. B: 300)", { min: 2, max: 4_096 }),
  optimizer: choice("sgd_momentum", ["adam", "sgd_momentum"], "classifier optimizer (App. B: SGD, momentum 0.9)"),
  lr: real(1e-3, "classifier learning rate (App. B: 1e-3)", { min: 0, max: 10 }),
  clean_fraction: real(0.5, "share of each GNT/ANT batch left clean (Rusak2020 §3.1: half)", { min: 0, max: 1 }),
  ant_epsilon: real(10, "L2 size of ANT's noise after clipping (App. B, MNIST: 10)", { min: 0, max: 1_000 }),
  ant_current_fraction: real(0.3, "share of an ANT batch from the current generator (Rusak2020: 30%)", {
    min: 0,
    max: 1,
  }),
  ant_history_fraction: real(0.1, "share per replayed saved generator (game-of-noise: 0.1)", { min: 0, max: 1 }),
  generator_lr: real(1e-4, "Adam learning rate of the noise generator (App. B: 1e-4 … 1e-5)", { min: 0, max: 10 }),
  restart_every: integer(0, "classifier steps between generator restarts (0: once per epoch, as the reference)", {
    min: 0,
    max: 1_000_000,
  }),
  restart_steps: integer(1_000, "Adam steps of a restarted generator vs the frozen classifier (reference ≤ 1,000)", {
    min: 0,
    max: 1_000_000,
  }),
  mnist_c_digits: integer(10_000, "test digits each MNIST-C corruption is applied to", { min: 1, max: 10_000 }),
  curve_digits: integer(2_000, "MNIST-C digits of the learning curve's points before the last (the last: all)", {
    min: 1,
    max: 10_000,
  }),
  common_digits: integer(500, "test digits each common corruption × severity is applied to", { min: 1, max: 10_000 }),
  eps_digits: integer(500, "test digits ε* (Gaussian, uniform, adversarial noise) is measured on", {
    min: 1,
    max: 10_000,
  }),
  attack_digits: integer(200, "test digits PGD and DDN attack", { min: 0, max: 10_000 }),
  attack_regimes: choices(
    ["vanilla", "gnt_0.5", "ant_1x1"],
    ["vanilla", "gnt_0.5", "gnt_mult", "speckle", "ant_1x1", "ant_3x3"],
    "models PGD and DDN attack (App. F Table 7: vanilla, GNT σ0.5, ANT1x1)",
  ),
  attack_steps: integer(100, "PGD and DDN steps (App. F: 100)", { min: 1, max: 100_000 }),
  ...logEveryConfig(20, "classifier steps between logged losses"),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------
// Targets and claims (App. E Table 6, App. F Table 7, Table 2, App. D Table 5)

/** Published MNIST cells per model: App. E Table 6 (MNIST-C in its probable column order) and App. F Table 7. */
const PUBLISHED: { model: string; metric: string; paper: number; cell: string }[] = ([
  ["vanilla", 0.991, 0.869, 0.50, 0.88, 0.732, 0.558],
  ["gnt_0.5", 0.993, 0.924, 0.91, 0.98, 0.892, 0.736],
  ["ant_1x1", 0.994, 0.924, 0.91, 0.98, 0.904, 0.763],
] as const).flatMap(([model, clean, mnistCMean, fog, brightness, l2, linf]) => [
  { model, metric: "clean", paper: clean, cell: "App. E Table 6, clean" },
  { model, metric: "mnist_c", paper: mnistCMean, cell: "App. E Table 6, MNIST-C mean" },
  { model, metric: "mnist_c/fog", paper: fog, cell: "App. E Table 6, fog (11th column; header lost, MNIST-C order)" },
  {
    model,
    metric: "mnist_c/brightness",
    paper: brightness,
    cell: "App. E Table 6, brightness (8th column; header lost, MNIST-C order)",
  },
  { model, metric: "l2_acc_1.5", paper: l2, cell: "App. F Table 7, L2 accuracy at ε = 1.5 (DDN)" },
  { model, metric: "linf_acc_0.1", paper: linf, cell: "App. F Table 7, L∞ accuracy at ε = 0.1 (PGD)" },
]);
/** The untrained small CNN (measured: smoke preset with --pretrain_epochs 0, step 0; 128 clean, 16 MNIST-C digits). */
const STEP0: Record<string, number> = {
  clean: 0.086,
  mnist_c: 0.058,
  "mnist_c/fog": 0.125,
  "mnist_c/brightness": 0.063,
};

const CONSTANT = "constant classifier (its right 10% cannot be fooled)";
/**
 * What trivial models score on an App. E/F cell: chance, the untrained network, for the attacks every digit fooled
 * (0) or a constant classifier (0.1); for a noise-trained model also the vanilla model's cell ("no effect").
 */
function cellNulls(model: string, metric: string): Target<Cfg>["nulls"] {
  const nulls = metric.includes("acc_")
    ? [{ value: 0, model: "every digit fooled (untrained or random classifier)" }, { value: 0.1, model: CONSTANT }]
    : [{ value: 0.1, model: "chance (10 classes)" }, { value: STEP0[metric], model: "untrained network (measured)" }];
  const vanilla = PUBLISHED.find((p) => p.model === "vanilla" && p.metric === metric)!.paper;
  if (model !== "vanilla" && metric !== "clean") nulls.push({ value: vanilla, model: "no effect: the vanilla cell" });
  return nulls;
}

const trainsModel = (cfg: Cfg, model: string) => regimesOf(cfg).some((r) => r.name === model);
const attacksModel = (cfg: Cfg, model: string) =>
  trainsModel(cfg, model) && (cfg.attack_regimes as readonly string[]).includes(model) &&
  cfg.attack_digits > 0;
const IMAGENET = "ResNet-50 on ImageNet(-C) for a CNN on MNIST digits";

const targets: Target<Cfg>[] = [
  ...PUBLISHED.map(({ model, metric, paper, cell }): Target<Cfg> => ({
    metric: `${model}/${metric}`,
    paper,
    source: `Rusak2020 ${cell} (Madry CNN, ${model})`,
    tolerance: 0.02,
    toleranceSource: "rule: 0.02 on an accuracy (App. E/F give single runs), under half the way to the nearest " +
      `null (${Number((Math.min(...cellNulls(model, metric).map((n) => Math.abs(paper - n.value))) / 2).toFixed(4))})`,
    nulls: cellNulls(model, metric),
    kind: "like-for-like",
    standIn: "MNIST, a CNN and the metric of App. E/F (MNIST-C rebuilt from Mu & Gilmer's code); the default " +
      "Madry CNN, the quick preset a 3.4× cheaper CNN trained 4 + 5 epochs on 8,000 digits (paper 500–600 on 60,000)",
    // A higher clean accuracy is no failure to reproduce; the robustness cells are matched.
    direction: metric === "clean" ? "higher" : "match",
    appliesTo: (cfg) => metric.includes("acc_") ? attacksModel(cfg, model) : trainsModel(cfg, model),
  })),
  {
    metric: "vanilla/eps_an_over_gn",
    paper: 15.7 / 39.0,
    source: "Rusak2020 Table 2: vanilla RN50 ε*_AN1x1 15.7 / ε*_GN 39.0, ImageNet",
    tolerance: 0.15,
    toleranceSource: "rule: 0.15, under half the way to the null ratio 1 (0.299); Table 2's ± 0.6 on ε*_AN (4 " +
      "generator seeds, ± 0.015 on the ratio) is ImageNet's",
    nulls: [{ value: 1, model: "no effect (ε*_AN = ε*_GN; a generator at init outputs its Gaussian input)" }],
    kind: "analogue",
    standIn: IMAGENET,
    direction: "match",
    appliesTo: (cfg) => trainsModel(cfg, "vanilla"),
  },
  ...([["gnt_0.5", 64, 0.08], ["ant_1x1", 62, 0.09]] as const).map(([model, mce, tolerance]): Target<Cfg> => ({
    metric: `${model}/relative_mce`,
    paper: mce / 77,
    source: `Rusak2020 App. D Table 5: mCE ${model} ${mce} / vanilla 77, ImageNet-C; ` +
      "here relative to this run's vanilla model on the 15 common corruptions of MNIST digits",
    tolerance,
    toleranceSource: `rule: half the way to the null ratio 1 (${((1 - mce / 77) / 2).toFixed(4)}), rounded down`,
    nulls: [{ value: 1, model: "no effect: the vanilla model's relative mCE" }],
    kind: "analogue",
    standIn: `${IMAGENET}; mCE normalised by this run's vanilla model, not AlexNet`,
    direction: "match",
    appliesTo: (cfg) => trainsModel(cfg, model) && trainsModel(cfg, "vanilla"),
  })),
];

// Each claim's margin is half the gap its table shows, so that a tie or "no effect" does not hold it.
const claims: Claim<Cfg>[] = [
  {
    text: "GNT σ0.5 and ANT1x1 raise MNIST-C accuracy by ≥ 0.027 over the vanilla model and lose ≤ 0.005 clean " +
      "accuracy",
    source: "Rusak2020 App. E Table 6 rows Vanilla, GNT σ0.5, ANT1x1 (MNIST-C 86.9 → 92.4; clean " +
      "99.1 → 99.3 / 99.4)",
    holds: (m) =>
      whenMeasured(
        m,
        ["vanilla", "gnt_0.5", "ant_1x1"].flatMap((r) => [`${r}/clean`, `${r}/mnist_c`]),
        (vc, vm, gc, gm, ac, am) => gm >= vm + 0.027 && am >= vm + 0.027 && gc >= vc - 0.005 && ac >= vc - 0.005,
      ),
  },
  {
    text: "MNIST-C accuracy over GNT's σ peaks inside the grid near 0.5: the best single-σ model has 0.3 ≤ σ ≤ 0.7 " +
      "and beats the grid's smallest and largest σ by ≥ 0.01 each",
    source: "Rusak2020 §3.1 (App. E Fig. 2: the MNIST-C optimum of σ is ≈ 0.5; its values " +
      "are not printed, so the margin is over the seeds' noise)",
    holds: (m, cfg) => {
      const sigmas = (cfg.regimes.includes("gnt") ? [...cfg.sigmas] : []).sort((a, b) => a - b);
      if (sigmas.length < 3) return undefined;
      return whenMeasured(m, sigmas.map((s) => `gnt_${s}/mnist_c`), (...acc) => {
        const best = acc.indexOf(Math.max(...acc));
        return sigmas[best] >= 0.3 && sigmas[best] <= 0.7 && acc[best] >= Math.max(acc[0], acc.at(-1)!) + 0.01;
      });
    },
  },
  {
    text: "on the vanilla model, learned adversarial noise needs < 0.7× the L2 size of Gaussian noise (ε*_AN / ε*_GN)",
    source: "Rusak2020 Table 2 row Vanilla RN50 (15.7 / 39.0 = 0.40; halfway from 1: 0.7)",
    holds: (m) => whenMeasured(m, ["vanilla/eps_an", "vanilla/eps_gn"], (an, gn) => an < 0.7 * gn),
  },
  {
    text: "ANT1x1's ε*_AN is ≥ 2× each of vanilla's, GNT σ0.5's and GNT_mult's (those trained)",
    source: "Rusak2020 Table 2 column ε*_AN1x1 (ANT1x1 95.4 vs 15.7 / 31.8 / 24.0: ≥ 3.0×; " +
      "halfway from 1×: 2×)",
    holds: (m) => {
      const ant = m["ant_1x1/eps_an"];
      const others = ["vanilla", "gnt_0.5", "gnt_mult"].map((r) => m[`${r}/eps_an`]).filter((v) => v !== undefined);
      return ant === undefined || others.length === 0 ? undefined : others.every((v) => ant >= 2 * v);
    },
  },
  {
    text: "GNT σ0.5 and ANT1x1 are each ≥ 0.08 more accurate than the vanilla model under DDN at L2 ε = 1.5",
    source: "Rusak2020 App. F Table 7 rows Vanilla, GNT σ0.5, ANT1x1 (73.2 → 89.2 / 90.4)",
    holds: (m) =>
      whenMeasured(
        m,
        ["gnt_0.5", "ant_1x1", "vanilla"].map((r) => `${r}/l2_acc_1.5`),
        (g, a, v) => g >= v + 0.08 && a >= v + 0.08,
      ),
  },
  {
    text: "the relative mCE (common corruptions, against the vanilla model) of GNT σ0.5 is < 0.915 and of ANT1x1 < 0.9",
    source: "Rusak2020 App. D Table 5 rows Vanilla, GNTσ0.5, ANT1x1 (mCE 77, 64, 62: ratios " +
      "0.83, 0.81; halfway from 1)",
    holds: (m) => whenMeasured(m, ["gnt_0.5/relative_mce", "ant_1x1/relative_mce"], (g, a) => g < 0.915 && a < 0.9),
  },
];

export const experiment = defineExperiment({
  name: "noise-train-mnist",
  finding: "Gaussian and adversarial noise training raise corruption accuracy",
  description: "Gaussian and adversarial noise training (Rusak2020) on MNIST: MNIST-C, relative mCE, ε*, PGD/DDN",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      // Wiring, not learning: each regime a step or two. Enough pretraining (lr 3e-3) that the vanilla model gets
      // most ε* digits right and errs on each common corruption, so that ε*_AN / ε*_GN and the mCE are defined.
      regimes: ["vanilla", "gnt", "ant_1x1"],
      sigmas: [0.5],
      model: "small_cnn",
      optimizer: "adam",
      lr: 3e-3,
      train_digits: 128,
      test_digits: 16,
      pretrain_epochs: 3,
      epochs: 0.5,
      batch: 32,
      restart_every: 1,
      restart_steps: 1,
      mnist_c_digits: 8,
      curve_digits: 4,
      common_digits: 8,
      eps_digits: 8,
      attack_digits: 4,
      attack_steps: 1,
      log_every: 1,
    },
    quick: {
      regimes: ["vanilla", "gnt", "gnt_mult", "ant_1x1"],
      sigmas: [0.1, 0.3, 0.5, 0.7, 1.0],
      model: "small_cnn",
      optimizer: "adam",
      // A stratified eighth of the training file; clean accuracy on all 10,000 test digits, MNIST-C on 2,000 of them.
      train_digits: 8_000,
      pretrain_epochs: 4,
      epochs: 5,
      batch: 128,
      generator_lr: 1e-3,
      mnist_c_digits: 2_000,
      curve_digits: 500,
      restart_every: 100,
      restart_steps: 100,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "8,000 of the 60,000 official training digits; clean accuracy on the 10,000 test digits, MNIST-C on " +
      "2,000 of them (paper: 10,000); the small CNN (conv 32, conv 64, FC 128) with " +
      "Adam 1e-3 and batch 128 instead of the Madry CNN with SGD-M and batch 300; 4 pretraining epochs, then 5 per " +
      "regime (paper: 500–600 until convergence); ANT's generator at Adam 1e-3, restarted every 100 steps for 100 " +
      "steps; the 15 common corruptions with the CIFAR-10-C constants (28-px digits) and a procedural frost",
    paper: "estimated, not run: 11 regimes (vanilla, GNT at 8 σ, GNT_mult, ANT) × 500 epochs of the Madry CNN " +
      "at batch 300 on 8,000 digits are 13,350 steps per regime; the bench's small-CNN step (304 ms at batch 128 on " +
      "one wasm thread) scaled by the Madry CNN's 3.4× cost and the batch gives ≈ 2.4 s per step, so ≈ 9 h per " +
      "regime and ≈ 2–3 days on 2 cores (ANT's generator steps included); on an NVIDIA H200 with WebGPU the small " +
      "CNN step took 52 ms (bench/reports/webgpu-nvidia-h200.json), ≈ 0.4 s per Madry step, ≈ 17 h in all; these " +
      "estimates are for 8,000 training digits, the preset's 60,000 take 7.5× as long. ε*_AN from one generator seed " +
      "(the paper: 4)",
  },
  targets,
  claims,
  validate(cfg) {
    checkMnistParts(cfg, ["mnist_c_digits", "curve_digits", "common_digits", "eps_digits", "attack_digits"]);
    const badSigma = cfg.sigmas.find((s) => !(s > 0));
    if (badSigma !== undefined) throw new UsageError(`sigmas must be > 0, got ${badSigma}`);
    if (!(cfg.ant_epsilon > 0)) throw new UsageError(`ant_epsilon must be > 0, got ${cfg.ant_epsilon}`);
    if (!(cfg.generator_lr > 0)) throw new UsageError(`generator_lr must be > 0, got ${cfg.generator_lr}`);
    if (!(cfg.lr > 0)) throw new UsageError(`lr must be > 0, got ${cfg.lr}`);
    if (cfg.ant_current_fraction + cfg.clean_fraction > 1) {
      throw new UsageError(
        `ant_current_fraction + clean_fraction = ${cfg.ant_current_fraction + cfg.clean_fraction}: allowed ≤ 1`,
      );
    }
    const names = regimesOf(cfg).map((r) => r.name);
    const unknown = cfg.attack_regimes.filter((r) => !names.includes(r));
    if (unknown.length && cfg.attack_digits > 0) {
      throw new UsageError(`attack_regimes ${unknown.join(", ")} are not trained; trained: ${names.join(", ")}`);
    }
  },
  async run(ctx, cfg) {
    const regimes = regimesOf(cfg);
    const mnist = mnistOf(ctx.seed, cfg);
    const pretrained = await pretrainOnce(ctx, cfg);
    const phases: Phase[] = regimes.map((regime) => ({ kind: "regime", regime, pretrained: pretrained.arrays }));
    const trained = await runPhasesOn<Cfg, Phase, PhaseResult>(ctx, phases, (phase) => runPhase(ctx, cfg, phase), {
      parallel: {
        module: WORKER_MODULE,
        exportName: "workerPhase",
        cfg,
        workers: cfg.workers,
        cost: (phase) => phase.kind === "regime" && phase.regime.kind.startsWith("ant") ? 3 : 1,
      },
    });
    const metrics: Record<string, number> = Object.assign({}, pretrained.result, ...trained.results);

    addCorruptionMetrics(regimes, metrics);
    ctx.image("mnist_c", 0, mnistCPreview(testDigits(mnist, Math.min(10, cfg.test_digits)), ctx.seed));
    console.log(summaryTable(regimes, metrics));
    return {
      metrics: Object.fromEntries(Object.entries(metrics).filter(([, v]) => Number.isFinite(v))),
      details: {
        regimes: regimes.map((r) => r.name),
        sigma_curve: regimes.filter((r) => r.kind === "gnt").map((r) => ({
          sigma: r.sigma,
          mnist_c: metrics[`${r.name}/mnist_c`],
          clean: metrics[`${r.name}/clean`],
        })),
        infinite: Object.keys(metrics).filter((k) => !Number.isFinite(metrics[k])),
        deviations: [
          "relative mCE: errors normalised by this run's vanilla model, not AlexNet (no ImageNet here)",
          "common corruptions on 28-px digits with the CIFAR-10-C constants (hendrycks make_cifar_c.py); frost " +
          "procedural (its photos cannot ship)",
          "MNIST-C motion blur by imagecorruptions' kernel instead of the reference's ImageMagick call",
          "ANT generator restarts every `restart_every` classifier steps (the reference: once per epoch), each " +
          "followed by saving the generator for replay",
          "ε*_AN from one fresh 1×1 generator (the paper: mean over 4 generator seeds)",
        ],
      },
    };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
