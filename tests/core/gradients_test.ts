import * as tf from "@tensorflow/tfjs";
import { assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { detached, stopGradient } from "../../lib/core/gradients.ts";

await selectBackend("cpu");

Deno.test("stopGradient: identity forward, zero gradient; d/dx Σ sg(x)·x = x", () => {
  const x = tf.tensor2d([[0.5, -1.25, 3], [2, 0, -0.75]]);
  const before = tf.memory().numTensors;
  assertEquals(tf.tidy(() => Array.from(stopGradient(x).dataSync())), Array.from(x.dataSync()));
  const g = tf.tidy(() => Array.from(tf.grad((t: tf.Tensor) => tf.sum(tf.mul(stopGradient(t), t)))(x).dataSync()));
  assertEquals(g, Array.from(x.dataSync()));
  assertEquals(tf.memory().numTensors, before);
  x.dispose();
});

Deno.test("detached: ops without gradients (argmax) run inside, the backward pass is zero", () => {
  const x = tf.tensor2d([[0.1, 0.9], [0.7, 0.3]]);
  const g = tf.tidy(() =>
    Array.from(
      tf.grad((t: tf.Tensor) => tf.sum(tf.mul(detached(t, (v) => tf.cast(tf.argMax(v, 1), "float32")), tf.sum(t, 1))))(
        x,
      ).dataSync(),
    )
  );
  assertEquals(g, [1, 1, 0, 0]);
  x.dispose();
});
