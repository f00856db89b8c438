/**
 * UnsortedSegmentSum for the wasm backend, which lacks it: the gradient of
 * gather (embeddings, index selection). One JS pass over the wasm heap.
 *
 * @module
 */
import { type KernelArgs, replaceWasmKernel, WasmOps } from "./wasm_ops.ts";
import type * as tf from "@tensorflow/tfjs";

function unsortedSegmentSum({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const { numSegments } = attrs as unknown as { numSegments: number };
  const ops = new WasmOps(backend);
  const rows = segmentIds.shape.reduce((a, b) => a * b, 1);
  const inner = x.shape.slice(segmentIds.shape.length).reduce((a, b) => a * b, 1);
  const out = ops.allocate([numSegments, ...x.shape.slice(segmentIds.shape.length)], x.dtype as "float32" | "int32");
  const values = ops.numbers(x), ids = ops.numbers(segmentIds), sums = ops.numbers(out);
  sums.fill(0);
  for (let r = 0; r < rows; r++) {
    const segment = ids[r];
    // Ids outside [0, numSegments) are dropped, as TensorFlow does.
    if (segment < 0 || segment >= numSegments) continue;
    for (let i = 0; i < inner; i++) sums[segment * inner + i] += values[r * inner + i];
  }
  return ops.finish(out);
}

/** Registers UnsortedSegmentSum on the wasm backend. */
export function registerWasmUnsortedSegmentSum(): void {
  replaceWasmKernel("UnsortedSegmentSum", unsortedSegmentSum);
}
