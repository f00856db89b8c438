import { assertEquals } from "../assert.ts";
import { appendRows } from "../../dashboard/ui/metric_series.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";

Deno.test("appendRows appends each value at its row's step and time, starting new metrics", () => {
  const before = { loss: { x: [0], t: [0], y: [9] } };
  const after = appendRows(before, [{ step: 10, time: 1.5, loss: 8, acc: 0.25 }, { step: 20, time: 3, loss: 7 }]);
  assertEquals(after, {
    loss: { x: [0, 10, 20], t: [0, 1.5, 3], y: [9, 8, 7] },
    acc: { x: [10], t: [1.5], y: [0.25] },
  });
  // State updates need a new object: the old one is untouched.
  assertEquals(before, { loss: { x: [0], t: [0], y: [9] } });
});

Deno.test("appendRows of no rows is an equal copy", () => {
  assertEquals(appendRows({ a: { x: [1], t: [2], y: [3] } }, []), { a: { x: [1], t: [2], y: [3] } });
});

Deno.test("appendRows: a step below the last (after --resume) drops the stopped attempt's points from there on", () => {
  const lines = [
    { step: 10, time: 1, loss: 5 },
    { step: 20, time: 2, loss: 2 },
    { step: 30, time: 3, loss: 1 },
    // Resumed from the checkpoint at step 10.
    { step: 20, time: 9, loss: 2.5 },
  ];
  const live = appendRows({}, lines);
  assertEquals(live.loss, { x: [10, 20], t: [1, 9], y: [5, 2.5] });
  // A thinned series (as fetched) gains no resumed rows between its points.
  const fetched = { loss: { x: [0, 100, 200], t: [0, 1, 2], y: [9, 8, 7] } };
  assertEquals(appendRows(fetched, [{ step: 150, time: 5, loss: 6 }]).loss.x, [0, 100, 150]);
  // Once the resumed attempt has logged every step again, the live series is what the run store's reader reads.
  const all = [...lines, { step: 30, time: 10, loss: 0.5 }];
  const read = parseMetrics(all.map((l) => JSON.stringify(l) + "\n").join("")).rows;
  const again = appendRows({}, all);
  assertEquals(read.map((r) => [r.step, r.loss]), again.loss.x.map((x, i) => [x, again.loss.y[i]]));
});
