/**
 * GatherV2, Slice and Identity for the wasm backend without element loops.
 *
 * tfjs-backend-wasm 4.22 gathers element by element (58 ms for the 15 360
 * windows rows × 120 features of a CEBRA batch, 1.8 M floats) and slices
 * rank-3 tensors with one subarray per innermost row (3 ms for a CEBRA skip
 * connection's crop). Both are runs of contiguous memory: `copyWithin` on
 * the heap moves them without allocating views. Identity, which the engine runs to keep every
 * tensor a gradient needs, copies in the wasm backend (5 ms a CEBRA step);
 * tensors are immutable, so it shares the data as the cpu backend does.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps } from "./wasm_ops.ts";

/** Runs shorter than this are copied by an element loop, which beats the call of copyWithin there. */
const SHORT_RUN = 16;

/** The whole heap as a typed array of `view`'s kind, and where `view` starts in it. */
function heapOf(view: Float32Array | Int32Array): { heap: Float32Array | Int32Array; at: number } {
  const heap = view instanceof Float32Array ? new Float32Array(view.buffer) : new Int32Array(view.buffer);
  return { heap, at: view.byteOffset / 4 };
}

function copyRun(heap: Float32Array | Int32Array, to: number, from: number, length: number): void {
  if (length < SHORT_RUN) {
    for (let i = 0; i < length; i++) heap[to + i] = heap[from + i];
  } else {
    heap.copyWithin(to, from, from + length);
  }
}

function gatherV2(args: KernelArgs, original: tf.KernelConfig): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { x, indices } = inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
  if (x.dtype !== "float32" && x.dtype !== "int32") return original.kernelFunc(args) as tf.TensorInfo;
  const { axis, batchDims } = attrs as unknown as { axis: number; batchDims: number };
  const ops = new WasmOps(backend);
  const a = tf.util.parseAxisParam(axis, x.shape)[0];
  // x as [batch, outer, dim, inner], indices as [batch, count]: out[b, o, i] = x[b, o, indices[b, i]].
  const info = tf.backend_util.segment_util.collectGatherOpShapeInfo(
    x as tf.Tensor,
    indices as tf.Tensor,
    a,
    batchDims,
  );
  const { batchSize: batch, outerSize: outer, dimSize: dim, sliceSize: inner } = info;
  const ids = ops.numbers(indices);
  for (let i = 0; i < ids.length; i++) {
    const index = ids[i];
    // The built-in kernel's check and message.
    if (!(index >= 0 && index <= dim - 1)) {
      throw new Error(`GatherV2: the index value ${index} is not in [0, ${dim - 1}]`);
    }
  }
  const out = ops.allocate(info.outputShape, x.dtype);
  if (info.outputShape.some((d) => d === 0)) return ops.finish(out);
  // Views after the allocation: allocating may grow (and move) the heap.
  const { heap, at: xAt } = heapOf(ops.numbers(x));
  const outAt = ops.numbers(out).byteOffset / 4;
  const index = ops.numbers(indices);
  const count = index.length / batch;
  let to = outAt;
  for (let b = 0; b < batch; b++) {
    for (let o = 0; o < outer; o++) {
      const from = xAt + (b * outer + o) * dim * inner;
      for (let i = 0; i < count; i++, to += inner) copyRun(heap, to, from + index[b * count + i] * inner, inner);
    }
  }
  return ops.finish(out);
}

function slice(args: KernelArgs, original: tf.KernelConfig): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { x } = inputs as { x: tf.TensorInfo };
  if ((x.dtype !== "float32" && x.dtype !== "int32") || x.shape.length === 0) {
    return original.kernelFunc(args) as tf.TensorInfo;
  }
  const { begin, size } = attrs as unknown as { begin: number | number[]; size: number | number[] };
  const [start, extent] = tf.slice_util.parseSliceParams(x as tf.Tensor, begin, size);
  const ops = new WasmOps(backend);
  const out = ops.allocate(extent, x.dtype);
  const total = extent.reduce((p, q) => p * q, 1);
  if (total === 0) return ops.finish(out);
  // Trailing axes taken whole merge into one contiguous run with the first partial axis before them.
  const rank = x.shape.length;
  let split = rank - 1;
  while (split > 0 && start[split] === 0 && extent[split] === x.shape[split]) split--;
  const run = extent.slice(split).reduce((p, q) => p * q, 1);
  const strides = tf.util.computeStrides(x.shape);
  const { heap, at: xAt } = heapOf(ops.numbers(x));
  const outAt = ops.numbers(out).byteOffset / 4;
  const base = xAt + start.reduce((s, b, i) => s + b * (i < rank - 1 ? strides[i] : 1), 0);
  // Odometer over the axes before `split`.
  const counter = new Array<number>(split).fill(0);
  for (let to = 0; to < total; to += run) {
    let from = base;
    for (let i = 0; i < split; i++) from += counter[i] * strides[i];
    copyRun(heap, outAt + to, from, run);
    for (let i = split - 1; i >= 0; i--) {
      if (++counter[i] < extent[i]) break;
      counter[i] = 0;
    }
  }
  return ops.finish(out);
}

function identity({ inputs, backend }: KernelArgs): tf.TensorInfo {
  const { x } = inputs as { x: tf.TensorInfo };
  (backend as tf.KernelBackend & { incRef(dataId: object): void }).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

/**
 * Replaces the wasm GatherV2 and Slice kernels (float32 and int32; other
 * dtypes fall back) and Identity.
 */
export function registerWasmCopies(): void {
  const gather = tf.getKernel("GatherV2", "wasm");
  const sliceKernel = tf.getKernel("Slice", "wasm");
  if (gather && !(gather as { latentlab?: boolean }).latentlab) {
    replaceWasmKernel("GatherV2", (args) => gatherV2(args, gather), {
      setupFunc: gather.setupFunc,
      disposeFunc: gather.disposeFunc,
    });
  }
  if (sliceKernel && !(sliceKernel as { latentlab?: boolean }).latentlab) {
    replaceWasmKernel("Slice", (args) => slice(args, sliceKernel), {
      setupFunc: sliceKernel.setupFunc,
      disposeFunc: sliceKernel.disposeFunc,
    });
  }
  replaceWasmKernel("Identity", identity);
}
