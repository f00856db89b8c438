/**
 * Gradients of a 1-D convolution (conv1d: height 1, stride 1, no dilation or
 * padding) on the wasm backend as one matrix product each.
 *
 * Output position t of sample n sees input rows t … t + k − 1, so the
 * gradient is one matrix product dW [k·c, o] = Aᵀ·dy with the im2col matrix
 * A [n·wo, k·c]. With the input laid out [c, w, n], each row of Aᵀ is a
 * contiguous run, and Aᵀ goes on the left of the product, since the wasm
 * BatchMatMul packs its right operand afresh on every call. For the CEBRA
 * offset10 model at batch 1536 this takes the five filter gradients from
 * 46 ms to 22 ms against the general kernel of conv2d_backprop.ts (a
 * convolution with dy as the filter). The input gradient is dy·Wᵀ
 * scattered back onto the overlapping rows (col2im), 12 → 8 ms there.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type ConvAttrs, convInfo, type KernelArgs, WasmOps } from "./wasm_ops.ts";

/** Height 1, stride 1, no dilation or padding: a conv1d with "valid" padding. */
function isRowConv(xShape: number[], info: tf.backend_util.Conv2DInfo): boolean {
  const p = info.padInfo;
  return xShape[1] === 1 && info.filterHeight === 1 && info.strideHeight === 1 && info.strideWidth === 1 &&
    info.dilationHeight === 1 && info.dilationWidth === 1 && p.top === 0 && p.bottom === 0 && p.left === 0 &&
    p.right === 0;
}

function rowsFilterGradient(args: KernelArgs, general: tf.KernelConfig): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { filterShape, ...convAttrs } = attrs as unknown as ConvAttrs & { filterShape: number[] };
  const info = convInfo(x.shape, filterShape, convAttrs);
  if (!isRowConv(x.shape, info) || x.dtype !== "float32" || dy.dtype !== "float32") {
    return general.kernelFunc(args) as tf.TensorInfo;
  }
  const ops = new WasmOps(backend);
  const [n, , w, c] = x.shape;
  const { filterWidth: k, outWidth: wo, outChannels: o } = info;
  const m = n * wo, kc = k * c;
  // xT [c, w, n]: then the im2col row of tap j and channel i over (t, n) is the contiguous xT[i, j … j + wo − 1, :].
  const xT = ops.allocate([c, w, n]);
  const aT = ops.allocate([kc, m]);
  const dyP = ops.allocate([wo, n, o]);
  const xv = ops.view(x), xTv = ops.view(xT), dyv = ops.view(dy), dyPv = ops.view(dyP);
  // Blocks of samples keep both the rows read and the runs written in cache.
  const block = 32;
  for (let b0 = 0; b0 < n; b0 += block) {
    const b1 = Math.min(n, b0 + block);
    for (let t = 0; t < w; t++) {
      for (let i = 0; i < c; i++) {
        const to = (i * w + t) * n;
        for (let b = b0; b < b1; b++) xTv[to + b] = xv[(b * w + t) * c + i];
      }
    }
  }
  const heap = new Float32Array(xTv.buffer);
  const xTAt = xTv.byteOffset / 4, aTAt = ops.view(aT).byteOffset / 4;
  for (let j = 0; j < k; j++) {
    for (let i = 0; i < c; i++) {
      const from = xTAt + (i * w + j) * n;
      heap.copyWithin(aTAt + (j * c + i) * m, from, from + m);
    }
  }
  // dy [n, wo, o] → [wo, n, o], rows in the same (t, n) order.
  for (let b = 0; b < n; b++) {
    for (let t = 0; t < wo; t++) {
      const from = (b * wo + t) * o, to = (t * n + b) * o;
      for (let q = 0; q < o; q++) dyPv[to + q] = dyv[from + q];
    }
  }
  // The large operand on the left: the wasm BatchMatMul packs its right operand afresh on every call.
  const grad = ops.run("BatchMatMul", { a: { ...aT, shape: [1, kc, m] }, b: { ...dyP, shape: [1, m, o] } }, {
    transposeA: false,
    transposeB: false,
  });
  return ops.finish({ ...grad, shape: filterShape });
}

function rowsInputGradient(args: KernelArgs, general: tf.KernelConfig): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { inputShape, ...convAttrs } = attrs as unknown as ConvAttrs & { inputShape: number[] };
  const info = convInfo(inputShape, filter.shape, convAttrs);
  if (!isRowConv(inputShape, info) || dy.dtype !== "float32" || filter.dtype !== "float32") {
    return general.kernelFunc(args) as tf.TensorInfo;
  }
  const ops = new WasmOps(backend);
  const [n, , w, c] = inputShape;
  const { filterWidth: k, outWidth: wo, outChannels: o } = info;
  const m = n * wo, kc = k * c;
  // G [m, k·c] = dy·Wᵀ, then dx row t + j gathers G's tap-j block of every output t (col2im).
  const wT = ops.allocate([1, o, kc]);
  const fv = ops.view(filter), wTv = ops.view(wT);
  for (let r = 0; r < kc; r++) for (let q = 0; q < o; q++) wTv[q * kc + r] = fv[r * o + q];
  const g = ops.run("BatchMatMul", { a: { ...dy, shape: [1, m, o] }, b: wT }, { transposeA: false, transposeB: false });
  const dx = ops.allocate(inputShape);
  const gv = ops.view(g), dxv = ops.view(dx);
  dxv.fill(0);
  for (let b = 0; b < n; b++) {
    for (let t = 0; t < wo; t++) {
      const from = (b * wo + t) * kc, to = (b * w + t) * c;
      for (let e = 0; e < kc; e++) dxv[to + e] += gv[from + e];
    }
  }
  return ops.finish(dx);
}

/**
 * Routes 1-D convolution filter gradients to the matrix product; others go to
 * the Conv2DBackpropFilter registered before (register after it).
 */
export function registerWasmRowConvGradients(): void {
  const kernels = [["Conv2DBackpropFilter", rowsFilterGradient], ["Conv2DBackpropInput", rowsInputGradient]] as const;
  for (const [name, rowKernel] of kernels) {
    const existing = tf.getKernel(name, "wasm") as (tf.KernelConfig & { latentlabRows?: boolean }) | undefined;
    if (!existing || existing.latentlabRows) continue;
    tf.unregisterKernel(name, "wasm");
    tf.registerKernel({
      ...existing,
      kernelFunc: (args) => rowKernel(args as KernelArgs, existing),
      latentlabRows: true,
    } as tf.KernelConfig);
  }
}
