/**
 * Element-wise kernels of several inputs and outputs on the webgpu backend, one launch each: a chain of TF.js ops
 * over tensors of one shape (a loss per pixel and its gradient) costs one launch per op and a temporary per step
 * of the chain; written as one WGSL body it costs one launch.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import { storedAsFloat32, webgpuBackend, type WebgpuBackendInternals } from "./webgpu_host.ts";

const WORKGROUP = 256;

/** An element-wise kernel: named inputs and outputs of one shape, and a WGSL body that reads and sets them. */
export interface ElementwiseKernel {
  /** The kernel's name in TF.js's registry. */
  name: string;
  /** Input names, as `runKernel` passes them; the body sees each as an `f32` of the same name. */
  inputs: string[];
  /** Output names; the body assigns each (declared `var <name> : f32`). */
  outputs: string[];
  /** WGSL statements computing the outputs from the inputs. */
  body: string;
}

function shader({ inputs, outputs, body }: ElementwiseKernel): string {
  const bindings = [
    ...outputs.map((name, i) => `@group(0) @binding(${i}) var<storage, read_write> out_${name} : array<f32>;`),
    ...inputs.map((name, i) => `@group(0) @binding(${outputs.length + i}) var<storage, read> in_${name} : array<f32>;`),
  ];
  return `
struct Settings { n : u32, rowLength : u32 }
${bindings.join("\n")}
@group(0) @binding(${outputs.length + inputs.length}) var<uniform> settings : Settings;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let i = id.y * settings.rowLength + id.x;
  if (i >= settings.n) { return; }
  ${inputs.map((name) => `let ${name} = in_${name}[i];`).join(" ")}
  ${outputs.map((name) => `var ${name} : f32;`).join(" ")}
  ${body}
  ${outputs.map((name) => `out_${name}[i] = ${name};`).join(" ")}
}`;
}

/** Registers `kernel` on webgpu (idempotent); its inputs must be float32 tensors of one shape. */
export function registerElementwiseKernel(kernel: ElementwiseKernel): void {
  if (tf.getKernel(kernel.name, "webgpu")) return;
  const code = shader(kernel);
  tf.registerKernel({
    kernelName: kernel.name,
    backendName: "webgpu",
    kernelFunc: (({ inputs, backend }: { inputs: tf.NamedTensorInfoMap; backend: unknown }) => {
      const gpu = backend as WebgpuBackendInternals;
      const tensors = kernel.inputs.map((name) => inputs[name]!);
      const shape = tensors[0]!.shape;
      for (const [i, tensor] of tensors.entries()) {
        if (!tf.util.arraysEqual(tensor.shape, shape) || !storedAsFloat32(gpu, tensor)) {
          throw new Error(
            `${kernel.name}: input ${kernel.inputs[i]} is ${tensor.dtype} [${tensor.shape}]; ` +
              `every input must be float32 [${shape}]`,
          );
        }
      }
      const outputs = kernel.outputs.map(() => gpu.makeTensorInfo(shape, "float32"));
      const n = tf.util.sizeFromShape(shape);
      if (n === 0) return outputs;
      const workgroups = workgroupsFor(n, WORKGROUP);
      launch(gpu, kernel.name, computePipeline(gpu.device, kernel.name, code), [...outputs, ...tensors], [
        { type: "uint32", data: [n] },
        { type: "uint32", data: [workgroups[0] * WORKGROUP] },
      ], workgroups);
      return outputs;
    }) as unknown as tf.KernelFunc,
  });
}

/**
 * Whether the element-wise kernel `name` can take these tensors: webgpu active, the kernel registered, float32 in
 * their buffers too, one shape.
 */
export function elementwiseApplies(name: string, ...tensors: tf.Tensor[]): boolean {
  const backend = webgpuBackend();
  return backend !== null && tf.getKernel(name, "webgpu") !== undefined && storedAsFloat32(backend, ...tensors) &&
    tensors.every((t) => tf.util.arraysEqual(t.shape, tensors[0].shape));
}

/** Runs the element-wise kernel `name` (registered above) and returns its outputs in order. */
export function runElementwise(name: string, inputs: tf.NamedTensorMap): tf.Tensor[] {
  return tf.engine().runKernel(name, inputs) as tf.Tensor[];
}
