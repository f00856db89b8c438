/**
 * The small MNIST CNN of `small_cnn.ts` with a normalisation layer after each convolution,
 * before its ReLU (Schneider2023 Ch. 2–4): BatchNorm with the test-time modes of BN
 * adaptation (source statistics, the batch's own, a source prior mixed with the statistics of
 * each run of n images, given statistics), GroupNorm (8 groups) or none. Input `[batch, 28, 28, 1]`.
 *
 * BatchNorm follows torch `BatchNorm2d` (ε 1e-5; training: the biased batch variance normalises,
 * the unbiased one enters the running variance, momentum 0.1); the prior mode follows
 * bethgelab/robustness `robusta/batchnorm/bn.py` `BayesianBatchNorm`.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { batchNormOnBatch, normalizeAffine } from "../core/kernels/batch_norm.ts";
import type { Rng } from "../core/rng.ts";
import { applyBatchMoments, type BatchMoments } from "./conv_bn.ts";
import { Params } from "./params.ts";

/** torch BatchNorm2d / GroupNorm default ε, added to the variance. */
export const NORM_EPS = 1e-5;
/** torch BatchNorm2d's momentum of the running statistics. */
export const BN_MOMENTUM = 0.1;
/** Groups of the GroupNorm twin. */
export const GN_GROUPS = 8;
/** Channels of the norm layers bn0 (after conv0) and bn1 (after conv1). */
export const NORM_CHANNELS: readonly number[] = [32, 64];
/** Image side the network takes. */
export const BN_CNN_SIDE = 28;

/** Which normalisation follows each convolution. */
export type NormKind = "batch" | "group" | "none";

/** Per norm layer (bn0 after conv0, bn1 after conv1), per channel. */
export interface NormStats {
  /** Per layer, the per-channel means. */
  mean: Float32Array[];
  /** Per layer, the per-channel variances. */
  variance: Float32Array[];
}

/** How BatchNorm layers normalise in a forward pass. */
export type NormMode =
  /** The stored source statistics bn{i}/mean|var (torch eval mode). */
  | { kind: "source" }
  /** This batch's own statistics, biased variance (torch train-mode BN, Tent); gradients flow through them. */
  | { kind: "batch" }
  /**
   * BayesianBatchNorm: each consecutive run of n images is normalised with λμ_s + (1−λ)μ_t and
   * λσ²_s + (1−λ)σ²_t, λ = N/(N+n), σ²_t unbiased; N = Infinity means source. When n does not
   * divide the batch, the last b mod n images are normalised on their own statistics with the
   * same λ (the reference's last short DataLoader batch).
   */
  | { kind: "prior"; N: number; n: number }
  /** Given statistics. */
  | { kind: "fixed"; stats: NormStats };

/** Bit-exact copy of a {@linkcode BnCnn}'s parameters and statistics (tensors sharing their data). */
export interface BnCnnSnapshot {
  /** "params/<key>" and "stats/<key>" → saved value. */
  readonly tensors: ReadonlyMap<string, tf.Tensor>;
  /** Frees the saved tensors. */
  dispose(): void;
}

/** The network, its statistics and its forward maps. */
export interface BnCnn {
  /** conv0/w, conv0/b, bn0/gamma, bn0/beta, conv1/…, bn1/…, fc0/w, fc0/b, fc1/w, fc1/b ("none": no bn keys). */
  params: Params;
  /** bn{i}/mean, bn{i}/var: source statistics (not trainable; empty unless norm is "batch"). */
  stats: Params;
  /** Its normalisation layer kind. */
  norm: NormKind;
  /** Logits `[batch, classes]`; `mode` defaults to source; GroupNorm and "none" ignore it. */
  logits(x: tf.Tensor4D, mode?: NormMode): tf.Tensor2D;
  /** Training forward: batch statistics normalise, the running source statistics move (momentum 0.1, unbiased variance). */
  trainLogits(x: tf.Tensor4D): tf.Tensor2D;
  /** bn{i}/gamma|beta (GroupNorm: its gamma|beta; "none": empty). */
  affineParams(): tf.Variable[];
  /** Every trainable parameter (not the statistics). */
  allParams(): tf.Variable[];
  /** fc1/w, fc1/b. */
  lastLayerParams(): tf.Variable[];
  /** Bit-exact copy of params and stats. */
  snapshot(): BnCnnSnapshot;
  /** Puts back what {@linkcode snapshot} saved (the snapshot stays valid until disposed). */
  restore(snapshot: BnCnnSnapshot): void;
  /** Frees its parameters and statistics. */
  dispose(): void;
}

