/**
 * MaxPoolGrad for the wasm backend: the built-in kernel takes 80 ms for one
 * [128, 28, 28, 32] pooling layer of the MNIST classifier. Here each output
 * gradient goes to its window's maximum in one pass over the wasm heap: a
 * hand-written SIMD kernel (wat/max_pool_grad.wat) when the channels are a
 * multiple of 4, whose comparisons do not branch (a JS loop's do, and on
 * real activations half of them are mispredicted: 17 ms for that layer),
 * otherwise a JS loop. Ties go to the first maximum in row-major window
 * order, as on the cpu backend.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps, watKernel } from "./wasm_ops.ts";

function maxPoolGrad({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { dy, input } = inputs as { dy: tf.TensorInfo; input: tf.TensorInfo };
  const { filterSize, strides, pad, dimRoundingMode } = attrs as unknown as {
    filterSize: number | [number, number];
    strides: number | [number, number];
    pad: "valid" | "same" | number;
    dimRoundingMode?: "floor" | "round" | "ceil";
  };
  const info = tf.backend_util.computePool2DInfo(
    input.shape as [number, number, number, number],
    filterSize,
    strides,
    1,
    pad,
    dimRoundingMode,
  );
  const ops = new WasmOps(backend);
  const dx = ops.allocate(input.shape);
  const { batchSize, inHeight, inWidth, inChannels: channels, outHeight, outWidth } = info;
  const { strideHeight, strideWidth, filterHeight, filterWidth } = info;
  const { top, left } = info.padInfo;
  // The SIMD kernel's per-channel scratch (running maxima and their positions), allocated before any view is taken.
  const scratch = channels % 4 === 0 ? { best: ops.allocate([channels]), at: ops.allocate([channels], "int32") } : null;
  const x = ops.view(input), grad = ops.view(dy), out = ops.view(dx);
  out.fill(0);
  if (out.length === 0 || grad.length === 0) return ops.finish(dx);
  if (scratch) {
    const kernel = watKernel(ops.backend, "max_pool_grad").maxPoolGrad as (...args: number[]) => void;
    kernel(
      x.byteOffset,
      grad.byteOffset,
      out.byteOffset,
      ops.view(scratch.best).byteOffset,
      ops.numbers(scratch.at).byteOffset,
      batchSize,
      inHeight,
      inWidth,
      channels,
      outHeight,
      outWidth,
      strideHeight,
      strideWidth,
      filterHeight,
      filterWidth,
      top,
      left,
    );
    return ops.finish(dx);
  }
  maxPoolGradLoop(x, grad, out, info);
  return ops.finish(dx);
}

/** The same routing as wat/max_pool_grad.wat in JS, for channel counts that are not a multiple of 4. */
function maxPoolGradLoop(
  x: Float32Array,
  grad: Float32Array,
  out: Float32Array,
  info: tf.backend_util.Conv2DInfo,
): void {
  const { batchSize, inHeight, inWidth, inChannels: channels, outHeight, outWidth } = info;
  const { strideHeight, strideWidth, filterHeight, filterWidth } = info;
  const { top, left } = info.padInfo;
  // Channels innermost: each window position is a contiguous row of `channels` values, so the running maxima of a
  // window are kept per channel and every read walks memory in order (a loop per channel strides by `channels`).
  const best = new Float32Array(channels), at = new Int32Array(channels);
  for (let b = 0; b < batchSize; b++) {
    for (let oy = 0; oy < outHeight; oy++) {
      const y0 = oy * strideHeight - top;
      for (let ox = 0; ox < outWidth; ox++) {
        const x0 = ox * strideWidth - left;
        best.fill(-Infinity);
        at.fill(-1);
        for (let wy = 0; wy < filterHeight; wy++) {
          const y = y0 + wy;
          if (y < 0 || y >= inHeight) continue;
          for (let wx = 0; wx < filterWidth; wx++) {
            const xx = x0 + wx;
            if (xx < 0 || xx >= inWidth) continue;
            const row = ((b * inHeight + y) * inWidth + xx) * channels;
            for (let c = 0; c < channels; c++) {
              // Strictly greater: ties keep the first maximum in row-major window order, as on the cpu backend.
              if (x[row + c] > best[c]) {
                best[c] = x[row + c];
                at[c] = row + c;
              }
            }
          }
        }
        const gradRow = ((b * outHeight + oy) * outWidth + ox) * channels;
        for (let c = 0; c < channels; c++) if (at[c] >= 0) out[at[c]] += grad[gradRow + c];
      }
    }
  }
}

/** Replaces the wasm backend's MaxPoolGrad. */
export function registerWasmMaxPoolGrad(): void {
  replaceWasmKernel("MaxPoolGrad", maxPoolGrad);
}
