/**
 * Adam's update on the webgpu backend, several variables per launch (webgpu_optimizer.ts): TF.js's AdamOptimizer
 * runs about fourteen kernels per variable (336 of the conv VAE's ~450 launches per step).
 *
 * The learning rate comes with the bias corrections as a tensor, not as a uniform: a schedule changes it every step,
 * and a uniform of new contents would be a new buffer (webgpu_host.ts caches uniforms by their bytes).
 *
 * The operations are AdamOptimizer's, in its order, in float32; a GPU compiler may contract a multiply and an add
 * into one fused operation, so the result can differ from TF.js's kernels in the last bit.
 *
 * @module
 */
import { registerUpdateKernel, slotName, type UpdateKernel } from "./webgpu_optimizer.ts";

/**
 * Adam's kernel: per variable `value`, `gradient`, `m`, `v` → the new value, m and v; shared `corrections` =
 * [1 − β₁ᵗ, 1 − β₂ᵗ, −learning rate]; settings β₁, 1 − β₁, β₂, 1 − β₂, ε.
 */
export const WEBGPU_ADAM: UpdateKernel = {
  name: "LatentlabFusedAdamCorrected",
  outputs: ["newValue", "newFirst", "newSecond"],
  inputs: ["value", "gradient", "m", "v"],
  shared: ["corrections"],
  settings: ["beta1", "oneMinusBeta1", "beta2", "oneMinusBeta2", "epsilon"],
  body: (k) => {
    const $ = (name: string) => slotName(name, k);
    return `let g = ${$("gradient")}[j];
    let m = ${$("m")}[j] * settings.beta1 + g * settings.oneMinusBeta1;
    let v = ${$("v")}[j] * settings.beta2 + (g * g) * settings.oneMinusBeta2;
    ${$("newFirst")}[j] = m;
    ${$("newSecond")}[j] = v;
    ${$("newValue")}[j] = ((m / corrections[0]) / (sqrt(v / corrections[1]) + settings.epsilon)) * corrections[2] +
      ${$("value")}[j];`;
  },
};

/** Registers the kernel on webgpu (idempotent). */
export function registerWebgpuFusedAdam(): void {
  registerUpdateKernel(WEBGPU_ADAM);
}
