import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { cwL2 } from "../../lib/attacks/carlini_wagner.ts";
import { l2 } from "../../lib/attacks/distances.ts";
import { assertNearHyperplane, linearCase } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

Deno.test("C&W L2 finds an adversarial within 2% above |f|/‖w‖₂ on a linear model", async () => {
  // A box of ±2: Adam's steps of 0.01 in tanh space are ≈ 0.02 in input units, small against d ≥ 0.09.
  const c = linearCase(6, 7, 2);
  const before = tf.memory().numTensors;
  // Fewer rounds and steps than foolbox's 9 × 10,000: c reaches the needed 0.1–1 in 4 rounds, Adam converges in 200 steps.
  const out = await attack(cwL2({ binarySearchSteps: 6, steps: 200 }), c.model, c.inputs, c.labels, [null], new Rng(1));
  assertEquals(tf.memory().numTensors, before);
  assertNearHyperplane(c, out.raw[0], out.success[0], 0.02);
});

Deno.test("C&W asked for an unreachable margin κ fails: clean input, success 0", async () => {
  // Inside ±10, |f| ≤ 10‖w‖₁ < 1000: no input is adversarial with confidence 1000.
  const c = linearCase(4);
  const out = await attack(
    cwL2({ binarySearchSteps: 2, steps: 20, confidence: 1000 }),
    c.model,
    c.inputs,
    c.labels,
    [null],
    new Rng(1),
  );
  assertEquals(Array.from(out.raw[0]), Array.from(c.inputs.values));
  assertEquals(Array.from(out.success[0]), [0, 0, 0, 0]);
});

/**
 * An MNIST-shaped two-class linear model on the [0, 1] box: logits [0, w·x + b] on 28×28 inputs whose pixels are
 * mostly at the bounds, as MNIST's background (0) and strokes (1). A pixel sits at 0 only where w_i < 0 and at 1 only
 * where w_i > 0, so the projection onto the hyperplane moves every saturated pixel into the box and the minimal L2
 * adversarial is exactly the hyperplane distance |w·x + b|/‖w‖₂ (checked: the projection stays inside [0, 1]).
 */
function mnistShapedCase(n: number, seed: number) {
  const rng = new Rng(seed);
  const size = 28 * 28;
  const w = Float32Array.from({ length: size }, () => (rng.uniform() < 0.5 ? -1 : 1) * (0.5 + 0.5 * rng.uniform()));
  const values = new Float32Array(n * size);
  const dot = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < size; i++) {
      const saturated = rng.uniform() < (w[i] < 0 ? 0.8 : 0.2);
      values[r * size + i] = saturated ? (w[i] < 0 ? 0 : 1) : 0.3 + 0.4 * rng.uniform();
      dot[r] += w[i] * values[r * size + i];
    }
  }
  const w2 = Math.hypot(...w);
  // The nearest input 0.3 above the hyperplane; the rest spread by their draws (label 1 throughout).
  const b = 0.3 * w2 - Math.min(...dot);
  const distances = Array.from(dot, (v) => (v + b) / w2);
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < size; i++) {
      const projected = values[r * size + i] - (distances[r] * w[i]) / w2;
      assert(projected >= 0 && projected <= 1, `sample ${r}: the projection leaves the box at pixel ${i}`);
    }
  }
  const weights = tf.tensor2d(w, [size, 1]);
  const model = {
    bounds: [0, 1] as [number, number],
    gradient: true,
    logits: (x: tf.Tensor) =>
      tf.tidy(() => {
        const f = tf.add(tf.matMul(tf.reshape(x, [x.shape[0], size]), weights), b);
        return tf.concat([tf.zerosLike(f), f], 1) as tf.Tensor2D;
      }),
  };
  const inputs = { values, n, shape: [28, 28, 1] as [number, number, number] };
  return { model, inputs, labels: new Int32Array(n).fill(1), distances, dispose: () => weights.dispose() };
}

Deno.test("C&W L2 at foolbox's step size 0.01 comes within 1.05× of the minimal L2 on an MNIST-shaped linear model", async () => {
  const c = mnistShapedCase(4, 5);
  try {
    assert(c.distances.every((d) => d >= 0.3 - 1e-9 && d < 3), `hyperplane distances ${c.distances}`);
    // A saturated pixel sits at w = ±atanh(0.999999) ≈ ±7.25 in tanh space, hundreds of Adam steps of 0.01 from
    // moving, and early abort checks progress every tenth of a round: 5 rounds × 200 steps (the quick preset's former
    // budget) stop ≥ 1.3× above the minimum, 5 × 1,000 reach it. A step of 1e-3 needs foolbox's full 9 × 10,000.
    const ratios = async (steps: number) => {
      const out = await attack(cwL2({ binarySearchSteps: 5, steps }), c.model, c.inputs, c.labels, [null], new Rng(1));
      assertEquals(Array.from(out.success[0]), [1, 1, 1, 1]);
      return Array.from(l2(c.inputs.values, out.raw[0], c.inputs.n), (d, r) => d / c.distances[r]);
    };
    const full = await ratios(1_000);
    assert(full.every((q) => q >= 1 - 1e-4 && q <= 1.05), `L2 / minimal L2 with 5 × 1,000 steps: ${full}`);
    const short = await ratios(200);
    assert(short.every((q) => q >= 1.3), `L2 / minimal L2 with 5 × 200 steps: ${short}`);
  } finally {
    c.dispose();
  }
});
