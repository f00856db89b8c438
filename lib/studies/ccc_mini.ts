/**
 * The study behind `ccc-mini` (experiments/ccc_mini.ts): the source model's
 * predictions for the calibration, each test-time method run over the same
 * CCC-style stream of digit batches with its online accuracy, the metrics of
 * the finished methods and what the stream was.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { type CccBatch, type CccCalibration, type CccStream, orderedPairs, pairKey } from "../data/ccc.ts";
import { MNIST_CLASSES, MNIST_SIDE } from "../data/mnist.ts";
import { type E0Rule, Eta, ETA_MOMENTUM, RDumb } from "../adapt/eta.ts";
import { adaptStep, disposeOptimizer, entropy } from "../adapt/self_learning.ts";
import { argmaxRows, correctCount } from "../metrics/classification.ts";
import type { BnCnn } from "../models/bn_cnn.ts";

/** The methods, in the order they run. */
export const CCC_METHODS = ["pretrained", "bn", "tent", "eta", "rdumb"] as const;
/** One of {@linkcode CCC_METHODS}. */
export type CccMethod = typeof CCC_METHODS[number];

/** The config keys the stream's methods read (experiments/ccc_mini.ts declares them). */
export interface CccSettings {
  /** Methods to run on the stream, in this order. */
  methods: readonly CccMethod[];
  /** Stream batches every method sees, of `batch` images. */
  batches: number;
  /** Images per batch (Schneider2023 Ch. 4: 64). */
  batch: number;
  /** Batches between logged points of each method's curve. */
  log_every: number;
  /** SGD learning rate of Tent, ETA and RDumb. */
  lr: number;
  /** RDumb's reset interval in batches. */
  reset_every: number;
  /** ETA/RDumb entropy margin E0: thesis 0.4 ln C, code ln C / 2 − 1. */
  e0_rule: E0Rule;
  /** ETA/RDumb redundancy filter ε, |cos(p, p̄)| < ε (thesis and rdumb.py: 0.05, set for 1,000 classes). */
  cosine_margin: number;
}

/** Metric key of a method's online accuracy. */
export const onlineKey = (method: CccMethod): string => `ccc/${method}/online_accuracy`;
/** Metric key of a method's accuracy over the stream's last quarter. */
export const lastQuarterKey = (method: CccMethod): string => `ccc/${method}/last_quarter_accuracy`;

/** What a finished method leaves in the checkpoint state: correct predictions per batch, and its counters. */
export interface MethodResult {
  /** Per stream batch, how many of its images the method classified correctly. */
  correct: number[];
  /** The method's own counters (e.g. RDumb's resets), logged as `ccc/<method>/<key>`. */
  extra: Record<string, number>;
}

/** The source model's predictions (source statistics) on images `[n, 28, 28, 1]`, in batches of 500. */
export async function classifySource(net: BnCnn, images: Float32Array, n: number): Promise<Int32Array> {
  const size = MNIST_SIDE * MNIST_SIDE, chunk = 500;
  const out = new Int32Array(n);
  for (let start = 0; start < n; start += chunk) {
    const count = Math.min(chunk, n - start);
    const logits = tf.tidy(() =>
      net.logits(tf.tensor4d(images.subarray(start * size, (start + count) * size), [count, MNIST_SIDE, MNIST_SIDE, 1]))
    );
    out.set(argmaxRows(await logits.data(), count, MNIST_CLASSES), start);
    logits.dispose();
  }
  return out;
}

/** One method on the stream: `predict` returns the logits of the batch's forward, adapting afterwards if it does. */
interface StreamMethod {
  predict(x: tf.Tensor4D): Promise<Float32Array>;
  /** Counters for the record (ETA's filtered samples). */
  extra(): Record<string, number>;
  dispose(): void;
}

