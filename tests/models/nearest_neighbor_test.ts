import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { nearestNeighbor } from "../../lib/models/nearest_neighbor.ts";

await selectBackend("wasm");

Deno.test("nearest-neighbour logits equal −(brute-force minimum L2 distance per class)", async () => {
  const rng = new Rng(1);
  const m = 60, n = 7, classes = 4, pixels = 784;
  const images = Float32Array.from({ length: m * pixels }, () => rng.uniform());
  // Class 3 has no digits: its logit is −∞.
  const labels = Int32Array.from({ length: m }, () => rng.int(3));
  const queries = Float32Array.from({ length: n * pixels }, () => rng.uniform());
  queries.set(images.subarray(5 * pixels, 6 * pixels), 2 * pixels); // a training digit itself
  for (let p = 0; p < pixels; p++) queries[3 * pixels + p] = images[9 * pixels + p] + 1e-3 * rng.normal();
  const model = nearestNeighbor(images, labels, classes);
  assertEquals(model.gradient, false);
  assertEquals(model.bounds, [0, 1]);
  const before = tf.memory().numTensors;
  const x = tf.tensor4d(queries, [n, 28, 28, 1]);
  const logits = model.logits(x);
  const got = await logits.data();
  tf.dispose([x, logits]);
  assertEquals(tf.memory().numTensors, before);
  let worst = 0;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < classes; c++) {
      let best = Infinity;
      for (let j = 0; j < m; j++) {
        if (labels[j] !== c) continue;
        let s = 0;
        for (let p = 0; p < pixels; p++) s += (queries[i * pixels + p] - images[j * pixels + p]) ** 2;
        best = Math.min(best, Math.sqrt(s));
      }
      if (best === Infinity) assertEquals(got[i * classes + c], -Infinity);
      else worst = Math.max(worst, Math.abs(got[i * classes + c] + best) / Math.max(best, 1e-3));
    }
  }
  assert(worst < 1e-4, `relative error ${worst}`);
  assertEquals(Math.abs(got[2 * classes + labels[5]]), 0);
  assert(Math.abs(got[3 * classes + labels[9]] + 0.028) < 0.005, `${got[3 * classes + labels[9]]}`);
  model.dispose();
});
