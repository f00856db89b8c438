/**
 * What a training step costs the host on WebGPU, measured the way training runs it: steps recorded back to back
 * and the result read once at the end (training reads its loss once per `log_every` steps), counting the WebGPU
 * calls of each (lib/core/kernels/webgpu_counters.ts) and, where the adapter has timestamp queries, the GPU time
 * of one step's kernels. The counts are the same on any adapter: a software one measures them without a GPU.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import {
  countsPerStep,
  installWebgpuCounters,
  type WebgpuCounts,
  webgpuCounts,
} from "../../lib/core/kernels/webgpu_counters.ts";

/** Unread steps run before counting: the buffer pool and the caches fill during the first steps. */
const WARMUP_STEPS = 3;

/** A workload's WebGPU calls per step and its time per step without a read per step. */
export interface WebgpuCalls {
  /** Steps counted (recorded back to back, one read after the last). */
  steps: number;
  /** Calls per step over those steps (the one read at the end divided among them). */
  per_step: WebgpuCounts;
  /** Wall time per step over those steps, the final read included. */
  ms_per_step: number;
  /** The kernels' GPU time of one step from timestamp queries; null where the adapter has none. */
  gpu_ms_per_step: number | null;
}

/** A workload's step with its result left on the device (`WorkloadState.record` in rounds.ts). */
interface RecordingState {
  record?(): tf.Tensor;
}

/** Measures `state`'s unread step (`record`) over `steps` steps; null when the workload has none. */
export async function measureWebgpuCalls(state: RecordingState, steps: number): Promise<WebgpuCalls | null> {
  if (!state.record) return null;
  installWebgpuCounters();
  let last: tf.Tensor | null = null;
  for (let i = 0; i < WARMUP_STEPS; i++) {
    last?.dispose();
    last = state.record();
  }
  await last!.data();
  last!.dispose();
  last = null;
  const before = webgpuCounts();
  const start = performance.now();
  for (let i = 0; i < steps; i++) {
    last?.dispose();
    last = state.record();
  }
  await last!.data();
  last!.dispose();
  const ms = (performance.now() - start) / steps;
  const perStep = countsPerStep(before, webgpuCounts(), steps);
  const timing = await tf.time(() => state.record!().dispose());
  const kernelMs = (timing as { kernelMs: number | { error: string } }).kernelMs;
  return {
    steps,
    per_step: perStep,
    ms_per_step: ms,
    gpu_ms_per_step: typeof kernelMs === "number" && kernelMs > 0 ? kernelMs : null,
  };
}
