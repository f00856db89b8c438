/**
 * Stacks of valid convolutions (or transposed convolutions) with BatchNorm and ELU, as the ABS
 * reference networks build them (AnalysisBySynthesis `nets.py`), and BatchNorm's training-mode
 * bookkeeping with torch's semantics: batch moments normalise in training, the unbiased variance
 * enters the running statistics with momentum 0.1.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { batchNormOnBatch } from "../core/kernels/batch_norm.ts";
import type { Rng } from "../core/rng.ts";
import type { Params } from "./params.ts";

/** torch's BatchNorm2d defaults, as the reference networks use them. */
const BN_MOMENTUM = 0.1;
/** torch's BatchNorm2d ε, added to the variance. */
export const BN_EPSILON = 1e-5;

/** One batch's moments of a BatchNorm layer, recorded by a training-mode forward pass. */
export interface BatchMoments {
  /** Key of the layer in the network's `stats` ("enc0"). */
  key: string;
  /** Batch mean per channel `[maps]`. */
  mean: tf.Tensor1D;
  /** Biased batch variance (the one that normalised the batch). */
  variance: tf.Tensor1D;
  /** Values per channel that the moments averaged. */
  count: number;
}

/** How a forward pass runs. */
export interface ForwardOptions {
  /**
   * Training mode: BatchNorm normalises by batch moments and appends them here (kept tensors,
   * for {@linkcode applyBatchMoments}); without it, the running statistics are used.
   */
  moments?: BatchMoments[];
  /** Receives each layer's output `[batch, h, w, maps]`, for shape checks. */
  trace?: tf.Tensor4D[];
}

/** One layer of an App. A.7 stack. */
export interface ConvSpec {
  /** Square kernel side, pixels. */
  kernel: number;
  /** Stride, pixels. */
  stride: number;
  /** Output channels. */
  maps: number;
}

/** The layers of a stack from its per-layer kernels, strides and maps, as App. A.7 lists them. */
export function convLayers(
  kernels: readonly number[],
  strides: readonly number[],
  maps: readonly number[],
): ConvSpec[] {
  if (strides.length !== kernels.length || maps.length !== kernels.length) {
    throw new RangeError(`${kernels.length} kernels, ${strides.length} strides and ${maps.length} maps`);
  }
  return kernels.map((kernel, i) => ({ kernel, stride: strides[i], maps: maps[i] }));
}

/**
 * Adds a stack of valid convolutions (or transposed convolutions) to `params` (Glorot-uniform
 * kernels, zero biases, BatchNorm γ = 1, β = 0) and `stats` (running mean 0, variance 1), keyed
 * `${prefix}${i}`. Every layer but the last is conv → BatchNorm → ELU (the reference `nets.py`
 * order); the last is linear. Returns the forward map `[batch, h, w, inputs]` → `[batch, h', w', maps]`
 * with h' = (h − k)/s + 1 per convolution and (h − 1)s + k per transposed convolution.
 */
export function convBnStack(
  params: Params,
  stats: Params,
  rng: Rng,
  prefix: string,
  inputs: number,
  layers: readonly ConvSpec[],
  transposed: boolean,
): (x: tf.Tensor4D, options?: ForwardOptions) => tf.Tensor4D {
  let channels = inputs;
  layers.forEach(({ kernel, maps }, i) => {
    const key = `${prefix}${i}`, area = kernel * kernel;
    // conv2d filters are [k, k, in, out]; conv2dTranspose filters are [k, k, out, in].
    const shape = transposed ? [kernel, kernel, maps, channels] : [kernel, kernel, channels, maps];
    params.addGlorotUniform(rng, `${key}/w`, shape, area * channels, area * maps);
    params.addZeros(`${key}/b`, [maps]);
    if (i + 1 < layers.length) {
      params.add(`${key}/gamma`, new Float32Array(maps).fill(1), [maps]);
      params.addZeros(`${key}/beta`, [maps]);
      stats.addZeros(`${key}/mean`, [maps]);
      stats.add(`${key}/var`, new Float32Array(maps).fill(1), [maps]);
    }
    channels = maps;
  });
  return (x, options = {}) => {
    let h = x;
    layers.forEach(({ kernel, stride, maps }, i) => {
      const key = `${prefix}${i}`, batch = h.shape[0];
      const w = params.get(`${key}/w`) as tf.Tensor4D;
      if (transposed) {
        const side = (h.shape[1] - 1) * stride + kernel;
        h = tf.conv2dTranspose(h, w, [batch, side, side, maps], stride, "valid");
      } else h = tf.conv2d(h, w, stride, "valid");
      h = tf.add(h, params.get(`${key}/b`));
      if (i + 1 < layers.length) {
        const gamma = params.get(`${key}/gamma`) as tf.Tensor1D, beta = params.get(`${key}/beta`) as tf.Tensor1D;
        if (options.moments) {
          const { y, mean, variance } = batchNormOnBatch(h, gamma, beta, BN_EPSILON);
          options.moments.push({
            key,
            mean: tf.keep(mean),
            variance: tf.keep(variance),
            count: batch * h.shape[1] * h.shape[2],
          });
          h = tf.elu(y);
        } else {
          const mean = stats.get(`${key}/mean`), variance = stats.get(`${key}/var`);
          const scale = tf.mul(gamma, tf.rsqrt(tf.add(variance, BN_EPSILON)));
          h = tf.elu(tf.add(tf.mul(tf.sub(h, mean), scale), beta));
        }
      }
      options.trace?.push(h);
    });
    return h;
  };
}

/**
 * Moves the running BatchNorm statistics in `stats` towards the recorded batch moments (torch:
 * momentum 0.1, the unbiased variance) and disposes the recorded tensors.
 */
export function applyBatchMoments(stats: Params, moments: BatchMoments[]): void {
  for (const { key, mean, variance, count } of moments) {
    tf.tidy(() => {
      const running = stats.get(`${key}/mean`), runningVar = stats.get(`${key}/var`);
      const unbiased = tf.mul(variance, count / Math.max(count - 1, 1));
      running.assign(tf.add(tf.mul(running, 1 - BN_MOMENTUM), tf.mul(mean, BN_MOMENTUM)));
      runningVar.assign(tf.add(tf.mul(runningVar, 1 - BN_MOMENTUM), tf.mul(unbiased, BN_MOMENTUM)));
    });
    tf.dispose([mean, variance]);
  }
  moments.length = 0;
}

/**
 * x → 1[x ≥ 0.5] (the reference `utils.binarize`) with a straight-through gradient, so gradient
 * attacks on binary models see the gradient at the binarized input (§5 of the paper).
 */
export function binarizeStraightThrough<T extends tf.Tensor>(x: T): T {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
    value: tf.cast(tf.greaterEqual(args[0] as tf.Tensor, 0.5), "float32"),
    gradFunc: (dy: tf.Tensor) => dy,
  }));
  return f(x) as T;
}
