import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import {
  effectiveStatus,
  listRuns,
  loadLatestCheckpoint,
  parseMetrics,
  readMetrics,
  readRunInfo,
  RunWriter,
  STALE_HEARTBEAT_MS,
} from "../../lib/core/run_store.ts";

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