function methodOn(method: CccMethod, net: BnCnn, cfg: CccSettings): StreamMethod {
  switch (method) {
    case "pretrained":
    case "bn": {
      const mode = method === "bn" ? { kind: "batch" as const } : { kind: "source" as const };
      const predict = async (x: tf.Tensor4D) => {
        const logits = net.logits(x, mode);
        const values = await logits.data() as Float32Array;
        logits.dispose();
        return values;
      };
      return { predict, extra: () => ({}), dispose: () => {} };
    }
    case "tent": {
      const optimizer = tf.train.momentum(cfg.lr, ETA_MOMENTUM);
      return {
        predict: (x) => adaptStep(net, x, entropy, optimizer, "affine"),
        extra: () => ({}),
        dispose: () => disposeOptimizer(optimizer),
      };
    }
    case "eta":
    case "rdumb": {
      const options = { e0Rule: cfg.e0_rule, learningRate: cfg.lr, cosineMargin: cfg.cosine_margin };
      const adapter = method === "eta"
        ? new Eta(net, options)
        : new RDumb(net, { ...options, resetEvery: cfg.reset_every });
      return {
        predict: (x) => adapter.step(x),
        extra: () => ({
          reliable_fraction: adapter.reliableSamples / (adapter.steps * cfg.batch),
          updated_fraction: adapter.updatedSamples / (adapter.steps * cfg.batch),
        }),
        dispose: () => adapter.dispose(),
      };
    }
  }
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Runs one method over the stream from the source model; logs its running and windowed online accuracy. */
export async function runMethod(
  ctx: RunContext,
  cfg: CccSettings,
  method: CccMethod,
  net: BnCnn,
  batchAt: (b: number) => CccBatch,
  bnCorrect: number[] | undefined,
): Promise<MethodResult> {
  const adapter = methodOn(method, net, cfg);
  const correct: number[] = [];
  const progress = ctx.progress(`ccc ${method}`, cfg.batches);
  try {
    for (let b = 0; b < cfg.batches; b++) {
      ctx.stopRequested.throwIfAborted();
      const batch = batchAt(b);
      const x = tf.tensor4d(batch.images, [cfg.batch, MNIST_SIDE, MNIST_SIDE, 1]);
      const predicted = argmaxRows(await adapter.predict(x), cfg.batch, MNIST_CLASSES);
      x.dispose();
      correct.push(correctCount(predicted, batch.labels));
      const done = b + 1;
      if (done % cfg.log_every === 0 || done === cfg.batches) {
        const sum = correct.reduce((a, c) => a + c, 0);
        const window = correct.slice(-cfg.log_every);
        const values: Record<string, number> = {
          [onlineKey(method)]: sum / (done * cfg.batch),
          [`ccc/${method}/window_accuracy`]: mean(window) / cfg.batch,
        };
        if (method === "rdumb" && bnCorrect) {
          values["ccc/rdumb_over_bn"] = sum / bnCorrect.slice(0, done).reduce((a, c) => a + c, 0);
        }
        ctx.log(done, values);
        progress.update(done);
      }
    }
    return { correct, extra: adapter.extra() };
  } finally {
    adapter.dispose();
  }
}

/** The metrics of the finished methods. */
export function metricsOf(
  cfg: CccSettings,
  results: Partial<Record<CccMethod, MethodResult>>,
): Record<string, number> {
  const metrics: Record<string, number> = {};
  const quarter = Math.floor((cfg.batches * 3) / 4);
  for (const [method, result] of Object.entries(results) as [CccMethod, MethodResult][]) {
    metrics[onlineKey(method)] = mean(result.correct) / cfg.batch;
    metrics[lastQuarterKey(method)] = mean(result.correct.slice(quarter)) / cfg.batch;
    metrics[`ccc/${method}/first_quarter_accuracy`] = mean(result.correct.slice(0, cfg.batches - quarter)) / cfg.batch;
    for (const [key, value] of Object.entries(result.extra)) metrics[`ccc/${method}/${key}`] = value;
  }
  if (results.rdumb && results.bn) {
    metrics["ccc/rdumb_over_bn"] = metrics[onlineKey("rdumb")] / metrics[onlineKey("bn")];
  }
  if (results.eta && results.bn) metrics["ccc/eta_over_bn"] = metrics[onlineKey("eta")] / metrics[onlineKey("bn")];
  return metrics;
}

/** What the stream of `batches` × `batch` images was: its pairs and the calibrated accuracy of its images. */
export function streamSummary(
  stream: CccStream,
  images: number,
  speed: number,
): { points: number; segments: string[]; calibratedAccuracy: number } {
  const points = Math.ceil(images / speed);
  const segments: string[] = [];
  let calibrated = 0;
  for (let k = 0; k < points; k++) {
    const point = stream.point(k);
    calibrated += point.accuracy * (Math.min(images, (k + 1) * speed) - k * speed);
    if (segments.length === point.segment) segments.push(pairKey(point.c1, point.c2));
  }
  return { points, segments, calibratedAccuracy: calibrated / images };
}

/** Per pair: the path's start, its length and its mean calibrated accuracy. */
export function pathSummary(
  stream: CccStream,
  calibration: CccCalibration,
): Record<
  string,
  {
    start_s1: number;
    end_s2: number;
    points: number;
    mean_accuracy: number;
    clean_accuracy: number;
    lowest_accuracy: number;
  }
> {
  return Object.fromEntries(
    orderedPairs(calibration.corruptions).map(([c1, c2]) => {
      const path = stream.path(c1, c2);
      return [pairKey(c1, c2), {
        start_s1: path[0].s1,
        end_s2: path.at(-1)!.s2,
        points: path.length,
        mean_accuracy: mean(path.map((p) => p.accuracy)),
        clean_accuracy: calibration.grids[pairKey(c1, c2)][0][0],
        lowest_accuracy: Math.min(...calibration.grids[pairKey(c1, c2)].flat()),
      }];
    }),
  );
}

/** The per-method table printed at the end of a run. */
export function summaryTable(cfg: CccSettings, m: Record<string, number>): string {
  const cell = (key: string) => m[key] === undefined ? "   —  " : m[key].toFixed(4);
  const lines = cfg.methods.map((method) =>
    `${method.padEnd(11)} ${cell(onlineKey(method))}  ${cell(`ccc/${method}/first_quarter_accuracy`)}  ${
      cell(lastQuarterKey(method))
    }`
  );
  return ["method      online  first¼  last¼", ...lines, `RDumb / BN = ${cell("ccc/rdumb_over_bn")} (paper 1.41)`]
    .join("\n");
}
