/**
 * Supervised training of a classifier: softmax cross-entropy on labelled
 * images, one optimizer step per minibatch, the images in a fresh seeded
 * order each pass. The hooks let a caller augment a batch (noise training),
 * act between steps (a generator's restart, BatchNorm's running statistics)
 * and log, without another copy of the loop. On the wasm backend a model
 * without batch statistics can split each batch over data-parallel workers
 * (lib/train/data_parallel.ts), its numbers changed only by float32
 * summation order.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { gatherRows } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { crossEntropyStep } from "../models/cross_entropy_step.ts";
import { batchInputsOf, DataParallel, type DataParallelPlan } from "./data_parallel.ts";
import { classifierShardLoss } from "./supervised_replicas.ts";

/**
 * A classifier's data-parallel workers: its replica (e.g. `smallCnnReplica` of
 * lib/train/supervised_replicas.ts) and the resolved shard count.
 */
export interface ClassifierParallel extends DataParallelPlan {
  /**
   * Whether the model normalises by its batch's statistics in training mode
   * (BatchNorm): each shard would use its own, so such a model trains in one
   * worker (with a note). Default false.
   */
  batchStatistics?: boolean;
}

/** What {@linkcode trainClassifier} trains, on what, and for how long. */
export interface ClassifierTraining {
  /** Training images, row-major `[n, ...shape]`. */
  images: Float32Array;
  /** Their classes `[n]`, 0-based. */
  labels: Int32Array;
  /** One image's shape `[height, width, channels]`. */
  shape: [number, number, number];
  /** Training-mode logits `[b, classes]` of a batch `[b, ...shape]`; runs inside the optimizer's tape. */
  logits(x: tf.Tensor4D): tf.Tensor2D;
  /** The variables the optimizer updates, in the order its state follows. */
  variables: tf.Variable[];
  /** Updates `variables` once per batch; its state is the caller's to save. */
  optimizer: tf.Optimizer;
  /** Draws each pass's order of the images (and nothing else here). */
  rng: Rng;
  /** Images per step. */
  batch: number;
  /** Passes over the images; a fractional count finishes the pass it has begun (unless `steps` ends it). */
  epochs: number;
  /** Steps at most over all passes (default: no limit). */
  steps?: number;
  /** A pass's last batch with fewer images is skipped (BatchNorm needs 2 for a variance); default 1. */
  minRows?: number;
  /** Checked before each step, with the run's stop flag; training stops with its reason. */
  signal?: AbortSignal;
  /** Before step `step` (0-based), ahead of building its batch. */
  beforeStep?(step: number): void | Promise<void>;
  /**
   * The images step `step` (0-based) trains on, made from its clean batch `x` (e.g. noised copies); the loop
   * disposes the returned tensor when it is not `x`. Default: `x` itself.
   */
  input?(x: tf.Tensor4D, labels: tf.Tensor1D, step: number): tf.Tensor4D | Promise<tf.Tensor4D>;
  /** After step `step` (1-based) with its batch-mean cross-entropy in nats; the loop disposes `loss` afterwards. */
  afterStep?(step: number, loss: tf.Scalar, epoch: number): void | Promise<void>;
  /** After pass `epoch` (0-based) has ended, with the steps it took. */
  afterEpoch?(epoch: number, steps: number): void | Promise<void>;
  /**
   * Splits each batch of at least `workers` images over data-parallel
   * workers (absent, or 1 worker: every step here): a plan, whose workers
   * start and end with this call, or running workers on `variables` and
   * {@linkcode classifierShardLoss} of `logits` (the caller's to end, e.g.
   * kept across runs). `logits` computes this thread's shard; batches with
   * fewer images take the step here.
   */
  parallel?: ClassifierParallel | DataParallel;
}

/** The workers of `t`, or null where it trains in one (a model with batch statistics, with a note). */
function startParallel(t: ClassifierTraining): DataParallel | null {
  const plan = t.parallel;
  if (plan instanceof DataParallel) return plan;
  if (!plan || plan.workers <= 1) return null;
  if (plan.batchStatistics) {
    console.error(
      `a classifier with batch statistics (BatchNorm in training mode) trains in one worker, not ${plan.workers}: ` +
        "shards would normalise by their own statistics",
    );
    return null;
  }
  return new DataParallel({
    ...plan,
    workers: Math.min(plan.workers, t.batch),
    variables: t.variables,
    loss: classifierShardLoss(t.logits),
    signal: t.signal,
  });
}

/** One data-parallel step on `x`'s pixels (read back when `input` made them) and `labels`; returns the loss. */
async function parallelStep(
  parallel: DataParallel,
  optimizer: tf.Optimizer,
  step: number,
  x: { data: Float32Array; shape: number[] } | tf.Tensor4D,
  labels: Int32Array,
): Promise<tf.Scalar> {
  const pixels = x instanceof tf.Tensor ? (await batchInputsOf({ x })).x : x;
  const { grads, terms } = await parallel.gradients(step, {
    x: pixels,
    labels: { data: Float32Array.from(labels), shape: [labels.length] },
  });
  optimizer.applyGradients(grads);
  tf.dispose(Object.values(grads));
  return tf.scalar(terms.total);
}

/**
 * Trains with softmax cross-entropy: for each pass (while under `steps`) a
 * permutation of the images from `rng`, then one optimizer step per
 * `batch` images of it. Returns the steps taken.
 */
export async function trainClassifier(t: ClassifierTraining): Promise<number> {
  const n = t.labels.length;
  const size = t.shape[0] * t.shape[1] * t.shape[2];
  if (t.images.length !== n * size) throw new RangeError(`${t.images.length / size} images for ${n} labels`);
  const steps = t.steps ?? Infinity, minRows = t.minRows ?? 1;
  const parallel = startParallel(t);
  let step = 0;
  try {
    for (let epoch = 0; epoch < t.epochs && step < steps; epoch++) {
      const order = t.rng.permutation(n);
      let taken = 0;
      for (let start = 0; start < n && step < steps; start += t.batch) {
        const rows = Math.min(t.batch, n - start);
        if (rows < minRows) continue;
        t.signal?.throwIfAborted();
        stopPoint();
        await t.beforeStep?.(step);
        const index = order.subarray(start, start + rows);
        const pixels = gatherRows(t.images, size, index);
        const classes = Int32Array.from(index, (k) => t.labels[k]);
        const shape = [rows, ...t.shape] as [number, number, number, number];
        const split = parallel !== null && rows >= parallel.workers;
        let loss: tf.Scalar;
        if (split && !t.input) {
          loss = await parallelStep(parallel, t.optimizer, step, { data: pixels, shape }, classes);
        } else {
          const x = tf.tensor4d(pixels, shape);
          const labels = tf.tensor1d(classes, "int32");
          try {
            const input = t.input ? await t.input(x, labels, step) : x;
            try {
              loss = split
                ? await parallelStep(parallel, t.optimizer, step, input, classes)
                : crossEntropyStep(t.optimizer, t.variables, () => t.logits(input), labels);
            } finally {
              if (input !== x) input.dispose();
            }
          } finally {
            tf.dispose([x, labels]);
          }
        }
        step++;
        taken++;
        try {
          await t.afterStep?.(step, loss, epoch);
        } finally {
          loss.dispose();
        }
      }
      await t.afterEpoch?.(epoch, taken);
    }
  } finally {
    if (parallel !== t.parallel) parallel?.terminate();
  }
  return step;
}
