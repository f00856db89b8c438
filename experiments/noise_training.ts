/**
 * Gaussian and adversarial noise training on MNIST (Rusak et al. 2020,
 * Paper C, 000_306f4209a39c5a17.md §2.6–2.7, §4.3, §5.3, §7.3): a classifier
 * pretrained on clean digits is fine-tuned once per regime (vanilla, GNT at
 * several σ, GNT_mult, speckle, ANT with a learned noise generator) and each
 * is scored on MNIST-C, on the 15 common corruptions × 5 severities (relative
 * mCE against the vanilla model), by ε* along Gaussian, uniform and learned
 * adversarial noise, and under PGD (L∞) and DDN (L2). App. E's finding:
 * noise training lifts MNIST-C (86.9 → 92.4) without costing clean accuracy.
 */
import * as tf from "@tensorflow/tfjs";
import { choice, choices, type ConfigOf, integer, real, reals } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { Rng } from "../lib/core/rng.ts";
import { stopPoint } from "../lib/core/run_guard.ts";
import { COMMON_CORRUPTIONS, corrupt, MNIST_C_CORRUPTIONS, mnistC, type Severity } from "../lib/data/corruptions.ts";
import type { Observations } from "../lib/data/ground_truth.ts";
import {
  checkMnistParts,
  loadMnist,
  type Mnist,
  MNIST_CLASSES,
  MNIST_PARTS_CONFIG,
  MNIST_SIDE,
} from "../lib/data/mnist.ts";
import { imageGrid, mnistCPreview } from "../lib/data/preview.ts";
import { attack, predictions } from "../lib/attacks/attack.ts";
import { ddn, linfPgd } from "../lib/attacks/gradient.ts";
import { gaussianDirections, uniformDirections, zeroAccuracyPerturbation } from "../lib/attacks/noise.ts";
import type { AttackModel } from "../lib/attacks/types.ts";
import { summarizeDistances } from "../lib/metrics/adversarial.ts";
import { corruptionError } from "../lib/metrics/corruption_error.ts";
import { madryCnn } from "../lib/models/madry_cnn.ts";
import { generatorInputSide } from "../lib/models/noise_generator.ts";
import { type Classifier, smallCnn } from "../lib/models/small_cnn.ts";
import {
  antClassifierBatch,
  antGeneratorStep,
  type AntState,
  createAnt,
  disposeAnt,
  gaussianNoiseBatch,
  GNT_MULT_SIGMAS,
  restartGenerator,
  saveGeneratorState,
  SPECKLE_SIGMAS,
  speckleNoiseBatch,
} from "../lib/train/noise_training.ts";
import { phaseArray, type PhaseArrays } from "../lib/train/phases.ts";
import { crossEntropyStep } from "../lib/models/cross_entropy_step.ts";
import { loadSavedModel, savedModels } from "../lib/core/run_checkpoints.ts";
import { runPhasesOn, type WorkerPhase, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE =
  "000_306f4209a39c5a17.md §2.6–2.7, §4.3, §5.3, §7.3 (Paper C); targets App. E Table 6, App. F Table 7, " +
  "Table 2, App. D Table 5";

const IMAGE_SHAPE: [number, number, number] = [MNIST_SIDE, MNIST_SIDE, 1];
const PIXELS = MNIST_SIDE * MNIST_SIDE;
const REGIME_KINDS = ["vanilla", "gnt", "gnt_mult", "speckle", "ant_1x1", "ant_3x3"] as const;
type RegimeKind = typeof REGIME_KINDS[number];
const SEVERITIES: readonly Severity[] = [1, 2, 3, 4, 5];

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
  clean_fraction: real(0.5, "share of each GNT/ANT batch left clean (§2.6: half)", { min: 0, max: 1 }),
  ant_epsilon: real(10, "L2 size of ANT's noise after clipping (App. B, MNIST: 10)", { min: 0, max: 1_000 }),
  ant_current_fraction: real(0.3, "share of an ANT batch from the current generator (§2.7: 30%)", { min: 0, max: 1 }),
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
  log_every: integer(20, "classifier steps between logged losses", { min: 1, max: 1_000_000 }),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

/** One fine-tuning regime as a phase: its name in metrics and how its batches are built. */
interface Regime {
  name: string;
  kind: RegimeKind;
  /** GNT's σ (single-σ regimes). */
  sigma?: number;
}

/** The regimes a config asks for, in a fixed order (the σ curve sorted by σ). */
function regimesOf(cfg: Cfg): Regime[] {
  const out: Regime[] = [];
  for (const kind of REGIME_KINDS) {
    if (!cfg.regimes.includes(kind)) continue;
    if (kind === "gnt") {
      for (const sigma of [...cfg.sigmas].sort((a, b) => a - b)) out.push({ name: `gnt_${sigma}`, kind, sigma });
    } else out.push({ name: kind, kind });
  }
  return out;
}

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
    source: `000_306f4209a39c5a17.md §5.3 ${cell} (Paper C, Madry CNN, ${model})`,
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
    source: "000_306f4209a39c5a17.md §5.3 Table 2 (Paper C): vanilla RN50 ε*_AN1x1 15.7 / ε*_GN 39.0, ImageNet",
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
    source: `000_306f4209a39c5a17.md §5.3 App. D Table 5 (Paper C): mCE ${model} ${mce} / vanilla 77, ImageNet-C; ` +
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

const get = (m: Record<string, number>, key: string) => m[key];
const defined = (...values: (number | undefined)[]) => values.every((v) => v !== undefined);

// Each claim's margin is half the gap its table shows, so that a tie or "no effect" does not hold it.
const claims: Claim<Cfg>[] = [
  {
    text: "GNT σ0.5 and ANT1x1 raise MNIST-C accuracy by ≥ 0.027 over the vanilla model and lose ≤ 0.005 clean " +
      "accuracy",
    source: "000_306f4209a39c5a17.md §5.3 App. E Table 6 rows Vanilla, GNT σ0.5, ANT1x1 (MNIST-C 86.9 → 92.4; clean " +
      "99.1 → 99.3 / 99.4), §7.3",
    holds: (m) => {
      const [vc, vm, gc, gm, ac, am] = ["vanilla/clean", "vanilla/mnist_c", "gnt_0.5/clean", "gnt_0.5/mnist_c"]
        .concat(["ant_1x1/clean", "ant_1x1/mnist_c"]).map((k) => get(m, k));
      if (!defined(vc, vm, gc, gm, ac, am)) return undefined;
      return gm! >= vm! + 0.027 && am! >= vm! + 0.027 && gc! >= vc! - 0.005 && ac! >= vc! - 0.005;
    },
  },
  {
    text: "MNIST-C accuracy over GNT's σ peaks inside the grid near 0.5: the best single-σ model has 0.3 ≤ σ ≤ 0.7 " +
      "and beats the grid's smallest and largest σ by ≥ 0.01 each",
    source: "000_306f4209a39c5a17.md §5.3 and §2.6 (App. E Fig. 2: the MNIST-C optimum of σ is ≈ 0.5; its values " +
      "are not printed, so the margin is over the seeds' noise)",
    holds: (m, cfg) => {
      const sigmas = (cfg.regimes.includes("gnt") ? [...cfg.sigmas] : []).sort((a, b) => a - b);
      const acc = sigmas.map((s) => get(m, `gnt_${s}/mnist_c`));
      if (sigmas.length < 3 || !defined(...acc)) return undefined;
      const best = acc.indexOf(Math.max(...acc));
      return sigmas[best] >= 0.3 && sigmas[best] <= 0.7 && acc[best] >= Math.max(acc[0], acc.at(-1)!) + 0.01;
    },
  },
  {
    text: "on the vanilla model, learned adversarial noise needs < 0.7× the L2 size of Gaussian noise (ε*_AN / ε*_GN)",
    source: "000_306f4209a39c5a17.md §5.3 Table 2 row Vanilla RN50 (15.7 / 39.0 = 0.40; halfway from 1: 0.7)",
    holds: (m) => {
      const [an, gn] = [get(m, "vanilla/eps_an"), get(m, "vanilla/eps_gn")];
      return defined(an, gn) ? an! < 0.7 * gn! : undefined;
    },
  },
  {
    text: "ANT1x1's ε*_AN is ≥ 2× each of vanilla's, GNT σ0.5's and GNT_mult's (those trained)",
    source: "000_306f4209a39c5a17.md §5.3 Table 2 column ε*_AN1x1 (ANT1x1 95.4 vs 15.7 / 31.8 / 24.0: ≥ 3.0×; " +
      "halfway from 1×: 2×)",
    holds: (m) => {
      const ant = get(m, "ant_1x1/eps_an");
      const others = ["vanilla", "gnt_0.5", "gnt_mult"].map((r) => get(m, `${r}/eps_an`)).filter((v) =>
        v !== undefined
      );
      return ant === undefined || others.length === 0 ? undefined : others.every((v) => ant >= 2 * v);
    },
  },
  {
    text: "GNT σ0.5 and ANT1x1 are each ≥ 0.08 more accurate than the vanilla model under DDN at L2 ε = 1.5",
    source: "000_306f4209a39c5a17.md §5.3 App. F Table 7 rows Vanilla, GNT σ0.5, ANT1x1 (73.2 → 89.2 / 90.4)",
    holds: (m) => {
      const [g, a, v] = ["gnt_0.5", "ant_1x1", "vanilla"].map((r) => get(m, `${r}/l2_acc_1.5`));
      return defined(g, a, v) ? g! >= v! + 0.08 && a! >= v! + 0.08 : undefined;
    },
  },
  {
    text: "the relative mCE (common corruptions, against the vanilla model) of GNT σ0.5 is < 0.915 and of ANT1x1 < 0.9",
    source: "000_306f4209a39c5a17.md §5.3 App. D Table 5 rows Vanilla, GNTσ0.5, ANT1x1 (mCE 77, 64, 62: ratios " +
      "0.83, 0.81; halfway from 1)",
    holds: (m) => {
      const [g, a] = [get(m, "gnt_0.5/relative_mce"), get(m, "ant_1x1/relative_mce")];
      return defined(g, a) ? g! < 0.915 && a! < 0.9 : undefined;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Data: the digits and their corrupted copies (seeded per image, so every worker builds the same ones)

const mnistOf = (seed: number, cfg: Cfg): Mnist => loadMnist({ seed, train: cfg.train_digits, test: cfg.test_digits });

/** The first `n` test digits as observations. */
function testDigits(mnist: Mnist, n: number): Observations {
  return { values: mnist.test.images.slice(0, n * PIXELS), n, shape: IMAGE_SHAPE };
}

/** Corrupted test sets: MNIST-C per corruption, the common ones per corruption and severity. */
interface CorruptedSets {
  mnistC: Map<string, Observations>;
  common: Map<string, Observations>;
}

let corruptedCache: { key: string; sets: CorruptedSets } | null = null;

/** Builds (once per process) the corrupted test digits a config evaluates on. */
function corruptedSets(seed: number, cfg: Cfg, mnist: Mnist): CorruptedSets {
  const key = JSON.stringify([seed, cfg.train_digits, cfg.test_digits, cfg.mnist_c_digits, cfg.common_digits]);
  if (corruptedCache?.key === key) return corruptedCache.sets;
  const sets: CorruptedSets = { mnistC: new Map(), common: new Map() };
  const mnistCDigits = testDigits(mnist, cfg.mnist_c_digits);
  for (const name of MNIST_C_CORRUPTIONS) sets.mnistC.set(name, mnistC(mnistCDigits, name, { seed }));
  const commonDigits = testDigits(mnist, cfg.common_digits);
  for (const name of COMMON_CORRUPTIONS) {
    for (const severity of SEVERITIES) {
      sets.common.set(`${name}/${severity}`, corrupt(commonDigits, name, severity, { seed, table: "cifar" }));
    }
  }
  corruptedCache = { key, sets };
  return sets;
}

// ---------------------------------------------------------------------------------------------
// Training

const classifierOf = (cfg: Cfg, rng: Rng): Classifier =>
  cfg.model === "small_cnn" ? smallCnn(rng, MNIST_CLASSES) : madryCnn(rng, MNIST_CLASSES);

const optimizerOf = (cfg: Cfg): tf.Optimizer =>
  cfg.optimizer === "adam" ? tf.train.adam(cfg.lr) : tf.train.momentum(cfg.lr, 0.9);

const attackModelOf = (classifier: Classifier): AttackModel => ({
  logits: (x) => classifier.logits(x),
  bounds: [0, 1],
  gradient: true,
});

/** One batch of training digits `rows` as tensors (the caller disposes them). */
function batchOf(mnist: Mnist, rows: ArrayLike<number>): { x: tf.Tensor4D; labels: tf.Tensor1D } {
  const x = new Float32Array(rows.length * PIXELS), y = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    x.set(mnist.train.images.subarray(rows[i] * PIXELS, (rows[i] + 1) * PIXELS), i * PIXELS);
    y[i] = mnist.train.labels[rows[i]];
  }
  return { x: tf.tensor4d(x, [rows.length, ...IMAGE_SHAPE]), labels: tf.tensor1d(y, "int32") };
}

/** One optimizer step of softmax cross-entropy on `x`; returns the batch loss in nats. */
async function classifierStep(
  classifier: Classifier,
  optimizer: tf.Optimizer,
  x: tf.Tensor4D,
  labels: tf.Tensor1D,
): Promise<number> {
  const loss = crossEntropyStep(optimizer, classifier.params.list(), () => classifier.logits(x), labels, MNIST_CLASSES);
  const value = (await loss.data())[0];
  loss.dispose();
  return value;
}

/** Accuracy of `classifier` on `images` against the first `images.n` test labels. */
async function accuracyOn(classifier: Classifier, images: Observations, labels: Int32Array): Promise<number> {
  const predicted = await predictions(attackModelOf(classifier), images.values, images.n, images.shape);
  let right = 0;
  for (let i = 0; i < images.n; i++) right += predicted[i] === labels[i] ? 1 : 0;
  return right / images.n;
}

/**
 * Clean and MNIST-C accuracy (mean and per corruption): the learning-curve
 * metrics, MNIST-C on the first `digits` of each corrupted set.
 */
async function headline(classifier: Classifier, mnist: Mnist, sets: CorruptedSets, cfg: Cfg, digits: number) {
  const out: Record<string, number> = {};
  out.clean = await accuracyOn(classifier, testDigits(mnist, cfg.test_digits), mnist.test.labels);
  let sum = 0;
  for (const [name, images] of sets.mnistC) {
    const n = Math.min(digits, images.n);
    const subset = { values: images.values.subarray(0, n * PIXELS), n, shape: images.shape };
    out[`mnist_c/${name}`] = await accuracyOn(classifier, subset, mnist.test.labels);
    sum += out[`mnist_c/${name}`];
  }
  out.mnist_c = sum / sets.mnistC.size;
  return out;
}

/** Plain arrays of the classifier's parameters, as a phase hands them back. */
async function plainArrays(classifier: Classifier, prefix: string): Promise<PhaseArrays> {
  const out: PhaseArrays = {};
  for (const [key, t] of Object.entries(classifier.params.entries(prefix))) {
    out[key] = { data: (await t.data()) as Float32Array, shape: t.shape };
  }
  return out;
}

/** The training digits in a fresh order per epoch, `batch` at a time (the last partial batch kept if ≥ 2). */
function* epochBatches(n: number, batch: number, rng: Rng): Generator<Int32Array> {
  const order = rng.permutation(n);
  for (let start = 0; start + 2 <= n; start += batch) yield order.subarray(start, Math.min(n, start + batch));
}

/**
 * A phase: the pretraining (phase "pretrain", clean digits) or one regime
 * fine-tuned from the pretrained weights, then evaluated. Runs in a worker
 * when `workers` > 1; its numbers depend only on the seed and the phase.
 */
type Phase = { kind: "pretrain" } | { kind: "regime"; regime: Regime; pretrained: PhaseArrays };
type PhaseResult = Record<string, number>;

async function runPhase(
  ctx: RunContext,
  cfg: Cfg,
  phase: Phase,
): Promise<{ result: PhaseResult; arrays?: PhaseArrays }> {
  const mnist = mnistOf(ctx.seed, cfg);
  const sets = corruptedSets(ctx.seed, cfg, mnist);
  const name = phase.kind === "pretrain" ? "pretrain" : phase.regime.name;
  const rng = Rng.derive(ctx.seed, `noise-train-mnist/${name}`);
  const classifier = classifierOf(cfg, Rng.derive(ctx.seed, "noise-train-mnist/init"));
  const optimizer = optimizerOf(cfg);
  let ant: AntState | null = null;
  try {
    if (phase.kind === "regime") {
      classifier.params.load(
        Object.fromEntries(Object.entries(phase.pretrained).map(([k, v]) => [k, { ...v, dtype: "f4" as const }])),
        "pretrain/",
      );
    }
    const regime = phase.kind === "regime" ? phase.regime : null;
    if (regime?.kind === "ant_1x1" || regime?.kind === "ant_3x3") {
      ant = createAnt(Rng.derive(ctx.seed, `noise-train-mnist/${name}/generator`), {
        channels: 1,
        kind: regime.kind === "ant_1x1" ? "1x1" : "3x3",
        epsilon: cfg.ant_epsilon,
        generatorLr: cfg.generator_lr,
        cleanFraction: cfg.clean_fraction,
        currentFraction: cfg.ant_current_fraction,
        historyFraction: cfg.ant_history_fraction,
      });
    }
    const epochs = phase.kind === "pretrain" ? cfg.pretrain_epochs : cfg.epochs;
    const stepsPerEpoch = Math.ceil((cfg.train_digits - 1) / cfg.batch);
    const totalSteps = Math.round(epochs * stepsPerEpoch);
    const restartEvery = cfg.restart_every || stepsPerEpoch;
    const randomBatch = () => batchOf(mnist, Array.from({ length: cfg.batch }, () => rng.int(cfg.train_digits)));
    // Points before the last on `curve_digits` digits (cheaper); the last on all of them is the final value.
    const logCurve = async (step: number) => {
      const digits = step === totalSteps ? cfg.mnist_c_digits : cfg.curve_digits;
      const values = await headline(classifier, mnist, sets, cfg, digits);
      ctx.log(step, prefixed(name, values));
      return values;
    };
    // A regime's curve starts at the pretrained model it fine-tunes.
    let last: Record<string, number> = phase.kind === "regime" ? await logCurve(0) : {};
    const progress = ctx.progress(name, totalSteps);
    let step = 0, loss = 0;
    for (let epoch = 0; step < totalSteps; epoch++) {
      for (const rows of epochBatches(cfg.train_digits, cfg.batch, rng)) {
        if (step >= totalSteps) break;
        ctx.stopRequested.throwIfAborted();
        stopPoint();
        if (ant && step > 0 && step % restartEvery === 0) {
          restartGenerator(classifier, ant, rng, cfg.restart_steps, randomBatch)?.dispose();
          // The reference keeps the generator each restart starts an epoch with, for replay.
          saveGeneratorState(ant);
        }
        const { x, labels } = batchOf(mnist, rows);
        try {
          let input: tf.Tensor4D = x;
          if (regime?.kind === "gnt") input = gaussianNoiseBatch(x, regime.sigma!, rng, cfg.clean_fraction);
          else if (regime?.kind === "gnt_mult") input = gaussianNoiseBatch(x, GNT_MULT_SIGMAS, rng, cfg.clean_fraction);
          else if (regime?.kind === "speckle") input = speckleNoiseBatch(x, SPECKLE_SIGMAS, rng, cfg.clean_fraction);
          else if (ant) {
            const generatorLoss = antGeneratorStep(classifier, ant, x, labels, rng);
            if (step % cfg.log_every === 0) {
              ctx.log(step, { [`${name}/generator_ce`]: (await generatorLoss.data())[0] });
            }
            generatorLoss.dispose();
            input = antClassifierBatch(ant, x, rng, Math.floor(step / restartEvery));
          }
          loss = await classifierStep(classifier, optimizer, input, labels);
          if (input !== x) input.dispose();
        } finally {
          tf.dispose([x, labels]);
        }
        step++;
        if (step % cfg.log_every === 0) {
          ctx.log(step, { [`${name}/loss`]: loss });
          progress.update(step, loss);
        }
        if (step % stepsPerEpoch === 0 || step === totalSteps) last = await logCurve(step);
      }
    }
    if (totalSteps === 0 && phase.kind === "pretrain") last = await logCurve(0);
    if (phase.kind === "pretrain") {
      return {
        result: { ...prefixed("pretrain", last), "pretrain/loss": loss },
        arrays: await plainArrays(classifier, "pretrain/"),
      };
    }
    const metrics = { ...last, loss, ...(await evaluateRegime(ctx, cfg, phase.regime, classifier, mnist, sets, rng)) };
    return { result: prefixed(name, metrics) };
  } finally {
    if (ant) disposeAnt(ant);
    optimizer.dispose();
    classifier.params.dispose();
  }
}

const prefixed = (prefix: string, values: Record<string, number>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [`${prefix}/${k}`, v]));

/** A phase as a worker runs it (lib/train/parallel_phases.ts). */
export const workerPhase: WorkerPhase<Cfg, Phase, PhaseResult> = (ctx, cfg, phase) => runPhase(ctx, cfg, phase);

/**
 * The clean pretraining every regime starts from, run once in this process
 * and kept as models/pretrained/ so that a resumed run reuses it (the
 * regimes' phases checkpoint on their own).
 */
async function pretrainOnce(ctx: RunContext, cfg: Cfg): Promise<{ result: PhaseResult; arrays: PhaseArrays }> {
  if (savedModels(ctx.dir).includes("pretrained")) {
    const { arrays, info } = loadSavedModel(ctx.dir, "pretrained");
    return {
      result: (info as { result: PhaseResult }).result,
      arrays: Object.fromEntries(Object.entries(arrays).map(([k, v]) => [k, phaseArray(v)])),
    };
  }
  const { result, arrays } = await runPhase(ctx, cfg, { kind: "pretrain" });
  await ctx.saveModel("pretrained", arrays!, { model: cfg.model, result });
  return { result, arrays: arrays! };
}

// ---------------------------------------------------------------------------------------------
// Evaluation of a fine-tuned model

async function evaluateRegime(
  ctx: RunContext,
  cfg: Cfg,
  regime: Regime,
  classifier: Classifier,
  mnist: Mnist,
  sets: CorruptedSets,
  rng: Rng,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const labels = mnist.test.labels;
  for (const [key, images] of sets.common) out[`common/${key}`] = await accuracyOn(classifier, images, labels);

  // ε* along Gaussian, uniform and learned adversarial noise (Eq. 4), median over the digits.
  const model = attackModelOf(classifier);
  const digits = testDigits(mnist, cfg.eps_digits);
  const batch = { x: digits.values, n: digits.n, shape: IMAGE_SHAPE, labels: labels.slice(0, digits.n) };
  const directionRng = Rng.derive(ctx.seed, "noise-train-mnist/eps-directions");
  const sizes: Record<string, Float64Array> = {
    gn: await zeroAccuracyPerturbation(model, batch, gaussianDirections(digits.n, PIXELS, directionRng)),
    un: await zeroAccuracyPerturbation(model, batch, uniformDirections(digits.n, PIXELS, directionRng)),
    an: await zeroAccuracyPerturbation(model, batch, await adversarialDirections(ctx, cfg, classifier, mnist, digits)),
  };
  for (const [kind, values] of Object.entries(sizes)) out[`eps_${kind}`] = summarizeDistances(values, 0).median;
  out.eps_an_over_gn = out.eps_an / out.eps_gn;

  if (cfg.attack_digits > 0 && (cfg.attack_regimes as readonly string[]).includes(regime.name)) {
    const attacked = testDigits(mnist, cfg.attack_digits);
    const attackedLabels = labels.slice(0, attacked.n);
    const pgd = linfPgd({ absStepsize: 0.01, steps: cfg.attack_steps, randomStart: true });
    const linf = await attack(pgd, model, attacked, attackedLabels, [0.1], rng);
    const l2 = await attack(ddn({ steps: cfg.attack_steps, gamma: 0.05 }), model, attacked, attackedLabels, [1.5], rng);
    out["linf_acc_0.1"] = 1 - mean(linf.success[0]);
    out["l2_acc_1.5"] = 1 - mean(l2.success[0]);
    ctx.image(`${regime.name}/ddn_l2`, 0, imageGrid(l2.clipped[0].slice(0, 10 * PIXELS), 10, IMAGE_SHAPE, 10));
  }
  return out;
}

const mean = (values: ArrayLike<number>) =>
  Array.prototype.reduce.call(values, (a, b) => a + b, 0) as number / values.length;

/**
 * ε*_AN's directions: a fresh 1×1 generator trained against the final
 * classifier (`restart_steps` Adam steps, as an ANT restart), then one draw
 * of its noise per digit.
 */
async function adversarialDirections(
  ctx: RunContext,
  cfg: Cfg,
  classifier: Classifier,
  mnist: Mnist,
  digits: Observations,
): Promise<Float32Array> {
  const rng = Rng.derive(ctx.seed, "noise-train-mnist/eps-an-generator");
  const state = createAnt(rng, { channels: 1, kind: "1x1", epsilon: cfg.ant_epsilon, generatorLr: cfg.generator_lr });
  try {
    const randomBatch = () => batchOf(mnist, Array.from({ length: cfg.batch }, () => rng.int(cfg.train_digits)));
    restartGenerator(classifier, state, rng, cfg.restart_steps, randomBatch)?.dispose();
    const side = generatorInputSide("1x1", MNIST_SIDE);
    const noise = tf.tidy(() =>
      state.generator.noise(tf.tensor4d(rng.normalArray(digits.n * side * side), [digits.n, side, side, 1]))
    );
    const data = (await noise.data()) as Float32Array;
    noise.dispose();
    return data;
  } finally {
    disposeAnt(state);
  }
}

// ---------------------------------------------------------------------------------------------

export const experiment = defineExperiment({
  name: "noise-train-mnist",
  description: "Gaussian and adversarial noise training (Paper C) on MNIST: MNIST-C, relative mCE, ε*, PGD/DDN",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      regimes: ["vanilla", "gnt", "ant_1x1"],
      sigmas: [0.5],
      model: "small_cnn",
      optimizer: "adam",
      train_digits: 256,
      test_digits: 128,
      pretrain_epochs: 5,
      epochs: 0.75,
      batch: 64,
      restart_every: 2,
      restart_steps: 1,
      mnist_c_digits: 16,
      curve_digits: 8,
      common_digits: 8,
      eps_digits: 16,
      attack_digits: 16,
      attack_steps: 2,
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
        module: import.meta.url,
        exportName: "workerPhase",
        cfg,
        workers: cfg.workers,
        cost: (phase) => phase.kind === "regime" && phase.regime.kind.startsWith("ant") ? 3 : 1,
      },
    });
    const metrics: Record<string, number> = Object.assign({}, pretrained.result, ...trained.results);

    // Relative mCE: per corruption the errors summed over severities against the vanilla model's (Hendrycks' CE).
    const vanilla = regimes.find((r) => r.kind === "vanilla");
    const perSeverity = (name: string) =>
      Object.fromEntries(
        COMMON_CORRUPTIONS.map((c) => [c, SEVERITIES.map((s) => metrics[`${name}/common/${c}/${s}`])]),
      );
    if (vanilla) {
      const reference = Object.fromEntries(
        Object.entries(perSeverity(vanilla.name)).map(([c, acc]) => [c, acc.map((a) => 1 - a)]),
      );
      for (const regime of regimes) {
        const { ce, mce } = corruptionError(perSeverity(regime.name), reference);
        metrics[`${regime.name}/relative_mce`] = mce;
        for (const [c, value] of Object.entries(ce)) metrics[`${regime.name}/relative_ce/${c}`] = value;
      }
    }
    for (const regime of regimes) {
      const accuracies = COMMON_CORRUPTIONS.flatMap((c) =>
        SEVERITIES.map((s) => metrics[`${regime.name}/common/${c}/${s}`])
      );
      metrics[`${regime.name}/common_mean`] = mean(accuracies);
    }
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

/** The per-regime table printed at the end of a run. */
function summaryTable(regimes: Regime[], m: Record<string, number>): string {
  const cell = (key: string, digits = 3) => m[key] === undefined ? "—" : m[key].toFixed(digits);
  const header = "regime      clean  MNIST-C  fog    bright  common  rel.mCE  ε*_GN  ε*_UN  ε*_AN  L2@1.5  L∞@0.1";
  const lines = regimes.map((r) =>
    [
      r.name.padEnd(10),
      cell(`${r.name}/clean`),
      cell(`${r.name}/mnist_c`).padStart(7),
      cell(`${r.name}/mnist_c/fog`).padStart(6),
      cell(`${r.name}/mnist_c/brightness`).padStart(7),
      cell(`${r.name}/common_mean`).padStart(7),
      cell(`${r.name}/relative_mce`).padStart(8),
      cell(`${r.name}/eps_gn`, 2).padStart(6),
      cell(`${r.name}/eps_un`, 2).padStart(6),
      cell(`${r.name}/eps_an`, 2).padStart(6),
      cell(`${r.name}/l2_acc_1.5`).padStart(7),
      cell(`${r.name}/linf_acc_0.1`).padStart(7),
    ].join(" ")
  );
  return [header, ...lines].join("\n");
}

if (import.meta.main) await runFromCli(experiment, Deno.args);
