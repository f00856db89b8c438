/**
 * The study behind `self-learning` (experiments/self_learning.ts; Schneider2023 Ch. 3, App. B): the
 * adapted methods, Tent's online protocol on one (corruption, severity) set, the dev and test phases, the dev
 * choice of learning rate and epochs, and the test metrics (relative mCE, errors, ECE, forgetting).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { corrupt, type CorruptionName, type Severity } from "../data/corruptions.ts";
import { loadMnist, type Mnist, MNIST_CLASSES, MNIST_SIDE } from "../data/mnist.ts";
import {
  accuracyOf,
  type LoadedSourceModel,
  probabilitiesOf,
  SOURCE_TRAINING_DEFAULTS,
} from "../adapt/source_model.ts";
import {
  type AdaptLoss,
  type AdaptParams,
  adaptStep,
  disposeOptimizer,
  entropy,
  gce,
  hardPseudoLabel,
  softPseudoLabel,
} from "../adapt/self_learning.ts";
import { argmaxRows, scoreAccuracy } from "../metrics/classification.ts";
import { ece, relativeMce } from "../metrics/robustness.ts";
import type { BnCnn, BnCnnSnapshot } from "../models/bn_cnn.ts";
import { runPhasesOn, type WorkerPhase } from "../train/parallel_phases.ts";
import type { PhaseOutcome } from "../train/phases.ts";
import { loadSourceModel } from "../train/source_training.ts";

const PIXELS = MNIST_SIDE * MNIST_SIDE;
const CLASSES = MNIST_CLASSES;
/** ECE bins (the thesis gives no binning; 15 is the common choice). */
const ECE_BINS = 15;
/** The two losses whose learning rate and epochs the dev sweep chooses. */
export const SWEPT = ["ent", "rpl"] as const;
/** One of {@linkcode SWEPT}. */
export type Swept = typeof SWEPT[number];

/** The config keys the study reads (experiments/self_learning.ts declares them, with their meaning). */
export interface SelfLearningSettings {
  /** Training digits: all 60,000 of the official training file, or a seeded stratified subset. */
  train_digits: number;
  /** Test digits: all 10,000 of the official test file (a seeded stratified subset for smoke runs only). */
  test_digits: number;
  /** Adam epochs of the source models (trained once per setting, then cached). */
  source_epochs: number;
  /** Test corruptions (the thesis reports on the 15 common ones). */
  corruptions: readonly CorruptionName[];
  /** Dev corruptions the learning rate and epochs are chosen on. */
  dev_corruptions: readonly CorruptionName[];
  /** Severities of every dev and test corruption. */
  severities: readonly number[];
  /** Severities (of `severities`) at which hard PL, soft PL and ENT on other parameters also run. */
  ablation_severities: readonly number[];
  /** Corruption constants (cifar: make_cifar_c.py, for 28-px digits). */
  table: "cifar" | "imagenet";
  /** Test digits per (corruption, severity); also the clean digits of the forgetting check. */
  digits: number;
  /** Test digits per dev (corruption, severity). */
  dev_digits: number;
  /** Images per adaptation step (thesis: 128 for the ResNet-50). */
  batch: number;
  /** SGD learning rates of the dev sweep (> 0). */
  lrs: readonly number[];
  /** Epochs of the dev sweep; each of 1..max_epochs is a candidate. */
  max_epochs: number;
  /** SGD momentum (Tent's setting). */
  momentum: number;
  /** GCE exponent of RPL, in (0, 1] (Table B.7: 0.8). */
  q: number;
  /** Confidence thresholds of hard PL, each in [0, 1) (Table 3.8). */
  thresholds: readonly number[];
  /** Teacher temperature τt of soft PL (> 0). */
  tau_t: number;
  /** Student temperature τs of soft PL (> 0). */
  tau_s: number;
  /** Parameters ENT adapts on the test sets (Table 3.10). */
  ent_params: readonly AdaptParams[];
  /**
   * Phases (settings, models) trained at once, each in a worker on its own core; 1: in this process. The numbers do not
   * depend on it.
   */
  workers: number;
}

