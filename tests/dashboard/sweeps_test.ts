/**
 * The dashboard's sweeps: /api/sweeps lists each sweep with its task counts
 * from files alone, /api/sweeps/:id gives its tasks with the varied keys,
 * their status, the spec's metric and a link to each task's run; the pure
 * order and progress segments of the page.
 */
import { assert, assertEquals } from "../assert.ts";
import { createApp } from "../../dashboard/server.ts";
import { progressSegments, sortedTasks, type SweepDetail, type SweepTaskRow } from "../../dashboard/ui/sweep_rows.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { SWEEP_TASK_ENV } from "../../lib/core/run_layout.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { checkSweepSpec, expandSweep } from "../../lib/sweep/spec.ts";
import { planSweep, writeSweep } from "../../lib/sweep/store.ts";

/** A sweep of 4 ica-toy smoke tasks (dim 4, 6 × seeds 0, 1) with runs: 2 completed, 1 failed, 1 never launched. */
async function sweepWithRuns(root: string) {
  const spec = checkSweepSpec({
    experiment: "ica-toy",
    preset: "smoke",
    name: "dims",
    grid: { dim: [4, 6] },
    seeds: 2,
    metric: { name: "mcc/slowflow/L1", goal: "maximize" },
  });
  const experiment = findExperiment("ica-toy")!;
  const tasks = expandSweep(spec, experiment);
  const { sweep } = planSweep({
    id: "dims",
    spec,
    tasks,
    experimentName: "ica-toy",
    runsRoot: root,
    executor: "local",
  });
  await writeSweep(sweep);
  const runs: string[] = [];
  for (const [i, ending] of [[0, 0.91], [1, 0.95], [2, "failed"]] as const) {
    Deno.env.set(SWEEP_TASK_ENV, `dims:${tasks[i].key}:${i}`);
    const run = RunWriter.create({
      root,
      experiment: "ica-toy",
      argv: tasks[i].args.slice(1),
      seed: tasks[i].seed,
      preset: "smoke",
      backend: { name: "cpu" },
      config: tasks[i].config,
      versions: {},
      gitCommit: null,
    });
    Deno.env.delete(SWEEP_TASK_ENV);
    if (ending === "failed") run.finish("failed", "boom");
    else {
      run.writeSummary({ metrics: { "mcc/slowflow/L1": ending }, targets: [], claims: [] });
      run.finish("completed");
    }
    runs.push(run.dir);
  }
  return { tasks, runs };
}

Deno.test("/api/sweeps and /api/sweeps/:id: counts, varied keys, status, metric and run of each task", async () => {
  const root = Deno.makeTempDirSync();
  const { tasks, runs } = await sweepWithRuns(root);
  const app = createApp(root);
  const { sweeps } = await (await app.request("/api/sweeps")).json();
  assertEquals(sweeps.map((s: { id: string; total: number }) => [s.id, s.total]), [["dims", 4]]);
  assertEquals([sweeps[0].counts.completed, sweeps[0].counts.failed, sweeps[0].counts.pending], [2, 1, 1]);
  const detail: SweepDetail = await (await app.request("/api/sweeps/dims")).json();
  assertEquals(detail.varied, ["dim"]);
  assertEquals(detail.metric, { name: "mcc/slowflow/L1", goal: "maximize" });
  assertEquals(detail.tasks.map((t) => [t.index, t.values.dim, t.seed, t.status, t.metric]), [
    [0, 4, 0, "completed", 0.91],
    [1, 4, 1, "completed", 0.95],
    [2, 6, 0, "failed", null],
    [3, 6, 1, "pending", null],
  ]);
  assertEquals(detail.tasks[0].key, tasks[0].key);
  assertEquals(detail.tasks[1].run, { experiment: "ica-toy", id: runs[1].split("/").at(-1)! });
  assertEquals((await app.request("/api/sweeps/nope")).status, 404);
  assertEquals((await app.request("/api/sweeps/..%2F..")).status, 404);
  // The runs listing does not show the sweeps folder as an experiment.
  const listed = (await (await app.request("/api/runs")).json()).runs;
  assert(listed.every((r: { experiment: string }) => r.experiment === "ica-toy"));
});

const row = (index: number, metric: number | null, dim: number): SweepTaskRow => ({
  index,
  key: `k${index}`,
  values: { dim },
  seed: 0,
  status: metric === null ? "failed" : "completed",
  run: null,
  metric,
  exit_code: null,
  attempts: 1,
});

Deno.test("sweep tables sort by metric (tasks without one last), by a varied key, or by index; ties keep order", () => {
  const tasks = [row(0, 0.5, 6), row(1, null, 4), row(2, 0.9, 4), row(3, 0.5, 2)];
  assertEquals(sortedTasks(tasks, "metric", true).map((t) => t.index), [2, 0, 3, 1]);
  assertEquals(sortedTasks(tasks, "metric").map((t) => t.index), [0, 3, 2, 1]);
  assertEquals(sortedTasks(tasks, "value:dim").map((t) => t.index), [3, 1, 2, 0]);
  assertEquals(sortedTasks(tasks, "index", true).map((t) => t.index), [3, 2, 1, 0]);
});

Deno.test("progress segments: statuses with tasks, in order, as shares of the total", () => {
  const counts = { completed: 3, active: 1, interrupted: 0, crashed: 0, failed: 0, lost: 0, pending: 4 };
  assertEquals(progressSegments(counts, 8), [
    { status: "completed", count: 3, percent: 37.5 },
    { status: "active", count: 1, percent: 12.5 },
    { status: "pending", count: 4, percent: 50 },
  ]);
});
