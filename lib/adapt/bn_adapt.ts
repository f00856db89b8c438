/**
 * Batch-norm adaptation (Schneider2023 Ch. 2; Schneider et al. 2020, eq. 2.3 / App.
 * eq. A.8): the source-prior mix of BN statistics, and "full" target statistics of all images
 * of a domain, estimated stage by stage as the analysis of App. A does.
 *
 * The per-batch forward with the prior is `bnCnn`'s `{ kind: "prior", N, n }` mode
 * (lib/models/bn_cnn.ts); this file works on statistics as arrays.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import {
  BN_CNN_SIDE,
  type BnCnn,
  checkNormMode,
  NORM_CHANNELS,
  normInput,
  type NormStats,
  priorWeight,
  sourceStats,
} from "../models/bn_cnn.ts";

/**
 * The source-prior estimate of eq. A.8, per layer and channel: μ̄ = λμ_s + (1−λ)μ_t and
 * σ̄² = λσ²_s + (1−λ)σ²_t with λ = N/(N+n) (N = ∞: the source statistics). `target` holds the
 * statistics of n images (unbiased variance, as robusta's momentum-1 BatchNorm keeps them).
 */
export function priorStats(source: NormStats, target: NormStats, N: number, n: number): NormStats {
  checkNormMode({ kind: "prior", N, n });
  const layers = source.mean.length;
  if (source.variance.length !== layers || target.mean.length !== layers || target.variance.length !== layers) {
    throw new UsageError(`source and target statistics need the same layers, got ${layers} and ${target.mean.length}`);
  }
  const lambda = priorWeight(N, n);
  const mix = (s: Float32Array, t: Float32Array, what: string) => {
    if (s.length !== t.length) throw new UsageError(`${what}: ${s.length} source channels but ${t.length} target`);
    // λ = 1 must give the source values exactly, whatever the target holds.
    return lambda === 1 ? s.slice() : s.map((value, c) => lambda * value + (1 - lambda) * t[c]);
  };
  return {
    mean: source.mean.map((s, i) => mix(s, target.mean[i], `layer ${i} mean`)),
    variance: source.variance.map((s, i) => mix(s, target.variance[i], `layer ${i} variance`)),
  };
}

/** Running count, mean and sum of squared deviations per channel (Chan et al.'s parallel update, float64). */
class ChannelMoments {
  count = 0;
  readonly mean: Float64Array;
  readonly m2: Float64Array;

  constructor(channels: number) {
    this.mean = new Float64Array(channels);
    this.m2 = new Float64Array(channels);
  }

  /** Merges a batch's `count` values per channel with mean `mean` and biased variance `variance`. */
  add(count: number, mean: Float32Array, variance: Float32Array): void {
    const total = this.count + count;
    for (let c = 0; c < this.mean.length; c++) {
      const delta = mean[c] - this.mean[c];
      this.mean[c] += delta * count / total;
      this.m2[c] += variance[c] * count + delta * delta * this.count * count / total;
    }
    this.count = total;
  }

  /** Mean and unbiased variance as float32. */
  result(): { mean: Float32Array; variance: Float32Array } {
    return { mean: Float32Array.from(this.mean), variance: Float32Array.from(this.m2, (s) => s / (this.count - 1)) };
  }
}

/**
 * A network whose BatchNorm layers can be estimated one after another: the channels of each norm
 * layer in forward order, the input of layer l with the layers before l normalised by given
 * statistics, and the network's own (source) statistics.
 */
export interface StagedNormModel {
  /** Channels of each norm layer, in forward order. */
  readonly normChannels: readonly number[];
  /** The input of norm layer `layer`, the layers before it normalised by `stats`. */
  normInput(x: tf.Tensor4D, layer: number, stats: NormStats): tf.Tensor4D;
  /** The network's own (source) statistics. */
  sourceStats(): Promise<NormStats>;
}

/**
 * "Full" target statistics of a staged BN model on `n` images, stage by stage as App. A's
 * analysis does: layer l's per-channel mean and unbiased variance over every image, with the
 * layers before l normalised by their already estimated full statistics. `images(start, size)`
 * gives the batch [start, start + size) as a tensor the caller's tidy owns; per-batch float32
 * moments merge in float64, so the result does not depend on `batch` beyond rounding.
 */
export async function stagedFullStats(
  model: StagedNormModel,
  images: (start: number, size: number) => tf.Tensor4D,
  n: number,
  batch = 256,
): Promise<NormStats> {
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`image count n must be an integer ≥ 1, got ${n}`);
  if (!Number.isInteger(batch) || batch < 1) throw new UsageError(`batch must be an integer ≥ 1, got ${batch}`);
  // Layers from l on are not read while layer l is estimated; the source values fill them.
  const stats = await model.sourceStats();
  for (let layer = 0; layer < model.normChannels.length; layer++) {
    const moments = new ChannelMoments(model.normChannels[layer]);
    for (let start = 0; start < n; start += batch) {
      const size = Math.min(batch, n - start);
      let count = 0;
      const [mean, variance] = tf.tidy(() => {
        const h = model.normInput(images(start, size), layer, stats);
        count = size * h.shape[1] * h.shape[2];
        const m = tf.moments(h, [0, 1, 2]);
        return [m.mean, m.variance];
      });
      moments.add(count, await mean.data() as Float32Array, await variance.data() as Float32Array);
      tf.dispose([mean, variance]);
    }
    const result = moments.result();
    stats.mean[layer] = result.mean;
    stats.variance[layer] = result.variance;
  }
  return stats;
}

/**
 * "Full" target statistics of the BN MNIST CNN on all `n` images (`[n, 28, 28, 1]` flattened,
 * values in [0, 1]): {@linkcode stagedFullStats} in batches of `batch` images.
 */
export function fullStats(model: BnCnn, images: Float32Array, n: number, batch = 256): Promise<NormStats> {
  if (model.norm !== "batch") {
    throw new UsageError(`full statistics need a BatchNorm model, this one has "${model.norm}"`);
  }
  const pixels = BN_CNN_SIDE * BN_CNN_SIDE;
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`image count n must be an integer ≥ 1, got ${n}`);
  if (images.length !== n * pixels) {
    throw new UsageError(`images must be [${n}, 28, 28, 1] (${n * pixels} values), got ${images.length} values`);
  }
  for (let i = 0; i < images.length; i++) {
    if (!(images[i] >= 0 && images[i] <= 1)) {
      throw new UsageError(`image values must lie in [0, 1], got ${images[i]} at index ${i}`);
    }
  }
  if (!Number.isInteger(batch) || batch < 1) throw new UsageError(`batch must be an integer ≥ 1, got ${batch}`);
  const staged: StagedNormModel = {
    normChannels: NORM_CHANNELS,
    normInput: (x, layer, stats) => normInput(model, x, layer, { kind: "fixed", stats }),
    sourceStats: () => sourceStats(model),
  };
  const batchOf = (start: number, size: number) =>
    tf.tensor4d(images.subarray(start * pixels, (start + size) * pixels), [size, 28, 28, 1]);
  return stagedFullStats(staged, batchOf, n, batch);
}
