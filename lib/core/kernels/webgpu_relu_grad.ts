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
import { elementwiseApplies, registerElementwiseKernel, runElementwise } from "./webgpu_elementwise.ts";

/** The kernel's name; inputs `dy` and `x`, output `dy · step(x)`. */
export const RELU_GRAD_KERNEL = "LatentlabReluGrad";

/** dy · step(x): the kernel where it applies, TF.js's ops elsewhere. */
function reluGrad(dy: tf.Tensor, x: tf.Tensor): tf.Tensor {
  return elementwiseApplies(RELU_GRAD_KERNEL, dy, x)
    ? runElementwise(RELU_GRAD_KERNEL, { dy, x })[0]
    : tf.mul(dy, tf.cast(tf.step(x), "float32"));
}

/** Registers the kernel on webgpu and ReLU's gradient that uses it there (idempotent). */
export function registerWebgpuReluGrad(): void {
  if (tf.getKernel(RELU_GRAD_KERNEL, "webgpu")) return;
  registerElementwiseKernel({
    name: RELU_GRAD_KERNEL,
    inputs: ["dy", "x"],
    outputs: ["result"],
    // x itself where it is NaN (x < 0 and x ≥ 0 both false), as step gives NaN there.
    body: "result = select(select(0.0, dy, x > 0.0), x, !(x < 0.0 || x >= 0.0));",
  });
  tf.registerGradient({
    kernelName: RELU_GRAD_KERNEL,
    inputsToSave: ["x"],
    gradFunc: (ddy, [x]) => ({ dy: () => reluGrad(ddy as tf.Tensor, x), x: () => tf.zerosLike(x) }),
  });
  tf.registerGradient({
    kernelName: "Relu",
    inputsToSave: ["x"],
    gradFunc: (dy, [x]) => ({ x: () => reluGrad(dy as tf.Tensor, x) }),
  });
}
