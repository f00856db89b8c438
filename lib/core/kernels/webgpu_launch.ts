/**
 * Launches a compute shader of this project inside tfjs-backend-webgpu's command stream: the same encoder and pass
 * as tfjs's own kernels (so the order of work is kept and nothing is submitted early), tensors marked as in use
 * until the submit (so a disposed input's buffer is not reused before the kernel ran), the launch counted towards
 * tfjs's submit batch, and timed like tfjs's kernels under `tf.time`/`tf.profile`. Unlike a tfjs program it may
 * write several outputs.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { WebgpuBackendInternals } from "./webgpu_host.ts";

/** Timing fields of the backend that `tf.time` sets (private in tfjs's typings). */
interface TimedBackend extends WebgpuBackendInternals {
  supportTimestampQuery: boolean;
  querySet: GPUQuerySet | null;
  querySetCount: number;
  getQueryTime(): Promise<number>;
  activeTimers: { name: string; query: Promise<number> }[] | null;
}

const pipelines = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** The compute pipeline of `code` (entry point `main`) on this device, compiled once. */
export function computePipeline(device: GPUDevice, name: string, code: string): GPUComputePipeline {
  let byName = pipelines.get(device);
  if (!byName) pipelines.set(device, byName = new Map());
  let pipeline = byName.get(name);
  if (!pipeline) {
    const module = device.createShaderModule({ label: name, code });
    pipeline = device.createComputePipeline({ label: name, layout: "auto", compute: { module, entryPoint: "main" } });
    byName.set(name, pipeline);
  }
  return pipeline;
}

/** Workgroups covering `n` invocations of `size` each, spread over y when x would pass the device's limit. */
export function workgroupsFor(n: number, size: number, maxPerDimension = 65535): [number, number] {
  const groups = Math.max(1, Math.ceil(n / size));
  const x = Math.min(groups, maxPerDimension);
  return [x, Math.ceil(groups / x)];
}

/**
 * Records one launch of `pipeline` with `tensors` bound at 0, 1, … in order (outputs first, as the shader declares
 * them) and `uniforms` after them.
 */
export function launch(
  backend: WebgpuBackendInternals,
  name: string,
  pipeline: GPUComputePipeline,
  tensors: tf.TensorInfo[],
  uniforms: { type: string; data: number[] }[],
  workgroups: [number, number] | [number, number, number],
): void {
  const timed = backend as TimedBackend;
  for (const tensor of tensors) backend.uploadToGPU(tensor.dataId);
  const entries: GPUBindGroupEntry[] = tensors.map((tensor, i) => ({
    binding: i,
    resource: { buffer: backend.tensorMap.get(tensor.dataId).resource! },
  }));
  entries.push({ binding: tensors.length, resource: backend.makeUniforms(uniforms) });
  const group = backend.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  for (const tensor of tensors) backend.commandQueueOwnedIds.add(tensor.dataId);
  backend.ensureCommandEncoderReady();
  const timing = timed.activeTimers != null;
  if (timing && timed.supportTimestampQuery) {
    backend.endComputePassEncoder();
    timed.querySet ??= backend.device.createQuerySet({ type: "timestamp", count: timed.querySetCount });
    backend.computePassEncoder = backend.commandEncoder!.beginComputePass({
      timestampWrites: { querySet: timed.querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 },
    });
  } else if (!backend.computePassEncoder) {
    backend.computePassEncoder = backend.commandEncoder!.beginComputePass({});
  }
  const pass = backend.computePassEncoder!;
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(workgroups[0], workgroups[1], workgroups[2] ?? 1);
  backend.dispatchCountInPass++;
  if (timing) {
    backend.endComputePassEncoder();
    timed.activeTimers!.push({ name, query: timed.getQueryTime() });
  } else if (backend.dispatchCountInPass >= (tf.env().get("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE") as number)) {
    backend.endComputePassEncoder();
    backend.submitQueue();
  }
}