/** One BatchNorm layer's tensors: affine parameters and the reference statistics (source or given). */
export interface BatchNormLayer {
  /** Scale `[channels]`. */
  gamma: tf.Tensor1D;
  /** Shift `[channels]`. */
  beta: tf.Tensor1D;
  /** Mean that normalises the layer's input `[channels]`. */
  mean: tf.Tensor1D;
  /** Variance that normalises the layer's input `[channels]` (ε is added on use). */
  variance: tf.Tensor1D;
}

/** The modes one BatchNorm layer knows; "fixed" reaches it as "source" with the given statistics. */
export type LayerNormMode = Exclude<NormMode, { kind: "fixed" }>;

/** The prior weight λ = N/(N+n) of the source statistics (1 for N = ∞). */
export function priorWeight(N: number, n: number): number {
  return N === Infinity ? 1 : N / (N + n);
}

/** Throws a UsageError unless `mode` is a valid {@linkcode NormMode} (statistics of 32 and 64 channels). */
export function checkNormMode(mode: NormMode): void {
  switch (mode.kind) {
    case "source":
    case "batch":
      return;
    case "prior":
      if (!(mode.N >= 0)) throw new UsageError(`prior N must be a number ≥ 0 or Infinity, got ${mode.N}`);
      if (!Number.isInteger(mode.n) || mode.n < 1) {
        throw new UsageError(`prior n must be an integer ≥ 1 (images per statistics group), got ${mode.n}`);
      }
      return;
    case "fixed":
      checkNormStats(mode.stats);
      return;
    default:
      throw new UsageError(
        `unknown norm mode ${JSON.stringify(mode)}; allowed: source, batch, prior {N, n}, fixed {stats}`,
      );
  }
}

/** Throws a UsageError unless `stats` holds finite means and variances ≥ 0 for 32 and 64 channels. */
export function checkNormStats(stats: NormStats): void {
  const layers = NORM_CHANNELS.length;
  if (stats.mean?.length !== layers || stats.variance?.length !== layers) {
    throw new UsageError(`norm statistics need ${layers} layers of mean and variance`);
  }
  NORM_CHANNELS.forEach((channels, i) => {
    const mean = stats.mean[i], variance = stats.variance[i];
    if (mean.length !== channels || variance.length !== channels) {
      throw new UsageError(
        `norm statistics of layer ${i} need ${channels} channels, got ${mean.length}/${variance.length}`,
      );
    }
    for (let c = 0; c < channels; c++) {
      if (!Number.isFinite(mean[c]) || !(variance[c] >= 0) || variance[c] === Infinity) {
        throw new UsageError(`norm statistics of layer ${i}, channel ${c}: mean must be finite and variance ≥ 0`);
      }
    }
  });
}

/** Identity whose gradient is zero: the prior's target statistics are buffers without gradient, as in the reference. */
const detach = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
  value: (args[0] as tf.Tensor).clone(),
  gradFunc: (dy: tf.Tensor | tf.Tensor[]) => tf.zerosLike(dy as tf.Tensor),
}));

/**
 * Prior-mode BatchNorm on `x` `[b, h, w, c]`: images [k·n, (k+1)·n) form group k; each group's
 * unbiased target moments (over n·h·w values per channel) are mixed with the layer's statistics
 * by λ = N/(N+n). All groups in one pass through a `[b/n, n·h·w, c]` view. When n does not
 * divide b, the last b mod n images are normalised on their own moments with the same λ, as the
 * reference does for a DataLoader's last short batch (its prior is fixed when the model is built).
 */
