/**
 * Settings of tfjs-backend-webgpu 4.22 that take the host's per-operation cost out of a training step (not a fork:
 * methods of the backend instance are wrapped, the kernels stay tfjs's).
 *
 * A small model's step on a GPU is bound by the host: every kernel launch of stock tfjs writes a fresh uniform
 * buffer, creates a bind group, and every upload of a host value (a scalar constant, a batch) creates and maps a
 * staging buffer that is destroyed after the submit. On NVIDIA, buffer creation may also query the memory budget
 * each time. Here:
 *
 * - uniforms are cached by their bytes: a launch whose shapes and parameters were seen before binds the same
 *   buffer, written once (at most {@linkcode UNIFORMS_CACHED} distinct contents; beyond that tfjs's pooled path);
 * - bind groups are cached by layout and bound buffers, which repeat from step to step because tensor buffers
 *   come from tfjs's pool; the layout of a pipeline is asked once;
 * - an upload writes the pooled destination buffer with `queue.writeBuffer`, so no buffer is created once the pool
 *   holds one of each size;
 * - launches are submitted in batches of {@linkcode LAUNCHES_PER_SUBMIT} rather than 15.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";

/** Distinct uniform contents kept on the device; a step of the models here needs a few hundred. */
export const UNIFORMS_CACHED = 4096;
/** Bind groups kept; the cache is emptied when it reaches this many (they are cheap to make again). */
export const BIND_GROUPS_CACHED = 20_000;
/** Kernel launches recorded before tfjs submits them (its default, 15, costs a submit per 15 launches). */
export const LAUNCHES_PER_SUBMIT = 128;

type ProgramUniform = { type: string; data: number[] }[];
type Binding = { offset: number; size: number; buffer: GPUBuffer };

