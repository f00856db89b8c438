import { assertEquals } from "../assert.ts";
import { appendRows } from "../../dashboard/ui/metric_series.ts";

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
