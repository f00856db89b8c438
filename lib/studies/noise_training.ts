/**
 * The study behind `noise-train-mnist` (experiments/noise_training.ts; Rusak2020): the regimes
 * a config asks for, the digits and their corrupted copies, a phase (the clean pretraining, or one regime
 * fine-tuned from it by {@linkcode trainClassifier} with its noised batches, then evaluated on MNIST-C, the
 * common corruptions, ε* along noise directions and PGD/DDN), and the metrics over the regimes.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { loadSavedModel, savedModels } from "../core/run_checkpoints.ts";
import { COMMON_CORRUPTIONS, corrupt, MNIST_C_CORRUPTIONS, mnistC, type Severity } from "../data/corruptions.ts";
import type { Observations } from "../data/ground_truth.ts";
import { loadMnist, type Mnist, MNIST_CLASSES, MNIST_SIDE } from "../data/mnist.ts";
import { imageGrid } from "../data/preview.ts";
import { attack, predictions } from "../attacks/attack.ts";
import { ddn, linfPgd } from "../attacks/gradient.ts";
import { gaussianDirections, uniformDirections, zeroAccuracyPerturbation } from "../attacks/noise.ts";
import type { AttackModel } from "../attacks/types.ts";
import { summarizeDistances } from "../metrics/adversarial.ts";
import { accuracy } from "../metrics/classification.ts";
import { corruptionError } from "../metrics/corruption_error.ts";
import { madryCnn } from "../models/madry_cnn.ts";
import { generatorInputSide } from "../models/noise_generator.ts";
import { type Classifier, smallCnn } from "../models/small_cnn.ts";
import { trainClassifier } from "../train/classifier.ts";
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
} from "../train/noise_training.ts";
import type { WorkerPhase } from "../train/parallel_phases.ts";
import { phaseArray, type PhaseArrays, type PhaseOutcome } from "../train/phases.ts";

const IMAGE_SHAPE: [number, number, number] = [MNIST_SIDE, MNIST_SIDE, 1];
const PIXELS = MNIST_SIDE * MNIST_SIDE;
/** The fine-tuning regimes, in the order they run. */
export const REGIME_KINDS = ["vanilla", "gnt", "gnt_mult", "speckle", "ant_1x1", "ant_3x3"] as const;
/** One of {@linkcode REGIME_KINDS}. */
export type RegimeKind = typeof REGIME_KINDS[number];
const SEVERITIES: readonly Severity[] = [1, 2, 3, 4, 5];

/** The config keys the study reads (experiments/noise_training.ts declares them, with their meaning). */
export interface NoiseTrainingSettings {
  /** Fine-tuning regimes; gnt is one model per σ of `sigmas`. */
  regimes: readonly RegimeKind[];
  /** σ of the single-σ GNT models (App. G, Fig. 3). */
  sigmas: readonly number[];
  /** Classifier (Madry: App. B; small_cnn: 3.4× cheaper). */
  model: "small_cnn" | "madry_cnn";
  /** Training digits: all 60,000 of the official training file, or a seeded stratified subset. */
  train_digits: number;
  /** Test digits: all 10,000 of the official test file (a seeded stratified subset for smoke runs only). */
  test_digits: number;
  /** Epochs on clean digits before any regime. */
  pretrain_epochs: number;
  /** Fine-tuning epochs per regime (App. B: 500–600 until convergence). */
  epochs: number;
  /** Images per classifier step (App. B: 300). */
  batch: number;
  /** Classifier optimizer (App. B: SGD, momentum 0.9). */
  optimizer: "adam" | "sgd_momentum";
  /** Classifier learning rate (App. B: 1e-3). */
  lr: number;
  /** Share of each GNT/ANT batch left clean (Rusak2020 §3.1: half). */
  clean_fraction: number;
  /** L2 size of ANT's noise after clipping (App. B, MNIST: 10). */
  ant_epsilon: number;
  /** Share of an ANT batch from the current generator (Rusak2020: 30%). */
  ant_current_fraction: number;
  /** Share per replayed saved generator (game-of-noise: 0.1). */
  ant_history_fraction: number;
  /** Adam learning rate of the noise generator (App. B: 1e-4 … 1e-5). */
  generator_lr: number;
  /** Classifier steps between generator restarts (0: once per epoch, as the reference). */
  restart_every: number;
  /** Adam steps of a restarted generator vs the frozen classifier (reference ≤ 1,000). */
  restart_steps: number;
  /** Test digits each MNIST-C corruption is applied to. */
  mnist_c_digits: number;
  /** MNIST-C digits of the learning curve's points before the last (the last: all). */
  curve_digits: number;
  /** Test digits each common corruption × severity is applied to. */
  common_digits: number;
  /** Test digits ε* (Gaussian, uniform, adversarial noise) is measured on. */
  eps_digits: number;
  /** Test digits PGD and DDN attack. */
  attack_digits: number;
  /** Models PGD and DDN attack (App. F Table 7: vanilla, GNT σ0.5, ANT1x1). */
  attack_regimes: readonly string[];
  /** PGD and DDN steps (App. F: 100). */
  attack_steps: number;
  /** Classifier steps between logged losses. */
  log_every: number;
}

