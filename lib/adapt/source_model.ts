/**
 * The source classifiers that test-time adaptation starts from (001_6f3482ea4494d2ce.md §2.1–2.3):
 * the BatchNorm CNN, its GroupNorm twin and a reference MLP 784-256-10, trained once on clean MNIST
 * digits with Adam and cached on disk, so every experiment and every preset adapts the same weights.
 *
 * A cache entry is a folder `<cacheRoot>/<key>/` of npy arrays and state.json written by the run
 * store's array-folder writer (temp folder, then rename). Reading checks every array (names, shapes,
 * finite values) and the state before any weight is assigned; an entry that fails is trained again.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { integer } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { readArrayFolder, writeArrayFolder } from "../core/run_checkpoints.ts";
import type { NpyArray } from "../core/npy.ts";
import { loadMnist, MNIST_CLASSES, MNIST_TRAIN_TOTAL } from "../data/mnist.ts";
import { BN_CNN_SIDE, type BnCnn, bnCnn, type NormMode } from "../models/bn_cnn.ts";
import { Mlp } from "../models/mlp.ts";
import { Params } from "../models/params.ts";
import { crossEntropyStep } from "../models/cross_entropy_step.ts";

/** The source architectures: bnCnn with BatchNorm, bnCnn with GroupNorm, an MLP 784-256-10. */
export const SOURCE_ARCHS = ["bn", "gn", "mlp"] as const;
/** One of {@linkcode SOURCE_ARCHS}. */
export type SourceArch = typeof SOURCE_ARCHS[number];

/** How a source model is trained; every field enters the cache key. */
export interface SourceTraining {
  /** The train part of loadMnist({ seed, train: trainDigits }): official training digits (independent of the test count). */
  trainDigits: number;
  /** Seed of the data split, the initial weights and the minibatch order. */
  seed: number;
  /** Passes over the training digits (default 3). */
  epochs: number;
  /** Adam learning rate (default 1e-3). */
  lr: number;
  /** Minibatch size (default 128). */
  batch: number;
}

/** The quick preset's training (3 epochs, Adam 1e-3, batch 128). */
export const SOURCE_TRAINING_DEFAULTS = { epochs: 3, lr: 1e-3, batch: 128 } as const;

/**
 * The config entry of the source models' epochs, shared by every experiment that adapts them, so that the same
 * setting reaches the same cache key everywhere.
 */
export const SOURCE_EPOCHS_CONFIG = integer(
  SOURCE_TRAINING_DEFAULTS.epochs,
  "Adam epochs of the source models (trained once per setting, then cached)",
  { min: 1, max: 1_000 },
);

/** Bumped whenever training or the stored layout changes, so older entries are never read. */
export const SOURCE_CACHE_VERSION = 1;

/** Where entries live unless the caller says otherwise. */
export const DEFAULT_SOURCE_CACHE = "data/cache/tta";

/** Hidden units of the reference MLP. */
export const SOURCE_MLP_HIDDEN = 256;

const PIXELS = BN_CNN_SIDE * BN_CNN_SIDE;

/** A trained source classifier on `[b, 28, 28, 1]` inputs in [0, 1]. */
export interface SourceClassifier {
  arch: SourceArch;
  /** The BnCnn for "bn" and "gn" (adapters use it directly); null for "mlp". */
  net: BnCnn | null;
  /** Logits `[b, 10]`; `mode` applies to "bn" only (others ignore it); default source statistics. */
  logits(x: tf.Tensor4D, mode?: NormMode): tf.Tensor2D;
  dispose(): void;
}

/** What {@linkcode loadSourceModel} returns. */
export interface LoadedSourceModel {
  model: SourceClassifier;
  /** Cache key (folder name), e.g. "bn-mnist-idx-d8000-s0-e3-lr0.001-b128-v1". */
  key: string;
  fromCache: boolean;
  /** Seconds spent training now; 0 when loaded from the cache. */
  trainSeconds: number;
  /** Top-1 accuracy on the training digits after training (source statistics). */
  cleanTrainAccuracy: number;
}

/** Options of {@linkcode loadSourceModel}. */
export interface SourceModelOptions {
  /** Folder of the cache entries (default {@linkcode DEFAULT_SOURCE_CACHE}). */
  cacheRoot?: string;
  /** Called after each training epoch with its mean minibatch loss (not called on a cache hit). */
  onEpoch?: (epoch: number, loss: number) => void;
  /** Checked before each training step; training stops with its reason when it aborts. */
  signal?: AbortSignal;
}

