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
