/**
 * Adam's update in one pass over each variable on the wasm backend.
 *
 * TF.js's AdamOptimizer runs about a dozen element-wise kernels per
 * variable, each allocating and writing a full-size tensor: 163 ms of a
 * 656 ms MLP VAE step (14 M parameters) on one core. The fused kernel
 * (wat/adam.wat, four lanes at a time) reads the variable, its gradient and
 * both moments once and writes the three new tensors in one pass. A plain JS
 * loop is no faster than TF.js's kernels: float32 rounding after each
 * operation (`Math.fround`) costs ≈ 21 ns per element.
 *
 * Every operation is one float32 operation in the order AdamOptimizer
 * applies them, so the update is bit-identical to TF.js's: training numbers,
 * checkpoints and optimizer state do not change. On webgpu the same routing
 * calls webgpu_adam.ts's kernel, several variables per launch.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps, watKernel } from "./wasm_ops.ts";
import { WEBGPU_ADAM } from "./webgpu_adam.ts";
import { storedAsFloat32, webgpuBackend } from "./webgpu_host.ts";
import { runUpdates } from "./webgpu_optimizer.ts";
import { type FusedApplyGradients, namedGradients, routeApplyGradients } from "./optimizer_routing.ts";

const KERNEL = "LatentlabFusedAdam";
const fround = Math.fround;

interface FusedAdamAttrs {
  beta1: number;
  beta2: number;
  epsilon: number;
  learningRate: number;
}

type AdamLoop = (
  w: number,
  g: number,
  m: number,
  v: number,
  outW: number,
  outM: number,
  outV: number,
  n: number,
  b1: number,
  c1: number,
  b2: number,
  c2: number,
  d1: number,
  d2: number,
  eps: number,
  step: number,
) => void;

function fusedAdam({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo[] {
  const { value, gradient, m, v, accBeta1, accBeta2 } = inputs as Record<string, tf.TensorInfo>;
  const { beta1, beta2, epsilon, learningRate } = attrs as unknown as FusedAdamAttrs;
  const ops = new WasmOps(backend);
  const outputs = [0, 1, 2].map(() => ops.backend.makeOutput(value.shape, "float32"));
  // Addresses after the allocations; the scalars as AdamOptimizer makes them: JS numbers as float32 tensors.
  const address = (t: tf.TensorInfo) => ops.view(t).byteOffset;
  const d1 = fround(1 - ops.view(accBeta1)[0]), d2 = fround(1 - ops.view(accBeta2)[0]);
  const adam = watKernel(ops.backend, "adam").adam as AdamLoop;
  adam(
    address(value),
    address(gradient),
    address(m),
    address(v),
    ...outputs.map(address) as [number, number, number],
    ops.view(value).length,
    fround(beta1),
    fround(1 - beta1),
    fround(beta2),
    fround(1 - beta2),
    d1,
    d2,
    fround(epsilon),
    fround(-learningRate),
  );
  return outputs;
}

/** The fields of TF.js 4.22's AdamOptimizer that its applyGradients uses (private in its typings). */
interface AdamInternals {
  beta1: number;
  beta2: number;
  epsilon: number;
  learningRate: number;
  accBeta1: tf.Variable;
  accBeta2: tf.Variable;
  accumulatedFirstMoment: { originalName: string; variable: tf.Variable }[];
  accumulatedSecondMoment: { originalName: string; variable: tf.Variable }[];
  incrementIterations(): void;
}

/**
 * AdamOptimizer.applyGradients with the fused kernel on wasm: the same moment variables (names, order, lazy
 * creation) and the same accumulated β powers as TF.js 4.22's, so getWeights/setWeights are unchanged.
 */
