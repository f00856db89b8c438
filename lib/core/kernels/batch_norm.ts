/**
 * BatchNorm on the batch's own statistics (channels last, moments per channel over every other axis) as one wasm
 * kernel forward and one backward.
 *
 * TF.js builds it from tf.moments and an affine map: on wasm about 75 small kernels per layer and step with their
 * gradients, and a Mean over leading axes that transposes first; one [128, 28, 28, 32] layer took ~40 ms of a
 * training step. Here the forward makes μ, σ² (one pass of float64 sums of deviations from the first row) and y (a
 * second); the backward makes dβ, dγ (one pass) and dx (a second). Each pass runs in float64 SIMD lanes
 * (wat/batch_norm.wat) when the channels come in fours, as a JS loop of doubles otherwise, with the same results to
 * the bit; on a [128, 28, 28, 32] layer the SIMD passes took forward and backward from 8 and 9 ms to 4 and 7 ms,
 * about the time their memory traffic takes. The values are the same formulas as the op chain's, summed in float64
 * instead of float32, so they agree with it up to float32 rounding and summation order.
 *
 * The kernel's gradient is registered with tf.registerGradient rather than written with tf.customGrad, which takes
 * one output only: μ and σ² are outputs too and carry their own gradient terms (zero unless used downstream). On
 * every other backend the op is TF.js's chain, unchanged.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps, watKernel } from "./wasm_ops.ts";

const FORWARD = "LatentlabBatchNorm";
const BACKWARD = "LatentlabBatchNormGrad";

/** y of a BatchNorm layer and the batch moments that normalised it. */
export interface BatchNormOutput<T extends tf.Tensor> {
  /** (x − μ)·γ/√(σ² + ε) + β, the shape of x. */
  y: T;
  /** Per-channel batch mean μ `[channels]`. */
  mean: tf.Tensor1D;
  /** Per-channel biased batch variance σ² `[channels]`. */
  variance: tf.Tensor1D;
}

/**
 * (x − mean)·γ/√(variance + ε) + β as one scale and one shift per channel; mean and variance broadcast against x
 * (TF.js ops on any backend).
 */
export function normalizeAffine(
  x: tf.Tensor,
  mean: tf.Tensor,
  variance: tf.Tensor,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  epsilon: number,
): tf.Tensor {
  const scale = tf.mul(gamma, tf.rsqrt(tf.add(variance, epsilon)));
  const shift = tf.sub(beta, tf.mul(mean, scale));
  return tf.add(tf.mul(x, scale), shift);
}

/**
 * BatchNorm of `x` `[..., channels]` on its own biased moments over all axes but the last (torch
 * `BatchNorm2d.train()` on NHWC), differentiable in x, γ, β and through μ, σ²: the fused kernel on wasm, tf.moments
 * and {@linkcode normalizeAffine} elsewhere.
 */
export function batchNormOnBatch<T extends tf.Tensor>(
  x: T,
  gamma: tf.Tensor1D,
  beta: tf.Tensor1D,
  epsilon: number,
): BatchNormOutput<T> {
  const channels = x.shape[x.rank - 1];
  if (x.rank < 2 || gamma.size !== channels || beta.size !== channels) {
    throw new Error(`batchNormOnBatch: x [${x.shape}] needs γ and β of its ${channels} channels`);
  }
  if (tf.getBackend() === "wasm" && tf.getKernel(FORWARD, "wasm") && x.dtype === "float32" && x.size > 0) {
    const [y, mean, variance] = tf.engine().runKernel(
      FORWARD,
      { x, gamma, beta } as unknown as tf.NamedTensorMap,
      { epsilon } as unknown as tf.NamedAttrMap,
    ) as tf.Tensor[];
    return { y: y as T, mean: mean as tf.Tensor1D, variance: variance as tf.Tensor1D };
  }
  return tf.tidy(() => {
    const { mean, variance } = tf.moments(x, [...Array(x.rank - 1).keys()]);
    const y = normalizeAffine(x, mean, variance, gamma, beta, epsilon) as T;
    return { y, mean: mean as tf.Tensor1D, variance: variance as tf.Tensor1D };
  });
}

