/**
 * The VAE's per-element loss terms and its reparameterized sample as single kernels on webgpu, with their gradients
 * as single kernels too. On every other backend each is the chain of TF.js ops it always was, so wasm and cpu
 * numbers do not change; on webgpu the values are the same formulas in float32, up to rounding.
 *
 * A conv VAE step spends ~17 launches on the Bernoulli loss per pixel and its gradient, ~10 on the KL and ~8 on
 * the sample: a third of what is left once Adam is fused.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { elementwiseApplies, registerElementwiseKernel, runElementwise } from "./webgpu_elementwise.ts";

/**
 * A fused op: one element-wise kernel for its value and one for the gradients of all its inputs (`d_<input>`, given
 * the incoming gradient `dy` and the inputs), both made in one launch each.
 */
interface FusedOp {
  name: string;
  inputs: string[];
  /** WGSL setting `result` from the inputs. */
  value: string;
  /** WGSL setting `d_<input>` for every input from `dy` and the inputs. */
  gradients: string;
}

const CROSS_ENTROPY: FusedOp = {
  name: "LatentlabSigmoidCrossEntropy",
  inputs: ["logits", "labels"],
  value: "result = max(logits, 0.0) - logits * labels + log(1.0 + exp(-abs(logits)));",
  gradients: "d_logits = dy * (1.0 / (1.0 + exp(-logits)) - labels); d_labels = -(dy * logits);",
};

const KL: FusedOp = {
  name: "LatentlabGaussianKlTerms",
  inputs: ["mean", "logVar"],
  value: "result = (mean * mean + exp(logVar)) - (logVar + 1.0);",
  gradients: "d_mean = dy * (2.0 * mean); d_logVar = dy * (exp(logVar) - 1.0);",
};

const SAMPLE: FusedOp = {
  name: "LatentlabReparameterize",
  inputs: ["mean", "logVar", "noise"],
  value: "result = mean + exp(0.5 * logVar) * noise;",
  gradients: "let sd = exp(0.5 * logVar); d_mean = dy; d_logVar = dy * (0.5 * sd * noise); d_noise = dy * sd;",
};

/** Sigmoid cross-entropy with logits per element: relu(l) − l·x + softplus(−|l|). */
export function sigmoidCrossEntropyWithLogits(logits: tf.Tensor, labels: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(CROSS_ENTROPY.name, logits, labels)) {
    return runElementwise(CROSS_ENTROPY.name, { logits, labels })[0];
  }
  return tf.add(tf.sub(tf.relu(logits), tf.mul(logits, labels)), tf.softplus(tf.neg(tf.abs(logits))));
}

/** The KL divergence of N(μ, exp(logVar)) from N(0, 1) per element, times 2: (μ² + exp(logVar)) − (logVar + 1). */
export function gaussianKlTerms(mean: tf.Tensor, logVar: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(KL.name, mean, logVar)) return runElementwise(KL.name, { mean, logVar })[0];
  return tf.sub(tf.add(tf.square(mean), tf.exp(logVar)), tf.add(logVar, 1));
}

/** z = μ + exp(logVar / 2)·ε, the reparameterized sample of N(μ, exp(logVar)). */
export function reparameterizedSample(mean: tf.Tensor, logVar: tf.Tensor, noise: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(SAMPLE.name, mean, logVar, noise)) {
    return runElementwise(SAMPLE.name, { mean, logVar, noise })[0];
  }
  return tf.add(mean, tf.mul(tf.exp(tf.mul(0.5, logVar)), noise));
}

function registerFusedOp(op: FusedOp): void {
  const gradientName = `${op.name}Grad`;
  registerElementwiseKernel({ name: op.name, inputs: op.inputs, outputs: ["result"], body: op.value });
  registerElementwiseKernel({
    name: gradientName,
    inputs: ["dy", ...op.inputs],
    outputs: op.inputs.map((input) => `d_${input}`),
    body: op.gradients,
  });
  tf.registerGradient({
    kernelName: op.name,
    inputsToSave: op.inputs,
    gradFunc: (dy, saved) => {
      // Every input's gradient from one launch, made here rather than in the thunks: TF.js calls each thunk in a
      // tidy of its own, which would dispose the others' outputs.
      const grads = runElementwise(
        gradientName,
        Object.fromEntries([["dy", dy as tf.Tensor], ...op.inputs.map((n, i) => [n, saved[i]])]),
      );
      return Object.fromEntries(op.inputs.map((input, i) => [input, () => grads[i]]));
    },
  });
}

/** Registers the webgpu kernels above and their gradients (idempotent). */
export function registerWebgpuFusedTerms(): void {
  if (tf.getKernel(CROSS_ENTROPY.name, "webgpu")) return;
  for (const op of [CROSS_ENTROPY, KL, SAMPLE]) registerFusedOp(op);
}