/** Metric key of a method's test mCE. */
export const mceKey = (method: string): string => `test/${method}/mce`;
/** Metric key of a method's test mCE at the ablation severities. */
export const ablationKey = (method: string): string => `ablation/${method}/mce`;
/** The dev sweep's metric for one (loss, lr, epoch): relative mCE over the dev corruptions. */
export function devKey(method: Swept, lr: number, epoch: number): string {
  return `dev/${method}/lr${lr}/epoch${epoch}/mce`;
}

// ---------------------------------------------------------------------------------------------
// Methods

/** One adapted method of the test phase: its loss, its parameters and whose dev choice of lr and epochs it uses. */
interface TestMethod {
  name: string;
  loss: AdaptLoss;
  params: AdaptParams;
  /** The swept loss whose dev-chosen lr and epochs it takes. */
  settings: Swept;
  /** Runs only at `ablation_severities`. */
  ablation: boolean;
}

function lossOf(cfg: SelfLearningSettings, method: Swept): AdaptLoss {
  return method === "ent" ? entropy : (logits) => gce(logits, cfg.q);
}

/** ENT and RPL; hard PL per threshold and soft PL (RPL's settings); ENT on other parameters (ENT's settings). */
export function testMethods(cfg: SelfLearningSettings): TestMethod[] {
  const methods: TestMethod[] = SWEPT.map((name) => ({
    name,
    loss: lossOf(cfg, name),
    params: "affine",
    settings: name,
    ablation: false,
  }));
  for (const threshold of cfg.thresholds) {
    const loss: AdaptLoss = (logits) => hardPseudoLabel(logits, threshold);
    methods.push({ name: `hard_pl_${threshold}`, loss, params: "affine", settings: "rpl", ablation: true });
  }
  const soft: AdaptLoss = (logits) => softPseudoLabel(logits, logits, cfg.tau_t, cfg.tau_s);
  methods.push({ name: "soft_pl", loss: soft, params: "affine", settings: "rpl", ablation: true });
  for (const params of cfg.ent_params) {
    if (params !== "affine") {
      methods.push({ name: `ent_${params}`, loss: entropy, params, settings: "ent", ablation: true });
    }
  }
  return methods;
}

/** Every method of the test tables, in table order, and the severities it runs at. */
export function methodSeverities(cfg: SelfLearningSettings): [string, number[]][] {
  const all = sorted(cfg.severities), ablation = sorted(cfg.ablation_severities);
  return [
    ["none", all],
    ["bn", all],
    ...testMethods(cfg).map((m): [string, number[]] => [m.name, m.ablation ? ablation : all]),
  ];
}

// ---------------------------------------------------------------------------------------------
// Adaptation on one (corruption, severity) set

/** A (corruption, severity) set of corrupted digits with their labels. */
export interface TestSet {
  /** A corruption name, or "clean". */
  corruption: string;
  /** 1..5, 0 for clean digits. */
  severity: number;
  /** The digits, row-major `[n, 28, 28, 1]` in [0, 1]. */
  images: Float32Array;
  /** Their classes, 0–9. */
  labels: Int32Array;
}

/** The images `order[start..start+rows)` as a `[rows, 28, 28, 1]` tensor. */
function batchOf(images: Float32Array, order: Int32Array, start: number, rows: number): tf.Tensor4D {
  const x = new Float32Array(rows * PIXELS);
  for (let i = 0; i < rows; i++) {
    const k = order[start + i];
    x.set(images.subarray(k * PIXELS, (k + 1) * PIXELS), i * PIXELS);
  }
  return tf.tensor4d(x, [rows, MNIST_SIDE, MNIST_SIDE, 1]);
}

/**
 * Softmax of logits rows `[rows, classes]` into `probs` at the rows' places `order[start + i]`; returns how many
 * argmaxes equal their labels.
 */
function scatterProbabilities(
  logits: Float32Array,
  order: Int32Array,
  start: number,
  labels: Int32Array,
  probs: Float32Array,
): number {
  const rows = logits.length / CLASSES;
  const predicted = argmaxRows(logits, rows, CLASSES);
  let correct = 0;
  for (let i = 0; i < rows; i++) {
    const row = logits.subarray(i * CLASSES, (i + 1) * CLASSES);
    const max = row[predicted[i]];
    let sum = 0;
    for (let j = 0; j < CLASSES; j++) sum += Math.exp(row[j] - max);
    const k = order[start + i];
    for (let j = 0; j < CLASSES; j++) probs[k * CLASSES + j] = Math.exp(row[j] - max) / sum;
    if (predicted[i] === labels[k]) correct++;
  }
  return correct;
}

