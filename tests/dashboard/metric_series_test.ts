import { assertEquals } from "../assert.ts";
import { appendRows } from "../../dashboard/ui/metric_series.ts";
import { parseMetrics } from "../../lib/core/run_store.ts";

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

Deno.test("appendRows: a step logged again (after --resume) takes the new value, as the run store's reader does", () => {
  const lines = [
    { step: 10, time: 1, loss: 5 },
    { step: 20, time: 2, loss: 2 },
    { step: 10, time: 3, loss: 4 },
    { step: 15, time: 4, loss: 3 },
  ];
  const live = appendRows({}, lines);
  assertEquals(live.loss, { x: [10, 15, 20], t: [3, 4, 2], y: [4, 3, 2] });
  const read = parseMetrics(lines.map((l) => JSON.stringify(l) + "\n").join("")).rows;
  assertEquals(read.map((r) => [r.step, r.loss]), live.loss.x.map((x, i) => [x, live.loss.y[i]]));
});
