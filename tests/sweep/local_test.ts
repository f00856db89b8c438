/**
 * The local executor end to end, as a user runs it (`main.ts sweep` as a
 * process): tasks on a worker pool become runs tagged with their task; a
 * second invocation launches nothing; a task stopped by SIGTERM is
 * interrupted and the next invocation resumes its run.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { listRuns, readSummary, type RunListing } from "../../lib/core/run_reader.ts";
import { readSweep, readTaskRecord } from "../../lib/sweep/store.ts";
import { projectPath } from "../experiments/cli.ts";
import { mainInProcess } from "../main_in_process.ts";
import { plannedArray, RESUMABLE } from "./fixtures/planned.ts";

// Module fixtures, not trained experiments: these tests are about the worker pool, signals and the run store, so a
// task costs little more than its process's start.
const FAILING = fileURLToPath(new URL("./fixtures/failing_experiment.ts", import.meta.url));

const root = Deno.makeTempDirSync({ prefix: "latentlab-sweep-local-" });
globalThis.addEventListener("unload", () => Deno.removeSync(root, { recursive: true }));

/** `main.ts sweep ...args --runs <root>` as a process. */
function sweepCommand(args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", projectPath("main.ts"), "sweep", ...args, "--runs", root],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  });
}

async function sweep(args: string[]) {
  const out = await sweepCommand(args).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** `main.ts sweep ...args --runs <root>` in this process (what is checked is its outcome, not the process). */
const inProcess = (args: string[]) => mainInProcess(["sweep", ...args, "--runs", root]);

function specFile(name: string, spec: unknown): string {
  const path = join(root, `${name}.json`);
  Deno.writeTextFileSync(path, JSON.stringify(spec));
  return path;
}

const runsOf = (id: string): RunListing[] => listRuns(root).filter((r) => r.info.sweep?.id === id);

/** The sweep's run once its checkpoint is written: there the fixture waits to be stopped. */
async function checkpointedRun(id: string): Promise<RunListing> {
  // Bounds only a start that never comes: a busy machine delays the checkpoint without failing the test.
  for (const start = Date.now(); Date.now() - start < 120_000;) {
    const run = runsOf(id)[0];
    const checkpoints = run ? [...Deno.readDirSync(join(run.dir, "checkpoints"))] : [];
    if (run && checkpoints.some((e) => e.name.startsWith("step-"))) return run;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no checkpoint of sweep ${id} after 120 s`);
}

Deno.test("3 smoke tasks on 2 workers: 3 tagged runs; a second invocation launches none; status and --json", async () => {
  // Three tasks on two workers: one worker takes a second task.
  const spec = specFile("three", { experiment: FAILING, preset: "smoke", grid: { sleep_s: [0, 0.05, 0.1] } });
  const first = await sweep([spec, "--workers", "2"]);
  assertEquals(first.code, 0, first.stderr);
  const lines = first.stdout.trim().split("\n");
  const id = /^sweep (failing-toy-[0-9a-f]{8}):/.exec(lines[0])?.[1];
  assert(id, first.stdout);
  assertEquals(lines, [
    `sweep ${id}: 3 tasks, 0 completed, 0 active, 3 launched`,
    `sweep ${id}: 3 tasks, 3 completed, 0 active`,
  ]);
  assert(first.stderr.includes("3 tasks on 2 workers"), first.stderr);

  const dir = join(root, "_sweeps", id);
  const { tasks } = readSweep(dir);
  const runs = runsOf(id);
  assertEquals(runs.length, 3);
  assert(runs.every((r) => r.status === "completed"));
  assertEquals(runs.map((r) => r.info.sweep!.key).sort(), tasks.map((t) => t.key).sort());
  assertEquals(runs.map((r) => r.info.sweep!.index).sort(), [0, 1, 2]);
  // The sweep folder is not a run: listRuns passes over _sweeps.
  assertEquals(listRuns(root).length, 3);
  for (const task of tasks) {
    const record = readTaskRecord(dir, task.key)!;
    assertEquals([record.status, record.attempts, record.exit_code], ["completed", 1, 0]);
    assertEquals(readRunInfo(record.run_dir!).sweep?.key, task.key);
    assert(Deno.readTextFileSync(record.err!).includes("→"), "the task's stderr is in its log");
  }

  const again = await inProcess([spec]);
  assertEquals(again.code, 0, again.stderr);
  assertEquals(again.stdout.trim().split("\n")[0], `sweep ${id}: 3 tasks, 3 completed, 0 active, 0 launched`);
  assertEquals(runsOf(id).length, 3);

  assertEquals((await inProcess(["status", id])).stdout, `sweep ${id}: 3 tasks, 3 completed, 0 active`);
  const json = JSON.parse((await inProcess(["status", id, "--json"])).stdout);
  assertEquals([json.id, json.total, json.counts.completed, json.varied], [id, 3, 3, ["sleep_s"]]);
  assertEquals(json.tasks.map((t: { index: number }) => t.index), [0, 1, 2]);
  assert(json.tasks.every((t: { run: string; status: string }) => t.status === "completed" && t.run.startsWith(root)));
  const list = (await inProcess(["list"])).stdout;
  assert(list.includes(`${id}  failing-toy (smoke)`) && list.includes("3 tasks: 3 completed"), list);
});

Deno.test("SIGTERM to a task's process: its run is interrupted, and the next invocation resumes it", async () => {
  const spec = specFile("resumable", { experiment: RESUMABLE, preset: "smoke", name: "resumable" });
  const child = sweepCommand([spec]).spawn();
  // Stopped once its checkpoint is written, so that the resume continues from it.
  const run = await checkpointedRun("resumable");
  Deno.kill(readRunInfo(run.dir).pid, "SIGTERM");
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 1, new TextDecoder().decode(out.stderr));
  assert(stdout.includes("sweep resumable: 1 tasks, 0 completed, 0 active, 1 interrupted"), stdout);
  assertEquals(readRunInfo(run.dir).status, "interrupted");

  // The sweep that resumes it runs in this process; its task is still a process of its own.
  const resumed = await inProcess([spec]);
  assertEquals(resumed.code, 0, resumed.stderr);
  assertEquals(resumed.stdout.trim().split("\n"), [
    "sweep resumable: 1 tasks, 0 completed, 0 active, 1 launched",
    "sweep resumable: 1 tasks, 1 completed, 0 active",
  ]);
  const info = readRunInfo(run.dir);
  assertEquals(info.status, "completed");
  assertEquals(info.resumes?.map((r) => r.step), [10], "resumed at the checkpoint of step 10");
  assertEquals(readSummary(run.dir)?.metrics.resumed_from, 10, "the run went on from its checkpoint");
  assertEquals(runsOf("resumable").map((r) => r.dir), [run.dir]);
  const record = readTaskRecord(join(root, "_sweeps", "resumable"), info.sweep!.key)!;
  assertEquals([record.attempts, record.resumed, record.status], [2, run.dir, "completed"]);
});

Deno.test("run-task runs its array element's task in process: SIGTERM interrupts it, the next element resumes it", async () => {
  // Not the setting of the test above: a task key names a setting, and a completed run of it is not run again.
  // Array index 1 is task 0: the .tasks file, not the sweep's order, maps indices to tasks.
  const { sweep: planned, tasks } = await plannedArray(
    root,
    { name: "array", base: { steps: 21 }, seeds: 2 },
    (tasks) => [tasks[1], tasks[0]],
  );
  const runTask = () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", projectPath("main.ts"), "sweep", "run-task", planned.dir, "sub-0", "1"],
      env: { NO_COLOR: "1", SLURM_ARRAY_JOB_ID: "77", SLURM_ARRAY_TASK_ID: "1" },
      stdout: "piped",
      stderr: "piped",
    });
  const child = runTask().spawn();
  const run = await checkpointedRun("array");
  assertEquals(readRunInfo(run.dir).pid, child.pid, "the task runs in the run-task process");
  assertEquals(readRunInfo(run.dir).sweep, { id: "array", key: tasks[0].key, index: 0 });
  child.kill("SIGTERM");
  const stopped = await child.output();
  assertEquals(stopped.code, 143, new TextDecoder().decode(stopped.stderr));
  assertEquals(readRunInfo(run.dir).status, "interrupted");
  let record = readTaskRecord(planned.dir, tasks[0].key)!;
  assertEquals([record.status, record.job_id, record.exit_code, record.attempts], ["interrupted", "77_1", 143, 1]);
  assertEquals(record.err, join(planned.dir, "slurm", "77_1.err"));

  const resumed = await runTask().output();
  assertEquals(resumed.code, 0, new TextDecoder().decode(resumed.stderr));
  const info = readRunInfo(run.dir);
  assertEquals([info.status, info.resumes?.length], ["completed", 1]);
  record = readTaskRecord(planned.dir, tasks[0].key)!;
  assertEquals([record.status, record.resumed, record.attempts, record.exit_code], ["completed", run.dir, 2, 0]);

  // Left as it is, so nothing runs: this process will do.
  const again = await mainInProcess(["sweep", "run-task", planned.dir, "sub-0", "1"]);
  assertEquals(again.code, 0, again.stderr);
  assert(again.stderr.includes("already completed"), again.stderr);
  assertEquals(runsOf("array").length, 1);
});
