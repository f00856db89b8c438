/**
 * The ica-toy experiment end to end through its command line: a complete run
 * directory, bad input, determinism, and what SIGKILL, SIGINT and --resume
 * leave behind.
 */
import { join } from "node:path";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { STALE_HEARTBEAT_MS } from "../../lib/core/run_layout.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { loadLatestCheckpoint } from "../../lib/core/run_checkpoints.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { lastBeat } from "../../lib/core/run_lock.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { assertRefusesBadInput, projectPath, runInProcess, scriptCommand } from "./cli.ts";
import { findExperiment } from "../../experiments/mod.ts";

const experiment = findExperiment("ica-toy")!;

const SCRIPT = projectPath("experiments/ica_toy.ts");
const decoder = new TextDecoder();

const command = (root: string, args: string[]) => scriptCommand(SCRIPT, root, args);

async function run(root: string, args: string[]) {
  const out = await command(root, args).output();
  return { code: out.code, stderr: decoder.decode(out.stderr) };
}

function onlyRunDir(root: string): string {
  const runs = listRuns(root);
  assertEquals(runs.length, 1);
  return runs[0].dir;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function metricsLines(dir: string): number {
  try {
    return Deno.readTextFileSync(join(dir, "metrics.jsonl")).split("\n").filter((l) => l).length;
  } catch {
    return 0;
  }
}

/** A long run of one phase, to be stopped from outside. */
const LONG = ["--preset", "smoke", "--layers", "1", "--method", "slowflow", "--steps", "1000000", "--log_every", "5"];

Deno.test("ica-toy --preset smoke writes a complete run directory", async () => {
  const root = Deno.makeTempDirSync();
  const { code, stderr } = await run(root, ["--preset", "smoke", "--seed", "3"]);
  assertEquals(code, 0, stderr);
  const dir = onlyRunDir(root);
  const info = readRunInfo(dir);
  assertEquals([info.status, info.seed, info.preset, info.experiment], ["completed", 3, "smoke", "ica-toy"]);
  assert(["wasm", "cpu", "webgpu"].includes((info.backend as { name: string }).name));
  assertEquals(JSON.parse(Deno.readTextFileSync(join(dir, "config.json"))).layers, [1, 2, 3, 4, 5]);
  const { rows, skipped } = parseMetrics(Deno.readTextFileSync(join(dir, "metrics.jsonl")));
  assertEquals(skipped, 0);
  assert(rows.some((r) => typeof r["L3/pcl/total"] === "number"));
  const summary = JSON.parse(Deno.readTextFileSync(join(dir, "summary.json")));
  assertEquals(summary.targets.length, 10);
  const measured = summary.targets.filter((t: { ours: number | null }) => t.ours !== null);
  assertEquals(measured.length, 10);
  for (const t of measured) {
    assert(t.ours > 0 && t.ours <= 1 && ["reproduced", "not reproduced", "still rising"].includes(t.verdict));
  }
  assertEquals(summary.claims.length, 2);
  const media = Deno.readTextFileSync(join(dir, "media", "media.jsonl")).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(media.length, 10);
  for (const m of media) assert(Deno.statSync(join(dir, "media", m.path)).size > 100);
});

Deno.test("ica-toy gives identical metrics for the same seed and different ones for another seed", async () => {
  const metricsOf = async (seed: string) => {
    const root = Deno.makeTempDirSync();
    return (await runInProcess("ica-toy", root, ["--preset", "smoke", "--seed", seed, "--layers", "2"])).summary
      .metrics;
  };
  const [a, b, c] = [await metricsOf("5"), await metricsOf("5"), await metricsOf("6")];
  assertEquals(a, b);
  assert(a["mcc/slowflow/L2"] !== c["mcc/slowflow/L2"]);
});

Deno.test("ica-toy refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--bogus", "1"], "--bogus"],
    [["--stpes", "10"], "did you mean --steps?"],
    [["--steps", "0"], "steps must be an integer ≥ 1"],
    [["--lr", "fast"], "lr must be a number"],
    [["--layers", "1,7"], "--layers 1,7"],
    [["--preset", "huge"], "one of smoke, quick, long, paper"],
    [["--preset", "long"], "ica-toy has no long preset; allowed: smoke, quick, paper"],
    [["--backend", "tpu"], "one of auto, webgpu, wasm, cpu"],
    [["--resume", "/nonexistent/run"], "not a run directory"],
  ]);
});