/** Throws a UsageError unless `arch` and `training` describe a model that can be trained. */
export function checkSourceTraining(arch: SourceArch, training: SourceTraining): void {
  if (!(SOURCE_ARCHS as readonly string[]).includes(arch)) {
    throw new UsageError(`source arch must be one of ${SOURCE_ARCHS.join(", ")}; got ${JSON.stringify(arch)}`);
  }
  const { trainDigits, seed, epochs, lr, batch } = training;
  if (!Number.isInteger(trainDigits) || trainDigits < MNIST_CLASSES || trainDigits > MNIST_TRAIN_TOTAL) {
    throw new UsageError(
      `trainDigits must be an integer in ${MNIST_CLASSES}..${MNIST_TRAIN_TOTAL}, got ${trainDigits}`,
    );
  }
  if (!Number.isSafeInteger(seed)) throw new UsageError(`seed must be an integer, got ${seed}`);
  if (!Number.isInteger(epochs) || epochs < 1) throw new UsageError(`epochs must be an integer ≥ 1, got ${epochs}`);
  if (!(lr > 0) || !Number.isFinite(lr)) throw new UsageError(`lr must be a finite number > 0, got ${lr}`);
  if (!Number.isInteger(batch) || batch < 2) throw new UsageError(`batch must be an integer ≥ 2, got ${batch}`);
}

/** The training data's identity in the cache key: the official MNIST IDX files (models of other digits never match). */
export const SOURCE_DATASET = "mnist-idx";

/** The cache key (folder name) of a source model: the dataset, every training field and the format version. */
export function sourceModelKey(arch: SourceArch, training: SourceTraining): string {
  checkSourceTraining(arch, training);
  const { trainDigits, seed, epochs, lr, batch } = training;
  return `${arch}-${SOURCE_DATASET}-d${trainDigits}-s${seed}-e${epochs}-lr${lr}-b${batch}-v${SOURCE_CACHE_VERSION}`;
}

/** A freshly initialised classifier and its stored tensors ("params/<key>", "stats/<key>"). */
interface Built {
  model: SourceClassifier;
  /** Trainable parameters, in the optimizer's order. */
  trainable: tf.Variable[];
  /** Every stored tensor by name. */
  stored: Record<string, tf.Variable>;
  /** The forward pass used in training (BatchNorm: batch statistics, running statistics move). */
  trainLogits(x: tf.Tensor4D): tf.Tensor2D;
}

/** Throws a UsageError unless `x` is `[b ≥ 1, 28, 28, 1]`. */
function checkImages(x: tf.Tensor4D): void {
  const [b, h, w, c] = x.shape;
  if (x.rank !== 4 || !(b >= 1) || h !== BN_CNN_SIDE || w !== BN_CNN_SIDE || c !== 1) {
    throw new UsageError(`source models take images [n, 28, 28, 1], got [${x.shape.join(", ")}]`);
  }
}

/** The untrained model of `arch`; bn and gn draw the same conv and fc weights from the same seed. */
function buildSource(arch: SourceArch, seed: number): Built {
  const rng = Rng.derive(seed, "source-model-init");
  if (arch === "mlp") {
    const params = new Params();
    const mlp = new Mlp(rng, params, "mlp/", [PIXELS, SOURCE_MLP_HIDDEN, MNIST_CLASSES], { activation: "relu" });
    const logits = (x: tf.Tensor4D) => {
      checkImages(x);
      return tf.tidy(() => mlp.apply(tf.reshape(x, [x.shape[0], PIXELS])));
    };
    return {
      model: { arch, net: null, logits, dispose: () => params.dispose() },
      trainable: params.list(),
      stored: params.entries("params/") as Record<string, tf.Variable>,
      trainLogits: logits,
    };
  }
  const net = bnCnn(rng, { norm: arch === "bn" ? "batch" : "group", classes: MNIST_CLASSES });
  return {
    model: {
      arch,
      net,
      logits: (x, mode) => arch === "bn" ? net.logits(x, mode) : net.logits(x),
      dispose: () => net.dispose(),
    },
    trainable: net.allParams(),
    stored: { ...net.params.entries("params/"), ...net.stats.entries("stats/") } as Record<string, tf.Variable>,
    trainLogits: (x) => net.trainLogits(x),
  };
}

