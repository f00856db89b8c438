/**
 * Transpose and leading-axis Sum and Mean for the wasm backend, on its heap: a
 * JS loop, and column sums four at a time (wat/column_sums.wat; 3 → 0.6 ms
 * for a [128, 28, 28, 32] bias gradient).
 *
 * tfjs-backend-wasm 4.22 transposes at about 20 ns an element (10 ms for a
 * [13824, 32] matrix; a blocked JS loop takes under 1 ms), and its Sum
 * transposes first whenever the reduced axes are not the innermost, as for
 * every bias gradient (a sum over the batch), and so does its Mean (BatchNorm's
 * moments). Every matMul gradient goes
 * through a transpose (batch_mat_mul.ts), so both kernels sit in each
 * training step.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps, watKernel } from "./wasm_ops.ts";

/** Drops axes of size 1 and merges axes that stay adjacent and in order under `perm`. */
function simplify(shape: number[], perm: number[]): { shape: number[]; perm: number[] } {
  const kept = shape.map((_, i) => i).filter((i) => shape[i] !== 1);
  const rank = new Map(kept.map((axis, i) => [axis, i]));
  let p = perm.filter((a) => shape[a] !== 1).map((a) => rank.get(a)!);
  let s = kept.map((a) => shape[a]);
  // Merge input axes a, a + 1 when they appear consecutively in the output.
  for (let i = 0; i + 1 < p.length;) {
    if (p[i + 1] === p[i] + 1) {
      const a = p[i];
      s = [...s.slice(0, a), s[a] * s[a + 1], ...s.slice(a + 2)];
      p = p.filter((_, j) => j !== i + 1).map((q) => (q > a ? q - 1 : q));
    } else {
      i++;
    }
  }
  return { shape: s, perm: p };
}

function transpose(args: KernelArgs, original: tf.KernelConfig): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { x } = inputs as { x: tf.TensorInfo };
  if (x.dtype !== "float32" && x.dtype !== "int32") return original.kernelFunc(args) as tf.TensorInfo;
  const { perm } = attrs as unknown as { perm: number[] };
  const ops = new WasmOps(backend);
  const out = ops.allocate(perm.map((a) => x.shape[a]), x.dtype);
  const from = ops.numbers(x), to = ops.numbers(out);
  const size = from.length;
  if (size === 0) return ops.finish(out);
  const { shape, perm: p } = simplify(x.shape, perm);
  if (p.length <= 1) {
    to.set(from);
  } else if (p.length === 2) {
    // [rows, cols] → [cols, rows] in row blocks, so that the writes stay near each other.
    const [rows, cols] = shape;
    const block = 64;
    for (let r0 = 0; r0 < rows; r0 += block) {
      const r1 = Math.min(rows, r0 + block);
      for (let c = 0; c < cols; c++) {
        const base = c * rows;
        for (let r = r0; r < r1; r++) to[base + r] = from[r * cols + c];
      }
    }
  } else {
    // Output in order; an odometer over the output axes but the last, whose input stride the inner loop walks.
    const strides = tf.util.computeStrides(shape).concat([1]);
    const outShape = p.map((a) => shape[a]);
    const inStride = p.map((a) => strides[a]);
    const rank = p.length, last = outShape[rank - 1], lastStride = inStride[rank - 1];
    const counter = new Array<number>(rank - 1).fill(0);
    for (let at = 0; at < size; at += last) {
      let src = 0;
      for (let i = 0; i < rank - 1; i++) src += counter[i] * inStride[i];
      for (let j = 0; j < last; j++, src += lastStride) to[at + j] = from[src];
      for (let i = rank - 2; i >= 0; i--) {
        if (++counter[i] < outShape[i]) break;
        counter[i] = 0;
      }
    }
  }
  return ops.finish(out);
}

/** Sum (or Mean, `mean`) over leading axes row after row; other reductions go to the built-in kernel. */
function reduceLeading(args: KernelArgs, original: tf.KernelConfig, mean: boolean): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { x } = inputs as { x: tf.TensorInfo };
  const { axis, keepDims } = attrs as unknown as { axis: number | number[]; keepDims: boolean };
  const axes = tf.util.parseAxisParam(axis, x.shape).sort((a, b) => a - b);
  const leading = axes.every((a, i) => a === i) && axes.length < x.shape.length;
  // Innermost reductions need no transpose in the built-in kernel.
  if (x.dtype !== "float32" || !leading || axes.length === 0) return original.kernelFunc(args) as tf.TensorInfo;
  const ops = new WasmOps(backend);
  const kept = x.shape.slice(axes.length);
  const out = ops.allocate(keepDims ? [...axes.map(() => 1), ...kept] : kept);
  const from = ops.view(x), to = ops.view(out);
  const cols = to.length, rows = cols === 0 ? 0 : from.length / cols;
  // Row after row into float32 sums: the order and rounding of a sequential float32 sum per column, four columns
  // per SIMD operation where they come in fours (wat/column_sums.wat: the same sums, to the bit).
  if (cols % 4 === 0 && cols > 0 && rows > 0) {
    const columnSums = watKernel(ops.backend, "column_sums").columnSums as (...args: number[]) => void;
    columnSums(from.byteOffset, to.byteOffset, rows, cols);
  } else {
    to.fill(0);
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      for (let c = 0; c < cols; c++) to[c] += from[base + c];
    }
  }
  // The built-in Mean divides its float32 sum by the count.
  if (mean) { for (let c = 0; c < cols; c++) to[c] /= rows; }
  return ops.finish(out);
}

const sum = (args: KernelArgs, original: tf.KernelConfig) => reduceLeading(args, original, false);
const mean = (args: KernelArgs, original: tf.KernelConfig) => reduceLeading(args, original, true);

/**
 * Replaces the wasm Transpose (float32/int32) and the wasm Sum and Mean over leading axes (float32); others fall
 * back.
 */
export function registerWasmTransposeSum(): void {
  for (const [name, kernel] of [["Transpose", transpose], ["Sum", sum], ["Mean", mean]] as const) {
    const existing = tf.getKernel(name, "wasm") as (tf.KernelConfig & { latentlab?: boolean }) | undefined;
    if (!existing || existing.latentlab) continue;
    replaceWasmKernel(name, (args) => kernel(args, existing), {
      setupFunc: existing.setupFunc,
      disposeFunc: existing.disposeFunc,
    });
  }
}
