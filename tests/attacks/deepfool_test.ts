import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { l2, linf } from "../../lib/attacks/distances.ts";
import { l2DeepFool, linfDeepFool } from "../../lib/attacks/deepfool.ts";
import { linearCase, tinyCase } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

Deno.test("L2 DeepFool on a linear model: distance in [d, 1.03 d], d = |f|/‖w‖₂", async () => {
  const c = linearCase(6);
  const before = tf.memory().numTensors;
  const out = await attack(l2DeepFool(), c.model, c.inputs, c.labels, [null], new Rng(1));
  assertEquals(tf.memory().numTensors, before);
  const dist = l2(c.inputs.values, out.raw[0], c.inputs.n);
  for (let r = 0; r < c.inputs.n; r++) {
    const d = Math.abs(c.margins[r]) / c.w2;
    assertEquals(out.success[0][r], 1);
    // One exact linear step, scaled by 1 + overshoot (0.02) plus foolbox's 1e-4.
    assert(dist[r] >= d && dist[r] <= 1.03 * d, `sample ${r}: ${dist[r]} vs d = ${d}`);
  }
});

Deno.test("L∞ DeepFool on a linear model: distance in [d, 1.03 d], d = |f|/‖w‖₁", async () => {
  const c = linearCase(6);
  const out = await attack(linfDeepFool(), c.model, c.inputs, c.labels, [null], new Rng(1));
  const dist = linf(c.inputs.values, out.raw[0], c.inputs.n);
  for (let r = 0; r < c.inputs.n; r++) {
    const d = Math.abs(c.margins[r]) / c.w1;
    assertEquals(out.success[0][r], 1);
    assert(dist[r] >= d && dist[r] <= 1.03 * d, `sample ${r}: ${dist[r]} vs d = ${d}`);
  }
});

Deno.test("DeepFool with no steps fails (success 0); with steps it fools the tiny MLP", async () => {
  const c = tinyCase(12);
  const none = await attack(l2DeepFool({ steps: 0 }), c.model, c.inputs, c.labels, [null], new Rng(1));
  assertEquals(Array.from(none.raw[0]), Array.from(c.inputs.values));
  assertEquals(none.success[0].reduce((a, v) => a + v, 0), 0);
  const out = await attack(l2DeepFool({ candidates: 3 }), c.model, c.inputs, c.labels, [null], new Rng(1));
  assert(out.success[0].reduce((a, v) => a + v, 0) >= 10, `fooled ${out.success[0]}`);
  for (const v of out.raw[0]) assert(v >= 0 && v <= 1, `${v} outside the bounds`);
});

Deno.test("DeepFool through a model's Jacobian hook ends where the per-class backward passes end", async () => {
  const c = tinyCase(12);
  // The tiny MLP's Jacobian by one tf.grad per class: what a model with a cheap Jacobian hands over in one call.
  const withJacobian = {
    ...c.model,
    jacobian: (x: tf.Tensor4D) =>
      tf.tidy(() => {
        const logits = c.model.logits(x);
        const classes = logits.shape[1];
        const rows = Array.from({ length: classes }, (_, k) =>
          tf.reshape(
            tf.grad((v: tf.Tensor) => tf.sum(tf.gather(c.model.logits(v as tf.Tensor4D), [k], 1)))(x),
            [x.shape[0], 1, -1],
          ));
        return { logits, jacobian: tf.concat(rows, 1) as tf.Tensor3D };
      }),
  };
  for (const make of [l2DeepFool, linfDeepFool]) {
    const plain = await attack(make(), c.model, c.inputs, c.labels, [null], new Rng(1));
    const before = tf.memory().numTensors;
    const hooked = await attack(make(), withJacobian, c.inputs, c.labels, [null], new Rng(1));
    assertEquals(tf.memory().numTensors, before);
    assertEquals(Array.from(hooked.success[0]), Array.from(plain.success[0]));
    const gap = hooked.raw[0].reduce((m, v, i) => Math.max(m, Math.abs(v - plain.raw[0][i])), 0);
    assert(gap < 1e-5, `${make.name}: the two paths differ by ${gap}`);
  }
});
