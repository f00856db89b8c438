/**
 * latentlab's webgpu kernels (lib/core/kernels/webgpu_*.ts, fused_terms.ts) against TF.js's cpu backend, values and
 * gradients, on whatever WebGPU adapter the machine has (a software Vulkan one in CI): the tolerances are float32
 * summation order over the sums involved (relative 1e-5 of the largest value), not kernel accuracy.
 */
import * as tf from "@tensorflow/tfjs";
import { assert } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { webgpuTest } from "./adapter.ts";
import {
  gaussianKlTerms,
  reparameterizedSample,
  sigmoidCrossEntropyWithLogits,
} from "../../lib/core/kernels/fused_terms.ts";
import { Rng } from "../../lib/core/rng.ts";

/** Runs `compute` on cpu and on webgpu (the same seeded inputs) and returns both results, read back. */
async function onBoth(compute: (rng: Rng) => tf.Tensor | tf.Tensor[]): Promise<[Float32Array[], Float32Array[]]> {
  const results: Float32Array[][] = [];
  for (const backend of ["cpu", "webgpu"] as const) {
    await selectBackend(backend);
    const out = tf.tidy(() => {
      const result = compute(new Rng(3));
      return Array.isArray(result) ? result : [result];
    });
    results.push(await Promise.all(out.map(async (t) => await t.data() as Float32Array)));
    tf.dispose(out);
  }
  return [results[0], results[1]];
}

/** Asserts every value agrees within `relative` of the largest magnitude (and that NaNs are NaN on both). */
function assertClose(cpu: Float32Array[], gpu: Float32Array[], label: string, relative = 1e-5): void {
  assert(cpu.length === gpu.length, `${label}: ${cpu.length} results on cpu, ${gpu.length} on webgpu`);
  cpu.forEach((expected, k) => {
    const actual = gpu[k];
    assert(actual.length === expected.length, `${label}[${k}]: length ${actual.length} ≠ ${expected.length}`);
    const scale = expected.reduce((m, v) => Number.isNaN(v) ? m : Math.max(m, Math.abs(v)), 0) || 1;
    expected.forEach((v, i) => {
      const ok = Number.isNaN(v) ? Number.isNaN(actual[i]) : Math.abs(actual[i] - v) <= relative * scale;
      assert(ok, `${label}[${k}][${i}]: webgpu ${actual[i]}, cpu ${v} (scale ${scale})`);
    });
  });
}

const normal = (rng: Rng, shape: number[]) => tf.tensor(rng.normalArray(shape.reduce((a, b) => a * b, 1)), shape);

webgpuTest(
  "conv2d's filter and input gradients on webgpu equal the cpu backend's (strides, paddings, odd channels)",
  async () => {
    const cases: { x: number[]; filter: number[]; stride: number; pad: "same" | "valid" }[] = [
      { x: [4, 16, 16, 3], filter: [4, 4, 3, 8], stride: 2, pad: "same" },
      { x: [2, 9, 7, 5], filter: [3, 3, 5, 40], stride: 1, pad: "same" },
      { x: [3, 11, 11, 33], filter: [3, 2, 33, 7], stride: 2, pad: "valid" },
      { x: [16, 32, 32, 1], filter: [4, 4, 1, 32], stride: 2, pad: "same" },
    ];
    for (const c of cases) {
      const [cpu, gpu] = await onBoth((rng) => {
        const x = normal(rng, c.x) as tf.Tensor4D, filter = normal(rng, c.filter) as tf.Tensor4D;
        const weights = normal(rng, tf.conv2d(x, filter, c.stride, c.pad).shape);
        return tf.grads((x: tf.Tensor, f: tf.Tensor) =>
          tf.sum(tf.mul(tf.conv2d(x as tf.Tensor4D, f as tf.Tensor4D, c.stride, c.pad), weights))
        )(
          [x, filter],
        );
      });
      assertClose(cpu, gpu, `conv2d gradients ${JSON.stringify(c)}`);
    }
  },
);

webgpuTest(
  "sums and means over leading axes on webgpu equal the cpu backend's (few and many rows, keepDims)",
  async () => {
    const [cpu, gpu] = await onBoth((rng) => {
      const wide = normal(rng, [6, 3, 70_000]), tall = normal(rng, [64, 17, 9, 5]);
      return [
        tf.sum(wide, [0, 1]),
        tf.mean(wide, 0),
        tf.sum(tall, [0, 1, 2]),
        tf.mean(tall, [0, 1, 2], true),
        tf.sum(tall, [1, 0]),
        tf.sum(tall, [1, 2]),
        tf.mean(tall),
      ];
    });
    assertClose(cpu, gpu, "leading-axis reductions");
  },
);

webgpuTest(
  "ReLU's gradient on webgpu is dy where x > 0, 0 elsewhere, NaN at NaN, and its own gradient too",
  async () => {
    const [cpu, gpu] = await onBoth((rng) => {
      const x = tf.concat([normal(rng, [1000]), tf.tensor1d([0, -0, NaN, Infinity, -Infinity])]);
      const dy = normal(rng, [1005]);
      const first = tf.grad((x: tf.Tensor) => tf.sum(tf.mul(tf.relu(x), dy)))(x);
      // A gradient of a gradient: d/dv Σ relu'(x)·v·w = relu'(x)·w.
      const v = normal(rng, [1005]), w = normal(rng, [1005]);
      const second = tf.grad((v: tf.Tensor) =>
        tf.sum(tf.mul(tf.grad((x: tf.Tensor) => tf.sum(tf.mul(tf.relu(x), v)))(x), w))
      )(v);
      return [first, second];
    });
    assertClose(cpu, gpu, "relu gradients", 0);
  },
);

