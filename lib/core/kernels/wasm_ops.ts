/**
 * Composing wasm kernels inside a kernel: run registered wasm kernels on
 * TensorInfos, allocate outputs on the wasm heap, and free intermediates.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { WAT_MODULES } from "./wat/modules.ts";

/** The parts of tfjs-backend-wasm's BackendWasm that composed kernels use. */
export interface WasmBackend extends tf.KernelBackend {
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(info: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
  wasm: { asm: { memory: WebAssembly.Memory } };
}

/** The binary of the hand-written kernel module `name` (lib/core/kernels/wat/). */
export function watModuleBytes(name: string): Uint8Array<ArrayBuffer> {
  const base64 = WAT_MODULES[name];
  if (!base64) throw new Error(`no hand-written wasm kernel ${name}`);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

const watInstances = new WeakMap<WebAssembly.Memory, Map<string, WebAssembly.Exports>>();

/**
 * The exports of the hand-written kernel module `name`, instantiated once per backend on that backend's memory, so
 * its functions take tensors' byte addresses (a view's `byteOffset`).
 */
export function watKernel(backend: WasmBackend, name: string): WebAssembly.Exports {
  const memory = backend.wasm.asm.memory;
  let modules = watInstances.get(memory);
  if (!modules) watInstances.set(memory, modules = new Map());
  let exports = modules.get(name);
  if (!exports) {
    exports = new WebAssembly.Instance(new WebAssembly.Module(watModuleBytes(name)), { env: { memory } }).exports;
    modules.set(name, exports);
  }
  return exports;
}

/** Runs wasm kernels for one composed kernel call and frees what it created but does not return. */
export class WasmOps {
  readonly backend: WasmBackend;
  #temporaries: tf.TensorInfo[] = [];

  constructor(backend: unknown) {
    this.backend = backend as WasmBackend;
  }

  /** Runs the wasm kernel `name`; the output is freed by {@linkcode finish} unless returned. */
  run(name: string, inputs: Record<string, tf.TensorInfo>, attrs: Record<string, unknown> = {}): tf.TensorInfo {
    const kernel = tf.getKernel(name, "wasm");
    if (!kernel) throw new Error(`wasm kernel ${name} is not registered`);
    const out = kernel.kernelFunc({ inputs, backend: this.backend, attrs: attrs as tf.NamedAttrMap }) as tf.TensorInfo;
    this.#temporaries.push(out);
    return out;
  }

  /** Allocates a tensor on the wasm heap, freed by finish unless returned. Its memory is not cleared. */
  allocate(shape: number[], dtype: "float32" | "int32" = "float32"): tf.TensorInfo {
    const out = this.backend.makeOutput(shape, dtype);
    this.#temporaries.push(out);
    return out;
  }

  /**
   * A float32 view of a tensor's heap memory. Views are invalidated when the
   * heap grows, so take them after the allocations they sit beside.
   */
  view(info: tf.TensorInfo): Float32Array {
    return this.backend.typedArrayFromHeap(info) as Float32Array;
  }

  /** A view typed by the tensor's dtype (float32 or int32). */
  numbers(info: tf.TensorInfo): Float32Array | Int32Array {
    return this.backend.typedArrayFromHeap(info) as Float32Array | Int32Array;
  }

  /** Frees every intermediate except `result` and returns it. */
  finish(result: tf.TensorInfo): tf.TensorInfo {
    for (const info of this.#temporaries) if (info.dataId !== result.dataId) this.backend.disposeData(info.dataId);
    this.#temporaries = [];
    return result;
  }
}

/** Kernel arguments as TF.js passes them. */
export type KernelArgs = Parameters<tf.KernelFunc>[0];

/**
 * Registers `kernelFunc` as the wasm kernel `kernelName`, replacing a
 * built-in one; registering twice is a no-op. `extra` carries fields of the
 * replaced config to keep (setupFunc, disposeFunc).
 */
export function replaceWasmKernel(
  kernelName: string,
  kernelFunc: (args: KernelArgs) => tf.TensorInfo,
  extra: Partial<tf.KernelConfig> = {},
): void {
  const existing = tf.getKernel(kernelName, "wasm") as (tf.KernelConfig & { latentlab?: boolean }) | undefined;
  if (existing?.latentlab) return;
  if (existing) tf.unregisterKernel(kernelName, "wasm");
  tf.registerKernel({ ...extra, kernelName, backendName: "wasm", kernelFunc, latentlab: true } as tf.KernelConfig);
}

/** Attributes shared by the convolution-gradient kernels. */
export type ConvAttrs = {
  strides: number | [number, number];
  dilations?: number | [number, number];
  pad: "valid" | "same" | number | tf.backend_util.ExplicitPadding;
  dataFormat?: "NHWC" | "NCHW";
  dimRoundingMode?: "floor" | "round" | "ceil";
};

/** Shapes, strides and padding of an NHWC (depthwise) convolution, as the TF.js backends compute them. */
export function convInfo(
  xShape: number[],
  filterShape: number[],
  attrs: ConvAttrs,
  depthwise = false,
): tf.backend_util.Conv2DInfo {
  if (attrs.dataFormat === "NCHW") throw new Error("latentlab wasm convolution gradients support NHWC only");
  return tf.backend_util.computeConv2DInfo(
    xShape as [number, number, number, number],
    filterShape as [number, number, number, number],
    attrs.strides,
    attrs.dilations ?? 1,
    attrs.pad,
    attrs.dimRoundingMode,
    depthwise,
  );
}