/** One fine-tuning regime as a phase: its name in metrics and how its batches are built. */
export interface Regime {
  /** The regime's name in metric keys: its kind, or `gnt_<σ>` for a single-σ GNT model. */
  name: string;
  /** How its batches are noised. */
  kind: RegimeKind;
  /** GNT's σ (single-σ regimes). */
  sigma?: number;
}

/** The regimes a config asks for, in a fixed order (the σ curve sorted by σ). */
export function regimesOf(cfg: NoiseTrainingSettings): Regime[] {
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
// Data: the digits and their corrupted copies (seeded per image, so every worker builds the same ones)

/** The run's digits: its seeded stratified train part and the first test digits. */
export const mnistOf = (seed: number, cfg: NoiseTrainingSettings): Mnist =>
  loadMnist({ seed, train: cfg.train_digits, test: cfg.test_digits });

/** The first `n` test digits as observations. */
export function testDigits(mnist: Mnist, n: number): Observations {
  return { values: mnist.test.images.slice(0, n * PIXELS), n, shape: IMAGE_SHAPE };
}

/** Corrupted test sets: MNIST-C per corruption, the common ones per corruption and severity. */
interface CorruptedSets {
  mnistC: Map<string, Observations>;
  common: Map<string, Observations>;
}

let corruptedCache: { key: string; sets: CorruptedSets } | null = null;

/** Builds (once per process) the corrupted test digits a config evaluates on. */
function corruptedSets(seed: number, cfg: NoiseTrainingSettings, mnist: Mnist): CorruptedSets {
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

const classifierOf = (cfg: NoiseTrainingSettings, rng: Rng): Classifier =>
  cfg.model === "small_cnn" ? smallCnn(rng, MNIST_CLASSES) : madryCnn(rng, MNIST_CLASSES);

const optimizerOf = (cfg: NoiseTrainingSettings): tf.Optimizer =>
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

/** Accuracy of `classifier` on `images` against the first `images.n` test labels. */
async function accuracyOn(classifier: Classifier, images: Observations, labels: Int32Array): Promise<number> {
  const predicted = await predictions(attackModelOf(classifier), images.values, images.n, images.shape);
  return accuracy(predicted, labels.subarray(0, images.n));
}

/**
 * Clean and MNIST-C accuracy (mean and per corruption): the learning-curve
 * metrics, MNIST-C on the first `digits` of each corrupted set.
 */
async function headline(
  classifier: Classifier,
  mnist: Mnist,
  sets: CorruptedSets,
  cfg: NoiseTrainingSettings,
  digits: number,
) {
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

/**
 * A phase: the pretraining (phase "pretrain", clean digits) or one regime
 * fine-tuned from the pretrained weights, then evaluated. Runs in a worker
 * when `workers` > 1; its numbers depend only on the seed and the phase.
 */
export type Phase = { kind: "pretrain" } | { kind: "regime"; regime: Regime; pretrained: PhaseArrays };
/** A phase's metrics, keyed `<phase name>/<metric>`. */
export type PhaseResult = Record<string, number>;

/** Runs one phase: the pretraining returns its weights as well, a regime only its metrics. */
export async function runPhase(
  ctx: RunContext,
  cfg: NoiseTrainingSettings,
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
    let loss = 0;
    await trainClassifier({
      images: mnist.train.images,
      labels: mnist.train.labels,
      shape: IMAGE_SHAPE,
      logits: (x) => classifier.logits(x),
      variables: classifier.params.list(),
      optimizer,
      rng,
      batch: cfg.batch,
      epochs: Infinity,
      steps: totalSteps,
      minRows: 2,
      signal: ctx.stopRequested,
      beforeStep: (step) => {
        if (ant && step > 0 && step % restartEvery === 0) {
          restartGenerator(classifier, ant, rng, cfg.restart_steps, randomBatch)?.dispose();
          // The reference keeps the generator each restart starts an epoch with, for replay.
          saveGeneratorState(ant);
        }
      },
      input: async (x, labels, step) => {
        if (regime?.kind === "gnt") return gaussianNoiseBatch(x, regime.sigma!, rng, cfg.clean_fraction);
        if (regime?.kind === "gnt_mult") return gaussianNoiseBatch(x, GNT_MULT_SIGMAS, rng, cfg.clean_fraction);
        if (regime?.kind === "speckle") return speckleNoiseBatch(x, SPECKLE_SIGMAS, rng, cfg.clean_fraction);
        if (!ant) return x;
        const generatorLoss = antGeneratorStep(classifier, ant, x, labels, rng);
        if (step % cfg.log_every === 0) ctx.log(step, { [`${name}/generator_ce`]: (await generatorLoss.data())[0] });
        generatorLoss.dispose();
        return antClassifierBatch(ant, x, rng, Math.floor(step / restartEvery));
      },
      afterStep: async (step, stepLoss) => {
        // Read at the logged steps and the last one (the result's loss) only.
        if (step % cfg.log_every === 0 || step === totalSteps) loss = (await stepLoss.data())[0];
        if (step % cfg.log_every === 0) {
          ctx.log(step, { [`${name}/loss`]: loss });
          progress.update(step, loss);
        }
        if (step % stepsPerEpoch === 0 || step === totalSteps) last = await logCurve(step);
      },
    });
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
export const workerPhase: WorkerPhase<NoiseTrainingSettings, Phase, PhaseResult> = (
  ctx,
  cfg,
  phase,
): Promise<PhaseOutcome<PhaseResult>> => runPhase(ctx, cfg, phase);

/** This module's URL: phase workers import its {@linkcode workerPhase}. */
export const WORKER_MODULE: string = import.meta.url;

/**
 * The clean pretraining every regime starts from, run once in this process
 * and kept as models/pretrained/ so that a resumed run reuses it (the
 * regimes' phases checkpoint on their own).
 */
export async function pretrainOnce(
  ctx: RunContext,
  cfg: NoiseTrainingSettings,
): Promise<{ result: PhaseResult; arrays: PhaseArrays }> {
  if (savedModels(ctx.dir).includes("pretrained")) {
    try {
      const { arrays, info } = loadSavedModel(ctx.dir, "pretrained");
      return {
        result: (info as { result: PhaseResult }).result,
        arrays: Object.fromEntries(Object.entries(arrays).map(([k, v]) => [k, phaseArray(v)])),
      };
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      // A damaged pretraining is this run's own and seeded: doing it again gives the same weights.
      console.error(`${error.message}; pretraining again`);
    }
  }
  const { result, arrays } = await runPhase(ctx, cfg, { kind: "pretrain" });
  await ctx.saveModel("pretrained", arrays!, { model: cfg.model, result });
  return { result, arrays: arrays! };
}

// ---------------------------------------------------------------------------------------------
// Evaluation of a fine-tuned model

async function evaluateRegime(
  ctx: RunContext,
  cfg: NoiseTrainingSettings,
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
  cfg: NoiseTrainingSettings,
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

/**
 * Adds the metrics over the regimes' common-corruption accuracies: per regime its relative mCE and CE per
 * corruption against the vanilla model's errors (summed over severities, Hendrycks' CE), when vanilla ran, and
 * its mean accuracy over every corruption and severity.
 */
export function addCorruptionMetrics(regimes: Regime[], metrics: Record<string, number>): void {
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
}

/** The per-regime table printed at the end of a run. */
export function summaryTable(regimes: Regime[], m: Record<string, number>): string {
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
