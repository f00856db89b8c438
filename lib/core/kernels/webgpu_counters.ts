/**
 * Counts of the WebGPU calls whose host cost decides a small model's step time: dispatches, buffer creations,
 * uploads, bind groups, submits and readbacks. They are the same on any adapter, so a software Vulkan adapter
 * (lavapipe) measures what a GPU's step pays on the host.
 *
 * The counters wrap the methods on the WebGPU prototypes, so they count every caller (tfjs-backend-webgpu and the
 * kernels of this project alike); one increment per call is all they add.
 *
 * @module
 */

/** WebGPU calls made since the counters were last reset. */
export interface WebgpuCounts {
  /** `dispatchWorkgroups` calls: one per kernel launched. */
  dispatches: number;
  /** `createBuffer` calls (tensor storage, uniforms, staging buffers). */
  bufferCreations: number;
  /** Host-to-device copies: `queue.writeBuffer` calls and buffers created mapped for the host to fill. */
  uploads: number;
  /** `createBindGroup` calls. */
  bindGroups: number;
  /** `queue.submit` calls. */
  submits: number;
  /** Device-to-host reads: `mapAsync` calls on buffers mapped for reading. */
  readbacks: number;
}

const counts: WebgpuCounts = {
  dispatches: 0,
  bufferCreations: 0,
  uploads: 0,
  bindGroups: 0,
  submits: 0,
  readbacks: 0,
};

let installed = false;

type Method = (this: unknown, ...args: never[]) => unknown;

function countCalls(prototype: object | undefined, method: string, count: (...args: never[]) => void): void {
  if (!prototype) return;
  const original = (prototype as Record<string, Method>)[method];
  if (typeof original !== "function") return;
  (prototype as Record<string, Method>)[method] = function (this: unknown, ...args: never[]) {
    count(...args);
    return original.apply(this, args);
  };
}

const prototypeOf = (name: string): object | undefined =>
  (globalThis as unknown as Record<string, { prototype?: object } | undefined>)[name]?.prototype;

/** Starts counting (idempotent); a no-op where the runtime has no WebGPU. */
export function installWebgpuCounters(): void {
  if (installed || !prototypeOf("GPUDevice")) return;
  installed = true;
  countCalls(prototypeOf("GPUComputePassEncoder"), "dispatchWorkgroups", () => counts.dispatches++);
  countCalls(prototypeOf("GPUDevice"), "createBuffer", (descriptor: GPUBufferDescriptor) => {
    counts.bufferCreations++;
    if (descriptor.mappedAtCreation) counts.uploads++;
  });
  countCalls(prototypeOf("GPUDevice"), "createBindGroup", () => counts.bindGroups++);
  countCalls(prototypeOf("GPUQueue"), "writeBuffer", () => counts.uploads++);
  countCalls(prototypeOf("GPUQueue"), "submit", () => counts.submits++);
  countCalls(prototypeOf("GPUBuffer"), "mapAsync", (mode: number) => {
    if (mode & GPUMapMode.READ) counts.readbacks++;
  });
}

/** The counts since the last {@linkcode resetWebgpuCounts} (a copy). */
export function webgpuCounts(): WebgpuCounts {
  return { ...counts };
}

/** Sets every count to zero. */
export function resetWebgpuCounts(): void {
  for (const key of Object.keys(counts) as (keyof WebgpuCounts)[]) counts[key] = 0;
}

/** The counts of `after` minus those of `before`, divided by `steps`: calls per step. */
export function countsPerStep(before: WebgpuCounts, after: WebgpuCounts, steps: number): WebgpuCounts {
  const per = {} as WebgpuCounts;
  for (const key of Object.keys(counts) as (keyof WebgpuCounts)[]) per[key] = (after[key] - before[key]) / steps;
  return per;
}