/** The digits' order in epoch `epoch` (0-based) on a set, shared by every method so that they see the same batches. */
function epochOrder(seed: number, set: TestSet, epoch: number): Int32Array {
  return Rng.derive(seed, "self-learning/order", set.corruption, set.severity, epoch).permutation(set.labels.length);
}

/** Online predictions of one adaptation run: accuracy per epoch, the last epoch's probabilities `[n, classes]`. */
interface Online {
  accuracy: number[];
  probs: Float32Array;
}

/** How one adaptation run goes: `lr` 0 forwards with BN on batch statistics and trains nothing. */
interface AdaptRun {
  loss: AdaptLoss;
  params: AdaptParams;
  lr: number;
  epochs: number;
}

/** BN adaptation alone: one epoch of batch-statistics forwards, no step. */
const BN_ONLY: AdaptRun = { loss: entropy, params: "affine", lr: 0, epochs: 1 };

/**
 * Tent's online protocol on one set: each batch of the epoch's order is forwarded with BN on its own statistics,
 * its predictions kept, then one SGD-momentum step of `loss` on `params`. The model is adapted in place; the
 * caller restores it.
 */
export async function adaptOnline(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  net: BnCnn,
  set: TestSet,
  run: AdaptRun,
): Promise<Online> {
  const n = set.labels.length;
  const optimizer = run.lr > 0 ? tf.train.momentum(run.lr, cfg.momentum) : null;
  const probs = new Float32Array(n * CLASSES);
  const accuracy: number[] = [];
  try {
    for (let epoch = 0; epoch < run.epochs; epoch++) {
      const order = epochOrder(ctx.seed, set, epoch);
      let correct = 0;
      for (let start = 0; start < n; start += cfg.batch) {
        ctx.stopRequested.throwIfAborted();
        stopPoint();
        const x = batchOf(set.images, order, start, Math.min(cfg.batch, n - start));
        let logits: Float32Array;
        try {
          if (optimizer) logits = await adaptStep(net, x, run.loss, optimizer, run.params);
          else {
            const out = net.logits(x, { kind: "batch" });
            logits = await out.data() as Float32Array;
            out.dispose();
          }
        } finally {
          x.dispose();
        }
        correct += scatterProbabilities(logits, order, start, set.labels, probs);
      }
      accuracy.push(correct / n);
    }
  } finally {
    if (optimizer) disposeOptimizer(optimizer);
  }
  return { accuracy, probs };
}

/** Accuracy of `net`, BN on batch statistics, over the clean digits in a fixed shuffled order. */
export async function cleanBatchAccuracy(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  net: BnCnn,
  clean: TestSet,
): Promise<number> {
  return (await adaptOnline(ctx, cfg, net, clean, BN_ONLY)).accuracy[0];
}

// ---------------------------------------------------------------------------------------------
// The phases: one (corruption, severity) set each

/** A dev set: the reference's accuracy, none and BN, and the accuracy per epoch of each (loss, lr). */
export interface DevResult {
  /** Accuracy of the reference MLP, the baseline of the relative mCE. */
  reference: number;
  /** Accuracy of the source model without adaptation. */
  none: number;
  /** Online accuracy of BN adaptation over the first epoch. */
  bn: number;
  /** BN alone on each epoch's batches (their composition changes with the reshuffle): the noise floor of the curves. */
  bnByEpoch: number[];
  /** `${loss}@${lr}` → online accuracy per epoch. */
  curves: Record<string, number[]>;
}

/** A test set: accuracy and ECE per method, and the clean accuracy after adapting (severity 5 only). */
export interface TestResult {
  /** Accuracy of the reference MLP, the baseline of the relative mCE. */
  reference: number;
  /** Method → accuracy (online, at the method's chosen epochs); "none" and "bn" included. */
  accuracy: Record<string, number>;
  /** Method → expected calibration error of its predictions. */
  ece: Record<string, number>;
  /** Method → accuracy on clean digits after adapting on this set (severity 5 only). */
  clean?: Record<string, number>;
  /** Per swept loss, BN alone on the batches of that loss's last epoch: the baseline without the reshuffle's luck. */
  sameOrderBn: Record<Swept, number>;
}

