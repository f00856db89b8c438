import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { batchNormOnBatch } from "../../../lib/core/kernels/batch_norm.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { matchesCpu } from "./cpu_reference.ts";

await selectBackend("wasm");

const EPSILON = 1e-5;

/**
 * y, μ, σ² of BatchNorm on x (mean 3, sd 2, so that a one-pass variance would lose digits) and the gradients in x,
 * γ, β of Σ w·y, plus Σ a·μ + Σ b·σ² when `throughMoments`.
 */
function batchNormCase(shape: number[], seed: number, throughMoments: boolean): () => tf.Tensor[] {
  const rng = new Rng(seed);
  const channels = shape[shape.length - 1], size = shape.reduce((a, b) => a * b);
  const xs = rng.normalArray(size, 2).map((v) => v + 3);
  const [gammas, betas, ws, as, bs] = [channels, channels, size, channels, channels].map((n) => rng.normalArray(n));
  return () => {
    const x = tf.tensor(xs, shape), gamma = tf.tensor1d(gammas), beta = tf.tensor1d(betas);
    const { y, mean, variance } = batchNormOnBatch(x, gamma, beta, EPSILON);
    const loss = (x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor) => {
      const out = batchNormOnBatch(x, gamma as tf.Tensor1D, beta as tf.Tensor1D, EPSILON);
      const weighted = tf.sum(tf.mul(out.y, tf.tensor(ws, shape)));
      if (!throughMoments) return weighted;
      return tf.addN([weighted, tf.sum(tf.mul(out.mean, as)), tf.sum(tf.mul(out.variance, bs))]);
    };
    return [y, mean, variance, ...tf.grads(loss)([x, gamma, beta])];
  };
}

Deno.test("wasm fused BatchNorm matches the cpu op chain in y, μ, σ² and the gradients in x, γ, β", async () => {
  // With 2 rows per channel x̂ = ±1 up to ε, so dx is a difference of nearly equal terms: the chain's float32 dx
  // there is 2.5e-6 off the float64 closed form (the kernel's 2e-8), which sets that case's tolerance.
  // Channels in fours take the SIMD passes (wat/batch_norm.wat), others the scalar loops.
  const cases: [number[], number][] = [[[4, 5, 5, 3], 1e-6], [[3, 7, 7, 33], 1e-6], [[2, 1, 1, 5], 3e-6], [[
    3,
    6,
    5,
    32,
  ], 1e-6]];
  for (const [k, [shape, tolerance]] of cases.entries()) {
    for (const throughMoments of [false, true]) {
      const what = `batch norm [${shape}]${throughMoments ? " with μ, σ² in the loss" : ""}`;
      await matchesCpu(what, batchNormCase(shape, 60 + k, throughMoments), tolerance);
    }
  }
});

Deno.test("wasm BatchNorm runs as one kernel forward and one backward", async () => {
  const run = batchNormCase([4, 5, 5, 3], 63, false);
  const profile = await tf.profile(() => tf.dispose(run()));
  const names = profile.kernels.map((k) => k.name);
  // The case runs the forward twice: once for its outputs, once inside tf.grads.
  for (const [name, calls] of [["LatentlabBatchNorm", 2], ["LatentlabBatchNormGrad", 1]] as const) {
    const ran = names.filter((n) => n === name).length;
    assert(ran === calls, `${name} ran ${ran}×, expected ${calls}×`);
  }
  assert(!names.includes("Mean"), `the wasm path still takes means: ${names.join(", ")}`);
});
