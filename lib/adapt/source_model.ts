/**
 * The source classifiers that test-time adaptation starts from (Schneider2023 Ch. 2–4):
 * the BatchNorm CNN, its GroupNorm twin and a reference MLP 784-256-10, trained once on clean MNIST
 * digits with Adam and cached on disk (lib/train/source_training.ts), so every experiment and every
 * preset adapts the same weights. Here: their settings, cache key and evaluation.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { integer, type NumberParam } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { MNIST_CLASSES, MNIST_TRAIN_TOTAL } from "../data/mnist.ts";
import { accuracy } from "../metrics/classification.ts";
import { BN_CNN_SIDE, type BnCnn, type NormMode } from "../models/bn_cnn.ts";

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

/** The MNIST parts of the adaptation experiments' smoke presets: one small source model, cached once, serves all. */
export const SOURCE_SMOKE_DIGITS = { train_digits: 512, test_digits: 256 } as const;

/**
 * The config entry of the source models' epochs, shared by every experiment that adapts them, so that the same
 * setting reaches the same cache key everywhere.
 */
export const SOURCE_EPOCHS_CONFIG: NumberParam = integer(
  SOURCE_TRAINING_DEFAULTS.epochs,
  "Adam epochs of the source models (trained once per setting, then cached)",
  { min: 1, max: 1_000 },
);

/** Bumped whenever training or the stored layout changes, so older entries are never read. */
export const SOURCE_CACHE_VERSION = 2;

/** Where entries live unless the caller says otherwise. */
export const DEFAULT_SOURCE_CACHE = "data/cache/tta";

/** Hidden units of the reference MLP. */
export const SOURCE_MLP_HIDDEN = 256;

const PIXELS = BN_CNN_SIDE * BN_CNN_SIDE;

/** A trained source classifier on `[b, 28, 28, 1]` inputs in [0, 1]. */
export interface SourceClassifier {
  /** Its architecture. */
  arch: SourceArch;
  /** The BnCnn for "bn" and "gn" (adapters use it directly); null for "mlp". */
  net: BnCnn | null;
  /** Logits `[b, 10]`; `mode` applies to "bn" only (others ignore it); default source statistics. */
  logits(x: tf.Tensor4D, mode?: NormMode): tf.Tensor2D;
  /** Frees its weights. */
  dispose(): void;
}

/** What `loadSourceModel` (lib/train/source_training.ts) returns. */
export interface LoadedSourceModel {
  /** The classifier. */
  model: SourceClassifier;
  /** Cache key (folder name), e.g. "bn-mnist-idx-d8000-s0-e3-lr0.001-b128-v1". */
  key: string;
  /** Whether it was read from the cache rather than trained now. */
  fromCache: boolean;
  /** Seconds spent training now; 0 when loaded from the cache. */
  trainSeconds: number;
  /** Top-1 accuracy on the training digits after training (source statistics). */
  cleanTrainAccuracy: number;
}

/** Options of `loadSourceModel` (lib/train/source_training.ts). */
export interface SourceModelOptions {
  /** Folder of the cache entries (default {@linkcode DEFAULT_SOURCE_CACHE}). */
  cacheRoot?: string;
  /** Called after each training epoch with its mean minibatch loss (not called on a cache hit). */
  onEpoch?: (epoch: number, loss: number) => void;
  /** Checked before each training step; training stops with its reason when it aborts. */
  signal?: AbortSignal;
  /** Where the one-line note of a refused (damaged) cache entry goes (default: stderr). */
  report?: (line: string) => void;
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

/** Throws a UsageError unless `images` holds whole 28×28 images, `batch` is a positive integer. */
function checkEvaluation(images: Float32Array, batch: number): number {
  if (!(images instanceof Float32Array) || images.length === 0 || images.length % PIXELS !== 0) {
    throw new UsageError(`images must be a non-empty Float32Array of [n, 28, 28, 1] values, got ${images?.length}`);
  }
  if (!Number.isInteger(batch) || batch < 1) throw new UsageError(`batch must be an integer ≥ 1, got ${batch}`);
  return images.length / PIXELS;
}

/**
 * Fills `out` (row-major, `out.length / n` values per image) with `read(logits)` over consecutive batches of the
 * images. The values are read asynchronously: the WebGPU backend offers no synchronous read.
 */
async function readBatched(
  model: SourceClassifier,
  images: Float32Array,
  mode: NormMode | undefined,
  batch: number,
  read: (logits: tf.Tensor2D) => tf.Tensor,
  out: Int32Array | Float32Array,
): Promise<void> {
  const n = images.length / PIXELS, width = out.length / n;
  for (let start = 0; start < n; start += batch) {
    const rows = Math.min(batch, n - start);
    const values = tf.tidy(() => {
      const x = tf.tensor4d(images.subarray(start * PIXELS, (start + rows) * PIXELS), [rows, 28, 28, 1]);
      return read(model.logits(x, mode));
    });
    try {
      out.set(await values.data(), start * width);
    } finally {
      values.dispose();
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
  const predicted = new Int32Array(n);
  await readBatched(model, images, mode, batch, (logits) => tf.argMax(logits, 1), predicted);
  return accuracy(predicted, labels);
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
  await readBatched(model, images, mode, batch, (logits) => tf.softmax(logits), out);
  return out;
}
