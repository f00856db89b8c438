/**
 * SGD with momentum on the webgpu backend, several variables per launch (webgpu_optimizer.ts): TF.js's
 * MomentumOptimizer runs three or four kernels per variable, with their host cost (the BN MNIST CNN's and Tent's
 * steps). The same accumulation variables (names, order, lazy creation) as TF.js 4.22's, so getWeights/setWeights
 * and checkpoints are unchanged; the rate and momentum are the optimizer's own scalar tensors, as TF.js reads them.
 *
 * The operations are MomentumOptimizer's, in its order, in float32; a GPU compiler may contract a multiply and an
 * add into one fused operation, so the result can differ from TF.js's kernels in the last bit.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { storedAsFloat32, webgpuBackend } from "./webgpu_host.ts";
import { registerUpdateKernel, runUpdates, slotName, type UpdateKernel } from "./webgpu_optimizer.ts";
import { type FusedApplyGradients, namedGradients, routeApplyGradients } from "./optimizer_routing.ts";

/**
 * Momentum's kernel: per variable `value`, `gradient`, `accumulation` → the new value and accumulation; shared
 * `rate` (−learning rate) and `momentum`; setting `nesterov` (1 or 0).
 */
export const WEBGPU_MOMENTUM: UpdateKernel = {
  name: "LatentlabFusedMomentum",
  outputs: ["newValue", "newAccumulation"],
  inputs: ["value", "gradient", "accumulation"],
  shared: ["rate", "momentum"],
  settings: ["nesterov"],
  body: (k) => {
    const $ = (name: string) => slotName(name, k);
    return `let g = ${$("gradient")}[j];
    let a = momentum[0] * ${$("accumulation")}[j] + g;
    ${$("newAccumulation")}[j] = a;
    let step = select(a, g + a * momentum[0], settings.nesterov == 1.0);
    ${$("newValue")}[j] = rate[0] * step + ${$("value")}[j];`;
  },
};

/** The fields of TF.js 4.22's MomentumOptimizer that its applyGradients uses (private in its typings). */
interface MomentumInternals {
  c: tf.Scalar;
  m: tf.Scalar;
  useNesterov: boolean;
  accumulations: { originalName: string; variable: tf.Variable }[];
  incrementIterations(): void;
}

const fusedApplyGradients: FusedApplyGradients<MomentumInternals> = function (original, gradients) {
  const named = namedGradients(gradients);
  const registered = tf.engine().registeredVariables;
  const gpu = tf.getKernel(WEBGPU_MOMENTUM.name, "webgpu") ? webgpuBackend() : null;
  const fusable = gpu !== null && storedAsFloat32(gpu, this.c, this.m) &&
    named.every(({ name, gradient }) =>
      registered[name]?.dtype === "float32" &&
      storedAsFloat32(gpu, registered[name], ...(gradient ? [gradient] : []))
    );
  if (!fusable) return original.call(this, gradients);
  tf.tidy(() => {
    const updates: { value: tf.Variable; gradient: tf.Tensor; accumulation: tf.Variable }[] = [];
    named.forEach(({ name, gradient }, i) => {
      const value = registered[name];
      this.accumulations[i] ??= {
        originalName: `${name}/momentum`,
        variable: tf.tidy(() => tf.zerosLike(value).variable(false)),
      };
      if (gradient != null) updates.push({ value, gradient, accumulation: this.accumulations[i].variable });
    });
    const results = runUpdates(WEBGPU_MOMENTUM, gpu.device, updates, { rate: this.c, momentum: this.m }, {
      nesterov: this.useNesterov ? 1 : 0,
    });
    updates.forEach(({ value, accumulation }, k) => {
      const [newValue, newAccumulation] = results[k];
      accumulation.assign(newAccumulation);
      value.assign(newValue);
    });
  });
  this.incrementIterations();
};

/** Registers the kernel on webgpu and routes MomentumOptimizer.applyGradients through it there (idempotent). */
export function registerWebgpuFusedMomentum(): void {
  registerUpdateKernel(WEBGPU_MOMENTUM);
  routeApplyGradients(tf.MomentumOptimizer, fusedApplyGradients);
}
