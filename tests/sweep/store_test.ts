/**
 * The state of a sweep's tasks: the run store first (completed, live,
 * interrupted, crashed, failed runs tagged with the task's key), then the
 * latest launch and Slurm's word on it; and the lines that report them.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { integer } from "../../lib/core/config.ts";
import { defineExperiment } from "../../lib/core/experiment.ts";
import { SWEEP_TASK_ENV } from "../../lib/core/run_layout.ts";
import { readRunInfo, writeJsonAtomic } from "../../lib/core/run_files.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { expandSweep } from "../../lib/sweep/spec.ts";
import {
  countStates,
  launchArgs,
  listSweeps,
  planSweep,
  type SlurmJobState,
  statusLine,
  sweepTaskTag,
  taskStates,
  writeSweep,
  writeTaskState,
} from "../../lib/sweep/store.ts";

const toy = defineExperiment({
  name: "toy",
  description: "tasks to derive states of",
  source: "tests",
  config: { n: integer(0, "n", { min: 0, max: 100 }) },
  presets: { smoke: {}, quick: {}, paper: {} },
  targets: [],
  claims: [],
  run: () => Promise.resolve({ metrics: {} }),
});

Deno.test("task states: run store first, then the latest launch and Slurm; counts and the status line", async () => {
  const root = Deno.makeTempDirSync({ prefix: "latentlab-sweep-store-" });
  using _cleanup = { [Symbol.dispose]: () => Deno.removeSync(root, { recursive: true }) };
  const spec = { experiment: "toy", preset: "smoke" as const, name: "states", grid: { n: [...Array(12).keys()] } };
  const tasks = expandSweep(spec, toy);
  const { sweep } = planSweep({
    id: "states",
    spec: { ...spec, base: {}, include: [], seeds: 1 },
    tasks,
    experimentName: "toy",
    runsRoot: root,
    executor: "slurm",
  });
  await writeSweep(sweep);
  const dir = sweep.dir;
  const run = (index: number, end?: "completed" | "failed" | "interrupted") => {
    Deno.env.set(SWEEP_TASK_ENV, sweepTaskTag("states", tasks[index]));
    try {
      const writer = RunWriter.create({
        root,
        experiment: "toy",
        argv: tasks[index].args,
        seed: 0,
        preset: "smoke",
        backend: null,
        config: tasks[index].config,
        versions: {},
        gitCommit: null,
      });
      if (end) writer.finish(end, end === "failed" ? "Error: diverged at step 3\n    at somewhere" : undefined);
      return writer;
    } finally {
      Deno.env.delete(SWEEP_TASK_ENV);
    }
  };
  run(0, "completed");
  run(1, "interrupted");
  run(2, "failed");
  const live = run(3);
  // A run left "running" by a process that is gone: crashed.
  const dead = run(4, "completed").dir;
  writeJsonAtomic(join(dead, "run.json"), { ...readRunInfo(dead), status: "running", ended: null });
  Deno.writeTextFileSync(join(dead, "lock"), JSON.stringify({ pid: 2 ** 22 + 7, host: Deno.hostname(), since: "" }));
  const slurmJob = (index: number, job: string) =>
    writeTaskState(dir, tasks[index].key, {
      index,
      status: "submitted",
      executor: "slurm",
      attempts: 1,
      job_id: job,
      err: join(dir, "slurm", `${job}.err`),
    });
  Deno.mkdirSync(join(dir, "slurm"));
  slurmJob(5, "13_5");
  slurmJob(6, "13_6");
  Deno.writeTextFileSync(join(dir, "slurm", "13_6.err"), ["a", "b", "c", "d", "e", "f", "Error: boom", ""].join("\n"));
  slurmJob(7, "13_7");
  // 8: never launched. 9: completed once, failed later: completed.
  run(9, "completed");
  run(9, "failed");
  // 10: an older run failed, the task is queued again: active, not launched twice.
  run(10, "failed");
  slurmJob(10, "14_0");
  slurmJob(11, "13_11");

  const asked: string[][] = [];
  const slurm = (ids: string[]) => {
    asked.push(ids);
    const states: Record<string, SlurmJobState> = {
      "13_5": { state: "pending", reason: "JobArrayTaskLimit" },
      "13_6": { state: "failed", exitCode: 7, reason: "NonZeroExitCode" },
      "13_7": { state: "lost" },
      "14_0": { state: "running" },
      "13_11": { state: "completed", exitCode: 0 },
    };
    return Promise.resolve(new Map(ids.flatMap((id) => states[id] ? [[id, states[id]] as const] : [])));
  };
  const states = await taskStates(dir, root, slurm);
  assertEquals(states.map((s) => s.status), [
    "completed",
    "interrupted",
    "failed",
    "active",
    "crashed",
    "active",
    "failed",
    "lost",
    "pending",
    "completed",
    "active",
    "lost",
  ]);
  // Slurm is asked once, only about tasks the run store does not settle.
  assertEquals(asked, [["13_5", "13_6", "13_7", "14_0", "13_11"]]);
  assertEquals(states[1].resume, states[1].run);
  assertEquals(states[4].resume, dead);
  assertEquals([states[2].resume, states[2].reason], [null, "Error: diverged at step 3"]);
  assertEquals([states[6].exit_code, states[6].reason, states[6].tail], [7, "NonZeroExitCode", [
    "c",
    "d",
    "e",
    "f",
    "Error: boom",
  ]]);
  assertEquals(states[0].run !== null && states[9].run !== null, true);
  assertEquals(launchArgs(tasks[1], states[1].resume), ["toy", "--resume", states[1].run!]);
  assertEquals(launchArgs(tasks[2], null), tasks[2].args);

  const counts = countStates(states);
  assertEquals(counts, { completed: 2, active: 3, interrupted: 1, crashed: 1, failed: 2, lost: 2, pending: 1 });
  assertEquals(
    statusLine("states", states),
    "sweep states: 12 tasks, 2 completed, 3 active, 1 interrupted, 1 crashed, 2 failed, 2 lost, 1 pending",
  );
  assertEquals(statusLine("states", states, 7), "sweep states: 12 tasks, 2 completed, 3 active, 7 launched");

  // Files only (the dashboard, sweep list): a submitted job without an answer from Slurm counts as active.
  const [listed] = await listSweeps(root);
  assertEquals([listed.id, listed.experiment, listed.total, listed.executor], ["states", "toy", 12, "slurm"]);
  assertEquals(listed.counts.active, 6);
  live.finish("completed");
  assert((await taskStates(dir, root, slurm))[3].status === "completed");
});
