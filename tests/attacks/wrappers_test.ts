import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import type { AttackModel } from "../../lib/attacks/types.ts";
import { binarized, float32Below, resetBinaryPixels } from "../../lib/attacks/wrappers.ts";

await selectBackend("wasm");

/** logits = [0, w·x + b] on inputs `[n, 2, 2, 1]`, from tf ops (differentiable). */
function linearModel(w: number[], b: number): AttackModel & { dispose(): void } {
  const weights = tf.tensor2d(w, [w.length, 1]);
  return {
    bounds: [0, 1],
    gradient: true,
    logits: (x) =>
      tf.tidy(() => {
        const f = tf.add(tf.matMul(tf.reshape(x, [x.shape[0], w.length]), weights), b);
        return tf.concat([tf.zerosLike(f), f], 1) as tf.Tensor2D;
      }),
    dispose: () => weights.dispose(),
  };
}

Deno.test("binarized: the same logits as the model on thresholded inputs, gradient passed straight through", async () => {
  const before = tf.memory().numTensors;
  const w = [1, -2, 0.5, 1.5];
  const model = linearModel(w, -0.7);
  const rng = new Rng(3);
  const values = Float32Array.from({ length: 40 }, () => rng.uniform());
  values[0] = 0.5; // exactly the threshold counts as 1
  const thresholded = values.map((v) => (v >= 0.5 ? 1 : 0));
  const x = tf.tensor4d(values, [10, 2, 2, 1]);
  const xb = tf.tensor4d(thresholded, [10, 2, 2, 1]);
  const wrapped = binarized(model);
  assertEquals([wrapped.bounds, wrapped.gradient], [[0, 1], true]);
  const got = tf.tidy(() => wrapped.logits(x));
  const want = tf.tidy(() => model.logits(xb));
  assertEquals(Array.from(await got.data()), Array.from(await want.data()));
  // d(f)/dx through the step is the model's gradient at the thresholded input: w per pixel.
  const grad = tf.tidy(() =>
    tf.grad((input: tf.Tensor) => tf.sum(tf.slice(wrapped.logits(input as tf.Tensor4D), [0, 1], [-1, 1])))(x)
  );
  const g = await grad.data();
  for (let i = 0; i < 10; i++) for (let j = 0; j < 4; j++) assertAlmostEquals(g[i * 4 + j], w[j], 1e-6);
  tf.dispose([x, xb, got, want, grad]);
  model.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("float32Below: the neighbouring float32 under a threshold", () => {
  assertEquals(float32Below(0.5), 0.5 - 2 ** -25);
  assertEquals(Math.fround(float32Below(0.5)), float32Below(0.5));
  assertEquals(float32Below(1), 1 - 2 ** -24);
  assertEquals(float32Below(-1), -(1 + 2 ** -23));
});

Deno.test("resetBinaryPixels without greedy: the binarized input is kept, each pixel at clean or the threshold", async () => {
  const model = linearModel([1, 1, 1, 1], -2.5);
  const binary = binarized(model);
  const batch = {
    x: new Float32Array([0.2, 0.3, 0.9, 0.1]),
    n: 1,
    shape: [2, 2, 1] as [number, number, number],
    labels: new Int32Array([0]),
  };
  const out = await resetBinaryPixels(binary, batch, new Float32Array([0.8, 0.7, 0.95, 0.6]));
  // Every flipped pixel (0, 1, 3) sits at the threshold; pixel 2 keeps its bit at its clean value.
  assertEquals(Array.from(out), [0.5, 0.5, Math.fround(0.9), 0.5]);
  model.dispose();
});

Deno.test("resetBinaryPixels: clean value where the decision holds, else the threshold side; stays adversarial", async () => {
  // Class 1 iff at least 3 of the 4 binarized pixels are on.
  const model = linearModel([1, 1, 1, 1], -2.5);
  const binary = binarized(model);
  const batch = {
    x: new Float32Array([0.2, 0.3, 0.9, 0.1, /* second sample is already correct: unchanged */ 0.1, 0.1, 0.1, 0.1]),
    n: 2,
    shape: [2, 2, 1] as [number, number, number],
    labels: new Int32Array([0, 0]),
  };
  const adv = new Float32Array([0.8, 0.7, 0.95, 0.6, 0.6, 0.1, 0.1, 0.1]);
  const before = tf.memory().numTensors;
  const out = await resetBinaryPixels(binary, batch, adv, { greedy: true });
  assertEquals(tf.memory().numTensors, before);
  // Pixel 2 keeps its binary value at its clean 0.9; pixel 0 can return to clean (3 on remain);
  // pixels 1 and 3 are needed and sit at the threshold 0.5.
  assertEquals(Array.from(out.subarray(0, 4)), [Math.fround(0.2), 0.5, Math.fround(0.9), 0.5]);
  assertEquals(Array.from(out.subarray(4)), Array.from(adv.subarray(4)));
  const pred = tf.tidy(() => tf.argMax(binary.logits(tf.tensor4d(out, [2, 2, 2, 1])), 1));
  assertEquals(Array.from(await pred.data())[0], 1);
  pred.dispose();
  // Going down: a pixel whose clean value is on and must be off lands just below the threshold.
  const negative = linearModel([-1, -1, -1, -1], 1.5);
  const down = await resetBinaryPixels(
    binarized(negative),
    {
      ...batch,
      n: 1,
      x: new Float32Array([0.9, 0.8, 0.2, 0.1]),
      labels: new Int32Array([0]),
    },
    new Float32Array([0.1, 0.05, 0.2, 0.1]),
    { greedy: true },
  );
  // Class 1 iff at most one pixel is on: one of the two on pixels must go off, the first in index order stays clean.
  assertEquals(Array.from(down), [Math.fround(0.9), float32Below(0.5), Math.fround(0.2), Math.fround(0.1)]);
  assert(down.every((v) => v >= 0 && v <= 1));
  model.dispose();
  negative.dispose();
});
