import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  ACCURACY_THRESHOLDS,
  accuracyDistortionCurve,
  bestDistances,
  reportedDistances,
  summarizeDistances,
} from "../../lib/metrics/adversarial.ts";

Deno.test("summarizeDistances: median 2 and accuracy 0.6 for [0, 1, 2, ∞, ∞] at ε 1.5", () => {
  assertEquals(summarizeDistances([0, 1, 2, Infinity, Infinity], 1.5), { median: 2, accuracy: 0.6 });
  // Order does not matter; a distance equal to ε counts as broken (accuracy is distance > ε).
  assertEquals(summarizeDistances(new Float64Array([Infinity, 2, 0, Infinity, 1]), 2), { median: 2, accuracy: 0.4 });
});

Deno.test("summarizeDistances: an even count takes the mean of the middle pair, ∞ when one of them is", () => {
  assertEquals(summarizeDistances([4, 1, 3, 2], 2.5).median, 2.5);
  assertEquals(summarizeDistances([1, 2, Infinity, Infinity], 0).median, Infinity);
  assertEquals(summarizeDistances([0, 0, 0, 0], 0.1), { median: 0, accuracy: 0 });
  const empty = summarizeDistances([], 1);
  assertEquals([Number.isNaN(empty.median), Number.isNaN(empty.accuracy)], [true, true]);
});

Deno.test("reportedDistances: clean errors count 0, failed attacks ∞, else the distance", () => {
  const d = reportedDistances([0.5, 0.7, 0.9, 1.1], [1, 0, 1, 0], [1, 1, 0, 0]);
  assertEquals(Array.from(d), [0.5, 0, Infinity, 0]);
  assertThrows(() => reportedDistances([1, 2], [1], [1, 1]), RangeError, "2 distances");
});

Deno.test("bestDistances: the per-sample minimum over attacks", () => {
  const best = bestDistances([new Float64Array([1, Infinity, 3]), new Float64Array([2, 5, Infinity]), [0.5, 6, 4]]);
  assertEquals(Array.from(best), [0.5, 5, 3]);
  assertEquals(bestDistances([]).length, 0);
  assertThrows(() => bestDistances([[1, 2], [1]]), RangeError, "attack 1 has 1 samples");
});

Deno.test("accuracyDistortionCurve: share above each ε, equal to summarizeDistances' accuracy", () => {
  const distances = [0, 0.2, 0.2, 0.9, 1.6, Infinity, 3, 1.5];
  const grid = [0, 0.1, 0.2, 1.5, 2, 100];
  const curve = accuracyDistortionCurve(distances, grid);
  assertEquals(Array.from(curve), [7 / 8, 7 / 8, 5 / 8, 3 / 8, 2 / 8, 1 / 8]);
  grid.forEach((e, k) => assertAlmostEquals(curve[k], summarizeDistances(distances, e).accuracy, 1e-12));
});

Deno.test("Table 1's thresholds: L2 1.5, L∞ 0.3, L0 12", () => {
  assertEquals(ACCURACY_THRESHOLDS, { l2: 1.5, linf: 0.3, l0: 12 });
});
