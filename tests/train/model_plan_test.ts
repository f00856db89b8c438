/** runModelPlan: one checkpoint per model, and a resume that runs only the rest and keeps earlier arrays. */
import { assertEquals } from "../assert.ts";
import type { CheckpointArrays } from "../../lib/core/experiment.ts";
import type { LoadedCheckpoint } from "../../lib/core/run_checkpoints.ts";
import { runModelPlan } from "../../lib/train/model_plan.ts";
import { fakeContext } from "./fake_context.ts";

const plan = [0, 1, 2].map((seed) => ({ method: "m", value: 1, seed }));
const outcome = (seed: number) => ({
  metrics: { score: seed * 10 },
  arrays: { [`codes/${seed}`]: { data: Float32Array.of(seed, seed + 0.5), shape: [2] } },
});

Deno.test("runModelPlan checkpoints after each model; a resumed plan runs only the rest and keeps earlier arrays", async () => {
  const logged: { step: number; values: Record<string, number> }[] = [];
  const checkpoints: { step: number; arrays: CheckpointArrays; state: unknown }[] = [];
  const ctx = {
    ...fakeContext(logged),
    checkpoint: (step: number, arrays: CheckpointArrays, state: unknown) => {
      checkpoints.push({ step, arrays: { ...arrays }, state: structuredClone(state) });
      return Promise.resolve();
    },
  };
  const ran: number[] = [];
  // Stop after the second model, as a killed run would.
  await runModelPlan(ctx, plan.slice(0, 2), (entry) => (ran.push(entry.seed), Promise.resolve(outcome(entry.seed))));
  assertEquals(checkpoints.map((c) => c.step), [1, 2]);
  assertEquals(logged.map((row) => [row.step, row.values["models/score"]]), [[1, 0], [2, 10]]);

  const last = checkpoints[1];
  const resumed: LoadedCheckpoint = {
    step: last.step,
    state: last.state,
    arrays: Object.fromEntries(
      Object.entries(last.arrays).map((
        [k, v],
      ) => [k, { ...(v as { data: Float32Array; shape: number[] }), dtype: "f4" }]),
    ),
  };
  const { models, arrays } = await runModelPlan(
    { ...ctx, resumed },
    plan,
    (entry) => (ran.push(entry.seed), Promise.resolve(outcome(entry.seed))),
  );
  assertEquals(ran, [0, 1, 2]);
  assertEquals(models.map((m) => [m.seed, m.metrics.score]), [[0, 0], [1, 10], [2, 20]]);
  assertEquals(Object.keys(arrays).sort(), ["codes/0", "codes/1", "codes/2"]);
  assertEquals(Array.from(arrays["codes/1"].data), [1, 1.5]);
  assertEquals(checkpoints.at(-1)!.step, 3);
});
