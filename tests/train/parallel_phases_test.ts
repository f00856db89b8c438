/** Phases in workers: same results as in process, in phase order, logs forwarded, resume skips finished phases. */
import * as tf from "@tensorflow/tfjs";
import { assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { runPhasesInWorkers } from "../../lib/train/parallel_phases.ts";
import { sumOfSquares } from "./fixtures/phase_module.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");
const MODULE = new URL("./fixtures/phase_module.ts", import.meta.url).href;

Deno.test("phases in two workers give the in-process results in phase order and forward logs and images", async () => {
  const logged: { step: number; values: Record<string, number> }[] = [];
  const images: string[] = [];
  const saved: unknown[] = [];
  const ctx = {
    ...fakeContext(logged),
    seed: 7,
    image: (name: string) => void images.push(name),
    checkpoint: (_step: number, _arrays: unknown, state: unknown) => {
      saved.push(structuredClone(state));
      return Promise.resolve();
    },
  };
  const phases = [1, 2, 3, 4, 5];
  const results = await runPhasesInWorkers(ctx, phases, {
    module: MODULE,
    exportName: "sumOfSquares",
    cfg: { n: 64 },
    workers: 2,
  });
  const inProcess: number[] = [];
  for (const phase of phases) inProcess.push(await sumOfSquares({ ...fakeContext([]), seed: 7 }, { n: 64 }, phase));
  assertEquals(results, inProcess);
  assertEquals(logged.length, 10);
  assertEquals(images.sort(), ["p1", "p2", "p3", "p4", "p5"]);
  // One checkpoint per finished phase, the last holding every result.
  assertEquals(saved.length, 5);
  assertEquals(Object.keys((saved[4] as { finished: object }).finished).length, 5);

  // A run resumed from the checkpoint after two phases runs only the other three.
  const resumedLogs: typeof logged = [];
  const resumed = await runPhasesInWorkers(
    { ...fakeContext(resumedLogs), seed: 7, resumed: { step: 2, arrays: {}, state: { finished: { 0: -1, 1: -2 } } } },
    phases,
    { module: MODULE, exportName: "sumOfSquares", cfg: { n: 64 }, workers: 2 },
  );
  assertEquals(resumed, [-1, -2, ...inProcess.slice(2)]);
  assertEquals(resumedLogs.length, 6);
  assertEquals(tf.memory().numTensors, 0);
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
