import { assertEquals } from "../assert.ts";
import { pointsPerLine } from "../../dashboard/ui/use_live_series.ts";

Deno.test("points per line: 2000 for up to 25 runs, then 50,000 over the runs, never below 500", () => {
  assertEquals([1, 20, 25, 26, 50, 100, 101, 1000].map(pointsPerLine), [2000, 2000, 2000, 1923, 1000, 500, 500, 500]);
  assertEquals(pointsPerLine(0), 2000);
});