function priorNorm(x: tf.Tensor4D, layer: BatchNormLayer, N: number, n: number): tf.Tensor4D {
  const [b, h, w, c] = x.shape;
  const lambda = priorWeight(N, n);
  if (lambda === 1) {
    return normalizeAffine(x, layer.mean, layer.variance, layer.gamma, layer.beta, NORM_EPS) as tf.Tensor4D;
  }
  const normalizeRun = (images: tf.Tensor4D, groups: number, size: number): tf.Tensor4D => {
    const count = size * h * w;
    if (count < 2) throw new UsageError(`prior mode needs ≥ 2 values per channel and group, got ${count}`);
    const grouped = tf.reshape(images, [groups, count, c]);
    const moments = tf.moments(grouped, 1, true);
    const targetMean = detach(moments.mean);
    const targetVar = detach(tf.mul(moments.variance, count / (count - 1)));
    const mean = tf.add(tf.mul(layer.mean, lambda), tf.mul(targetMean, 1 - lambda));
    const variance = tf.add(tf.mul(layer.variance, lambda), tf.mul(targetVar, 1 - lambda));
    const normalized = normalizeAffine(grouped, mean, variance, layer.gamma, layer.beta, NORM_EPS);
    return tf.reshape(normalized, [groups * size, h, w, c]);
  };
  const groups = Math.floor(b / n), rest = b - groups * n;
  if (rest === 0) return normalizeRun(x, groups, n);
  const tail = normalizeRun(tf.slice(x, [groups * n, 0, 0, 0], [rest, h, w, c]), 1, rest);
  if (groups === 0) return tail;
  const head = normalizeRun(tf.slice(x, [0, 0, 0, 0], [groups * n, h, w, c]), groups, n);
  return tf.concat([head, tail], 0);
}

/**
 * One BatchNorm layer on `x` `[b, h, w, c]` → `[b, h, w, c]`, in inference: "source" uses
 * `layer.mean|variance`, "batch" the batch's biased moments (differentiable), "prior" the
 * BayesianBatchNorm mixing (target moments carry no gradient).
 */
export function batchNorm2d(x: tf.Tensor4D, layer: BatchNormLayer, mode: LayerNormMode): tf.Tensor4D {
  return tf.tidy(() => {
    switch (mode.kind) {
      case "source":
        return normalizeAffine(x, layer.mean, layer.variance, layer.gamma, layer.beta, NORM_EPS) as tf.Tensor4D;
      case "batch":
        return batchNormOnBatch(x, layer.gamma, layer.beta, NORM_EPS).y;
      case "prior":
        return priorNorm(x, layer, mode.N, mode.n);
    }
  });
}

/**
 * Training-mode BatchNorm (torch `BatchNorm2d.train()`): normalises `x` `[b, h, w, c]` by its
 * biased batch moments (differentiable) and appends them, kept, to `moments` under `key`, for
 * `applyBatchMoments` (conv_bn.ts: momentum 0.1 toward the batch mean and unbiased variance).
 */
export function batchNorm2dTrain(
  x: tf.Tensor4D,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  moments: BatchMoments[],
  key: string,
): tf.Tensor4D {
  return tf.tidy(() => {
    const { y, mean, variance } = batchNormOnBatch(x, gamma, beta, NORM_EPS);
    const count = x.shape[0] * x.shape[1] * x.shape[2];
    moments.push({ key, mean: tf.keep(mean), variance: tf.keep(variance), count });
    return y;
  });
}

/**
 * GroupNorm (torch `nn.GroupNorm`, ε 1e-5) on `x` `[b, h, w, c]`: each image's channels split
 * into `groups` consecutive groups, normalised by their biased moments over h·w·c/groups values,
 * then the per-channel affine map.
 */
export function groupNorm(x: tf.Tensor4D, gamma: tf.Tensor1D, beta: tf.Tensor1D, groups = GN_GROUPS): tf.Tensor4D {
  const [b, h, w, c] = x.shape;
  if (c % groups !== 0) throw new UsageError(`GroupNorm needs channels (${c}) divisible by groups (${groups})`);
  return tf.tidy(() => {
    const grouped = tf.reshape(x, [b, h * w, groups, c / groups]);
    const { mean, variance } = tf.moments(grouped, [1, 3], true);
    const normalized = tf.reshape(tf.mul(tf.sub(grouped, mean), tf.rsqrt(tf.add(variance, NORM_EPS))), x.shape);
    return tf.add(tf.mul(normalized, gamma), beta) as tf.Tensor4D;
  });
}

