/**
 * Convolution gradients for the wasm backend, built on its XNNPACK Conv2D.
 *
 * tfjs-backend-wasm 4.22 has no Conv2DBackpropFilter, and its
 * Conv2DBackpropInput is a plain loop (≈ 940 ms per step of the
 * disentanglement_lib conv VAE). Both gradients are convolutions:
 *
 * - filter gradient: dW[a, b, i, o] = Σ_{n,y,x} x_pad[n, a + s·y, b + s·x, i] · dy[n, y, x, o],
 *   a stride-1 convolution with dilation s of x laid out as [i, h, w, n]
 *   ("batch" i, "channels" n) with dy laid out as a filter [ho, wo, n, o];
 * - input gradient: s² stride-1 full convolutions of dy, one per output
 *   phase, with sub-filters of the rotated filter, interleaved.
 *
 * Layout changes and interleaving are JS loops over the wasm heap. Narrow
 * layers (few input channels, small dy) go to the im2col/col2im matrix
 * products of conv_gemm.ts instead, by its shape rule.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import {
  gemmConvSupported,
  gemmFilterGradient,
  gemmInputGradient,
  preferGemmFilterGradient,
  preferGemmInputGradient,
} from "./conv_gemm.ts";
import { type ConvAttrs, convInfo, type KernelArgs, replaceWasmKernel, WasmOps } from "./wasm_ops.ts";

/** How the gradients are computed: by the shape rule, or forced to one path (tests of both paths). */
export type ConvGradientRoute = "auto" | "gemm" | "conv";
/**
 * The shape rule by default: narrow layers through the GEMM (7% off a conv VAE step, paired in one process). It sums
 * in another order than the convolution forms, so the smoke fixtures of the conv experiments were measured again
 * when it became the default.
 */
let route: ConvGradientRoute = "auto";

/** Forces the convolution gradients onto one path, or back to the shape rule with "auto"; returns the previous. */
export function setConvGradientRoute(next: ConvGradientRoute): ConvGradientRoute {
  const previous = route;
  route = next;
  return previous;
}

/**
 * Copies x [n, h, w, c] into out [c, rows, w, n], keeping input rows
 * [0, rows): the transposed input of the filter-gradient convolution.
 */
function transposeInput(x: Float32Array, out: Float32Array, n: number, h: number, w: number, c: number, rows: number) {
  for (let b = 0; b < n; b++) {
    for (let y = 0; y < rows; y++) {
      for (let xx = 0; xx < w; xx++) {
        const src = ((b * h + y) * w + xx) * c;
        for (let ch = 0; ch < c; ch++) out[((ch * rows + y) * w + xx) * n + b] = x[src + ch];
      }
    }
  }
}

