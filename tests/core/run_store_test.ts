import { dirname, join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import {
  effectiveStatus,
  isRunId,
  listRuns,
  loadLatestCheckpoint,
  MetricsReader,
  newRunId,
  parseMetrics,
  readMedia,
  readMetrics,
  readRun,
  readRunInfo,
  readSummary,
  RunWriter,
  STALE_HEARTBEAT_MS,
} from "../../lib/core/run_store.ts";
import { RESUMED_LOSS, RESUMED_METRICS } from "./run_store_fixtures.ts";

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

Deno.test("parseMetrics skips a torn last line and malformed lines, counting them", () => {
  const text = '{"step":1,"time":0.1,"loss":2}\nnot json\n{"step":2,"time":0.2,"loss":1}\n{"step":3,"ti';
  const { rows, skipped } = parseMetrics(text);
  assertEquals(rows.map((r) => r.step), [1, 2]);
  assertEquals(skipped, 2);
});

Deno.test("parseMetrics merges lines of one step and lets a re-logged step win", () => {
  const text =
    '{"step":5,"time":1,"a":1}\n{"step":5,"time":1.5,"b":2}\n{"step":6,"time":2,"a":3}\n{"step":5,"time":9,"a":7}\n';
  const { rows } = parseMetrics(text);
  assertEquals(rows, [{ step: 5, time: 9, a: 7, b: 2 }, { step: 6, time: 2, a: 3 }]);
});

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

Deno.test("a step re-logged after --resume replaces that step and keeps the later ones", () => {
  const { rows, skipped } = parseMetrics(RESUMED_METRICS);
  assertEquals(rows, [{ step: 10, time: 4, loss: 5 }, { step: 20, time: 2, loss: 2 }]);
  assertEquals(skipped, 1);
  const reader = new MetricsReader();
  reader.push(new TextEncoder().encode(RESUMED_METRICS));
  assertEquals(reader.series.get("loss"), RESUMED_LOSS);
  assertEquals(reader.reducers.get("loss"), { last: 2, min: 2, max: 5 });
  assertEquals([reader.lines, reader.skipped, reader.pending], [4, 1, 0]);
});

Deno.test("a re-logged value replaces its step's value in the reducers", () => {
  const reader = new MetricsReader();
  const rows = reader.push(new TextEncoder().encode(
    '{"step":1,"time":1,"loss":9}\n{"step":2,"time":2,"loss":4}\n{"step":1,"time":3,"loss":3}\n' +
      '{"step":0,"time":4,"loss":7}\n',
  ));
  assertEquals(rows.map((r) => r.step), [1, 2, 1, 0]);
  assertEquals(reader.series.get("loss"), { x: [0, 1, 2], t: [4, 3, 2], y: [7, 3, 4] });
  assertEquals(reader.reducers.get("loss"), { last: 4, min: 3, max: 7 });
});

Deno.test("MetricsReader reads a file in pieces as it grows, the same as in one piece", () => {
  const dir = Deno.makeTempDirSync();
  const path = join(dir, "metrics.jsonl");
  const reader = new MetricsReader();
  assertEquals(reader.update(path), [], "no file yet");
  const bytes = new TextEncoder().encode(RESUMED_METRICS);
  const got: number[] = [];
  for (const cut of [5, 31, 40, 70, bytes.length]) {
    Deno.writeFileSync(path, bytes.subarray(0, cut));
    got.push(...reader.update(path).map((r) => r.step));
  }
  assertEquals(got, [10, 20, 10]);
  assertEquals(reader.series.get("loss"), RESUMED_LOSS);
  assertEquals([reader.offset, reader.pending, reader.lines, reader.skipped], [bytes.length, 0, 4, 1]);
  Deno.writeTextFileSync(path, '{"step":1,"time":0,"acc":1}\n');
  assertEquals(reader.update(path), [{ step: 1, time: 0, acc: 1 }], "a shorter file was replaced: read again");
  assertEquals([...reader.series.keys()], ["acc"]);
});

/** What a reader holds, for comparing two readers of the same bytes. */
function readerState(reader: MetricsReader) {
  return {
    series: Object.fromEntries(reader.series),
    reducers: Object.fromEntries(reader.reducers),
    counts: [reader.offset, reader.pending, reader.lines, reader.skipped],
  };
}

Deno.test("MetricsReader reads a chunk at a time, lines crossing chunk boundaries, the same as in one piece", () => {
  const lines = Array.from({ length: 60 }, (_, i) => JSON.stringify({ step: i + 1, time: i / 8, loss: Math.cos(i) }));
  lines.splice(
    20,
    0,
    "not json",
    '{"step":2,"ti{"step":21,"time":9,"loss":0.25}',
    "",
    '{"step":5,"time":10,"loss":-3}',
  );
  const text = RESUMED_METRICS + lines.join("\n") + '\n{"step":61,"ti';
  const bytes = new TextEncoder().encode(text);
  const whole = new MetricsReader();
  const wholeRows = whole.push(bytes);
  const path = join(Deno.makeTempDirSync(), "metrics.jsonl");
  Deno.writeFileSync(path, bytes);
  // Each size is at least the longest line (64 bytes) and cuts lines at other places.
  for (const chunkBytes of [64, 97, 128, 1000]) {
    const chunked = new MetricsReader(0, { chunkBytes });
    assertEquals(chunked.update(path), wholeRows, `chunks of ${chunkBytes} bytes`);
    assertEquals(readerState(chunked), readerState(whole), `chunks of ${chunkBytes} bytes`);
    const caughtUp = new MetricsReader(0, { chunkBytes });
    caughtUp.catchUp(path);
    assertEquals(readerState(caughtUp), readerState(whole), "catchUp keeps what update keeps");
  }
  assertEquals(whole.pending, '{"step":61,"ti'.length);
});

Deno.test("a line longer than a chunk is skipped and counted without being held; the lines after it are read", () => {
  const path = join(Deno.makeTempDirSync(), "metrics.jsonl");
  const first = '{"step":1,"time":0,"loss":1}\n';
  const long = "\0".repeat(1000); // as a crash can leave in place of lost writes
  Deno.writeTextFileSync(path, first + long);
  const reader = new MetricsReader(0, { chunkBytes: 64 });
  assertEquals(reader.update(path).map((r) => r.step), [1]);
  assertEquals([reader.offset, reader.pending, reader.lines, reader.skipped], [first.length, 1000, 1, 0]);
  const rest = '\n{"step":2,"time":1,"loss":0.5}\n';
  Deno.writeTextFileSync(path, rest, { append: true });
  assertEquals(reader.update(path).map((r) => r.step), [2]);
  const size = first.length + long.length + rest.length;
  assertEquals([reader.offset, reader.pending, reader.lines, reader.skipped], [size, 0, 3, 1]);
  assertEquals(reader.reducers.get("loss"), { last: 0.5, min: 0.5, max: 1 });
  const whole = parseMetrics(Deno.readTextFileSync(path));
  assertEquals([whole.rows, whole.skipped], [readMetrics(dirname(path)).rows, 1], "the same as in one piece");
});

Deno.test("with maxPointsPerKey, older points are thinned to their extremes and the reducers stay exact", () => {
  const n = 10_000, cap = 1000;
  const line = (step: number, loss: number) => JSON.stringify({ step, time: step, loss }) + "\n";
  let text = "";
  for (let step = 1; step <= n; step++) {
    text += line(step, step === 1234 ? 1e6 : step === 4321 ? -1e6 : step === 9950 ? 1e7 : Math.sin(step));
  }
  const capped = new MetricsReader(0, { maxPointsPerKey: cap });
  const full = new MetricsReader();
  const read = (more: string) => {
    const bytes = new TextEncoder().encode(more);
    assertEquals(capped.push(bytes), full.push(bytes), "rows are not thinned");
    assertEquals(capped.reducers.get("loss"), full.reducers.get("loss"));
  };
  read(text);
  const kept = capped.series.get("loss")!, all = full.series.get("loss")!;
  assert(kept.x.length <= cap, `${kept.x.length} points kept`);
  assertEquals(kept.x, [...kept.x].sort((a, b) => a - b));
  for (const step of [1, 1234, 4321, n]) assert(kept.x.includes(step), `step ${step} is kept`);
  assertEquals(kept.y.slice(-cap / 2), all.y.slice(-cap / 2), "the newest half stays whole");
  // A resume re-logs the steps after its checkpoint: the maximum at 9950 goes, the thinned one at 1234 returns.
  read(line(9950, 0));
  assertEquals(capped.reducers.get("loss"), { last: Math.sin(n), min: -1e6, max: 1e6 });
  read(line(4321, 0) + line(5, -2e6) + line(n + 1, 3));
  assertEquals(capped.reducers.get("loss")?.min, -2e6);
  assertThrows(() => new MetricsReader(0, { maxPointsPerKey: 4 }), RangeError);
});

Deno.test("the reader counts a torn line, recovers a line glued to one, and drops non-numbers", () => {
  const text = [
    '{"step":1,"time":1,"loss":2}',
    '{"step":2,"ti{"step":3,"time":3,"loss":1}',
    '{"step":"4","time":4,"loss":0}',
    "[5]",
    '{"step":6,"time":6,"loss":null,"acc":0.5,"note":"x"}',
    '{"step":7,"time":7,"loss":0.5}',
  ].join("\n");
  const { rows, skipped } = parseMetrics(text);
  assertEquals(rows, [
    { step: 1, time: 1, loss: 2 },
    { step: 3, time: 3, loss: 1 },
    { step: 6, time: 6, acc: 0.5 },
  ]);
  assertEquals(skipped, 4, "the fragment before step 3, a string step, an array, the unterminated last line");
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
