import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { calibratedLogProbability, distalAscent } from "../../lib/attacks/distal.ts";
import { calibratedSoftmax } from "../../lib/models/abs_calibration.ts";
import { boxLinearModel } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

Deno.test("calibratedLogProbability is the log of Eq. 4's calibrated softmax (float64 reference), η up to 1e8", async () => {
  const rng = new Rng(3);
  const logits = Float32Array.from({ length: 4 * 10 }, () => 20 * rng.normal());
  const targets = Int32Array.from([1, 4, 9, 0]);
  for (const [alpha, eta] of [[1, 0], [0.9, 143_900], [440, 3.9e-5], [5, 1e8]]) {
    const expected = calibratedSoftmax(logits, 10, alpha, eta);
    const ours = tf.tidy(() =>
      calibratedLogProbability(tf.tensor2d(logits, [4, 10]), tf.tensor1d(targets, "int32"), alpha, eta)
    );
    const values = await ours.data();
    ours.dispose();
    targets.forEach((t, r) => {
      const p = expected[r * 10 + t];
      assertAlmostEquals(Math.exp(values[r]), p, 1e-5 * Math.max(p, 1e-30) + 1e-12, `α ${alpha}, η ${eta}, row ${r}`);
    });
  }
});

Deno.test("distal descent: the linear model becomes confident from noise; with a floor η far above its scores it never does", async () => {
  const model = boxLinearModel(true, 5);
  const options = { starts: 4, shape: [2, 2, 1] as [number, number, number], steps: 200, alpha: 1 };
  const before = tf.memory().numTensors;
  const confident = await distalAscent(model, { ...options, eta: 0 }, new Rng(1));
  assertEquals(tf.memory().numTensors, before);
  assertEquals(Array.from(confident.targets), [1, 1, 1, 1]);
  assertEquals(Array.from(confident.reached), [1, 1, 1, 1]);
  assert(confident.images.every((v) => v >= 0 && v <= 1));
  // logit_1 ≤ 5·(1 + 0.5 + 1.5 − 0.5) = 12.5 on the box: e^12.5 ≈ 2.7e5 ≪ 10η keeps p near 1/2.
  const floored = await distalAscent(model, { ...options, eta: 1e8 }, new Rng(1));
  assertEquals(Array.from(floored.reached), [0, 0, 0, 0]);
  assert(floored.confidence.every((p) => p < 0.51), Array.from(floored.confidence).join(", "));
  model.dispose();
});