/** The passes of wat/batch_norm.wat: the scalar loops below, to the bit, four channels at a time. */
interface BatchNormPasses {
  sums(
    a: number,
    b: number,
    center: number,
    sum: number,
    weighted: number,
    rows: number,
    channels: number,
    same: 0 | 1,
  ): void;
  affine(
    a: number,
    b: number,
    out: number,
    scaleA: number,
    scaleB: number,
    shift: number,
    rows: number,
    channels: number,
  ): void;
}

/**
 * Per-channel float64 work arrays of a kernel call: on the wasm heap when the SIMD passes run (they take byte
 * addresses; allocated before any view is taken, since an allocation may grow the heap), in JS otherwise.
 */
class ChannelArrays {
  readonly passes: BatchNormPasses | null;
  readonly #scratch: tf.TensorInfo | null;
  readonly #ops: WasmOps;

  constructor(ops: WasmOps, readonly count: number, readonly channels: number) {
    this.#ops = ops;
    this.passes = channels % 4 === 0 ? watKernel(ops.backend, "batch_norm") as unknown as BatchNormPasses : null;
    this.#scratch = this.passes ? ops.backend.makeOutput([2 * count * channels], "float32") : null;
  }

  /** The arrays, zeroed (views: take them after every allocation of the call). */
  arrays(): Float64Array[] {
    if (!this.#scratch) return Array.from({ length: this.count }, () => new Float64Array(this.channels));
    const view = this.#ops.view(this.#scratch);
    if (view.byteOffset % 8 !== 0) throw new Error("wasm heap allocation is not 8-byte aligned");
    const all = new Float64Array(view.buffer, view.byteOffset, this.count * this.channels).fill(0);
    return Array.from({ length: this.count }, (_, i) => all.subarray(i * this.channels, (i + 1) * this.channels));
  }

  /** Frees the heap scratch. */
  dispose(): void {
    if (this.#scratch) this.#ops.backend.disposeData(this.#scratch.dataId);
  }
}

/** 1/√(σ² + ε) per channel, in float64. */
function inverseDeviations(variance: Float32Array, epsilon: number): Float64Array {
  return Float64Array.from(variance, (v) => 1 / Math.sqrt(v + epsilon));
}

function forward({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo[] {
  const { x, gamma, beta } = inputs as Record<string, tf.TensorInfo>;
  const { epsilon } = attrs as unknown as { epsilon: number };
  const ops = new WasmOps(backend);
  const channels = x.shape[x.shape.length - 1];
  const outputs = [x.shape, [channels], [channels]].map((shape) => ops.backend.makeOutput(shape, "float32"));
  const work = new ChannelArrays(ops, 5, channels);
  // Views after the allocations, which may grow the heap.
  const [xs, ys, means, variances] = [x, ...outputs].map((t) => ops.view(t));
  const gammas = ops.view(gamma), betas = ops.view(beta);
  const [origin, sum, squares, scale, shift] = work.arrays();
  const size = xs.length, rows = size / channels, simd = work.passes;
  // One pass of shifted sums: deviations from the first row's values, so that no cancellation is left in float64
  // however far the mean lies from zero.
  for (let c = 0; c < channels; c++) origin[c] = xs[c];
  if (simd) {
    simd.sums(xs.byteOffset, xs.byteOffset, origin.byteOffset, sum.byteOffset, squares.byteOffset, rows, channels, 1);
  } else {
    for (let i = 0; i < size; i += channels) {
      for (let c = 0; c < channels; c++) {
        const d = xs[i + c] - origin[c];
        sum[c] += d;
        squares[c] += d * d;
      }
    }
  }
  for (let c = 0; c < channels; c++) {
    const offset = sum[c] / rows, mu = origin[c] + offset;
    const variance = Math.max(squares[c] / rows - offset * offset, 0);
    means[c] = mu;
    variances[c] = variance;
    scale[c] = gammas[c] / Math.sqrt(variance + epsilon);
    shift[c] = betas[c] - mu * scale[c];
  }
  if (simd) {
    simd.affine(xs.byteOffset, 0, ys.byteOffset, scale.byteOffset, 0, shift.byteOffset, rows, channels);
  } else {
    for (let i = 0; i < size; i += channels) {
      for (let c = 0; c < channels; c++) ys[i + c] = xs[i + c] * scale[c] + shift[c];
    }
  }
  work.dispose();
  return outputs;
}

/**
 * dx, dγ, dβ from dy and the incoming gradients of μ and σ². With r = 1/√(σ² + ε) and n rows:
 * dβ = Σ dy, dγ = r·Σ dy·(x − μ), and dx = γr·dy + (2·dσ² − γr²·dγ)/n·(x − μ) + (dμ − γr·dβ)/n.
 */
function backward({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo[] {
  const { dy, x, gamma, mean, variance, dMean, dVariance } = inputs as Record<string, tf.TensorInfo>;
  const { epsilon } = attrs as unknown as { epsilon: number };
  const ops = new WasmOps(backend);
  const channels = x.shape[x.shape.length - 1];
  const outputs = [x.shape, [channels], [channels]].map((shape) => ops.backend.makeOutput(shape, "float32"));
  const work = new ChannelArrays(ops, 6, channels);
  const [dxs, dGammas, dBetas] = outputs.map((t) => ops.view(t));
  const [dys, xs, gammas, mu, dMu, dVar] = [dy, x, gamma, mean, dMean, dVariance].map((t) => ops.view(t));
  const r = inverseDeviations(ops.view(variance), epsilon);
  const [center, sumDy, sumDyDev, dyScale, devScale, shift] = work.arrays();
  const size = xs.length, rows = size / channels, simd = work.passes;
  for (let c = 0; c < channels; c++) center[c] = mu[c];
  if (simd) {
    simd.sums(
      dys.byteOffset,
      xs.byteOffset,
      center.byteOffset,
      sumDy.byteOffset,
      sumDyDev.byteOffset,
      rows,
      channels,
      0,
    );
  } else {
    for (let i = 0; i < size; i += channels) {
      for (let c = 0; c < channels; c++) {
        const g = dys[i + c];
        sumDy[c] += g;
        sumDyDev[c] += g * (xs[i + c] - center[c]);
      }
    }
  }
  for (let c = 0; c < channels; c++) {
    const gr = gammas[c] * r[c], dGamma = r[c] * sumDyDev[c];
    dBetas[c] = sumDy[c];
    dGammas[c] = dGamma;
    dyScale[c] = gr;
    devScale[c] = (2 * dVar[c] - gr * r[c] * dGamma) / rows;
    shift[c] = (dMu[c] - gr * sumDy[c]) / rows;
  }
  // dx = γr·dy + devScale·x + (shift − devScale·μ), one multiply-add per term.
  for (let c = 0; c < channels; c++) shift[c] -= devScale[c] * mu[c];
  if (simd) {
    simd.affine(
      dys.byteOffset,
      xs.byteOffset,
      dxs.byteOffset,
      dyScale.byteOffset,
      devScale.byteOffset,
      shift.byteOffset,
      rows,
      channels,
    );
  } else {
    for (let i = 0; i < size; i += channels) {
      for (let c = 0; c < channels; c++) dxs[i + c] = dyScale[c] * dys[i + c] + devScale[c] * xs[i + c] + shift[c];
    }
  }
  work.dispose();
  return outputs;
}

let gradientRegistered = false;

/** Registers the fused BatchNorm kernels on wasm and the forward kernel's gradient (idempotent). */
export function registerWasmBatchNorm(): void {
  replaceWasmKernel(FORWARD, forward as unknown as (args: KernelArgs) => tf.TensorInfo);
  replaceWasmKernel(BACKWARD, backward as unknown as (args: KernelArgs) => tf.TensorInfo);
  if (gradientRegistered) return;
  gradientRegistered = true;
  tf.registerGradient({
    kernelName: FORWARD,
    inputsToSave: ["x", "gamma"],
    outputsToSave: [false, true, true],
    gradFunc: (dys, saved, attrs) => {
      // TF.js passes zeros for outputs outside the gradient's path, so dμ and dσ² are always tensors.
      const [dy, dMean, dVariance] = dys as tf.Tensor[];
      const [x, gamma, mean, variance] = saved;
      // All three from one kernel call, made here: TF.js runs each thunk in a tidy that would dispose the others.
      const [dx, dGamma, dBeta] = tf.engine().runKernel(
        BACKWARD,
        { dy, x, gamma, mean, variance, dMean, dVariance } as unknown as tf.NamedTensorMap,
        attrs,
      ) as tf.Tensor[];
      return { x: () => dx, gamma: () => dGamma, beta: () => dBeta };
    },
  });
}