/** Throws a UsageError unless `x` is `[b ≥ 1, 28, 28, 1]`. */
function checkInput(x: tf.Tensor4D): void {
  const [b, h, w, c] = x.shape;
  if (x.rank !== 4 || !(b >= 1) || h !== BN_CNN_SIDE || w !== BN_CNN_SIDE || c !== 1) {
    throw new UsageError(`bnCnn takes images [n, 28, 28, 1], got [${x.shape.join(", ")}]`);
  }
}

/** Applies norm layer `i` to the conv output `h`. */
type NormLayerFn = (h: tf.Tensor4D, i: number) => tf.Tensor4D;

/**
 * The forward pass: conv → norm → ReLU → pool, twice, then fc0 ReLU, fc1. With `stopAt` it
 * returns the input of norm layer `stopAt` (the conv output `[b, h, w, c]`) instead.
 */
function forward(params: Params, x: tf.Tensor4D, norm: NormLayerFn, stopAt?: number): tf.Tensor {
  const p = (key: string) => params.get(key);
  let h = x;
  for (let i = 0; i < NORM_CHANNELS.length; i++) {
    h = tf.add(tf.conv2d(h, p(`conv${i}/w`) as tf.Tensor4D, 1, "same"), p(`conv${i}/b`));
    if (stopAt === i) return h;
    h = tf.maxPool(tf.relu(norm(h, i)), 2, 2, "valid");
  }
  const flat = tf.reshape(h, [x.shape[0], 7 * 7 * 64]);
  const hidden = tf.relu(tf.add(tf.matMul(flat, p("fc0/w")), p("fc0/b")));
  return tf.add(tf.matMul(hidden, p("fc1/w")), p("fc1/b"));
}

/** The norm-layer function of `model` under `mode` (fixed statistics become tensors here, inside the caller's tidy). */
function normLayers(model: BnCnn, mode: NormMode): NormLayerFn {
  const p = (key: string) => model.params.get(key) as tf.Tensor1D;
  if (model.norm === "none") return (h) => h;
  if (model.norm === "group") return (h, i) => groupNorm(h, p(`bn${i}/gamma`), p(`bn${i}/beta`));
  checkNormMode(mode);
  return (h, i) => {
    const statistics = mode.kind === "fixed"
      ? { mean: tf.tensor1d(mode.stats.mean[i]), variance: tf.tensor1d(mode.stats.variance[i]) }
      : { mean: model.stats.get(`bn${i}/mean`) as tf.Tensor1D, variance: model.stats.get(`bn${i}/var`) as tf.Tensor1D };
    const layer = { gamma: p(`bn${i}/gamma`), beta: p(`bn${i}/beta`), ...statistics };
    return batchNorm2d(h, layer, mode.kind === "fixed" ? { kind: "source" } : mode);
  };
}

/**
 * The input of norm layer `layer` (0 or 1): the conv output `[b, 28, 28, 32]` or `[b, 14, 14, 64]`
 * of images `x` `[b, 28, 28, 1]`, with the earlier norm layers under `mode`.
 */
export function normInput(
  model: BnCnn,
  x: tf.Tensor4D,
  layer: number,
  mode: NormMode = { kind: "source" },
): tf.Tensor4D {
  checkInput(x);
  if (!Number.isInteger(layer) || layer < 0 || layer >= NORM_CHANNELS.length) {
    throw new UsageError(`norm layer must be 0 or 1, got ${layer}`);
  }
  return tf.tidy(() => forward(model.params, x, normLayers(model, mode), layer) as tf.Tensor4D);
}

/** The model's source statistics as arrays (read asynchronously, GPU-safe). */
export async function sourceStats(model: BnCnn): Promise<NormStats> {
  if (model.norm !== "batch") {
    throw new UsageError(`only a BatchNorm model has statistics, this one has "${model.norm}"`);
  }
  const mean: Float32Array[] = [], variance: Float32Array[] = [];
  for (let i = 0; i < NORM_CHANNELS.length; i++) {
    mean.push(await model.stats.get(`bn${i}/mean`).data() as Float32Array);
    variance.push(await model.stats.get(`bn${i}/var`).data() as Float32Array);
  }
  return { mean, variance };
}

