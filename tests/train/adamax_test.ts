/**
 * The savable Adamax: its update is tfjs' AdamaxOptimizer's, and a copy
 * restored from its saved state (lib/train/loop.ts optimizerState /
 * restoreOptimizer) continues bit for bit like the original.
 */
import * as tf from "@tensorflow/tfjs";
import { assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { Adamax } from "../../lib/train/adamax.ts";
import { optimizerState, restoreOptimizer } from "../../lib/train/loop.ts";

await selectBackend("wasm");

/** A least-squares problem on fresh batches: `steps` updates of `w` by `optimizer`. */
function train(optimizer: tf.Optimizer, w: tf.Variable, rng: Rng, steps: number): void {
  for (let s = 0; s < steps; s++) {
    const x = tf.tensor2d(rng.normalArray(32 * 4), [32, 4]);
    const y = tf.tensor2d(rng.normalArray(32 * 2), [32, 2]);
    tf.dispose(optimizer.minimize(() => tf.losses.meanSquaredError(y, tf.matMul(x, w)) as tf.Scalar, true, [w])!);
    tf.dispose([x, y]);
  }
}

Deno.test("Adamax updates as tfjs' AdamaxOptimizer, and a restored copy continues bit for bit", async () => {
  const before = tf.memory().numTensors;
  const init = new Rng(3).normalArray(8);
  const variableOf = (values: Float32Array) => tf.tidy(() => tf.variable(tf.tensor2d(values, [4, 2])));
  const [wOurs, wTfjs] = [variableOf(init), variableOf(init)];
  const ours = new Adamax(1e-2), theirs = tf.train.adamax(1e-2, 0.9, 0.999, 1e-8);
  train(ours, wOurs, new Rng(1), 20);
  train(theirs, wTfjs, new Rng(1), 20);
  assertEquals(Array.from(wOurs.dataSync()), Array.from(wTfjs.dataSync()));

  // Save after 20 steps; a new optimizer and variable restored from it run 15 more steps.
  const saved = await optimizerState(ours);
  const wSaved = variableOf(wOurs.dataSync() as Float32Array);
  const resumed = new Adamax(1e-2);
  // As a checkpoint reads them back: typed arrays with their dtype.
  const read = Object.fromEntries(
    Object.entries(saved).map(([k, v]) => [k, { ...v, dtype: v.data instanceof Int32Array ? "i4" : "f4" }]),
  );
  await restoreOptimizer(resumed, read);
  const continued = new Rng(9), again = Rng.fromState(continued.state());
  train(ours, wOurs, continued, 15);
  train(resumed, wSaved, again, 15);
  assertEquals(Array.from(wSaved.dataSync()), Array.from(wOurs.dataSync()));
  assertEquals(resumed.iterations, ours.iterations);

  tf.dispose([wOurs, wTfjs, wSaved]);
  ours.dispose();
  theirs.dispose();
  resumed.dispose();
  assertEquals(tf.memory().numTensors, before);
});
