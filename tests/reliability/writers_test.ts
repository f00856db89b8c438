/**
 * One writer per run, alive while busy: the run's lock refuses a second
 * writer and is taken over from a dead one; the guard thread beats the
 * heartbeat while the main thread is stuck in synchronous work; SIGINT
 * stops a run in the middle of scoring, with exit code 130 and the run
 * marked interrupted and resumable.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { RunInterrupted, UsageError } from "../../lib/core/errors.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { clearRequestedStop, requestStop, signalExitCode, startRunGuard, stopPoint } from "../../lib/core/run_guard.ts";
import { effectiveStatus, STALE_HEARTBEAT_MS } from "../../lib/core/run_layout.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { acquireRunLock, lastBeat, liveWriter, runLockPath } from "../../lib/core/run_lock.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { readRun } from "../../lib/core/run_reader.ts";
import { projectPath, scriptCommand } from "../experiments/cli.ts";

function newRun(root: string, experiment = "vae-dsprites"): RunWriter {
  return RunWriter.create({
    root,
    experiment,
    argv: [],
    seed: 0,
    preset: "smoke",
    backend: { name: "cpu" },
    config: {},
    versions: {},
    gitCommit: null,
  });
}

Deno.test("a live run's lock refuses a second writer, naming its process; a finished run's is gone", () => {
  const run = newRun(Deno.makeTempDirSync());
  assertEquals(liveWriter(run.dir)?.pid, Deno.pid);
  const error = assertThrows(() => acquireRunLock(run.dir), UsageError);
  assert(error.message.includes(`process ${Deno.pid}`), error.message);
  assertThrows(() => RunWriter.reopen(run.dir, 0, { name: "cpu" }), UsageError, "one writer");
  run.finish("interrupted");
  assertEquals(liveWriter(run.dir), null);
  const resumed = RunWriter.reopen(run.dir, 0, { name: "cpu" });
  assertEquals(readRunInfo(run.dir).resumes?.length, 1);
  resumed.finish("completed");
});

Deno.test("--resume of a run another process writes stops with its pid before anything is written", () => {
  const run = newRun(Deno.makeTempDirSync());
  const before = Deno.readTextFileSync(join(run.dir, "run.json"));
  const experiment = findExperiment("vae-dsprites")!;
  assertThrows(() => parseInvocation(experiment, ["--resume", run.dir]), UsageError, `process ${Deno.pid}`);
  assertEquals(Deno.readTextFileSync(join(run.dir, "run.json")), before);
  run.finish("completed");
});

Deno.test("the lock of a dead process is taken over", async () => {
  const run = newRun(Deno.makeTempDirSync());
  run.finish("interrupted", undefined, { keepLock: true });
  // A process that has exited: its pid is no longer alive.
  const child = new Deno.Command("true").spawn();
  const { pid } = child;
  await child.status;
  Deno.writeTextFileSync(runLockPath(run.dir), JSON.stringify({ pid, host: Deno.hostname(), since: "x" }));
  assertEquals(liveWriter(run.dir), null);
  acquireRunLock(run.dir);
  assertEquals(JSON.parse(Deno.readTextFileSync(runLockPath(run.dir))).pid, Deno.pid);
});

Deno.test("the guard beats the heartbeat while the main thread is busy, and readers see it", async () => {
  const run = newRun(Deno.makeTempDirSync());
  const old = new Date(Date.now() - 10 * STALE_HEARTBEAT_MS);
  Deno.utimeSync(runLockPath(run.dir), old, old);
  const info = { ...readRunInfo(run.dir), heartbeat: old.toISOString() };
  Deno.writeTextFileSync(join(run.dir, "run.json"), JSON.stringify(info));
  assertEquals(readRun(run.dir)?.status, "crashed");
  const guard = await startRunGuard(runLockPath(run.dir), { signals: false, beatMs: 100 });
  const start = Date.now();
  // Synchronous work: no timer of this thread can run.
  while (Date.now() - start < 600) { /* busy */ }
  const beat = lastBeat(run.dir, info);
  guard.stop();
  assert(beat >= start, `heartbeat ${new Date(beat).toISOString()} is older than the busy stretch`);
  assertEquals(effectiveStatus(info, Date.now(), beat), "running");
  assertEquals(readRun(run.dir)?.status, "running");
  run.finish("completed");
});

/** A vae-dsprites smoke run as a child process, once it is scoring (its encoder kept): the child and the run. */
async function runUntilScoring(root: string, evalSamples: number, scorePoints: number) {
  const child = scriptCommand(projectPath("main.ts"), root, [
    "run",
    "vae-dsprites",
    "--preset",
    "smoke",
    "--backend",
    "wasm",
    "--eval_samples",
    String(evalSamples),
    "--score_points",
    String(scorePoints),
  ]).spawn();
  const experimentDir = join(root, "vae-dsprites");
  for (let i = 0; i < 600; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    let names: string[] = [];
    try {
      names = [...Deno.readDirSync(experimentDir)].map((e) => e.name);
    } catch {
      // not created yet
    }
    for (const name of names) {
      try {
        // The encoder is kept just before scoring starts.
        Deno.statSync(join(experimentDir, name, "models", "model"));
        return { child, dir: join(experimentDir, name) };
      } catch {
        // not yet
      }
    }
  }
  child.kill("SIGKILL");
  throw new Error("the run never reached scoring");
}

Deno.test("SIGINT during scoring stops the run before scoring ends: exit 130, interrupted, resumable", async () => {
  // Scoring 20,000 observations takes far longer than the 4 training steps; a run that ignored SIGINT until
  // scoring ended would write its summary. No wall-clock bound: load on the machine only delays both.
  const { child, dir } = await runUntilScoring(Deno.makeTempDirSync(), 20_000, 2_000);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  child.kill("SIGINT");
  const { code, stderr } = await child.output();
  assertEquals(code, 130, new TextDecoder().decode(stderr));
  const info = readRunInfo(dir);
  assertEquals(info.status, "interrupted");
  assertEquals(liveWriter(dir), null);
  assertThrows(() => Deno.statSync(join(dir, "summary.json")), Deno.errors.NotFound);
  const resume = parseInvocation(findExperiment("vae-dsprites")!, ["--resume", dir]);
  assert(resume !== "help");
});

Deno.test("a run killed (SIGKILL) during scoring is finished by --resume, its dead writer's lock taken over", async () => {
  // Scoring 600 observations takes seconds: the kill lands in it, and the resumed run scores them again.
  const { child, dir } = await runUntilScoring(Deno.makeTempDirSync(), 600, 60);
  child.kill("SIGKILL");
  await child.output();
  assertEquals(readRunInfo(dir).status, "running");
  assertEquals(liveWriter(dir), null);
  const resume = parseInvocation(findExperiment("vae-dsprites")!, ["--resume", dir, "--backend", "wasm"]);
  assert(resume !== "help");
  const { summary } = await runExperiment(findExperiment("vae-dsprites")!, resume, { report: () => {} });
  assertEquals(readRunInfo(dir).status, "completed");
  assert(Number.isFinite(summary.metrics.mig));
  assertEquals(liveWriter(dir), null);
});

Deno.test("a stop asked in process ends with its run: scoring afterwards is not stopped", () => {
  requestStop();
  assertThrows(() => stopPoint(), RunInterrupted, "stop requested");
  clearRequestedStop();
  stopPoint();
  // A signal's exit code (SIGINT: 130) is left for the command line: the SIGINT test above ends with 130.
  assertEquals(signalExitCode(), 0);
});
