/**
 * Optimizer updates of several variables in one launch on the webgpu backend. TF.js's optimizers run a chain of
 * element-wise kernels per variable (Adam about fourteen, momentum SGD four), each with its host cost; a kernel here
 * reads each variable's tensors once and writes its new ones, for as many variables as the device lets one shader
 * bind (webgpu_device.ts raises that limit to the adapter's; WebGPU's default of 8 allows one variable).
 *
 * A kernel is registered from its per-variable buffers and one WGSL body per variable; inputs are named
 * `<name><k>` for variable k, shared inputs (a step's scalars, kept as tensors so that a new learning rate is a new
 * value in a buffer, not a new uniform buffer) by their names, and the outputs come variable by variable.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import type { WebgpuBackendInternals } from "./webgpu_host.ts";

const WORKGROUP = 256;
/** Variables one launch updates at most, whatever the device allows (the shader grows with each). */
const MOST_VARIABLES = 8;

/** An update kernel over variables: its buffers and the WGSL body for one variable. */
export interface UpdateKernel {
  /** The kernel's name in TF.js's registry. */
  name: string;
  /** Per-variable outputs, e.g. the new value and moments. */
  outputs: string[];
  /** Per-variable inputs, e.g. the value, its gradient and moments. */
  inputs: string[];
  /** Inputs shared by every variable (read as `<name>[0]`, …). */
  shared: string[];
  /** f32 attributes passed as uniforms (`settings.<name>`). */
  settings: string[];
  /**
   * WGSL statements updating element `j` of variable `k`: they read `<input>k[j]` and set `<output>k[j]`, with the
   * buffers named by {@linkcode slotName}.
   */
  body(k: number): string;
}

/** The WGSL name of buffer `name` of variable `k`. */
export const slotName = (name: string, k: number): string => `${name}${k}`;

/** Variables one launch of `kernel` can update on `device`. */
export function variablesPerLaunch(device: GPUDevice, kernel: UpdateKernel): number {
  const perVariable = kernel.outputs.length + kernel.inputs.length;
  const free = device.limits.maxStorageBuffersPerShaderStage - kernel.shared.length;
  return Math.max(1, Math.min(MOST_VARIABLES, Math.floor(free / perVariable)));
}

function shader(kernel: UpdateKernel, variables: number): string {
  const slots = Array.from({ length: variables }, (_, k) => k);
  const buffers = [
    ...slots.flatMap((k) => [
      ...kernel.outputs.map((name) => `var<storage, read_write> ${slotName(name, k)} : array<f32>;`),
      ...kernel.inputs.map((name) => `var<storage, read> ${slotName(name, k)} : array<f32>;`),
    ]),
    ...kernel.shared.map((name) => `var<storage, read> ${name} : array<f32>;`),
  ];
  // Invocation i updates element i − end(k−1) of the first variable k whose end exceeds i.
  const branches = slots.map((k) =>
    `${k === 0 ? "" : "else "}if (i < settings.end${k}) {
    let j = i - ${k === 0 ? "0u" : `settings.end${k - 1}`};
    ${kernel.body(k)}
  }`
  );
  return `
struct Settings { ${kernel.settings.map((name) => `${name} : f32, `).join("")}rowLength : u32, ${
    slots.map((k) => `end${k} : u32`).join(", ")
  } }
${buffers.map((declaration, i) => `@group(0) @binding(${i}) ${declaration}`).join("\n")}
@group(0) @binding(${buffers.length}) var<uniform> settings : Settings;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let i = id.y * settings.rowLength + id.x;
  ${branches.join(" ")}
}`;
}

/** Registers `kernel` on webgpu (idempotent); attribute `variables` says how many variables a call updates. */
export function registerUpdateKernel(kernel: UpdateKernel): void {
  if (tf.getKernel(kernel.name, "webgpu")) return;
  tf.registerKernel({
    kernelName: kernel.name,
    backendName: "webgpu",
    kernelFunc: (({ inputs, backend, attrs }: {
      inputs: tf.NamedTensorInfoMap;
      backend: unknown;
      attrs: tf.NamedAttrMap;
    }) => {
      const gpu = backend as WebgpuBackendInternals;
      const variables = attrs.variables as number;
      const slots = Array.from({ length: variables }, (_, k) => k);
      const first = kernel.inputs[0];
      const shapes = slots.map((k) => inputs[slotName(first, k)]!.shape);
      const outputs = slots.flatMap((k) => kernel.outputs.map(() => gpu.makeTensorInfo(shapes[k], "float32")));
      const ends: number[] = [];
      shapes.forEach((shape, k) => ends.push((ends[k - 1] ?? 0) + tf.util.sizeFromShape(shape)));
      const total = ends[ends.length - 1];
      if (total === 0) return outputs;
      const tensors = [
        ...slots.flatMap((k) => [
          ...outputs.slice(k * kernel.outputs.length, (k + 1) * kernel.outputs.length),
          ...kernel.inputs.map((name) => inputs[slotName(name, k)]!),
        ]),
        ...kernel.shared.map((name) => inputs[name]!),
      ];
      const name = `${kernel.name}${variables}`;
      const workgroups = workgroupsFor(total, WORKGROUP);
      launch(gpu, name, computePipeline(gpu.device, name, shader(kernel, variables)), tensors, [
        ...kernel.settings.map((setting) => ({ type: "float32", data: [attrs[setting] as number] })),
        { type: "uint32", data: [workgroups[0] * WORKGROUP] },
        ...ends.map((end) => ({ type: "uint32", data: [end] })),
      ], workgroups);
      return outputs;
    }) as unknown as tf.KernelFunc,
  });
}

/**
 * Runs `kernel` over `updates` (each its per-variable inputs by name), as many variables per launch as the device
 * allows, with `shared` inputs and `settings`; returns each update's outputs in the kernel's order.
 */
export function runUpdates(
  kernel: UpdateKernel,
  device: GPUDevice,
  updates: Record<string, tf.Tensor>[],
  shared: Record<string, tf.Tensor>,
  settings: Record<string, number>,
): tf.Tensor[][] {
  const perLaunch = variablesPerLaunch(device, kernel);
  const results: tf.Tensor[][] = [];
  for (let start = 0; start < updates.length; start += perLaunch) {
    const group = updates.slice(start, start + perLaunch);
    const inputs: tf.NamedTensorMap = { ...shared };
    group.forEach((update, k) => {
      for (const name of kernel.inputs) inputs[slotName(name, k)] = update[name];
    });
    const outputs = tf.engine().runKernel(kernel.name, inputs, {
      ...settings,
      variables: group.length,
    } as unknown as tf.NamedAttrMap) as tf.Tensor[];
    group.forEach((_, k) => results.push(outputs.slice(k * kernel.outputs.length, (k + 1) * kernel.outputs.length)));
  }
  return results;
}