/**
 * Builds the network: `smallCnn`'s layers and initialisation (same generator draws, so
 * norm "none" has smallCnn's weights), γ = 1, β = 0, source mean 0 and variance 1.
 */
export function bnCnn(rng: Rng, options: { norm: NormKind; classes?: number }): BnCnn {
  const { norm } = options, classes = options.classes ?? 10;
  if (!["batch", "group", "none"].includes(norm)) {
    throw new UsageError(`norm must be one of batch, group, none; got ${JSON.stringify(norm)}`);
  }
  if (!Number.isInteger(classes) || classes < 2) throw new UsageError(`classes must be an integer ≥ 2, got ${classes}`);
  const params = new Params(), stats = new Params();
  const conv = [[1, 32], [32, 64]];
  conv.forEach(([inputs, outputs], i) => {
    params.addGlorotUniform(rng, `conv${i}/w`, [3, 3, inputs, outputs], 9 * inputs, 9 * outputs);
    params.addZeros(`conv${i}/b`, [outputs]);
    if (norm === "none") return;
    params.add(`bn${i}/gamma`, new Float32Array(outputs).fill(1), [outputs]);
    params.addZeros(`bn${i}/beta`, [outputs]);
    if (norm !== "batch") return;
    // Statistics move by assignment only; untrainable, an optimizer without a var list skips them.
    stats.addZeros(`bn${i}/mean`, [outputs]).trainable = false;
    stats.add(`bn${i}/var`, new Float32Array(outputs).fill(1), [outputs]).trainable = false;
  });
  params.addNormal(rng, "fc0/w", 7 * 7 * 64, 128, Math.SQRT2);
  params.addZeros("fc0/b", [128]);
  params.addNormal(rng, "fc1/w", 128, classes, 1);
  params.addZeros("fc1/b", [classes]);

  const affineKeys = norm === "none" ? [] : ["bn0/gamma", "bn0/beta", "bn1/gamma", "bn1/beta"];
  const model: BnCnn = {
    params,
    stats,
    norm,
    logits: (x, mode = { kind: "source" }) => {
      checkInput(x);
      return tf.tidy(() => forward(params, x, normLayers(model, mode)) as tf.Tensor2D);
    },
    trainLogits: (x) => {
      checkInput(x);
      if (norm !== "batch") return model.logits(x);
      const moments: BatchMoments[] = [];
      const out = tf.tidy(() =>
        forward(params, x, (h, i) => {
          const p = (key: string) => params.get(key) as tf.Tensor1D;
          return batchNorm2dTrain(h, p(`bn${i}/gamma`), p(`bn${i}/beta`), moments, `bn${i}`);
        }) as tf.Tensor2D
      );
      applyBatchMoments(stats, moments);
      return out;
    },
    affineParams: () => affineKeys.map((key) => params.get(key)),
    allParams: () => params.list(),
    lastLayerParams: () => [params.get("fc1/w"), params.get("fc1/b")],
    snapshot: () => {
      // tf.clone shares the data buffer: the copy is exact and costs no memory until a variable moves on.
      const tensors = new Map<string, tf.Tensor>([
        ...Object.entries(params.entries("params/")),
        ...Object.entries(stats.entries("stats/")),
      ].map(([key, variable]) => [key, tf.clone(variable)]));
      return { tensors, dispose: () => tf.dispose([...tensors.values()]) };
    },
    restore: (snapshot) => {
      for (
        const [key, variable] of [
          ...Object.entries(params.entries("params/")),
          ...Object.entries(stats.entries("stats/")),
        ]
      ) {
        const saved = snapshot.tensors.get(key);
        if (!saved) throw new UsageError(`snapshot lacks "${key}"; it belongs to another model`);
        (variable as tf.Variable).assign(saved);
      }
    },
    dispose: () => {
      params.dispose();
      stats.dispose();
    },
  };
  return model;
}