/** The parts of tfjs-backend-webgpu 4.22's backend these settings use (private in its typings). */
export interface WebgpuBackendInternals {
  device: GPUDevice;
  queue: GPUQueue;
  tensorMap: {
    get(dataId: object): {
      dtype: tf.DataType;
      shape: number[];
      values: ArrayLike<number> | null;
      resource: GPUBuffer | null;
      refCount: number;
    };
  };
  bufferManager: { acquireBuffer(size: number, usage: number): GPUBuffer };
  commandEncoder: GPUCommandEncoder | null;
  computePassEncoder: GPUComputePassEncoder | null;
  commandQueueOwnedIds: WeakSet<object>;
  dispatchCountInPass: number;
  activeTimers: unknown[] | null;
  makeUniforms(uniforms: ProgramUniform): Binding;
  uploadToGPU(dataId: object): void;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  makeTensorInfo(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  tuned?: boolean;
}

/** The bytes of a uniform block laid out as tfjs's makeUniforms lays it out (WGSL alignment rules). */
export function uniformBytes(uniforms: ProgramUniform): ArrayBuffer {
  let offset = 0, previousLength = 0, largestAlignment = 1;
  const offsets: number[] = [];
  for (const field of uniforms) {
    if (field.data.length === 0) field.data = [1];
    const length = field.data.length;
    let alignment = length === 1 ? 4 : length === 2 ? 8 : 16;
    if (previousLength === 5 || previousLength === 6) alignment = 16;
    largestAlignment = Math.max(largestAlignment, alignment);
    offset = Math.ceil(offset / alignment) * alignment;
    previousLength = length;
    offsets.push(offset);
    offset += length * 4;
  }
  const bytes = new ArrayBuffer(Math.ceil(offset / largestAlignment) * largestAlignment);
  uniforms.forEach((field, i) => {
    const Typed = field.type === "int32" ? Int32Array : field.type === "uint32" ? Uint32Array : Float32Array;
    new Typed(bytes, offsets[i], field.data.length).set(field.data);
  });
  return bytes;
}

function cacheUniforms(backend: WebgpuBackendInternals): void {
  const pooled = backend.makeUniforms.bind(backend);
  const cached = new Map<string, Binding>();
  backend.makeUniforms = (uniforms) => {
    const bytes = uniformBytes(uniforms);
    // The words as text: NaN, Infinity and -0 keep distinct keys, which float formatting would merge.
    const key = new Uint32Array(bytes).join(",");
    const hit = cached.get(key);
    if (hit) return hit;
    if (cached.size >= UNIFORMS_CACHED) return pooled(uniforms);
    const buffer = backend.device.createBuffer({
      size: bytes.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    backend.queue.writeBuffer(buffer, 0, bytes);
    const binding = { offset: 0, size: bytes.byteLength, buffer };
    cached.set(key, binding);
    return binding;
  };
}

const layouts = new WeakMap<GPUComputePipeline, Map<number, GPUBindGroupLayout>>();
let layoutsMemoised = false;

/** `getBindGroupLayout` answers the same layout object for a pipeline, so that bind groups can be keyed by it. */
function memoiseLayouts(): void {
  if (layoutsMemoised) return;
  layoutsMemoised = true;
  const original = GPUComputePipeline.prototype.getBindGroupLayout;
  GPUComputePipeline.prototype.getBindGroupLayout = function (this: GPUComputePipeline, index: number) {
    let byIndex = layouts.get(this);
    if (!byIndex) layouts.set(this, byIndex = new Map());
    let layout = byIndex.get(index);
    if (!layout) byIndex.set(index, layout = original.call(this, index));
    return layout;
  };
}

function cacheBindGroups(device: GPUDevice): void {
  const ids = new WeakMap<object, number>();
  let nextId = 0;
  const idOf = (object: object) => {
    let id = ids.get(object);
    if (id === undefined) ids.set(object, id = ++nextId);
    return id;
  };
  const cached = new Map<string, GPUBindGroup>();
  const create = device.createBindGroup.bind(device);
  device.createBindGroup = (descriptor: GPUBindGroupDescriptor) => {
    let key = `${idOf(descriptor.layout)}`;
    for (const entry of descriptor.entries) {
      const resource = entry.resource as GPUBufferBinding;
      // Only buffer bindings are cached; a texture or sampler binding is made afresh.
      if (!(resource.buffer instanceof GPUBuffer)) return create(descriptor);
      key += `|${entry.binding}:${idOf(resource.buffer)}@${resource.offset ?? 0}+${resource.size ?? "all"}`;
    }
    let group = cached.get(key);
    if (!group) {
      if (cached.size >= BIND_GROUPS_CACHED) cached.clear();
      cached.set(key, group = create(descriptor));
    }
    return group;
  };
}

function uploadWithoutStaging(backend: WebgpuBackendInternals): void {
  const stock = backend.uploadToGPU.bind(backend);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  backend.uploadToGPU = (dataId) => {
    const data = backend.tensorMap.get(dataId);
    if (data.resource != null || data.values == null || data.dtype === "complex64" || data.dtype === "string") {
      return stock(dataId);
    }
    const integer = data.dtype === "int32" || data.dtype === "bool";
    const words = integer
      ? (data.values instanceof Int32Array ? data.values : Int32Array.from(data.values))
      : (data.values instanceof Float32Array ? data.values : Float32Array.from(data.values));
    // A pooled buffer is free only once the commands that used it were submitted, and a queue write is ordered
    // after those: writing it now cannot change what an earlier kernel read.
    const buffer = backend.bufferManager.acquireBuffer(words.byteLength, usage);
    backend.queue.writeBuffer(buffer, 0, words.buffer as ArrayBuffer, words.byteOffset, words.byteLength);
    data.values = null;
    data.resource = buffer;
  };
}

/**
 * Whether every tensor's buffer holds float32 words. TF.js's webgpu Cast relabels a bool or int32 tensor as float32
 * without converting its buffer (its own kernels convert when they read); the kernels here read float32 only.
 */
export function storedAsFloat32(backend: WebgpuBackendInternals, ...tensors: tf.TensorInfo[]): boolean {
  return tensors.every((t) => t.dtype === "float32" && backend.tensorMap.get(t.dataId).dtype === "float32");
}

/** The active webgpu backend's internals, or null when another backend is active. */
export function webgpuBackend(): WebgpuBackendInternals | null {
  return tf.getBackend() === "webgpu" ? tf.backend() as unknown as WebgpuBackendInternals : null;
}

/** Whether webgpu is active with latentlab's kernels and settings (not `--webgpu_kernels stock`). */
export function latentlabWebgpu(): boolean {
  return webgpuBackend()?.tuned === true;
}

/** Applies the settings above to the active webgpu backend (idempotent; nothing on other backends). */
export function tuneWebgpuBackend(): void {
  const backend = webgpuBackend();
  if (!backend || backend.tuned) return;
  backend.tuned = true;
  tf.env().set("WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE", LAUNCHES_PER_SUBMIT);
  memoiseLayouts();
  cacheUniforms(backend);
  cacheBindGroups(backend.device);
  uploadWithoutStaging(backend);
}