/** The dev-chosen lr and epochs of a loss. */
export interface Choice {
  /** The chosen SGD learning rate. */
  lr: number;
  /** The chosen epochs of online adaptation. */
  epochs: number;
  /** The relative dev mCE at that choice. */
  mce: number;
}

/** A phase: a dev set of the sweep, or a test set adapted with the dev choices. */
export type Phase =
  | { kind: "dev"; corruption: CorruptionName; severity: Severity }
  | { kind: "test"; corruption: CorruptionName; severity: Severity; chosen: Record<Swept, Choice> };
/** A phase's result, by its kind. */
export type PhaseResult = DevResult | TestResult;

/** Key of a (corruption, severity) set in the results: `gaussian_noise/3`. */
export const setKey = (corruption: string, severity: number): string => `${corruption}/${severity}`;
/** Key of a (loss, lr) curve in {@linkcode DevResult.curves}: `ent@0.001`. */
export const curveKey = (method: Swept, lr: number): string => `${method}@${lr}`;

/** What every phase reads: the digits, the source BN CNN and its snapshot, the reference MLP. */
export interface Resources {
  /** The digits (seeded subsets of the training and test files). */
  mnist: Mnist;
  /** The source model with BN layers that the methods adapt. */
  source: LoadedSourceModel;
  /** The MLP whose errors the relative mCE divides by. */
  reference: LoadedSourceModel;
  /** The source model's network, adapted in place and restored from `initial` between methods. */
  net: BnCnn;
  /** The source network's weights and BN statistics before any adaptation. */
  initial: BnCnnSnapshot;
  /** The clean digits the sets are made of. */
  clean: TestSet;
  /** Frees the models' tensors. */
  dispose(): void;
}

/** Loads the digits and both source models (trained and cached on first use). */
export async function loadResources(ctx: RunContext, cfg: SelfLearningSettings): Promise<Resources> {
  const mnist = loadMnist({ seed: ctx.seed, train: cfg.train_digits, test: cfg.test_digits });
  const training = {
    ...SOURCE_TRAINING_DEFAULTS,
    trainDigits: cfg.train_digits,
    seed: ctx.seed,
    epochs: cfg.source_epochs,
  };
  const options = (arch: string) => ({
    onEpoch: (epoch: number, loss: number) => ctx.log(epoch + 1, { [`source/${arch}/train_loss`]: loss }),
    signal: ctx.stopRequested,
  });
  const source = await loadSourceModel("bn", training, options("bn"));
  let reference: LoadedSourceModel;
  try {
    reference = await loadSourceModel("mlp", training, options("mlp"));
  } catch (error) {
    source.model.dispose();
    throw error;
  }
  const net = source.model.net!;
  const initial = net.snapshot();
  return {
    mnist,
    source,
    reference,
    net,
    initial,
    clean: {
      corruption: "clean",
      severity: 0,
      images: mnist.test.images.slice(0, cfg.digits * PIXELS),
      labels: mnist.test.labels.slice(0, cfg.digits),
    },
    dispose: () => {
      initial.dispose();
      source.model.dispose();
      reference.model.dispose();
    },
  };
}

/** A worker's resources, loaded by its first phase and kept for the next ones (the cache holds the models). */
let workerResources: { key: string; resources: Resources } | null = null;

/** The digits of a (corruption, severity) set: the first `n` test digits, corrupted (seeded per image). */
function corruptedSet(
  cfg: SelfLearningSettings,
  seed: number,
  r: Resources,
  corruption: CorruptionName,
  severity: Severity,
  n: number,
) {
  const clean = {
    values: r.mnist.test.images.slice(0, n * PIXELS),
    n,
    shape: [MNIST_SIDE, MNIST_SIDE, 1] as [number, number, number],
  };
  const images = corrupt(clean, corruption, severity, { seed, table: cfg.table }).values;
  return { corruption, severity, images, labels: r.mnist.test.labels.slice(0, n) };
}