Deno.test("a run killed with SIGKILL leaves parseable metrics and reads as crashed", async () => {
  const root = Deno.makeTempDirSync();
  const child = command(root, LONG).spawn();
  await waitFor(() => listRuns(root).length === 1 && metricsLines(listRuns(root)[0].dir) >= 5, "metrics");
  child.kill("SIGKILL");
  await child.output();
  const dir = onlyRunDir(root);
  const { rows, skipped } = parseMetrics(Deno.readTextFileSync(join(dir, "metrics.jsonl")));
  assert(rows.length >= 5 && skipped <= 1);
  for (const row of rows) assert(Number.isFinite(row["L1/slowflow/total"]));
  const info = readRunInfo(dir);
  assertEquals(info.status, "running");
  // Staleness counts from the writer's newest sign of life: run.json's heartbeat or the lock file's mtime, which
  // a thread of its own touches and which a loaded main thread's heartbeat can lag behind.
  const later = lastBeat(dir, info) + STALE_HEARTBEAT_MS + 1000;
  assertEquals(listRuns(root, { now: later })[0].status, "crashed");
});

Deno.test("SIGINT marks the run interrupted and --resume continues at the checkpointed step", async () => {
  const root = Deno.makeTempDirSync();
  // Two phases (SlowFlow, then PCL) of 100 steps; stopped early in the second one: the signal is sent once a
  // checkpoint of the second phase is on disk (120), and the stop lands within a few steps of it, 80 before the end.
  const args = [
    "--preset",
    "smoke",
    "--layers",
    "1",
    "--steps",
    "100",
    "--log_every",
    "10",
    "--checkpoint_every",
    "20",
  ];
  // wasm, as the runs in this process below.
  const child = command(root, [...args, "--backend", "wasm"]).spawn();
  await waitFor(
    () => listRuns(root).length === 1 && (loadLatestCheckpoint(listRuns(root)[0].dir)?.step ?? 0) > 100,
    "a checkpoint in the second phase",
  );
  child.kill("SIGINT");
  const stopped = await child.output();
  assertEquals(stopped.code, 130);
  const dir = onlyRunDir(root);
  assertEquals(readRunInfo(dir).status, "interrupted");
  const checkpointStep = loadLatestCheckpoint(dir)!.step;
  assert(checkpointStep > 100 && checkpointStep < 200, `stopped at checkpoint ${checkpointStep}`);
  const linesBefore = metricsLines(dir);

  // The resume and the uninterrupted run in this process: the command line's part is the signal and its exit code.
  const resumed = await runInProcess("ica-toy", root, ["--resume", dir]);
  assertEquals(resumed.dir, dir);
  const info = readRunInfo(dir);
  assertEquals(info.status, "completed");
  assertEquals(info.resumes?.map((r) => r.step), [checkpointStep]);
  const appended = Deno.readTextFileSync(join(dir, "metrics.jsonl")).split("\n").filter((l) => l).slice(linesBefore)
    .map((l) => JSON.parse(l));
  assertEquals(appended[0].step, checkpointStep - 100 + 10);
  assert("L1/pcl/total" in appended[0]);
  assert(appended.every((row) => !("L1/slowflow/total" in row)), "the finished phase is not repeated");
  assertEquals(appended.at(-1).step, 100);
  assertEquals(listRuns(root).length, 1);

  // Parameters, Adam moments and the batch stream all come back: the result matches an uninterrupted run
  // (to float rounding: Adam recomputes β^t on restore where it had multiplied it step by step).
  const straight = (await runInProcess("ica-toy", Deno.makeTempDirSync(), args)).summary.metrics;
  const after = JSON.parse(Deno.readTextFileSync(join(dir, "summary.json"))).metrics;
  assertEquals(after["mcc/slowflow/L1"], straight["mcc/slowflow/L1"]);
  assertAlmostEquals(after["mcc/pcl/L1"], straight["mcc/pcl/L1"], 1e-5);
});
