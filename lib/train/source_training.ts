/**
 * Training and caching of the source classifiers (lib/adapt/source_model.ts describes them): each is
 * trained once on clean MNIST digits with Adam by {@linkcode trainClassifier} and kept on disk, so every
 * experiment and every preset adapts the same weights.
 *
 * A cache entry is a folder `<cacheRoot>/<key>/` of npy arrays, state.json and a manifest of their
 * SHA-256 hashes and the training's, written by the run store's array-folder writer (temp folder,
 * then rename). Reading checks the hashes, every array (names, shapes, finite values) and the state
 * before any weight is assigned; an entry that fails, or has no manifest, is trained again.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { readArrayFolder, writeArrayFolder } from "../core/run_checkpoints.ts";
import type { NpyArray } from "../core/npy.ts";
import { loadMnist, MNIST_CLASSES } from "../data/mnist.ts";
import { BN_CNN_SIDE, bnCnn } from "../models/bn_cnn.ts";
import { Mlp } from "../models/mlp.ts";
import { Params } from "../models/params.ts";
import {
  accuracyOf,
  DEFAULT_SOURCE_CACHE,
  type LoadedSourceModel,
  SOURCE_CACHE_VERSION,
  SOURCE_MLP_HIDDEN,
  type SourceArch,
  type SourceClassifier,
  sourceModelKey,
  type SourceModelOptions,
  type SourceTraining,
} from "../adapt/source_model.ts";
import { trainClassifier } from "./classifier.ts";

const PIXELS = BN_CNN_SIDE * BN_CNN_SIDE;

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

/** What a cache entry's manifest records as its config: everything its weights depend on. */
function entryConfig(arch: SourceArch, training: SourceTraining): unknown {
  return { arch, training, version: SOURCE_CACHE_VERSION };
}

/** A cache folder's checked arrays and state, or why it cannot be used (null when there is no folder). */
function readEntry(
  folder: string,
  built: Built,
  key: string,
  config: unknown,
): { arrays: Record<string, NpyArray>; json: Record<string, unknown> } | { problem: string } | null {
  let entry;
  try {
    entry = readArrayFolder(folder, { config });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !exists(folder)) return null;
    // A missing file, a file unlike its hash, a truncated npy, an unparsable state.json.
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  // A cache is cheap to rebuild: an entry whose content cannot be checked is not trusted.
  if (!entry.checked) return { problem: "it has no manifest of content hashes" };
  const problem = entryProblem(entry.arrays, entry.json, built, key);
  return problem === null ? entry : { problem };
}

/** Whether anything is at `path`. */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether {@linkcode readEntry} found a usable entry. */
const isEntry = (read: ReturnType<typeof readEntry>) => read !== null && !("problem" in read);

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
  const optimizer = tf.train.adam(training.lr, 0.9, 0.999, 1e-8);
  // The epoch's losses are summed on the device, in step order, and read once per epoch.
  let total = null as tf.Scalar | null;
  try {
    await trainClassifier({
      images,
      labels,
      shape: [BN_CNN_SIDE, BN_CNN_SIDE, 1],
      logits: (x) => built.trainLogits(x),
      variables: built.trainable,
      optimizer,
      rng: Rng.derive(training.seed, "source-model-order"),
      batch: training.batch,
      epochs: training.epochs,
      signal: options.signal,
      afterStep: (_step, loss) => {
        const previous = total ?? tf.scalar(0);
        total = tf.add(previous, loss) as tf.Scalar;
        previous.dispose();
      },
      afterEpoch: async (epoch, steps) => {
        const sum = (await total!.data())[0];
        total!.dispose();
        total = null;
        options.onEpoch?.(epoch, sum / steps);
      },
    });
  } finally {
    total?.dispose();
    optimizer.dispose();
  }
}

/**
 * Trains the source model once and caches it in `<cacheRoot>/<key>/` (npy arrays + state.json +
 * manifest of hashes, written to a temp folder then renamed); a cache entry that is missing a file or
 * its manifest, differs from its hashes, has wrong shapes or non-finite values is rebuilt, with a
 * one-line note to `options.report`. cacheRoot defaults to "data/cache/tta". Bit-identical weights
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
  const config = entryConfig(arch, training);
  const built = buildSource(arch, training.seed);
  try {
    const cached = readEntry(folder, built, key, config);
    if (cached && "problem" in cached) {
      (options.report ?? console.error)(`source model cache ${folder} refused (${cached.problem}); training it again`);
    } else if (cached) {
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
    if (!isEntry(readEntry(folder, built, key, config))) {
      const arrays: Record<string, { data: Float32Array; shape: number[] }> = {};
      for (const [name, variable] of Object.entries(built.stored)) {
        arrays[name] = { data: await variable.data() as Float32Array, shape: variable.shape };
      }
      const state = { version: SOURCE_CACHE_VERSION, key, arch, training, cleanTrainAccuracy, trainSeconds };
      try {
        writeArrayFolder(folder, arrays, state, { config });
      } catch (error) {
        // A concurrent writer's rename landed first (Linux refuses to rename onto a non-empty folder).
        if (!isEntry(readEntry(folder, built, key, config))) throw error;
      }
    }
    return { model: built.model, key, fromCache: false, trainSeconds, cleanTrainAccuracy };
  } catch (error) {
    built.model.dispose();
    throw error;
  }
}