/** Dev set: none, BN, and every (loss, lr) for `max_epochs` epochs (epoch e's online accuracy is candidate e). */
async function devPhase(ctx: RunContext, cfg: SelfLearningSettings, r: Resources, set: TestSet): Promise<DevResult> {
  const bnByEpoch = (await adaptOnline(ctx, cfg, r.net, set, { ...BN_ONLY, epochs: cfg.max_epochs })).accuracy;
  const result: DevResult = {
    reference: await accuracyOf(r.reference.model, set.images, set.labels),
    none: await accuracyOf(r.source.model, set.images, set.labels),
    bn: bnByEpoch[0],
    bnByEpoch,
    curves: {},
  };
  for (const method of SWEPT) {
    for (const lr of sorted(cfg.lrs)) {
      r.net.restore(r.initial);
      const run = { loss: lossOf(cfg, method), params: "affine" as const, lr, epochs: cfg.max_epochs };
      result.curves[curveKey(method, lr)] = (await adaptOnline(ctx, cfg, r.net, set, run)).accuracy;
    }
  }
  r.net.restore(r.initial);
  return result;
}

/** Test set: none, BN and every method from the source model; at severity 5 also the clean accuracy after ENT, RPL. */
async function testPhase(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  r: Resources,
  set: TestSet,
  chosen: Record<Swept, Choice>,
): Promise<TestResult> {
  const noneProbs = await probabilitiesOf(r.source.model, set.images);
  const bn = await adaptOnline(ctx, cfg, r.net, set, BN_ONLY);
  const epochs = Math.max(...SWEPT.map((m) => chosen[m].epochs));
  const bnByEpoch = epochs === 1
    ? bn.accuracy
    : (await adaptOnline(ctx, cfg, r.net, set, { ...BN_ONLY, epochs })).accuracy;
  const result: TestResult = {
    reference: await accuracyOf(r.reference.model, set.images, set.labels),
    accuracy: { none: scoreAccuracy(noneProbs, set.labels, CLASSES), bn: bn.accuracy[0] },
    ece: { none: ece(noneProbs, set.labels, CLASSES, ECE_BINS), bn: ece(bn.probs, set.labels, CLASSES, ECE_BINS) },
    sameOrderBn: { ent: bnByEpoch[chosen.ent.epochs - 1], rpl: bnByEpoch[chosen.rpl.epochs - 1] },
  };
  for (const method of testMethods(cfg)) {
    if (method.ablation && !cfg.ablation_severities.includes(set.severity)) continue;
    r.net.restore(r.initial);
    const { lr, epochs } = chosen[method.settings];
    const online = await adaptOnline(ctx, cfg, r.net, set, { loss: method.loss, params: method.params, lr, epochs });
    result.accuracy[method.name] = online.accuracy[epochs - 1];
    result.ece[method.name] = ece(online.probs, set.labels, CLASSES, ECE_BINS);
    if (set.severity === 5 && !method.ablation) {
      (result.clean ??= {})[method.name] = await cleanBatchAccuracy(ctx, cfg, r.net, r.clean);
    }
  }
  r.net.restore(r.initial);
  return result;
}

/** One phase on resources `r`; a test phase logs its set's errors at step `index + 1` of the test phases. */
export async function runPhase(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  r: Resources,
  phase: Phase,
  index: number,
): Promise<PhaseResult> {
  if (phase.kind === "dev") {
    return devPhase(ctx, cfg, r, corruptedSet(cfg, ctx.seed, r, phase.corruption, phase.severity, cfg.dev_digits));
  }
  const set = corruptedSet(cfg, ctx.seed, r, phase.corruption, phase.severity, cfg.digits);
  const result = await testPhase(ctx, cfg, r, set, phase.chosen);
  ctx.log(
    index + 1,
    Object.fromEntries(Object.entries(result.accuracy).map(([m, a]) => [`test_set/${m}/error`, 1 - a])),
  );
  return result;
}