/** Why a cache folder cannot be used, or null when every array and the state check out. */
function entryProblem(
  arrays: Record<string, NpyArray>,
  json: Record<string, unknown>,
  built: Built,
  key: string,
): string | null {
  if (json.version !== SOURCE_CACHE_VERSION || json.key !== key) {
    return `state.json names key ${JSON.stringify(json.key)} v${json.version}, expected ${key}`;
  }
  const accuracy = json.cleanTrainAccuracy;
  if (typeof accuracy !== "number" || !(accuracy >= 0 && accuracy <= 1)) {
    return `state.json cleanTrainAccuracy ${JSON.stringify(accuracy)} is not in [0, 1]`;
  }
  const expected = Object.keys(built.stored).sort(), found = Object.keys(arrays).sort();
  if (expected.join() !== found.join()) return `arrays ${found.join(", ")}; expected ${expected.join(", ")}`;
  for (const [name, variable] of Object.entries(built.stored)) {
    const array = arrays[name];
    if (!(array.data instanceof Float32Array)) return `${name}: dtype ${array.dtype}, expected f4`;
    if (array.shape.join() !== variable.shape.join()) {
      return `${name}: shape [${array.shape}], expected [${variable.shape}]`;
    }
    const bad = array.data.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) return `${name}: value ${bad} is ${array.data[bad]}`;
  }
  return null;
}

/** The checked arrays and state of a cache folder, or null when it is absent or fails a check. */
function readEntry(
  folder: string,
  built: Built,
  key: string,
): { arrays: Record<string, NpyArray>; json: Record<string, unknown> } | null {
  let entry;
  try {
    entry = readArrayFolder(folder);
  } catch {
    return null; // missing folder or file, truncated npy, unparsable state.json
  }
  return entryProblem(entry.arrays, entry.json, built, key) === null ? entry : null;
}

/** Puts checked arrays into the model's variables. */
function assignEntry(built: Built, arrays: Record<string, NpyArray>): void {
  for (const [name, variable] of Object.entries(built.stored)) {
    tf.tidy(() => variable.assign(tf.tensor(arrays[name].data as Float32Array, arrays[name].shape)));
  }
}

/** Adam on softmax cross-entropy over the digits, reshuffled each epoch by a seeded generator. */
async function train(
  built: Built,
  images: Float32Array,
  labels: Int32Array,
  training: SourceTraining,
  options: SourceModelOptions,
): Promise<void> {
  const { epochs, lr, batch } = training;
  const n = labels.length;
  const orderRng = Rng.derive(training.seed, "source-model-order");
  const optimizer = tf.train.adam(lr, 0.9, 0.999, 1e-8);
  try {
    for (let epoch = 0; epoch < epochs; epoch++) {
      const order = orderRng.permutation(n);
      let total = tf.scalar(0), steps = 0;
      for (let start = 0; start < n; start += batch) {
        options.signal?.throwIfAborted();
        const rows = Math.min(batch, n - start);
        const x = new Float32Array(rows * PIXELS), y = new Int32Array(rows);
        for (let i = 0; i < rows; i++) {
          const k = order[start + i];
          x.set(images.subarray(k * PIXELS, (k + 1) * PIXELS), i * PIXELS);
          y[i] = labels[k];
        }
        const targets = tf.tensor1d(y, "int32");
        const cost = crossEntropyStep(
          optimizer,
          built.trainable,
          () => built.trainLogits(tf.tensor4d(x, [rows, BN_CNN_SIDE, BN_CNN_SIDE, 1])),
          targets,
          MNIST_CLASSES,
        );
        targets.dispose();
        const next = tf.add(total, cost) as tf.Scalar;
        tf.dispose([total, cost]);
        total = next;
        steps++;
      }
      const sum = (await total.data())[0];
      total.dispose();
      options.onEpoch?.(epoch, sum / steps);
    }
  } finally {
    optimizer.dispose();
  }
}

/**
 * Trains the source model once and caches it in `<cacheRoot>/<key>/` (npy arrays + state.json,
 * written to a temp folder then renamed); a cache entry that is missing a file, has wrong shapes or
 * non-finite values is rebuilt. cacheRoot defaults to "data/cache/tta". Bit-identical weights
 * whether trained now or loaded. Two processes training the same key both end with a valid entry:
 * the later writer replaces the earlier one's identical weights, or finds them and keeps them.
 */