function conv2DBackpropFilter({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const { filterShape, ...convAttrs } = attrs as unknown as ConvAttrs & { filterShape: number[] };
  const info = convInfo(x.shape, filterShape, convAttrs);
  const ops = new WasmOps(backend);
  const gemm = route === "gemm" || (route === "auto" && preferGemmFilterGradient(info));
  if (gemm && gemmConvSupported(info, [x.dtype, dy.dtype])) {
    return ops.finish(gemmFilterGradient(ops, x, dy, info));
  }
  if (dyAsInputApplies(info) && x.dtype === "float32" && dy.dtype === "float32") {
    return ops.finish(filterGradientOverDy(ops, x, dy, info));
  }
  const [n, h, w, cIn] = x.shape;
  const { strideHeight: sh, strideWidth: sw, outHeight: ho, outWidth: wo, filterHeight: kh, filterWidth: kw } = info;
  const { top, left } = info.padInfo;
  // Pads (or, when negative, crops) after the input so that the output is exactly kh × kw.
  const bottom = kh - h - top + (ho - 1) * sh;
  const right = kw - w - left + (wo - 1) * sw;
  const rows = h + Math.min(0, bottom), cols = w + Math.min(0, right);
  const xT = ops.allocate([cIn, rows, w, n]);
  transposeInput(ops.view(x), ops.view(xT), n, h, w, cIn, rows);
  const xTCropped = cols < w ? ops.run("Slice", { x: xT }, { begin: [0, 0, 0, 0], size: [cIn, rows, cols, n] }) : xT;
  const dyAsFilter = ops.run("Transpose", { x: dy }, { perm: [1, 2, 0, 3] });
  const grad = ops.run("Conv2D", { x: xTCropped, filter: dyAsFilter }, {
    strides: [1, 1],
    dilations: [sh, sw],
    pad: [[0, 0], [top, Math.max(0, bottom)], [left, Math.max(0, right)], [0, 0]],
    dataFormat: "NHWC",
  });
  return ops.finish(ops.run("Transpose", { x: grad }, { perm: [1, 2, 0, 3] }));
}

/**
 * Whether the filter gradient is computed with dy as the convolution's input and x as its filter: stride 1 and no
 * dilation (dy would need zeros inserted otherwise), padding within the kernel, and fewer input than output
 * channels, so that the operand XNNPACK packs afresh at each call (the filter) is the smaller one. Paired in one
 * process (20 ABBA rounds), this way over the other: 0.76 (IQR 0.73–0.77) of the time for the MNIST CNN's 3×3
 * 32 → 64 layer at batch 128, 0.63 (0.60–0.67) for a 3×3 16 → 32 layer of 16×16 at batch 64.
 */
function dyAsInputApplies(info: tf.backend_util.Conv2DInfo): boolean {
  const { top, bottom, left, right } = info.padInfo;
  const { filterHeight: kh, filterWidth: kw } = info;
  return info.strideHeight === 1 && info.strideWidth === 1 && info.dilationHeight === 1 &&
    info.dilationWidth === 1 && info.inChannels < info.outChannels && top >= 0 && top < kh && bottom >= 0 &&
    bottom < kh && left >= 0 && left < kw && right >= 0 && right < kw;
}

/**
 * dW[a, b, i, o] = Σ x[n, u, v, i] · dy[n, u − a + top, v − b + left, o] as one stride-1 convolution of dy laid
 * out [o, rows, cols, n] (padded by kh − 1 − top above and kh − 1 − bottom below, likewise across) with x laid out
 * as the filter [h, w, n, i]: its output [o, kh, kw, i] holds dW flipped in both taps. The products and their
 * order over (u, v, n) are those of the form with x as the input.
 */
function filterGradientOverDy(
  ops: WasmOps,
  x: tf.TensorInfo,
  dy: tf.TensorInfo,
  info: tf.backend_util.Conv2DInfo,
): tf.TensorInfo {
  const { batchSize: n, inHeight: h, inWidth: w, inChannels: ci, outHeight: ho, outWidth: wo } = info;
  const { outChannels: co, filterHeight: kh, filterWidth: kw } = info;
  const { top, left } = info.padInfo;
  const padTop = kh - 1 - top, padLeft = kw - 1 - left;
  const rows = h + kh - 1, cols = w + kw - 1;
  const dyT = ops.allocate([co, rows, cols, n]), xT = ops.allocate([h, w, n, ci]);
  const grad = ops.allocate([kh, kw, ci, co]);
  {
    const from = ops.view(dy), to = ops.view(dyT);
    to.fill(0);
    // Per output pixel the n rows of dy stay in the cache while every channel's run of n is written.
    for (let y = 0; y < ho; y++) {
      for (let xx = 0; xx < wo; xx++) {
        for (let o = 0; o < co; o++) {
          const at = ((o * rows + y + padTop) * cols + xx + padLeft) * n;
          for (let b = 0, src = (y * wo + xx) * co + o; b < n; b++, src += ho * wo * co) to[at + b] = from[src];
        }
      }
    }
  }
  {
    const from = ops.view(x), to = ops.view(xT);
    for (let y = 0; y < h; y++) {
      for (let xx = 0; xx < w; xx++) {
        for (let b = 0; b < n; b++) {
          const src = ((b * h + y) * w + xx) * ci, dst = ((y * w + xx) * n + b) * ci;
          for (let i = 0; i < ci; i++) to[dst + i] = from[src + i];
        }
      }
    }
  }
  const flipped = ops.run("Conv2D", { x: dyT, filter: xT }, {
    strides: [1, 1],
    dilations: [1, 1],
    pad: "valid",
    dataFormat: "NHWC",
  });
  const from = ops.view(flipped), to = ops.view(grad);
  for (let o = 0; o < co; o++) {
    for (let a = 0; a < kh; a++) {
      for (let b = 0; b < kw; b++) {
        const src = ((o * kh + kh - 1 - a) * kw + kw - 1 - b) * ci;
        for (let i = 0; i < ci; i++) to[((a * kw + b) * ci + i) * co + o] = from[src + i];
      }
    }
  }
  return grad;
}

/**
 * The sub-filter of phase (ry, rx): taps w[ry + my·sh, rx + mx·sw], rotated
 * by 180° and with the channel axes swapped, as a Conv2D filter
 * [mh, mw, cOut, cIn] over dy.
 */
function phaseFilter(
  w: Float32Array,
  [kh, kw, cIn, cOut]: number[],
  ry: number,
  rx: number,
  sh: number,
  sw: number,
): { values: Float32Array; mh: number; mw: number } {
  const mh = Math.ceil((kh - ry) / sh), mw = Math.ceil((kw - rx) / sw);
  const values = new Float32Array(Math.max(0, mh * mw * cOut * cIn));
  for (let jy = 0; jy < mh; jy++) {
    for (let jx = 0; jx < mw; jx++) {
      const ky = ry + (mh - 1 - jy) * sh, kx = rx + (mw - 1 - jx) * sw;
      for (let i = 0; i < cIn; i++) {
        for (let o = 0; o < cOut; o++) {
          values[((jy * mw + jx) * cOut + o) * cIn + i] = w[((ky * kw + kx) * cIn + i) * cOut + o];
        }
      }
    }
  }
  return { values, mh, mw };
}

/**
 * Input gradient by sub-pixel decomposition: input pixel i (with i + pad =
 * q·s + r) only meets taps k ≡ r (mod s), so dx is the interleaving of s²
 * stride-1 full convolutions of dy with the phase sub-filters. No
 * multiplication by inserted zeros.
 */
function conv2DBackpropInput({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { dy, filter } = inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const { inputShape, ...convAttrs } = attrs as unknown as ConvAttrs & { inputShape: number[] };
  const info = convInfo(inputShape, filter.shape, convAttrs);
  const ops = new WasmOps(backend);
  const gemm = route === "gemm" || (route === "auto" && preferGemmInputGradient(info));
  if (gemm && gemmConvSupported(info, [dy.dtype, filter.dtype])) {
    return ops.finish(gemmInputGradient(ops, dy, filter, info));
  }
  const [n, h, w, cIn] = inputShape;
  const { strideHeight: sh, strideWidth: sw } = info;
  const { top, left } = info.padInfo;
  const weights = Float32Array.from(ops.view(filter));
  const phases: { ry: number; rx: number; out: tf.TensorInfo | null }[] = [];
  for (let ry = 0; ry < sh; ry++) {
    for (let rx = 0; rx < sw; rx++) {
      const { values, mh, mw } = phaseFilter(weights, filter.shape, ry, rx, sh, sw);
      if (mh <= 0 || mw <= 0) {
        phases.push({ ry, rx, out: null });
        continue;
      }
      const subFilter = ops.allocate([mh, mw, filter.shape[3], cIn]);
      ops.view(subFilter).set(values);
      const out = ops.run("Conv2D", { x: dy, filter: subFilter }, {
        strides: [1, 1],
        dilations: [1, 1],
        pad: [[0, 0], [mh - 1, mh - 1], [mw - 1, mw - 1], [0, 0]],
        dataFormat: "NHWC",
      });
      phases.push({ ry, rx, out });
    }
  }
  const dx = ops.allocate([n, h, w, cIn]);
  const target = ops.view(dx);
  for (const { ry, rx, out } of phases) {
    const source = out ? ops.view(out) : null;
    const [qh, qw] = out ? [out.shape[1], out.shape[2]] : [0, 0];
    // Input rows i with (i + top) mod sh = ry read row q = (i + top − ry) / sh of this phase.
    for (let b = 0; b < n; b++) {
      for (let i = ((ry - top) % sh + sh) % sh; i < h; i += sh) {
        const q = (i + top - ry) / sh;
        for (let j = ((rx - left) % sw + sw) % sw; j < w; j += sw) {
          const r = (j + left - rx) / sw;
          const to = ((b * h + i) * w + j) * cIn;
          if (source && q >= 0 && q < qh && r >= 0 && r < qw) {
            const from = ((b * qh + q) * qw + r) * cIn;
            // Element loop: channel runs are short, where subarray + set costs more than it copies.
            for (let c = 0; c < cIn; c++) target[to + c] = source[from + c];
          } else {
            for (let c = 0; c < cIn; c++) target[to + c] = 0;
          }
        }
      }
    }
  }
  return ops.finish(dx);
}

/** Registers the filter gradient and replaces the built-in input gradient of the wasm backend. */
export function registerWasmConvGradients(): void {
  replaceWasmKernel("Conv2DBackpropFilter", conv2DBackpropFilter);
  replaceWasmKernel("Conv2DBackpropInput", conv2DBackpropInput);
}