/** A phase as a worker runs it: the worker's resources are loaded by its first phase and kept for the next ones. */
export const workerPhase: WorkerPhase<SelfLearningSettings, Phase, PhaseResult> = async (
  ctx,
  cfg,
  phase,
  index,
): Promise<PhaseOutcome<PhaseResult>> => {
  const key = JSON.stringify([ctx.seed, cfg.train_digits, cfg.test_digits, cfg.source_epochs, cfg.digits]);
  if (workerResources?.key !== key) {
    workerResources?.resources.dispose();
    workerResources = { key, resources: await loadResources(ctx, cfg) };
  }
  return { result: await runPhase(ctx, cfg, workerResources.resources, phase, index) };
};

// ---------------------------------------------------------------------------------------------
// From the sets' results to mCE, ECE and the dev choice

/** `values` ascending, as a new array. */
export const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);
/** Arithmetic mean (NaN when empty). */
export const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** Relative mCE of per-set accuracies against the reference's over `corruptions` × `severities`. */
function mceOver(
  corruptions: readonly string[],
  severities: readonly number[],
  accuracy: (key: string) => number,
  reference: (key: string) => number,
): number {
  const of = (value: (key: string) => number) =>
    Object.fromEntries(corruptions.map((c) => [c, severities.map((s) => value(setKey(c, s)))]));
  return relativeMce(of(accuracy), of(reference));
}

/** Dev mCE per (loss, lr, epoch) and the choice per loss: lowest mCE, ties to fewer epochs, then the smaller lr. */
export function devSelection(
  cfg: SelfLearningSettings,
  dev: Record<string, DevResult>,
): { metrics: Record<string, number>; chosen: Record<Swept, Choice> } {
  const metrics: Record<string, number> = {};
  const chosen = {} as Record<Swept, Choice>;
  const severities = sorted(cfg.severities);
  const reference = (key: string) => dev[key].reference;
  const mceOf = (accuracy: (key: string) => number) => mceOver(cfg.dev_corruptions, severities, accuracy, reference);
  for (const method of SWEPT) {
    let best: Choice | null = null;
    for (const lr of sorted(cfg.lrs)) {
      for (let epoch = 1; epoch <= cfg.max_epochs; epoch++) {
        const mce = mceOf((key) => dev[key].curves[curveKey(method, lr)][epoch - 1]);
        metrics[devKey(method, lr, epoch)] = mce;
        if (!best || mce < best.mce || (mce === best.mce && epoch < best.epochs)) best = { lr, epochs: epoch, mce };
      }
    }
    chosen[method] = best!;
    metrics[`dev/${method}/chosen_lr`] = best!.lr;
    metrics[`dev/${method}/chosen_epochs`] = best!.epochs;
    metrics[`dev/${method}/chosen_mce`] = best!.mce;
  }
  metrics["dev/none/mce"] = mceOf((key) => dev[key].none);
  metrics["dev/bn/mce"] = mceOf((key) => dev[key].bn);
  for (let epoch = 1; epoch <= cfg.max_epochs; epoch++) {
    metrics[`dev/bn/epoch${epoch}/mce`] = mceOf((key) => dev[key].bnByEpoch[epoch - 1]);
  }
  return { metrics, chosen };
}

/**
 * Test mCE, mean error (per severity too) and ECE per method over `corruptions` (each method at its severities),
 * every method's mCE at the ablation severities, and the two gains over BN.
 */
