/**
 * Convolution gradients as one XNNPACK matrix product each (im2col / col2im),
 * for the wasm backend, toward the GEMM limit.
 *
 * With M = n·ho·wo output positions and K = kh·kw·cIn filter taps:
 *
 * - filter gradient: dW [K, cOut] = Aᵀ·dy, with Aᵀ [K, M] the transposed
 *   im2col matrix of the padded input, built row by row from x laid out
 *   [cIn, n, h, w], and dy read in place as [M, cOut]; with fewer taps than
 *   output channels (one image channel) a hand-written kernel forms Aᵀ·dy
 *   in one pass over A and dy instead (wat/narrow_product.wat: the MNIST
 *   CNN's first layer 17.8 → 6.1 ms, the conv VAE 64×64's 41 → 7.6 ms, one
 *   profiled call each, paired in one process);
 * - input gradient: G [M, K] = dy·Wᵀ, then each output position adds its K
 *   taps back onto the input pixels it read (col2im).
 *
 * Measured on one wasm thread (conv VAE 64×64, batch 64): on the first layer
 * (one image channel) the filter gradient takes 17–19 ms here against 29–31
 * ms for XNNPACK's convolution with dy as the filter (conv2d_backprop.ts),
 * the input gradient 7 ms against 27 ms for the s² phase convolutions, and
 * the 4×4 layer's input gradient 8.6 against 12.7 ms. On the wide layers
 * (32–64 channels) the paths tie or the convolutions win (the 32×32 layer's
 * filter gradient: 60 vs 48 ms, as the im2col copy and its transpose move 32
 * MB), so {@linkcode preferGemmFilterGradient} and
 * {@linkcode preferGemmInputGradient} pick per shape.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { WasmOps, watKernel } from "./wasm_ops.ts";

/** The shape facts both gradients need, from tf.backend_util.computeConv2DInfo. */
type GemmConvInfo = Pick<
  tf.backend_util.Conv2DInfo,
  | "batchSize"
  | "inHeight"
  | "inWidth"
  | "inChannels"
  | "outHeight"
  | "outWidth"
  | "outChannels"
  | "filterHeight"
  | "filterWidth"
  | "strideHeight"
  | "strideWidth"
  | "dilationHeight"
  | "dilationWidth"
  | "padInfo"
>;

/** Whether these gradients handle the convolution: float32, no dilation. */
export function gemmConvSupported(info: GemmConvInfo, dtypes: tf.DataType[]): boolean {
  return info.dilationHeight === 1 && info.dilationWidth === 1 && dtypes.every((d) => d === "float32");
}

/**
 * Channels below one XNNPACK output tile (8 floats on wasm SIMD): the
 * convolution forms then leave most of each tile empty (the filter gradient's
 * convolution has only cIn·kh·kw output rows, a phase convolution cIn output
 * channels).
 */
const NARROW_CHANNELS = 8;

/** The filter gradient goes through the GEMM when the input has few channels (conv VAE's and pose net's first layer). */
export function preferGemmFilterGradient(info: GemmConvInfo): boolean {
  return info.inChannels < NARROW_CHANNELS;
}

/**
 * The input gradient goes through the GEMM when the input has few channels
 * or when the s² phase convolutions, each padded to a full convolution of dy,
 * compute at least 1.5× the values of dx (small dy, as in the 4×4 layer).
 */
export function preferGemmInputGradient(info: GemmConvInfo): boolean {
  const { outHeight: ho, outWidth: wo, filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw } = info;
  if (info.inChannels < NARROW_CHANNELS) return true;
  let phaseValues = 0;
  for (let ry = 0; ry < sh; ry++) {
    for (let rx = 0; rx < sw; rx++) {
      const mh = Math.ceil((kh - ry) / sh), mw = Math.ceil((kw - rx) / sw);
      if (mh > 0 && mw > 0) phaseValues += (ho + mh - 1) * (wo + mw - 1);
    }
  }
  return phaseValues >= 1.5 * info.inHeight * info.inWidth;
}

/**
 * dW [kh, kw, cIn, cOut] of a convolution of x [n, h, w, cIn] with output
 * gradient dy [n, ho, wo, cOut], as the product Aᵀ·dy.
 */
export function gemmFilterGradient(
  ops: WasmOps,
  x: tf.TensorInfo,
  dy: tf.TensorInfo,
  info: GemmConvInfo,
): tf.TensorInfo {
  const { batchSize: n, outHeight: ho, outWidth: wo, outChannels: o } = info;
  const { filterHeight: kh, filterWidth: kw, inChannels: c } = info;
  const m = n * ho * wo, k = kh * kw * c;
  const cols = im2col(ops, x, info);
  if (k < o && o % 4 === 0) return narrowProduct(ops, cols, dy, m, k, o, [kh, kw, c, o]);
  if (k < o) {
    // Fewer taps than output channels (one image channel): A [M, K] is the smaller operand, so it goes on the
    // right, dWᵀ = dyᵀ·A; the right operand's packing costs about 7 ns a value, more than the product here.
    const dyT = ops.run("Transpose", { x: { ...dy, shape: [m, o] } }, { perm: [1, 0] });
    const gradT = ops.run("BatchMatMul", { a: { ...dyT, shape: [1, o, m] }, b: cols }, {
      transposeA: false,
      transposeB: false,
    });
    const grad = ops.run("Transpose", { x: { ...gradT, shape: [o, k] } }, { perm: [1, 0] });
    return { ...grad, shape: [kh, kw, c, o] };
  }
  // Aᵀ [K, M] on the left: the wasm BatchMatMul packs its right operand afresh on every call (with A there it
  // took 4× longer), and dy [M, cOut] is read in place as the right one. im2col then a blocked transpose beats
  // gathering Aᵀ directly (strided reads in short runs).
  const colsT = ops.run("Transpose", { x: { ...cols, shape: [m, k] } }, { perm: [1, 0] });
  const grad = ops.run("BatchMatMul", { a: { ...colsT, shape: [1, k, m] }, b: { ...dy, shape: [1, m, o] } }, {
    transposeA: false,
    transposeB: false,
  });
  return { ...grad, shape: [kh, kw, c, o] };
}