export async function loadSourceModel(
  arch: SourceArch,
  training: SourceTraining,
  options: SourceModelOptions = {},
): Promise<LoadedSourceModel> {
  const key = sourceModelKey(arch, training);
  const cacheRoot = options.cacheRoot ?? DEFAULT_SOURCE_CACHE;
  if (typeof cacheRoot !== "string" || cacheRoot === "") throw new UsageError("cacheRoot must be a folder path");
  const folder = join(cacheRoot, key);
  const built = buildSource(arch, training.seed);
  try {
    const cached = readEntry(folder, built, key);
    if (cached) {
      assignEntry(built, cached.arrays);
      const cleanTrainAccuracy = cached.json.cleanTrainAccuracy as number;
      return { model: built.model, key, fromCache: true, trainSeconds: 0, cleanTrainAccuracy };
    }
    const { images, labels } = loadMnist({ seed: training.seed, train: training.trainDigits, test: 1 }).train;
    const started = performance.now();
    await train(built, images, labels, training, options);
    const trainSeconds = (performance.now() - started) / 1000;
    const cleanTrainAccuracy = await accuracyOf(built.model, images, labels);
    // Another process may have stored this key while we trained: keep its entry rather than replace it.
    if (!readEntry(folder, built, key)) {
      const arrays: Record<string, { data: Float32Array; shape: number[] }> = {};
      for (const [name, variable] of Object.entries(built.stored)) {
        arrays[name] = { data: await variable.data() as Float32Array, shape: variable.shape };
      }
      const state = { version: SOURCE_CACHE_VERSION, key, arch, training, cleanTrainAccuracy, trainSeconds };
      try {
        writeArrayFolder(folder, arrays, state);
      } catch (error) {
        // A concurrent writer's rename landed first (Linux refuses to rename onto a non-empty folder).
        if (!readEntry(folder, built, key)) throw error;
      }
    }
    return { model: built.model, key, fromCache: false, trainSeconds, cleanTrainAccuracy };
  } catch (error) {
    built.model.dispose();
    throw error;
  }
}

/** Throws a UsageError unless `images` holds whole 28×28 images, `batch` is a positive integer. */
function checkEvaluation(images: Float32Array, batch: number): number {
  if (!(images instanceof Float32Array) || images.length === 0 || images.length % PIXELS !== 0) {
    throw new UsageError(`images must be a non-empty Float32Array of [n, 28, 28, 1] values, got ${images?.length}`);
  }
  if (!Number.isInteger(batch) || batch < 1) throw new UsageError(`batch must be an integer ≥ 1, got ${batch}`);
  return images.length / PIXELS;
}

/**
 * Calls `each(values, start, rows)` with the values of `read(logits)` over consecutive batches of the images. The
 * values are read asynchronously: the WebGPU backend offers no synchronous read.
 */
async function forEachBatch(
  model: SourceClassifier,
  images: Float32Array,
  mode: NormMode | undefined,
  batch: number,
  read: (logits: tf.Tensor2D) => tf.Tensor,
  each: (values: tf.TypedArray, start: number, rows: number) => void,
): Promise<void> {
  const n = images.length / PIXELS;
  for (let start = 0; start < n; start += batch) {
    const rows = Math.min(batch, n - start);
    const out = tf.tidy(() => {
      const x = tf.tensor4d(images.subarray(start * PIXELS, (start + rows) * PIXELS), [rows, 28, 28, 1]);
      return read(model.logits(x, mode));
    });
    try {
      each(await out.data(), start, rows);
    } finally {
      out.dispose();
    }
  }
}

/**
 * Top-1 accuracy of `logits(x, mode)` over images `[n*784]` (`[n, 28, 28, 1]` row-major) with
 * labels `[n]`, in batches of `batch` (default 500). Under a "prior" mode with n images per group,
 * pass a batch that is a multiple of n.
 */
export async function accuracyOf(
  model: SourceClassifier,
  images: Float32Array,
  labels: Int32Array,
  mode?: NormMode,
  batch = 500,
): Promise<number> {
  const n = checkEvaluation(images, batch);
  if (!(labels instanceof Int32Array) || labels.length !== n) {
    throw new UsageError(`labels must be an Int32Array of ${n} classes, got ${labels?.length}`);
  }
  let correct = 0;
  await forEachBatch(model, images, mode, batch, (logits) => tf.argMax(logits, 1), (predicted, start, rows) => {
    for (let i = 0; i < rows; i++) if (predicted[i] === labels[start + i]) correct++;
  });
  return correct / n;
}

/** Softmax probabilities `[n, 10]` (row-major) of the model over images `[n*784]`, in batches (default 500). */
export async function probabilitiesOf(
  model: SourceClassifier,
  images: Float32Array,
  mode?: NormMode,
  batch = 500,
): Promise<Float32Array> {
  const n = checkEvaluation(images, batch);
  const out = new Float32Array(n * MNIST_CLASSES);
  await forEachBatch(model, images, mode, batch, (logits) => tf.softmax(logits), (values, start) => {
    out.set(values as Float32Array, start * MNIST_CLASSES);
  });
  return out;
}