export function testMetrics(
  cfg: SelfLearningSettings,
  test: Record<string, TestResult>,
  corruptions: readonly string[],
): Record<string, number> {
  const metrics: Record<string, number> = {};
  const reference = (key: string) => test[key].reference;
  const ablation = sorted(cfg.ablation_severities);
  for (const [method, severities] of methodSeverities(cfg)) {
    const accuracy = (key: string) => test[key].accuracy[method];
    const keys = corruptions.flatMap((c) => severities.map((s) => setKey(c, s)));
    metrics[mceKey(method)] = mceOver(corruptions, severities, accuracy, reference);
    metrics[ablationKey(method)] = mceOver(corruptions, ablation, accuracy, reference);
    metrics[`test/${method}/error`] = mean(keys.map((k) => 1 - accuracy(k)));
    metrics[`test/${method}/ece`] = mean(keys.map((k) => test[k].ece[method]));
    for (const s of severities) {
      const atS = corruptions.map((c) => setKey(c, s));
      metrics[`test/${method}/error/sev${s}`] = mean(atS.map((k) => 1 - accuracy(k)));
      metrics[`test/${method}/ece/sev${s}`] = mean(atS.map((k) => test[k].ece[method]));
    }
  }
  const keys = corruptions.flatMap((c) => cfg.severities.map((s) => setKey(c, s)));
  metrics["test/mlp/error"] = mean(keys.map((k) => 1 - reference(k)));
  metrics["sl/ent_gain_over_bn"] = 1 - metrics[mceKey("ent")] / metrics[mceKey("bn")];
  metrics["sl/rpl_gain_over_bn"] = 1 - metrics[mceKey("rpl")] / metrics[mceKey("bn")];
  // The gain over BN on the same batches as the method's last epoch: what adapting adds beyond the reshuffle.
  const all = sorted(cfg.severities);
  for (const method of SWEPT) {
    const mce = mceOver(corruptions, all, (key) => test[key].sameOrderBn[method], reference);
    metrics[`control/bn_same_order_as_${method}/mce`] = mce;
    metrics[`control/${method}_gain_over_same_order_bn`] = 1 - metrics[mceKey(method)] / mce;
  }
  return metrics;
}

// ---------------------------------------------------------------------------------------------
// The run: the dev and test parts, each a list of phases with its own checkpoint state

/** Checkpoint state: each part's phase-runner state (lib/train/phases.ts or parallel_phases.ts), null until begun. */
interface State {
  dev: unknown;
  test: unknown;
}

/**
 * Runs the phases of one part (`dev` or `test`), `workers` at a time in workers (this module's `workerPhase`);
 * each part keeps its own phase-runner state inside the run's checkpoint, numbered after the earlier part's.
 * Returns the results by set key.
 */
export function partRunner(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  r: Resources,
): (name: "dev" | "test", offset: number, phases: Phase[]) => Promise<Record<string, PhaseResult>> {
  const saved = ctx.resumed?.state as State | undefined;
  const state: State = { dev: saved?.dev ?? null, test: saved?.test ?? null };
  const part = (name: keyof State, offset: number): RunContext => ({
    ...ctx,
    resumed: ctx.resumed && state[name] !== null ? { ...ctx.resumed, arrays: {}, state: state[name] } : null,
    checkpoint: (step, arrays, inner) => {
      state[name] = inner;
      return ctx.checkpoint(offset + step, arrays, state);
    },
  });
  return async (name: keyof State, offset: number, phases: Phase[]): Promise<Record<string, PhaseResult>> => {
    const { results } = await runPhasesOn<SelfLearningSettings, Phase, PhaseResult>(
      part(name, offset),
      phases,
      async (phase, index) => ({ result: await runPhase(ctx, cfg, r, phase, index) }),
      { parallel: { module: import.meta.url, exportName: "workerPhase", cfg, workers: cfg.workers } },
    );
    return Object.fromEntries(phases.map((p, i) => [setKey(p.corruption, p.severity), results[i]]));
  };
}

/** Logs the dev curves (Table B.3): mCE and mean error per epoch for each (loss, lr); epoch 0 is BN adaptation. */
export function logDevCurves(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  dev: Record<string, DevResult>,
  metrics: Record<string, number>,
): void {
  const devKeys = Object.keys(dev);
  for (let epoch = 0; epoch <= cfg.max_epochs; epoch++) {
    const values: Record<string, number> = {};
    for (const method of SWEPT) {
      for (const lr of cfg.lrs) {
        const accuracy = (key: string) => epoch === 0 ? dev[key].bn : dev[key].curves[curveKey(method, lr)][epoch - 1];
        values[`dev/${method}/lr${lr}/mce`] = epoch === 0 ? metrics["dev/bn/mce"] : metrics[devKey(method, lr, epoch)];
        values[`dev/${method}/lr${lr}/error`] = mean(devKeys.map((key) => 1 - accuracy(key)));
      }
    }
    values["dev/bn/mce"] = metrics[`dev/bn/epoch${Math.max(epoch, 1)}/mce`];
    ctx.log(epoch, values);
  }
}

