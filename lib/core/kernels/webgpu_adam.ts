/**
 * Adam's update of several variables in one launch on the webgpu backend. TF.js's AdamOptimizer runs about
 * fourteen kernels per variable (336 of the conv VAE's ~450 launches per step), each with its host cost; this kernel
 * reads each variable, its gradient and both moments once and writes the three new tensors, for as many variables
 * as the device lets one shader bind (seven buffers each: four with WebGPU's default limit of 8 is one variable;
 * webgpu_device.ts raises the limit to the adapter's).
 *
 * The learning rate comes with the bias corrections as a tensor, not as a uniform: a schedule changes it every step,
 * and a uniform of new contents would be a new buffer (webgpu_host.ts caches uniforms by their bytes).
 *
 * The operations are AdamOptimizer's, in its order, in float32; a GPU compiler may contract a multiply and an add
 * into one fused operation, so the result can differ from TF.js's kernels in the last bit.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import type { WebgpuBackendInternals } from "./webgpu_host.ts";

/**
 * The kernel's name; inputs `value<k>`, `gradient<k>`, `m<k>`, `v<k>` for k < `variables` (attribute) and
 * `corrections` = [1 − β₁ᵗ, 1 − β₂ᵗ, −learning rate]; outputs the new value, m and v of each variable in turn.
 */
export const WEBGPU_ADAM_KERNEL = "LatentlabFusedAdamCorrected";

/** Buffers one variable binds: three outputs, four inputs. */
const BUFFERS_PER_VARIABLE = 7;
/** Variables one launch updates at most, whatever the device allows (the shader grows with each). */
const MOST_VARIABLES = 8;
const WORKGROUP = 256;

/** Variables one launch can update on `device`: its storage-buffer limit less the corrections' buffer, by seven. */
export function adamVariablesPerLaunch(device: GPUDevice): number {
  const buffers = device.limits.maxStorageBuffersPerShaderStage;
  return Math.max(1, Math.min(MOST_VARIABLES, Math.floor((buffers - 1) / BUFFERS_PER_VARIABLE)));
}

function shader(variables: number): string {
  const slots = Array.from({ length: variables }, (_, k) => k);
  const bindings = slots.flatMap((k) => {
    const at = k * BUFFERS_PER_VARIABLE;
    return [
      `@group(0) @binding(${at}) var<storage, read_write> newValue${k} : array<f32>;`,
      `@group(0) @binding(${at + 1}) var<storage, read_write> newFirst${k} : array<f32>;`,
      `@group(0) @binding(${at + 2}) var<storage, read_write> newSecond${k} : array<f32>;`,
      `@group(0) @binding(${at + 3}) var<storage, read> value${k} : array<f32>;`,
      `@group(0) @binding(${at + 4}) var<storage, read> gradient${k} : array<f32>;`,
      `@group(0) @binding(${at + 5}) var<storage, read> first${k} : array<f32>;`,
      `@group(0) @binding(${at + 6}) var<storage, read> second${k} : array<f32>;`,
    ];
  });
  const corrections = variables * BUFFERS_PER_VARIABLE;
  // Invocation i updates element i − end(k−1) of the first variable k whose end exceeds i.
  const branches = slots.map((k) =>
    `${k === 0 ? "" : "else "}if (i < settings.end${k}) {
    let j = i - ${k === 0 ? "0u" : `settings.end${k - 1}`};
    let g = gradient${k}[j];
    let m = first${k}[j] * settings.beta1 + g * settings.oneMinusBeta1;
    let v = second${k}[j] * settings.beta2 + (g * g) * settings.oneMinusBeta2;
    newFirst${k}[j] = m;
    newSecond${k}[j] = v;
    newValue${k}[j] = ((m / corrections[0]) / (sqrt(v / corrections[1]) + settings.epsilon)) * corrections[2] +
      value${k}[j];
  }`
  );
  return `
struct Settings { beta1 : f32, oneMinusBeta1 : f32, beta2 : f32, oneMinusBeta2 : f32, epsilon : f32,
  rowLength : u32, ${slots.map((k) => `end${k} : u32`).join(", ")} }
${bindings.join("\n")}
@group(0) @binding(${corrections}) var<storage, read> corrections : array<f32>;
@group(0) @binding(${corrections + 1}) var<uniform> settings : Settings;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let i = id.y * settings.rowLength + id.x;
  ${branches.join(" ")}
}`;
}

interface AdamAttrs {
  beta1: number;
  beta2: number;
  epsilon: number;
  variables: number;
}

function fusedAdam({ inputs, backend, attrs }: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs: tf.NamedAttrMap;
}): tf.TensorInfo[] {
  const gpu = backend as WebgpuBackendInternals;
  const { beta1, beta2, epsilon, variables } = attrs as unknown as AdamAttrs;
  const slots = Array.from({ length: variables }, (_, k) => k);
  const values = slots.map((k) => inputs[`value${k}`]!);
  const outputs = values.flatMap((value) => [0, 1, 2].map(() => gpu.makeTensorInfo(value.shape, "float32")));
  const ends: number[] = [];
  values.forEach((value, k) => ends.push((ends[k - 1] ?? 0) + tf.util.sizeFromShape(value.shape)));
  const total = ends[ends.length - 1];
  if (total === 0) return outputs;
  const name = `${WEBGPU_ADAM_KERNEL}${variables}`;
  const tensors = slots.flatMap((k) => [
    ...outputs.slice(3 * k, 3 * k + 3),
    values[k],
    inputs[`gradient${k}`]!,
    inputs[`m${k}`]!,
    inputs[`v${k}`]!,
  ]);
  const workgroups = workgroupsFor(total, WORKGROUP);
  const f32 = (x: number) => ({ type: "float32", data: [x] });
  launch(gpu, name, computePipeline(gpu.device, name, shader(variables)), [...tensors, inputs.corrections!], [
    f32(beta1),
    f32(1 - beta1),
    f32(beta2),
    f32(1 - beta2),
    f32(epsilon),
    { type: "uint32", data: [workgroups[0] * WORKGROUP] },
    ...ends.map((end) => ({ type: "uint32", data: [end] })),
  ], workgroups);
  return outputs;
}

/** Registers the kernel on webgpu (idempotent). */
export function registerWebgpuFusedAdam(): void {
  if (tf.getKernel(WEBGPU_ADAM_KERNEL, "webgpu")) return;
  tf.registerKernel({
    kernelName: WEBGPU_ADAM_KERNEL,
    backendName: "webgpu",
    kernelFunc: fusedAdam as unknown as tf.KernelFunc,
  });
}
