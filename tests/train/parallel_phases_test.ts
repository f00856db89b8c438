/**
 * Phases in workers: the in-process results in phase order, logs, images and kept models forwarded, arrays
 * checkpointed, resume skips finished phases, failures and stops end the run.
 */
import * as tf from "@tensorflow/tfjs";
import { assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import type { CheckpointArrays } from "../../lib/core/experiment.ts";
import { runPhasesInWorkers } from "../../lib/train/parallel_phases.ts";
import { sumOfSquares } from "./fixtures/phase_module.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");
const MODULE = new URL("./fixtures/phase_module.ts", import.meta.url).href;
const PHASES = [1, 2, 3, 4, 5];

Deno.test("phases in two workers give the in-process results and arrays, forward logs, images and models", async () => {
  const logged: { step: number; values: Record<string, number> }[] = [];
  const images: string[] = [];
  const models: [string, unknown][] = [];
  const saved: { arrays: CheckpointArrays; state: unknown }[] = [];
  const ctx = {
    ...fakeContext(logged),
    seed: 7,
    image: (name: string) => void images.push(name),
    saveModel: (name: string, _arrays: CheckpointArrays, info: unknown) => {
      models.push([name, info]);
      return Promise.resolve(name);
    },
    checkpoint: (_step: number, arrays: CheckpointArrays, state: unknown) => {
      saved.push({ arrays: { ...arrays }, state: structuredClone(state) });
      return Promise.resolve();
    },
  };
  const before = tf.memory().numTensors;
  const { results, arrays } = await runPhasesInWorkers(ctx, PHASES, {
    module: MODULE,
    exportName: "sumOfSquares",
    cfg: { n: 64 },
    workers: 2,
  });
  const inProcess = [];
  for (const [i, phase] of PHASES.entries()) {
    inProcess.push(
      await sumOfSquares({ ...fakeContext([]), seed: 7, saveModel: () => Promise.resolve("") }, { n: 64 }, phase, i),
    );
  }
  assertEquals(results, inProcess.map((o) => o.result));
  assertEquals(arrays, Object.assign({}, ...inProcess.map((o) => o.arrays)));
  assertEquals(logged.length, 10);
  assertEquals(images.sort(), ["p1", "p2", "p3", "p4", "p5"]);
  assertEquals(models.sort(), PHASES.map((p) => [`model ${p}`, { phase: p }]));
  // One checkpoint per finished phase, the last holding every result and every array.
  assertEquals(saved.length, 5);
  assertEquals(Object.keys((saved[4].state as { finished: object }).finished).length, 5);
  assertEquals(Object.keys(saved[4].arrays).sort(), PHASES.map((p) => `codes/${p}`));
  assertEquals(tf.memory().numTensors, before);

  // A run resumed from a checkpoint after two phases runs only the other three and keeps the first two's arrays.
  const resumedLogs: typeof logged = [];
  const resumed = await runPhasesInWorkers(
    {
      ...fakeContext(resumedLogs),
      seed: 7,
      resumed: {
        step: 2,
        arrays: {
          "codes/1": { data: Float32Array.of(-1), shape: [1], dtype: "f4" },
          "codes/2": { data: Float32Array.of(-2), shape: [1], dtype: "f4" },
        },
        state: { finished: { 0: -1, 1: -2 } },
      },
    },
    PHASES,
    { module: MODULE, exportName: "sumOfSquares", cfg: { n: 64 }, workers: 2 },
  );
  assertEquals(resumed.results, [-1, -2, ...inProcess.slice(2).map((o) => o.result)]);
  assertEquals(resumed.arrays["codes/2"], { data: Float32Array.of(-2), shape: [1] });
  assertEquals(resumed.arrays["codes/5"], arrays["codes/5"]);
  assertEquals(resumedLogs.length, 6);
});

Deno.test("a phase that throws in its worker fails the run with its message; a missing export is named", async () => {
  await assertRejects(
    () =>
      runPhasesInWorkers(fakeContext([]), [1, 2, 3], { module: MODULE, exportName: "failsOnTwo", cfg: {}, workers: 2 }),
    Error,
    "phase two is broken",
  );
  await assertRejects(
    () => runPhasesInWorkers(fakeContext([]), [1], { module: MODULE, exportName: "nothing", cfg: {}, workers: 1 }),
    Error,
    "exports no phase function nothing",
  );
});

Deno.test("stopping the run rejects with its reason and ends the workers", async () => {
  const stop = new AbortController();
  const ctx = { ...fakeContext([]), stopRequested: stop.signal };
  const run = runPhasesInWorkers(ctx, [1, 2, 3, 4], {
    module: MODULE,
    exportName: "sumOfSquares",
    cfg: { n: 1 << 20 },
    workers: 2,
  });
  setTimeout(() => stop.abort(new Error("interrupted by the test")), 50);
  await assertRejects(() => run, Error, "interrupted by the test");
});

Deno.test("a stop asked while the last lane checkpoints ends the run: the lane starts no other phase", async () => {
  const stop = new AbortController();
  const ctx = {
    ...fakeContext([]),
    stopRequested: stop.signal,
    // As the smoke checks and Ctrl-C at the wrong moment do: the stop comes inside the first checkpoint.
    checkpoint: () => Promise.resolve(stop.abort(new Error("stopped at the first checkpoint"))),
  };
  // One lane: no other phase in flight whose abort listener would end the run.
  const run = runPhasesInWorkers(ctx, [1, 2, 3], {
    module: MODULE,
    exportName: "sumOfSquares",
    cfg: { n: 16 },
    workers: 1,
  });
  await assertRejects(() => run, Error, "stopped at the first checkpoint");
});
