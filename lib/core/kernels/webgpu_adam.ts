/**
 * Adam's update of one variable in one launch on the webgpu backend. TF.js's AdamOptimizer runs about fourteen
 * kernels per variable (336 of the conv VAE's ~450 launches per step), each with its host cost; this kernel reads the
 * variable, its gradient and both moments once and writes the three new tensors.
 *
 * The operations are AdamOptimizer's, in its order, in float32; a GPU compiler may contract a multiply and an add
 * into one fused operation, so the result can differ from TF.js's kernels in the last bit.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import type { WebgpuBackendInternals } from "./webgpu_host.ts";

/** The kernel's name; inputs value, gradient, m, v and `corrections` = [1 − β₁ᵗ, 1 − β₂ᵗ]. */
export const WEBGPU_ADAM_KERNEL = "LatentlabFusedAdamCorrected";

const WORKGROUP = 256;

const SHADER = /* wgsl */ `
struct Settings { beta1 : f32, oneMinusBeta1 : f32, beta2 : f32, oneMinusBeta2 : f32, epsilon : f32,
  negativeRate : f32, n : u32, rowLength : u32 }
@group(0) @binding(0) var<storage, read_write> newValue : array<f32>;
@group(0) @binding(1) var<storage, read_write> newFirst : array<f32>;
@group(0) @binding(2) var<storage, read_write> newSecond : array<f32>;
@group(0) @binding(3) var<storage, read> value : array<f32>;
@group(0) @binding(4) var<storage, read> gradient : array<f32>;
@group(0) @binding(5) var<storage, read> first : array<f32>;
@group(0) @binding(6) var<storage, read> second : array<f32>;
@group(0) @binding(7) var<storage, read> corrections : array<f32>;
@group(0) @binding(8) var<uniform> settings : Settings;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let i = id.y * settings.rowLength + id.x;
  if (i >= settings.n) { return; }
  let g = gradient[i];
  let m = first[i] * settings.beta1 + g * settings.oneMinusBeta1;
  let v = second[i] * settings.beta2 + (g * g) * settings.oneMinusBeta2;
  newFirst[i] = m;
  newSecond[i] = v;
  let mHat = m / corrections[0];
  let vHat = v / corrections[1];
  newValue[i] = (mHat / (sqrt(vHat) + settings.epsilon)) * settings.negativeRate + value[i];
}`;

interface AdamAttrs {
  beta1: number;
  beta2: number;
  epsilon: number;
  learningRate: number;
}

function fusedAdam({ inputs, backend, attrs }: {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs: tf.NamedAttrMap;
}): tf.TensorInfo[] {
  const gpu = backend as WebgpuBackendInternals;
  const { value, gradient, m, v, corrections } = inputs as Record<string, tf.TensorInfo>;
  const { beta1, beta2, epsilon, learningRate } = attrs as unknown as AdamAttrs;
  const n = tf.util.sizeFromShape(value.shape);
  const outputs = [0, 1, 2].map(() => gpu.makeTensorInfo(value.shape, "float32"));
  const pipeline = computePipeline(gpu.device, WEBGPU_ADAM_KERNEL, SHADER);
  const workgroups = workgroupsFor(n, WORKGROUP);
  const f32 = (x: number) => ({ type: "float32", data: [x] });
  launch(gpu, WEBGPU_ADAM_KERNEL, pipeline, [...outputs, value, gradient, m, v, corrections], [
    f32(beta1),
    f32(1 - beta1),
    f32(beta2),
    f32(1 - beta2),
    f32(epsilon),
    f32(-learningRate),
    { type: "uint32", data: [n] },
    { type: "uint32", data: [workgroups[0] * WORKGROUP] },
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
