/**
 * One driver per sweep and one process per task: two launches of a sweep
 * at once run each task once; a driver killed with SIGKILL leaves its task
 * running to its end, and the next launch watches it instead of running it
 * again; task claims keep two Slurm elements (or an element and a worker)
 * off one task.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { liveWriter } from "../../lib/core/run_lock.ts";
import { listRuns, readSummary, type RunListing } from "../../lib/core/run_reader.ts";
import { runTask } from "../../lib/sweep/local.ts";
import { acquireSweepLock, claimPath, claimTask, releaseClaim, sweepLockPath } from "../../lib/sweep/lock.ts";
import { readSweep, readTaskRecord } from "../../lib/sweep/store.ts";
import { projectPath } from "../experiments/cli.ts";
import { mainInProcess } from "../main_in_process.ts";
import { plannedArray, RESUMABLE } from "./fixtures/planned.ts";

// The fixture's task waits at its checkpoint until this file exists (or a signal comes).
const RELEASE_ENV = "RESUMABLE_TOY_RELEASE";

const temp = Deno.makeTempDirSync({ prefix: "latentlab-sweep-driver-" });
globalThis.addEventListener("unload", () => Deno.removeSync(temp, { recursive: true }));

/** A run store of its own per test: runs of one setting count for every sweep of a store. */
function store(name: string, seeds: number) {
  const root = join(temp, name);
  Deno.mkdirSync(root);
  const spec = join(root, "spec.json");
  Deno.writeTextFileSync(spec, JSON.stringify({ experiment: RESUMABLE, preset: "smoke", name, seeds }));
  const release = join(root, "release");
  return {
    root,
    spec,
    release,
    /** `main.ts sweep <spec> --workers <n>` as a process; its tasks wait until `release` exists. */
    driver: (workers: number) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", projectPath("main.ts"), "sweep", spec, "--workers", String(workers), "--runs", root],
        env: { NO_COLOR: "1", [RELEASE_ENV]: release },
        stdout: "piped",
        stderr: "piped",
      }).spawn(),
    runs: (): RunListing[] => listRuns(root).filter((r) => r.info.sweep?.id === name),
  };
}