const fusedApplyGradients: FusedApplyGradients<AdamInternals> = function (original, variableGradients) {
  const named = namedGradients(variableGradients);
  const registered = tf.engine().registeredVariables;
  const backend = tf.getBackend();
  const gpu = backend === "webgpu" && tf.getKernel(WEBGPU_ADAM.name, "webgpu") ? webgpuBackend() : null;
  const fusable = (backend === "wasm" || gpu !== null) &&
    named.every(({ name, gradient }) =>
      registered[name]?.dtype === "float32" && (gradient?.dtype ?? "float32") === "float32" &&
      (gpu === null || storedAsFloat32(gpu, registered[name], ...(gradient ? [gradient] : [])))
    );
  if (!fusable) return original.call(this, variableGradients);
  const attrs = { beta1: this.beta1, beta2: this.beta2, epsilon: this.epsilon, learningRate: this.learningRate };
  tf.tidy(() => {
    // On webgpu the kernel takes Adam's bias corrections 1 − βᵗ, computed once per step as TF.js computes them, and
    // the negated rate.
    const corrections = backend === "webgpu"
      ? tf.concat([tf.sub(1, tf.stack([this.accBeta1, this.accBeta2])), tf.tensor1d([-this.learningRate])])
      : null;
    const updates: { value: tf.Variable; gradient: tf.Tensor; first: tf.Variable; second: tf.Variable }[] = [];
    named.forEach(({ name, gradient }, i) => {
      const value = registered[name];
      const moment = (which: "accumulatedFirstMoment" | "accumulatedSecondMoment", suffix: string) =>
        this[which][i] ??= {
          originalName: `${name}/${suffix}`,
          variable: tf.tidy(() => tf.zerosLike(value).variable(false)),
        };
      const first = moment("accumulatedFirstMoment", "m").variable;
      const second = moment("accumulatedSecondMoment", "v").variable;
      if (gradient != null) updates.push({ value, gradient, first, second });
    });
    const assign = (
      { value, first, second }: (typeof updates)[number],
      [newValue, newFirst, newSecond]: tf.Tensor[],
    ) => {
      first.assign(newFirst);
      second.assign(newSecond);
      value.assign(newValue);
    };
    if (gpu && corrections) {
      // One launch updates as many variables as the device lets a shader bind.
      const results = runUpdates(
        WEBGPU_ADAM,
        gpu.device,
        updates.map(({ value, gradient, first, second }) => ({ value, gradient, m: first, v: second })),
        { corrections },
        {
          beta1: this.beta1,
          oneMinusBeta1: 1 - this.beta1,
          beta2: this.beta2,
          oneMinusBeta2: 1 - this.beta2,
          epsilon: this.epsilon,
        },
      );
      updates.forEach((update, k) => assign(update, results[k]));
    } else {
      // One variable at a time, so that the wasm heap holds one variable's new tensors at once.
      for (const update of updates) {
        const { value, gradient, first, second } = update;
        assign(
          update,
          tf.engine().runKernel(KERNEL, {
            value,
            gradient,
            m: first,
            v: second,
            accBeta1: this.accBeta1,
            accBeta2: this.accBeta2,
          }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor[],
        );
      }
    }
    this.accBeta1.assign(tf.mul(this.accBeta1, this.beta1));
    this.accBeta2.assign(tf.mul(this.accBeta2, this.beta2));
  });
  this.incrementIterations();
};

/** Registers the fused kernel and routes AdamOptimizer.applyGradients through it on wasm (idempotent). */
export function registerWasmFusedAdam(): void {
  replaceWasmKernel(KERNEL, fusedAdam as unknown as (args: KernelArgs) => tf.TensorInfo);
  routeAdamThroughFusedKernels();
}

/**
 * Routes AdamOptimizer.applyGradients through the fused kernel of the active backend (wasm, or webgpu once
 * `registerWebgpuFusedAdam` ran); other backends keep TF.js's (idempotent).
 */
export function routeAdamThroughFusedKernels(): void {
  routeApplyGradients(tf.AdamOptimizer, fusedApplyGradients);
}
