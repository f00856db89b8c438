import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertNotEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { RunInterrupted, UsageError } from "../../lib/core/errors.ts";
import { clearRequestedStop, requestStop } from "../../lib/core/run_guard.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import { Cebra, type CebraOptions } from "../../lib/contrastive/cebra.ts";
import { fitWithSnapshots } from "../../lib/contrastive/cebra_snapshots.ts";

await selectBackend("wasm");

const rng = new Rng(5);
const T = 240, n = 10;
const x: Matrix = { data: Float32Array.from({ length: T * n }, () => rng.normal()), rows: T, cols: n };
const label: Matrix = { data: Float64Array.from({ length: T }, (_, t) => Math.sin(t / 9)), rows: T, cols: 1 };
const held: Matrix = { data: Float32Array.from({ length: 50 * n }, () => rng.normal()), rows: 50, cols: n };
const options = (steps: number): CebraOptions => ({
  batchSize: 32,
  learningRate: 1e-2,
  outputDimension: 3,
  numHiddenUnits: 8,
  maxIterations: steps,
  seed: 3,
});

Deno.test("fitWithSnapshots: a snapshot after k steps is the embedding of a fit of k steps, the last one the fit's", async () => {
  const tensors = tf.memory().numTensors;
  const losses: number[] = [];
  const handled: number[] = [];
  const { cebra, snapshots } = await fitWithSnapshots(options(7), x, { continuous: label }, {
    every: 3,
    views: [{ x }, { x: held }],
    onStep: (step, loss) => losses.push(step, loss),
    onSnapshot: async (s) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      handled.push(s.step);
    },
  });
  assertEquals(snapshots.map((s) => s.step), [3, 6, 7]);
  assertEquals(handled, [3, 6, 7]);
  assertEquals(losses.filter((_, i) => i % 2 === 0), [1, 2, 3, 4, 5, 6, 7]);
  assertEquals(losses.filter((_, i) => i % 2 === 1), cebra.lossHistory);
  const last = snapshots[2].embeddings;
  assertEquals(Array.from(last[0].data), Array.from((await cebra.transform(x)).data));
  assertEquals(Array.from(last[1].data), Array.from((await cebra.transform(held)).data));
  cebra.dispose();
  // A separate fit of 3 steps with the same seed reaches the first snapshot's weights.
  const short = new Cebra(options(3));
  await short.fit(x, { continuous: label });
  assertEquals(Array.from(snapshots[0].embeddings[1].data), Array.from((await short.transform(held)).data));
  short.dispose();
  assertNotEquals(Array.from(snapshots[0].embeddings[1].data), Array.from(last[1].data));
  assertEquals(tf.memory().numTensors, tensors);
});

Deno.test("fitWithSnapshots: an aborted signal stops the fit with its reason and frees everything", async () => {
  const tensors = tf.memory().numTensors;
  const stop = new AbortController();
  await assertRejects(
    () =>
      fitWithSnapshots(options(50), x, { continuous: label }, {
        every: 2,
        views: [{ x }],
        signal: stop.signal,
        onStep: (step) => step === 5 && stop.abort(new Error("stop at 5")),
      }),
    Error,
    "stop at 5",
  );
  // A stop asked through the run guard (a signal of a command-line run) also ends the fit at its next step.
  let last = 0;
  try {
    await assertRejects(
      () =>
        fitWithSnapshots(options(50), x, { continuous: label }, {
          every: 2,
          views: [{ x }],
          onStep: (step) => {
            last = step;
            if (step === 4) requestStop();
          },
        }),
      RunInterrupted,
    );
  } finally {
    clearRequestedStop();
  }
  assertEquals(last, 4);
  assertEquals(tf.memory().numTensors, tensors);
});

Deno.test("fitWithSnapshots: bad options are UsageErrors before any training", async () => {
  await assertRejects(() => fitWithSnapshots(options(5), x, {}, { every: 0, views: [{ x }] }), UsageError, "every");
  await assertRejects(() => fitWithSnapshots(options(5), x, {}, { every: 1, views: [] }), UsageError, "views");
  // A view the model cannot embed fails when the snapshots are read, not as an unhandled rejection.
  const error = await assertRejects(
    () => fitWithSnapshots(options(4), x, {}, { every: 2, views: [{ x: { data: [1, 2], rows: 1, cols: 2 } }] }),
    UsageError,
  );
  assert(/receptive field|features/.test(error.message), error.message);
  // An error of the snapshot handler rejects the fit.
  await assertRejects(
    () =>
      fitWithSnapshots(options(4), x, {}, {
        every: 2,
        views: [{ x }],
        onSnapshot: () => {
          throw new Error("handler failed");
        },
      }),
    Error,
    "handler failed",
  );
});