/** Logs the running test numbers over the corruptions so far: the targets' curve toward their final value. */
export function logRunningTest(ctx: RunContext, cfg: SelfLearningSettings, test: Record<string, TestResult>): void {
  for (let k = 1; k <= cfg.corruptions.length; k++) {
    const running = testMetrics(cfg, test, cfg.corruptions.slice(0, k));
    ctx.log(k, {
      "sl/ent_gain_over_bn": running["sl/ent_gain_over_bn"],
      "sl/rpl_gain_over_bn": running["sl/rpl_gain_over_bn"],
      ...Object.fromEntries(methodSeverities(cfg).map(([m]) => [`running/${m}/mce`, running[mceKey(m)]])),
    });
  }
}

/**
 * The per-set errors of every method and the reference, forgetting (Table 3.14: the clean error after adapting
 * on each severity-5 set, against the source model's) and the source models' clean accuracies, added to `metrics`.
 */
export async function addSetAndForgettingMetrics(
  ctx: RunContext,
  cfg: SelfLearningSettings,
  r: Resources,
  test: Record<string, TestResult>,
  metrics: Record<string, number>,
): Promise<void> {
  for (const [key, result] of Object.entries(test)) {
    metrics[`test/mlp/${key}/error`] = 1 - result.reference;
    for (const [method, accuracy] of Object.entries(result.accuracy)) {
      metrics[`test/${method}/${key}/error`] = 1 - accuracy;
    }
  }
  const sourceClean = await accuracyOf(r.source.model, r.clean.images, r.clean.labels);
  metrics["forgetting/none/clean_error"] = 1 - sourceClean;
  metrics["forgetting/bn/clean_error"] = 1 - await cleanBatchAccuracy(ctx, cfg, r.net, r.clean);
  if (cfg.severities.includes(5)) {
    for (const method of SWEPT) {
      const errors = cfg.corruptions.map((c) => 1 - test[setKey(c, 5)].clean![method]);
      metrics[`forgetting/${method}/clean_error`] = mean(errors);
      metrics[`forgetting/${method}/clean_error_max`] = Math.max(...errors);
      metrics[`forgetting/${method}/rise`] = mean(errors) - (1 - sourceClean);
    }
  }
  metrics["source/clean_train_accuracy"] = r.source.cleanTrainAccuracy;
  metrics["mlp/clean_train_accuracy"] = r.reference.cleanTrainAccuracy;
  metrics["mlp/clean_error"] = 1 - await accuracyOf(r.reference.model, r.clean.images, r.clean.labels);
}

/** The table printed at the end of a run: per method mCE, mean error per severity and ECE. */
export function summaryTable(
  cfg: SelfLearningSettings,
  m: Record<string, number>,
  chosen: Record<Swept, Choice>,
): string {
  const cell = (key: string, digits = 3) => m[key] === undefined ? "—" : m[key].toFixed(digits);
  const severities = sorted(cfg.severities);
  const header = ["method".padEnd(12), "mCE".padStart(6), ...severities.map((s) => `err s${s}`.padStart(7))]
    .concat(["ECE".padStart(6), "mCE abl".padStart(7)]).join(" ");
  const lines = methodSeverities(cfg).map(([method]) =>
    [
      method.padEnd(12),
      cell(mceKey(method)).padStart(6),
      ...severities.map((s) => cell(`test/${method}/error/sev${s}`).padStart(7)),
      cell(`test/${method}/ece`).padStart(6),
      cell(ablationKey(method)).padStart(7),
    ].join(" ")
  );
  const choices = SWEPT.map((s) => `${s.toUpperCase()} lr ${chosen[s].lr}, ${chosen[s].epochs} epoch(s)`).join("; ");
  return [
    `dev choice: ${choices}`,
    header,
    ...lines,
    `gain over BN: ENT ${cell("sl/ent_gain_over_bn")}, RPL ${cell("sl/rpl_gain_over_bn")}; over BN on the same ` +
    `batches as their last epoch: ENT ${cell("control/ent_gain_over_same_order_bn")}, RPL ` +
    `${cell("control/rpl_gain_over_same_order_bn")}`,
    `clean error: source ` +
    `${cell("forgetting/none/clean_error")}, after ENT ${cell("forgetting/ent/clean_error")}, after RPL ` +
    `${cell("forgetting/rpl/clean_error")}`,
  ].join("\n");
}
