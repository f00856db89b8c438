import * as tf from "@tensorflow/tfjs";
import { assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { cwL2 } from "../../lib/attacks/carlini_wagner.ts";
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
