/** The run store: the writer's layout, checkpoints, run ids, and readers that never throw on a damaged run. */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { effectiveStatus, isRunId, newRunId, STALE_HEARTBEAT_MS } from "../../lib/core/run_layout.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { loadLatestCheckpoint } from "../../lib/core/run_checkpoints.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { listRuns, readMedia, readRun, readSummary } from "../../lib/core/run_reader.ts";
import { readMetrics } from "../../lib/core/run_metrics.ts";

function newRun(root: string): RunWriter {
  return RunWriter.create({
    root,
    experiment: "toy",
    argv: ["--seed", "1"],
    seed: 1,
    preset: "smoke",
    backend: { name: "cpu" },
    config: { steps: 3 },
    versions: { deno: Deno.version.deno },
    gitCommit: null,
  });
}

Deno.test("RunWriter writes the documented layout and finishes atomically", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 0.5 });
  run.log(2, { loss: 0.25 });
  run.image("grid", 2, { width: 2, height: 1, channels: 1, data: Uint8Array.from([0, 255]) });
  run.writeSummary({ metrics: { loss: 0.25 } });
  run.finish("completed");
  const names = [...Deno.readDirSync(run.dir)].map((e) => e.name).sort();
  assertEquals(names, ["checkpoints", "config.json", "media", "metrics.jsonl", "run.json", "summary.json"]);
  const info = readRunInfo(run.dir);
  assertEquals(info.status, "completed");
  assertEquals(info.seed, 1);
  assert(info.ended !== null);
  assertEquals(readMetrics(run.dir).rows.map((r) => r.loss), [0.5, 0.25]);
  const png = Deno.readFileSync(join(run.dir, "media", "grid", "00000002.png"));
  assertEquals([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
  const index = JSON.parse(Deno.readTextFileSync(join(run.dir, "media", "media.jsonl")).trim());
  assertEquals(index, { name: "grid", step: 2, path: "grid/00000002.png", width: 2, height: 1 });
  assertEquals([...Deno.readDirSync(run.dir)].filter((e) => e.name.includes(".tmp-")), []);
});

Deno.test("checkpoints round-trip, keep the newest two, and load the latest", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  for (const step of [10, 20, 30]) {
    run.saveCheckpoint(step, { w: { data: Float32Array.from([step, 1]), shape: [2] } }, { at: step });
  }
  run.finish("interrupted");
  const kept = [...Deno.readDirSync(join(run.dir, "checkpoints"))].map((e) => e.name).sort();
  assertEquals(kept, ["step-000000020", "step-000000030"]);
  const latest = loadLatestCheckpoint(run.dir)!;
  assertEquals(latest.step, 30);
  assertEquals(latest.state, { at: 30 });
  assertEquals([...latest.arrays.w.data], [30, 1]);
});

Deno.test("listRuns reports a running run with a stale heartbeat as crashed", () => {
  const root = Deno.makeTempDirSync();
  const done = newRun(root);
  done.finish("completed");
  const live = newRun(root);
  const info = readRunInfo(live.dir);
  const later = Date.parse(info.heartbeat) + STALE_HEARTBEAT_MS + 1000;
  assertEquals(effectiveStatus(info), "running");
  assertEquals(effectiveStatus(info, later), "crashed");
  const statuses = listRuns(root, { now: later }).map((r) => r.status).sort();
  assertEquals(statuses, ["completed", "crashed"]);
  // A half-created run directory without run.json is skipped, not an error.
  Deno.mkdirSync(join(root, "toy", "20990101-000000-zzzzzz"));
  assertEquals(listRuns(root).length, 2);
  live.finish("completed");
});

Deno.test("a resumed writer ends a torn line, so its first line survives", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(10, { loss: 5 });
  run.finish("interrupted");
  Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), '{"step":20,"ti', { append: true });
  const resumed = RunWriter.reopen(run.dir, 10, { name: "cpu" });
  resumed.log(20, { loss: 2 });
  resumed.finish("completed");
  const { rows, skipped } = readMetrics(run.dir);
  assertEquals(rows.map((r) => [r.step, r.loss]), [[10, 5], [20, 2]]);
  assertEquals(skipped, 1);
});

Deno.test("run ids: made from the creation time, recognised by form", () => {
  const id = newRunId(new Date(Date.UTC(2024, 0, 2, 3, 4, 5)));
  assert(/^20240102-030405-[0-9a-f]{6}$/.test(id), id);
  assert(isRunId(id));
  for (const name of ["20240102-030405-zzzzzz", "2024-01-02", "20240102-030405-abcdef0", "x20240102-030405-abcdef"]) {
    assert(!isRunId(name), name);
  }
});

