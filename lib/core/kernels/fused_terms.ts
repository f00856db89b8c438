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
import { elementwiseApplies, registerElementwiseKernel } from "./webgpu_elementwise.ts";

const CROSS_ENTROPY = "LatentlabSigmoidCrossEntropy";
const CROSS_ENTROPY_GRAD = "LatentlabSigmoidCrossEntropyGrad";
const KL = "LatentlabGaussianKlTerms";
const KL_GRAD = "LatentlabGaussianKlTermsGrad";
const SAMPLE = "LatentlabReparameterize";
const SAMPLE_GRAD = "LatentlabReparameterizeGrad";

const run = (name: string, inputs: tf.NamedTensorMap): tf.Tensor[] => {
  const result = tf.engine().runKernel(name, inputs);
  return Array.isArray(result) ? result as tf.Tensor[] : [result as tf.Tensor];
};

/** Sigmoid cross-entropy with logits per element: relu(l) − l·x + softplus(−|l|). */
export function sigmoidCrossEntropyWithLogits(logits: tf.Tensor, labels: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(CROSS_ENTROPY, logits, labels)) return run(CROSS_ENTROPY, { logits, labels })[0];
  return tf.add(tf.sub(tf.relu(logits), tf.mul(logits, labels)), tf.softplus(tf.neg(tf.abs(logits))));
}

/** The KL divergence of N(μ, exp(logVar)) from N(0, 1) per element, times 2: (μ² + exp(logVar)) − (logVar + 1). */
export function gaussianKlTerms(mean: tf.Tensor, logVar: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(KL, mean, logVar)) return run(KL, { mean, logVar })[0];
  return tf.sub(tf.add(tf.square(mean), tf.exp(logVar)), tf.add(logVar, 1));
}

/** z = μ + exp(logVar / 2)·ε, the reparameterized sample of N(μ, exp(logVar)). */
export function reparameterizedSample(mean: tf.Tensor, logVar: tf.Tensor, noise: tf.Tensor): tf.Tensor {
  if (elementwiseApplies(SAMPLE, mean, logVar, noise)) return run(SAMPLE, { mean, logVar, noise })[0];
  return tf.add(mean, tf.mul(tf.exp(tf.mul(0.5, logVar)), noise));
}

/** Registers the webgpu kernels above and their gradients (idempotent). */
export function registerWebgpuFusedTerms(): void {
  if (tf.getKernel(CROSS_ENTROPY, "webgpu")) return;
  registerElementwiseKernel({
    name: CROSS_ENTROPY,
    inputs: ["logits", "labels"],
    outputs: ["loss"],
    body: "loss = max(logits, 0.0) - logits * labels + log(1.0 + exp(-abs(logits)));",
  });
  registerElementwiseKernel({
    name: CROSS_ENTROPY_GRAD,
    inputs: ["dy", "logits", "labels"],
    outputs: ["dLogits"],
    body: "dLogits = dy * (1.0 / (1.0 + exp(-logits)) - labels);",
  });
  tf.registerGradient({
    kernelName: CROSS_ENTROPY,
    inputsToSave: ["logits", "labels"],
    gradFunc: (dy, [logits, labels]) => ({
      logits: () => run(CROSS_ENTROPY_GRAD, { dy: dy as tf.Tensor, logits, labels })[0],
      labels: () => tf.neg(tf.mul(dy as tf.Tensor, logits)),
    }),
  });
  registerElementwiseKernel({
    name: KL,
    inputs: ["mean", "logVar"],
    outputs: ["terms"],
    body: "terms = (mean * mean + exp(logVar)) - (logVar + 1.0);",
  });
  registerElementwiseKernel({
    name: KL_GRAD,
    inputs: ["dy", "mean", "logVar"],
    outputs: ["dMean", "dLogVar"],
    body: "dMean = dy * (2.0 * mean); dLogVar = dy * (exp(logVar) - 1.0);",
  });
  tf.registerGradient({
    kernelName: KL,
    inputsToSave: ["mean", "logVar"],
    gradFunc: (dy, [mean, logVar]) => {
      // Both in one launch, made here rather than in the thunks: TF.js calls each thunk in a tidy of its own,
      // which would dispose the other's output.
      const [dMean, dLogVar] = run(KL_GRAD, { dy: dy as tf.Tensor, mean, logVar });
      return { mean: () => dMean, logVar: () => dLogVar };
    },
  });
  registerElementwiseKernel({
    name: SAMPLE,
    inputs: ["mean", "logVar", "noise"],
    outputs: ["z"],
    body: "z = mean + exp(0.5 * logVar) * noise;",
  });
  registerElementwiseKernel({
    name: SAMPLE_GRAD,
    inputs: ["dy", "logVar", "noise"],
    outputs: ["dLogVar", "dNoise"],
    body: "let sd = exp(0.5 * logVar); dLogVar = dy * (0.5 * sd * noise); dNoise = dy * sd;",
  });
  tf.registerGradient({
    kernelName: SAMPLE,
    inputsToSave: ["mean", "logVar", "noise"],
    gradFunc: (dy, [_mean, logVar, noise]) => {
      const [dLogVar, dNoise] = run(SAMPLE_GRAD, { dy: dy as tf.Tensor, logVar, noise });
      return { mean: () => tf.clone(dy as tf.Tensor), logVar: () => dLogVar, noise: () => dNoise };
    },
  });
}