/** Rows summed per partial block of wat/narrow_product.wat before it joins the total. */
const NARROW_PRODUCT_CHUNK = 256;

/**
 * aᵀ·b [k, o] (given `shape`) of a [m, k] and b [m, o] by the hand-written kernel wat/narrow_product.wat: one pass
 * over the rows with the [k, o] sums in the cache, no transpose and no packing of either operand.
 */
function narrowProduct(
  ops: WasmOps,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  m: number,
  k: number,
  o: number,
  shape: number[],
): tf.TensorInfo {
  const out = ops.allocate(shape), block = ops.allocate([k, o]);
  const av = ops.view(a), bv = ops.view(b), outView = ops.view(out);
  outView.fill(0);
  if (m === 0) return out;
  const kernel = watKernel(ops.backend, "narrow_product").narrowProduct as (...args: number[]) => void;
  kernel(av.byteOffset, bv.byteOffset, outView.byteOffset, ops.view(block).byteOffset, m, k, o, NARROW_PRODUCT_CHUNK);
  return out;
}

/** The im2col matrix [1, n·ho·wo, kh·kw·cIn] of x [n, h, w, cIn], zeros where a tap falls in the padding. */
export function im2col(ops: WasmOps, x: tf.TensorInfo, info: GemmConvInfo): tf.TensorInfo {
  const { batchSize: n, inHeight: h, inWidth: w, inChannels: c, outHeight: ho, outWidth: wo } = info;
  const { filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw } = info;
  const { top, left } = info.padInfo;
  const k = kh * kw * c, tapRow = kw * c;
  const cols = ops.allocate([1, n * ho * wo, k]);
  const xv = ops.view(x), av = ops.view(cols);
  const heap = new Float32Array(av.buffer);
  const xAt = xv.byteOffset / 4, aAt = av.byteOffset / 4;
  for (let nn = 0; nn < n; nn++) {
    for (let y = 0; y < ho; y++) {
      for (let xx = 0; xx < wo; xx++) {
        const row = ((nn * ho + y) * wo + xx) * k;
        // Taps b whose input column b + s·x − left is inside: one contiguous run of (b, i) in x and in the row.
        const b0 = Math.max(0, left - sw * xx), b1 = Math.min(kw, w + left - sw * xx);
        const run = Math.max(0, b1 - b0) * c, head = b0 * c;
        for (let a = 0; a < kh; a++) {
          const to = row + a * tapRow, inRow = sh * y + a - top;
          if (inRow < 0 || inRow >= h || run === 0) {
            av.fill(0, to, to + tapRow);
            continue;
          }
          for (let e = 0; e < head; e++) av[to + e] = 0;
          const from = ((nn * h + inRow) * w + sw * xx + b0 - left) * c;
          // copyWithin is a memmove but costs a call: worth it on long runs only.
          if (run >= 32) heap.copyWithin(aAt + to + head, xAt + from, xAt + from + run);
          else for (let e = 0; e < run; e++) av[to + head + e] = xv[from + e];
          for (let e = head + run; e < tapRow; e++) av[to + e] = 0;
        }
      }
    }
  }
  return cols;
}

/**
 * dx [n, h, w, cIn] of a convolution with filter [kh, kw, cIn, cOut] and
 * output gradient dy [n, ho, wo, cOut], as dy·Wᵀ scattered back (col2im).
 */
export function gemmInputGradient(
  ops: WasmOps,
  dy: tf.TensorInfo,
  filter: tf.TensorInfo,
  info: GemmConvInfo,
): tf.TensorInfo {
  const { batchSize: n, inHeight: h, inWidth: w, inChannels: c, outHeight: ho, outWidth: wo } = info;
  const { filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw, outChannels: o } = info;
  const { top, left } = info.padInfo;
  const m = n * ho * wo, k = kh * kw * c;
  const wT = ops.allocate([1, o, k]);
  {
    const fv = ops.view(filter), wTv = ops.view(wT);
    for (let r = 0; r < k; r++) for (let q = 0; q < o; q++) wTv[q * k + r] = fv[r * o + q];
  }
  const g = ops.run("BatchMatMul", { a: { ...dy, shape: [1, m, o] }, b: wT }, { transposeA: false, transposeB: false });
  const dx = ops.allocate([n, h, w, c]);
  const gv = ops.view(g), dxv = ops.view(dx);
  dxv.fill(0);
  for (let nn = 0; nn < n; nn++) {
    for (let y = 0; y < ho; y++) {
      for (let xx = 0; xx < wo; xx++) {
        const from = ((nn * ho + y) * wo + xx) * k;
        // Taps b whose input column b + s·x − left is inside: a contiguous run of (b, i) in both G and dx.
        const b0 = Math.max(0, left - sw * xx), b1 = Math.min(kw, w + left - sw * xx);
        if (b1 <= b0) continue;
        const run = (b1 - b0) * c;
        for (let a = 0; a < kh; a++) {
          const row = sh * y + a - top;
          if (row < 0 || row >= h) continue;
          const src = from + (a * kw + b0) * c;
          const dst = ((nn * h + row) * w + sw * xx + b0 - left) * c;
          for (let e = 0; e < run; e++) dxv[dst + e] += gv[src + e];
        }
      }
    }
  }
  return dx;
}
