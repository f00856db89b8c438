/** The metrics reader: torn, malformed and re-logged lines, incremental and chunked reads, thinning. */
import { dirname, join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { MetricsReader, parseMetrics, readMetrics } from "../../lib/core/run_metrics.ts";
import { RESUMED_LOSS, RESUMED_METRICS } from "./run_store_fixtures.ts";

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