Deno.test("a run.json that parses but lacks fields is listed with its problem, never a throw", () => {
  const root = Deno.makeTempDirSync();
  const good = newRun(root);
  good.finish("completed");
  const empty = join(root, "toy", "20200101-000000-aaaaaa");
  Deno.mkdirSync(empty);
  Deno.writeTextFileSync(join(empty, "run.json"), "{}");
  const garbled = join(root, "toy", "garbled-run");
  Deno.mkdirSync(garbled);
  Deno.writeTextFileSync(
    join(garbled, "run.json"),
    JSON.stringify({ ...readRunInfo(good.dir), created: "yesterday", heartbeat: "soon", status: "running" }),
  );
  const nameless = join(root, "toy", "nameless");
  Deno.mkdirSync(nameless);
  Deno.writeTextFileSync(join(nameless, "run.json"), '{"status": "completed"}');
  const runs = listRuns(root);
  // Sorted by created; a missing one is read from the run id, and without an id the run goes last.
  assertEquals(runs.map((r) => [r.dir, r.status, r.problem]), [
    [good.dir, "completed", undefined],
    [
      garbled,
      "crashed",
      `run.json: missing or invalid id (run.json says ${good.info.id}, the folder garbled-run), created, heartbeat`,
    ],
    [empty, "crashed", "run.json: missing or invalid id, experiment, status, created, ended, heartbeat, seed, preset"],
    [nameless, "completed", "run.json: missing or invalid id, experiment, created, ended, heartbeat, seed, preset"],
  ]);
  assertEquals(runs[1].info.created, `${readRunInfo(good.dir).created.slice(0, 19)}.000Z`);
  const { info } = runs[2];
  assertEquals([info.id, info.experiment, info.created, info.seed], [
    "20200101-000000-aaaaaa",
    "toy",
    "2020-01-01T00:00:00.000Z",
    NaN,
  ]);
  assertEquals(readRun(join(root, "toy", "missing")), null);
  assertEquals(effectiveStatus({ ...readRunInfo(good.dir), status: "running", heartbeat: "?" }), "crashed");
});

Deno.test("readSummary fills a summary.json that lacks parts and names them", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.writeSummary({});
  run.finish("completed");
  const summary = readSummary(run.dir)!;
  assertEquals(
    [summary.experiment, summary.run_id, summary.preset, summary.seed],
    ["toy", run.info.id, "smoke", 1],
  );
  assertEquals([summary.targets, summary.claims, summary.metrics], [[], [], {}]);
  assertEquals(summary.problem, "summary.json: missing or invalid experiment, run_id, preset, seed, targets, claims");
  run.writeSummary({
    ...summary,
    problem: undefined,
    targets: [{ metric: "mcc", paper: 0.9, source: "T1", ours: null, verdict: "not measured" }, { metric: 3 }],
    claims: [{ text: "A beats B", source: "T1", verdict: "reproduced" }],
    evaluation: { mig: 0.1 },
  });
  const fixed = readSummary(run.dir)! as typeof summary & { evaluation: unknown };
  assertEquals(fixed.targets.length, 1);
  assertEquals(fixed.claims.length, 1);
  assertEquals(fixed.problem, "summary.json: 1 of 2 targets malformed");
  assertEquals(fixed.evaluation, { mig: 0.1 });
  Deno.writeTextFileSync(join(run.dir, "summary.json"), '{"experiment": "to');
  assertEquals(readSummary(run.dir), null);
});

Deno.test("readMedia skips torn and malformed index lines", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  assertEquals(readMedia(run.dir), []);
  const image = { width: 1, height: 1, channels: 1 as const, data: Uint8Array.of(0) };
  run.image("grid", 1, image);
  Deno.writeTextFileSync(join(run.dir, "media", "media.jsonl"), '{"name":3}\nnot json\n', { append: true });
  run.image("grid", 2, image);
  Deno.writeTextFileSync(join(run.dir, "media", "media.jsonl"), '{"name":"grid","st', { append: true });
  run.finish("completed");
  assertEquals(readMedia(run.dir), [
    { name: "grid", step: 1, path: "grid/00000001.png", width: 1, height: 1 },
    { name: "grid", step: 2, path: "grid/00000002.png", width: 1, height: 1 },
  ]);
});

Deno.test("checkpoints are ordered by step, also past the 9 digits of their names", () => {
  const run = newRun(Deno.makeTempDirSync());
  const arrays = { w: { data: Float32Array.of(1), shape: [1] } };
  run.saveCheckpoint(999_999_999, arrays, null);
  run.saveCheckpoint(1_000_000_001, arrays, null);
  assertEquals(loadLatestCheckpoint(run.dir)?.step, 1_000_000_001);
  run.finish("completed");
});

Deno.test("run files that are links, FIFOs or devices are not read: the run is skipped, nothing hangs", () => {
  const root = Deno.makeTempDirSync();
  const outside = join(Deno.makeTempDirSync(), "secret.json");
  Deno.writeTextFileSync(outside, JSON.stringify({ id: "x", experiment: "toy", status: "completed" }));
  const linked = newRun(root);
  linked.finish("completed");
  Deno.removeSync(join(linked.dir, "run.json"));
  Deno.symlinkSync(outside, join(linked.dir, "run.json"));
  const fifo = newRun(root);
  fifo.finish("completed");
  Deno.removeSync(join(fifo.dir, "run.json"));
  new Deno.Command("mkfifo", { args: [join(fifo.dir, "run.json")] }).outputSync();
  const device = newRun(root);
  device.finish("completed");
  Deno.symlinkSync("/dev/zero", join(device.dir, "summary.json"));
  assertEquals(readRun(linked.dir), null);
  assertEquals(readRun(fifo.dir), null);
  assertEquals(readSummary(device.dir), null);
  assertEquals(listRuns(root).map((r) => r.dir), [device.dir]);
});

Deno.test("a copied run folder is listed under its own folder name, with the id its run.json claims named", () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("completed");
  const copy = join(root, "toy", "20300101-000000-c0ffee");
  Deno.mkdirSync(copy);
  Deno.copyFileSync(join(run.dir, "run.json"), join(copy, "run.json"));
  const runs = listRuns(root);
  assertEquals(runs.map((r) => r.info.id).sort(), [run.info.id, "20300101-000000-c0ffee"].sort());
  const copied = runs.find((r) => r.dir === copy)!;
  assert(copied.problem?.includes(`run.json says ${run.info.id}`), copied.problem);
});
