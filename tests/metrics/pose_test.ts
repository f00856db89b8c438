import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { normalizedError, normalizedErrorPerKeypoint, pck } from "../../lib/metrics/pose.ts";

/** Truths [n, K, 2] moved by per-keypoint offsets; every value is exact in float32. */
function shifted(truth: number[], offsets: number[]): { pred: Float32Array; truth: Float32Array } {
  return { pred: Float32Array.from(truth, (v, i) => v + offsets[i]), truth: Float32Array.from(truth) };
}

// Two frames, three keypoints; errors are 3-4-5 multiples: 5, 0, 10 px (unit 10) and 1, 5, 2.5 px (unit 5).
const TRUTH = [10.5, 20.25, 30, 40, 7.75, 1.5, 60, 12.5, 33, 3, 48.25, 20];
const OFFSETS = [3, 4, 0, 0, 6, 8, 0, 1, -3, -4, 1.5, 2];
const UNIT = Float32Array.of(10, 5);

Deno.test("normalised error is the mean of pixel errors over each frame's unit", () => {
  const { pred, truth } = shifted(TRUTH, OFFSETS);
  // (0.5 + 0 + 1 + 0.2 + 1 + 0.5) / 6
  assertAlmostEquals(normalizedError(pred, truth, UNIT), 3.2 / 6, 1e-15);
  const perKeypoint = normalizedErrorPerKeypoint(pred, truth, UNIT, 3);
  assertEquals(perKeypoint.length, 3);
  [0.35, 0.5, 0.75].forEach((expected, k) => assertAlmostEquals(perKeypoint[k], expected, 1e-15));
  assertEquals(normalizedError(truth, truth, UNIT), 0);
});

Deno.test("PCK counts errors strictly below threshold · unit", () => {
  const { pred, truth } = shifted(TRUTH, OFFSETS);
  // Scaled errors 0.5, 0, 1, 0.2, 1, 0.5.
  assertEquals(pck(pred, truth, UNIT), 2 / 6);
  assertEquals(pck(pred, truth, UNIT, 0.3), 2 / 6);
  assertEquals(pck(pred, truth, UNIT, 0.5), 2 / 6); // 0.5 is not below 0.5
  assertEquals(pck(pred, truth, UNIT, 0.51), 4 / 6);
  assertEquals(pck(pred, truth, UNIT, 1.01), 1);
  assertEquals(pck(truth, truth, UNIT, 1e-9), 1);
});

Deno.test("a uniform 3-4-5 shift: error 5 px is 0.5 units, outside PCK@0.3, inside PCK@0.6", () => {
  const n = 4, K = 5;
  const truth = Array.from({ length: n * K * 2 }, (_, i) => (i * 7) % 61);
  const { pred, truth: t } = shifted(truth, truth.map((_, i) => (i % 2 === 0 ? 3 : 4)));
  const unit = new Float32Array(n).fill(10);
  assertAlmostEquals(normalizedError(pred, t, unit), 0.5, 1e-15);
  assertEquals(pck(pred, t, unit), 0);
  assertEquals(pck(pred, t, unit, 0.6), 1);
});

Deno.test("pose metrics reject bad input", () => {
  const { pred, truth } = shifted(TRUTH, OFFSETS);
  for (const threshold of [0, -0.3, NaN, Infinity]) {
    assertThrows(() => pck(pred, truth, UNIT, threshold), UsageError, "threshold");
  }
  assertThrows(() => normalizedError(pred, truth.subarray(2), UNIT), UsageError, "same shape");
  assertThrows(() => pck(pred.subarray(2), truth.subarray(2), UNIT), UsageError, "K ≥ 2");
  // One keypoint per frame.
  assertThrows(() => normalizedError(pred.subarray(0, 4), truth.subarray(0, 4), UNIT), UsageError, "K ≥ 2");
  assertThrows(() => normalizedError(pred, truth, new Float32Array(0)), UsageError, "at least one frame");
  const withNaN = pred.slice();
  withNaN[5] = NaN;
  assertThrows(() => normalizedError(withNaN, truth, UNIT), UsageError, "finite");
  assertThrows(() => pck(truth, withNaN, UNIT), UsageError, "finite");
  for (const bad of [0, -1, NaN]) {
    assertThrows(() => pck(pred, truth, Float32Array.of(10, bad)), UsageError, "unit length must be positive");
  }
  assertThrows(() => normalizedErrorPerKeypoint(pred, truth, UNIT, 2), UsageError, "hold 3");
});
