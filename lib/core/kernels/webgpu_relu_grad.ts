/**
 * ReLU's gradient in one launch on the webgpu backend. TF.js computes it as `dy · step(x)`: two launches and a
 * temporary the size of the activation, at every ReLU of every step. The kernel here computes the same values
 * (0 where x ≤ 0, dy where x > 0, NaN where x is NaN, as `step` gives) in one. On other backends the gradient is
 * TF.js's own, so their numbers do not change. Its own gradient (for a gradient of a gradient, e.g. a Jacobian
 * penalty) is the same kernel applied to the incoming gradient: the result is linear in dy, flat in x.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import { storedAsFloat32, webgpuBackend, type WebgpuBackendInternals } from "./webgpu_host.ts";

/** The kernel's name; inputs `dy` and `x`, output `dy · step(x)`. */
export const RELU_GRAD_KERNEL = "LatentlabReluGrad";

const WORKGROUP = 256;

const SHADER = /* wgsl */ `
struct Settings { n : u32, rowLength : u32 }
@group(0) @binding(0) var<storage, read_write> result : array<f32>;
@group(0) @binding(1) var<storage, read> dy : array<f32>;
@group(0) @binding(2) var<storage, read> x : array<f32>;
@group(0) @binding(3) var<uniform> settings : Settings;
fn isNan(v : f32) -> bool { return !(v < 0.0 || v >= 0.0); }
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let i = id.y * settings.rowLength + id.x;
  if (i >= settings.n) { return; }
  let v = x[i];
  if (isNan(v)) { result[i] = v; } else { result[i] = select(0.0, dy[i], v > 0.0); }
}`;

function reluGrad({ inputs, backend }: { inputs: tf.NamedTensorInfoMap; backend: unknown }): tf.TensorInfo {
  const gpu = backend as WebgpuBackendInternals;
  const { dy, x } = inputs as Record<string, tf.TensorInfo>;
  const n = tf.util.sizeFromShape(x.shape);
  const result = gpu.makeTensorInfo(x.shape, "float32");
  if (n === 0) return result;
  const workgroups = workgroupsFor(n, WORKGROUP);
  launch(gpu, RELU_GRAD_KERNEL, computePipeline(gpu.device, RELU_GRAD_KERNEL, SHADER), [result, dy, x], [
    { type: "uint32", data: [n] },
    { type: "uint32", data: [workgroups[0] * WORKGROUP] },
  ], workgroups);
  return result;
}

/** Whether the kernel can take these: webgpu active and float32 buffers. */
function onWebgpu(...tensors: tf.Tensor[]): boolean {
  const backend = webgpuBackend();
  return backend !== null && storedAsFloat32(backend, ...tensors);
}

const reluGradOnWebgpu = (dy: tf.Tensor, x: tf.Tensor): tf.Tensor =>
  tf.engine().runKernel(RELU_GRAD_KERNEL, { dy, x }) as tf.Tensor;

/** Registers the kernel on webgpu and ReLU's gradient that uses it there (idempotent). */
export function registerWebgpuReluGrad(): void {
  if (tf.getKernel(RELU_GRAD_KERNEL, "webgpu")) return;
  tf.registerKernel({ kernelName: RELU_GRAD_KERNEL, backendName: "webgpu", kernelFunc: reluGrad as tf.KernelFunc });
  tf.registerGradient({
    kernelName: RELU_GRAD_KERNEL,
    inputsToSave: ["x"],
    gradFunc: (ddy, saved) => ({
      dy: () =>
        onWebgpu(ddy as tf.Tensor, saved[0])
          ? reluGradOnWebgpu(ddy as tf.Tensor, saved[0])
          : tf.mul(ddy as tf.Tensor, tf.cast(tf.step(saved[0]), "float32")),
      x: () => tf.zerosLike(saved[0]),
    }),
  });
  tf.registerGradient({
    kernelName: "Relu",
    inputsToSave: ["x"],
    gradFunc: (dy, saved) => {
      const [x] = saved;
      return {
        x: () =>
          onWebgpu(dy as tf.Tensor, x)
            ? reluGradOnWebgpu(dy as tf.Tensor, x)
            : tf.mul(dy as tf.Tensor, tf.cast(tf.step(x), "float32")),
      };
    },
  });
}