/** The `n` runs of a store's sweep once each has written its checkpoint: there the fixture waits. */
async function checkpointed(runs: () => RunListing[], n: number, stop?: AbortSignal): Promise<RunListing[]> {
  // Bounds only a start that never comes: a busy machine delays the checkpoints without failing the test.
  for (const start = Date.now(); Date.now() - start < 120_000;) {
    if (stop?.aborted) return [];
    const found = runs().filter((r) => {
      try {
        return [...Deno.readDirSync(join(r.dir, "checkpoints"))].some((e) => e.name.startsWith("step-"));
      } catch {
        return false;
      }
    });
    if (found.length >= n) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${n} checkpointed runs after 120 s`);
}

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Runs per task key. */
function runsPerKey(runs: readonly RunListing[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const run of runs) counts[run.info.sweep!.key] = (counts[run.info.sweep!.key] ?? 0) + 1;
  return counts;
}

Deno.test("two launches of one sweep at once: one drives it, the other exits 2 naming it; each task runs once", async () => {
  const s = store("twice", 2);
  const drivers = [s.driver(1), s.driver(1)];
  const outputs = drivers.map((d) => d.output());
  // A driver cannot end while its task waits, so the first to end is the one that was refused; two waiting
  // tasks (one worker each) would be two drivers at work.
  const bothAtWork = new AbortController();
  const first = await Promise.race([
    ...outputs.map((p, i) => p.then((out) => ({ i, out }))),
    checkpointed(s.runs, 2, bothAtWork.signal).then(() => null),
  ]);
  bothAtWork.abort();
  assert(first !== null, "both launches started a task: two drivers of one sweep");
  assertEquals(first.out.code, 2, decode(first.out.stderr));
  const winner = drivers[1 - first.i];
  const lock = JSON.parse(Deno.readTextFileSync(sweepLockPath(join(s.root, "_sweeps", "twice"))));
  assertEquals(lock.pid, winner.pid);
  assertEquals(
    decode(first.out.stderr).trim(),
    `error: sweep twice is being launched by process ${winner.pid} on ${Deno.hostname()} since ${lock.since}; ` +
      `follow it with deno task sweep status twice --runs ${s.root}, or launch it again once that process has ended`,
  );
  assertEquals(decode(first.out.stdout), "");

  await checkpointed(s.runs, 1);
  Deno.writeTextFileSync(s.release, "");
  const won = await outputs[1 - first.i];
  assertEquals(won.code, 0, decode(won.stderr));
  assertEquals(decode(won.stdout).trim().split("\n"), [
    "sweep twice: 2 tasks, 0 completed, 0 active, 2 launched",
    "sweep twice: 2 tasks, 2 completed, 0 active",
  ]);
  const dir = join(s.root, "_sweeps", "twice");
  const keys = readSweep(dir).tasks.map((t) => t.key);
  assertEquals(runsPerKey(s.runs()), Object.fromEntries(keys.map((k) => [k, 1])));
  assert(s.runs().every((r) => r.status === "completed"));
  assertEquals(keys.map((k) => readTaskRecord(dir, k)?.attempts), [1, 1]);
  // Released on its way out: the next launch needs no takeover.
  assertEquals(listing(dir).filter((name) => name === "lock" || name.startsWith("claims/")), []);
});

Deno.test("SIGKILL to a sweep's driver: its task runs on to complete, and the next launch watches it, not reruns it", async () => {
  const s = store("orphan", 2);
  // The in-process launch below starts its task with this process's environment.
  Deno.env.set(RELEASE_ENV, s.release);
  try {
    const driver = s.driver(1);
    const [run] = await checkpointed(s.runs, 1);
    driver.kill("SIGKILL");
    const killed = await driver.output();
    assertEquals(killed.signal, "SIGKILL");
    const writer = liveWriter(run.dir);
    assertEquals(writer?.pid, readRunInfo(run.dir).pid, "the task's process outlives its driver");

    // The next launch watches the task that still waits at its checkpoint and launches the other one.
    const next = mainInProcess(["sweep", s.spec, "--workers", "1", "--runs", s.root]);
    await checkpointed(s.runs, 2);
    Deno.writeTextFileSync(s.release, "");
    const out = await next;
    // Its output went to the task's log, not through a pipe to the killed driver: it did not fail there.
    const info = readRunInfo(run.dir);
    assertEquals([info.status, info.error], ["completed", undefined]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(out.stdout.trim().split("\n"), [
      "sweep orphan: 2 tasks, 0 completed, 1 active, 1 launched",
      "sweep orphan: 2 tasks, 2 completed, 0 active",
    ]);
    const task = `task ${info.sweep!.index} ${info.sweep!.key}`;
    assert(out.stderr.includes(`${task}: running without this driver; watching it`), out.stderr);
    assert(out.stderr.includes(`${task} seed=${info.sweep!.index}: completed (run by another process)`), out.stderr);

    const runs = s.runs();
    const dir = join(s.root, "_sweeps", "orphan");
    const keys = readSweep(dir).tasks.map((t) => t.key);
    assertEquals(runsPerKey(runs), Object.fromEntries(keys.map((k) => [k, 1])));
    for (const r of runs) {
      const info = readRunInfo(r.dir);
      assertEquals([info.status, info.resumes ?? []], ["completed", []], r.dir);
      assertEquals(readSummary(r.dir)?.metrics.resumed_from, 0, "each task ran once, from its start");
    }
    assertEquals(keys.map((k) => [readTaskRecord(dir, k)?.attempts, readTaskRecord(dir, k)?.status]), [
      [1, "completed"],
      [1, "completed"],
    ]);
  } finally {
    Deno.env.delete(RELEASE_ENV);
  }
});

Deno.test("a claimed task is not run again: a second claim names its holder; run-task leaves it and exits 0", async () => {
  const root = join(temp, "claims");
  const { sweep, tasks } = await plannedArray(root, { name: "claimed" }, (tasks) => [tasks[0]]);
  const key = tasks[0].key;

  // A claim left by a process that has ended is taken over (no pid is above Linux's largest, 2^22).
  const gone = { pid: 2 ** 22 + 1, host: Deno.hostname(), since: "2020-01-01T00:00:00.000Z" };
  Deno.mkdirSync(join(sweep.dir, "claims"));
  Deno.writeTextFileSync(claimPath(sweep.dir, key), JSON.stringify(gone));
  assertEquals(claimTask(sweep.dir, key), null);
  const held = JSON.parse(Deno.readTextFileSync(claimPath(sweep.dir, key)));
  assertEquals([held.pid, held.host], [Deno.pid, Deno.hostname()]);
  // A live holder keeps it: the second claimant is told who.
  assertEquals(claimTask(sweep.dir, key), held);

  const lines: string[] = [];
  let executed = 0;
  const execute = () => {
    executed++;
    return Promise.resolve(0);
  };
  assertEquals(await runTask(sweep.dir, "sub-0", 0, { execute, report: (l) => lines.push(l) }), 0);
  assertEquals(executed, 0);
  assertEquals(lines, [`task 0 ${key}: being run by process ${Deno.pid} on ${Deno.hostname()} since ${held.since}`]);

  releaseClaim(sweep.dir, key);
  assertEquals(await runTask(sweep.dir, "sub-0", 0, { execute, report: () => {} }), 0);
  assertEquals(executed, 1);
  assertEquals(listing(sweep.dir).includes(`claims/${key}.json`), false, "run-task gives its claim up");
});

Deno.test("a sweep's lock is taken over from a dead process, or a silent host after the stale age; else refused", () => {
  const dir = join(temp, "lock");
  const path = sweepLockPath(dir);
  Deno.mkdirSync(dir);
  const hint = "deno task sweep status lock";
  // No pid is above Linux's largest (2^22): the holder on this host is gone.
  Deno.writeTextFileSync(path, JSON.stringify({ pid: 2 ** 22 + 1, host: Deno.hostname(), since: "x" }));
  const release = acquireSweepLock(dir, "lock", hint);
  assertEquals(JSON.parse(Deno.readTextFileSync(path)).pid, Deno.pid);
  release();
  assertEquals(listing(dir), []);

  // Another host is judged by the heartbeat: fresh, it holds the sweep; after the stale age, it is taken over.
  const elsewhere = { pid: 4242, host: "node-7", since: "2026-01-02T03:04:05.000Z" };
  Deno.writeTextFileSync(path, JSON.stringify(elsewhere));
  assertThrows(
    () => acquireSweepLock(dir, "lock", hint),
    UsageError,
    `sweep lock is being launched by process 4242 on node-7 since ${elsewhere.since}; follow it with ${hint}`,
  );
  const old = new Date(Date.now() - 3 * 60 * 1000);
  Deno.utimeSync(path, old, old);
  acquireSweepLock(dir, "lock", hint)();
  assertEquals(listing(dir), []);
});

/** Files under a folder, relative, sorted. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const e of Deno.readDirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory) walk(rel);
      else out.push(rel);
    }
  };
  walk("");
  return out.sort();
}
