import { assert, assertEquals } from "../assert.ts";
import { appendRows, seriesOf } from "../../dashboard/ui/metric_series.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";

Deno.test("appendRows appends each value at its row's step and time, starting new metrics", () => {
  const before = seriesOf({ loss: { x: [0], t: [0], y: [9] } });
  const after = appendRows(before, [{ step: 10, time: 1.5, loss: 8, acc: 0.25 }, { step: 20, time: 3, loss: 7 }]);
  assertEquals(Object.fromEntries(after), {
    loss: { x: [0, 10, 20], t: [0, 1.5, 3], y: [9, 8, 7] },
    acc: { x: [10], t: [1.5], y: [0.25] },
  });
  // State updates need a new object: the old one is untouched.
  assertEquals(Object.fromEntries(before), { loss: { x: [0], t: [0], y: [9] } });
});

Deno.test("appendRows of no rows is an equal copy", () => {
  assertEquals(
    appendRows(seriesOf({ a: { x: [1], t: [2], y: [3] } }), []),
    seriesOf({ a: { x: [1], t: [2], y: [3] } }),
  );
});

Deno.test("appendRows: a step below the last (after --resume) drops the stopped attempt's points from there on", () => {
  const lines = [
    { step: 10, time: 1, loss: 5 },
    { step: 20, time: 2, loss: 2 },
    { step: 30, time: 3, loss: 1 },
    // Resumed from the checkpoint at step 10.
    { step: 20, time: 9, loss: 2.5 },
  ];
  const live = appendRows(new Map(), lines);
  assertEquals(live.get("loss"), { x: [10, 20], t: [1, 9], y: [5, 2.5] });
  // A thinned series (as fetched) gains no resumed rows between its points.
  const fetched = seriesOf({ loss: { x: [0, 100, 200], t: [0, 1, 2], y: [9, 8, 7] } });
  assertEquals(appendRows(fetched, [{ step: 150, time: 5, loss: 6 }]).get("loss")!.x, [0, 100, 150]);
  // Once the resumed attempt has logged every step again, the live series is what the run store's reader reads.
  const all = [...lines, { step: 30, time: 10, loss: 0.5 }];
  const read = parseMetrics(all.map((l) => JSON.stringify(l) + "\n").join("")).rows;
  const again = appendRows(new Map(), all).get("loss")!;
  assertEquals(read.map((r) => [r.step, r.loss]), again.x.map((x, i) => [x, again.y[i]]));
});

Deno.test("appendRows holds at most maxPoints per series, thinning to half with the extremes, first and last kept", () => {
  let series = appendRows(new Map(), [{ step: 0, time: 0, loss: 1 }]);
  const spike = 3_333;
  for (let step = 1; step <= 20_000; step += 100) {
    const rows = Array.from({ length: 100 }, (_, i) => step + i)
      .map((s) => ({ step: s, time: s / 10, loss: s === spike ? 50 : Math.cos(s) }));
    series = appendRows(series, rows, 1000);
    assert(series.get("loss")!.x.length <= 1000, `${series.get("loss")!.x.length} points held`);
  }
  const loss = series.get("loss")!;
  assertEquals([loss.x[0], loss.x.at(-1)], [0, 20_000]);
  assert(loss.y.includes(50), "the spike is held");
});

Deno.test("metric names are keys of a Map: __proto__ and constructor are series like any other", () => {
  const row = JSON.parse('{"step":1,"time":0,"__proto__":1,"constructor":2}');
  const series = appendRows(new Map(), [row]);
  assertEquals([...series.keys()].sort(), ["__proto__", "constructor"]);
  assertEquals(series.get("__proto__")!.y, [1]);
  assertEquals(appendRows(new Map(), [{ step: 1, time: 0, x: 1 }]).get("constructor"), undefined);
});