/**
 * Five steps of an optimizer on three variables, on cpu and on webgpu from the same seed (`beforeStep` may change
 * its settings; `skipped` variables get no gradient that step); returns both backends' variables and optimizer
 * weights, read.
 */
async function optimizerRuns(
  label: string,
  makeOptimizer: () => tf.Optimizer,
  beforeStep: (optimizer: tf.Optimizer, step: number) => void = () => {},
  skipped: (k: number, step: number) => boolean = () => false,
): Promise<[Float32Array[], Float32Array[]]> {
  const results: Float32Array[][] = [];
  for (const backend of ["cpu", "webgpu"] as const) {
    await selectBackend(backend);
    const rng = new Rng(5);
    const variables = [[300, 7], [7], [2, 3, 4]].map((shape, k) =>
      tf.variable(normal(rng, shape), true, `${label}_${backend}_${k}`)
    );
    const optimizer = makeOptimizer();
    for (let step = 0; step < 5; step++) {
      beforeStep(optimizer, step);
      const grads = variables.map((v) => normal(rng, v.shape));
      optimizer.applyGradients(
        Object.fromEntries(variables.map((v, k) => [v.name, skipped(k, step) ? null : grads[k]])) as never,
      );
      tf.dispose(grads);
    }
    const weights = await optimizer.getWeights();
    results.push(
      await Promise.all(
        [...variables, ...weights.map((w) => w.tensor)].map(async (t) => await t.data() as Float32Array),
      ),
    );
    weights[0].tensor.dispose();
    optimizer.dispose();
    tf.dispose(variables);
  }
  return [results[0], results[1]];
}

webgpuTest("Adam's fused webgpu update follows TF.js's Adam on cpu over steps with a changing rate", async () => {
  const [cpu, gpu] = await optimizerRuns("webgpu_adam", () => tf.train.adam(1e-2, 0.9, 0.999, 1e-7), (o, step) => {
    (o as unknown as { learningRate: number }).learningRate = 1e-2 * (1 - step / 10);
  });
  assertClose(cpu, gpu, "Adam variables and moments", 1e-5);
});

webgpuTest("momentum SGD's fused webgpu update follows TF.js's on cpu, plain and Nesterov", async () => {
  for (const nesterov of [false, true]) {
    // The middle variable has no gradient every other step, as a frozen part of a model.
    const [cpu, gpu] = await optimizerRuns(
      `webgpu_momentum_${nesterov}`,
      () => tf.train.momentum(1e-2, 0.9, nesterov),
      undefined,
      (k, step) => k === 1 && step % 2 === 1,
    );
    assertClose(cpu, gpu, `momentum (Nesterov ${nesterov}) variables and accumulations`, 1e-5);
  }
});

webgpuTest("the fused VAE terms on webgpu equal their TF.js formulas on cpu, values and gradients", async () => {
  const [cpu, gpu] = await onBoth((rng) => {
    const logits = tf.mul(normal(rng, [8, 16, 16, 1]), 6);
    const labels = tf.step(normal(rng, [8, 16, 16, 1]));
    // A bool cast to float32 keeps its integer buffer on webgpu: the fused kernel must not read it as float32.
    const castLabels = tf.cast(tf.greater(normal(rng, [8, 16, 16, 1]), 0), "float32");
    const mean = normal(rng, [8, 10]), logVar = normal(rng, [8, 10]), noise = normal(rng, [8, 10]);
    const weights = normal(rng, [8, 10]);
    const crossEntropy = sigmoidCrossEntropyWithLogits(logits, labels);
    const castCrossEntropy = sigmoidCrossEntropyWithLogits(logits, castLabels);
    const dLogits = tf.grad((l: tf.Tensor) => tf.sum(sigmoidCrossEntropyWithLogits(l, labels)))(logits);
    const kl = gaussianKlTerms(mean, logVar);
    const sample = reparameterizedSample(mean, logVar, noise);
    // Both terms through the same mean and log-variance, as the VAE loss uses them.
    const [dMean, dLogVar] = tf.grads((m: tf.Tensor, v: tf.Tensor) =>
      tf.add(tf.sum(gaussianKlTerms(m, v)), tf.sum(tf.mul(reparameterizedSample(m, v, noise), weights)))
    )([mean, logVar]);
    return [crossEntropy, castCrossEntropy, dLogits, kl, sample, dMean, dLogVar];
  });
  assertClose(cpu, gpu, "VAE terms", 1e-5);
});

webgpuTest(
  "host values reach webgpu kernels intact through queue writes: float32, int32 and bool tensors",
  async () => {
    const [cpu, gpu] = await onBoth(() => {
      const values = tf.tensor1d([1.5, -2, 3.25, 4]);
      const indices = tf.tensor1d([3, 0, 2], "int32");
      const mask = tf.tensor1d([true, false, true, true], "bool");
      return [
        tf.gather(values, indices),
        tf.where(mask, values, tf.neg(values)),
        tf.cast(tf.add(indices, 1), "float32"),
      ];
    });
    assertClose(cpu, gpu, "uploads", 0);
  },
);
