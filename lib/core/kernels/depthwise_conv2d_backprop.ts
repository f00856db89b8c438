/**
 * Depthwise convolution gradients for the wasm backend, which lacks both:
 * direct JS loops over the wasm heap (depthwise layers are cheap, so the
 * loops are not worth composing from XNNPACK calls).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type ConvAttrs, convInfo, type KernelArgs, replaceWasmKernel, WasmOps } from "./wasm_ops.ts";

/**
 * Visits every (input position, filter tap, output position) triple of a
 * depthwise convolution, with flat offsets into x (channel 0), the filter
 * (channel 0) and dy (channel 0).
 */
function forEachTap(
  info: tf.backend_util.Conv2DInfo,
  visit: (xAt: number, wAt: number, dyAt: number) => void,
): void {
  const { batchSize, inHeight, inWidth, inChannels, outHeight, outWidth, outChannels } = info;
  const { strideHeight, strideWidth, dilationHeight, dilationWidth, filterHeight, filterWidth } = info;
  const { top, left } = info.padInfo;
  for (let b = 0; b < batchSize; b++) {
    for (let oy = 0; oy < outHeight; oy++) {
      for (let ox = 0; ox < outWidth; ox++) {
        const dyAt = ((b * outHeight + oy) * outWidth + ox) * outChannels;
        for (let wy = 0; wy < filterHeight; wy++) {
          const y = oy * strideHeight + wy * dilationHeight - top;
          if (y < 0 || y >= inHeight) continue;
          for (let wx = 0; wx < filterWidth; wx++) {
            const x = ox * strideWidth + wx * dilationWidth - left;
            if (x < 0 || x >= inWidth) continue;
            visit(((b * inHeight + y) * inWidth + x) * inChannels, (wy * filterWidth + wx) * outChannels, dyAt);
          }
        }
      }
    }
  }
}

function depthwiseBackpropInput({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { inputShape, ...rest } = attrs as unknown as ConvAttrs & { inputShape: number[] };
  const info = convInfo(inputShape, filter.shape, rest, true);
  const ops = new WasmOps(backend);
  const dx = ops.allocate(inputShape);
  const out = ops.view(dx), w = ops.view(filter), grad = ops.view(dy);
  out.fill(0);
  const { inChannels } = info, channelMultiplier = info.outChannels / inChannels;
  forEachTap(info, (xAt, wAt, dyAt) => {
    for (let c = 0; c < inChannels; c++) {
      let sum = 0;
      for (let q = 0; q < channelMultiplier; q++) {
        sum += grad[dyAt + c * channelMultiplier + q] * w[wAt + c * channelMultiplier + q];
      }
      out[xAt + c] += sum;
    }
  });
  return ops.finish(dx);
}

function depthwiseBackpropFilter({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { filterShape, ...rest } = attrs as unknown as ConvAttrs & { filterShape: number[] };
  const info = convInfo(x.shape, filterShape, rest, true);
  const ops = new WasmOps(backend);
  const dw = ops.allocate(filterShape);
  const out = ops.view(dw), input = ops.view(x), grad = ops.view(dy);
  out.fill(0);
  const { inChannels } = info, channelMultiplier = info.outChannels / inChannels;
  forEachTap(info, (xAt, wAt, dyAt) => {
    for (let c = 0; c < inChannels; c++) {
      const value = input[xAt + c];
      for (let q = 0; q < channelMultiplier; q++) {
        out[wAt + c * channelMultiplier + q] += value * grad[dyAt + c * channelMultiplier + q];
      }
    }
  });
  return ops.finish(dw);
}

/** Registers both depthwise convolution gradients on the wasm backend. */
export function registerWasmDepthwiseGradients(): void {
  replaceWasmKernel("DepthwiseConv2dNativeBackpropInput", depthwiseBackpropInput);
  replaceWasmKernel("DepthwiseConv2dNativeBackpropFilter", depthwiseBackpropFilter);
}
