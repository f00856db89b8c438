import { assertAlmostEquals, assertEquals } from "../assert.ts";
import { smooth } from "../../dashboard/ui/smoothing.ts";

// Debiased EMA after n points: Σᵢ wⁿ⁻ⁱ(1 − w)vᵢ / (1 − wⁿ), as TensorBoard smooths scalars.
Deno.test("smooth is the debiased EMA: [1, 2, 3] at 0.5 gives 1, 5/3, 17/7", () => {
  const out = smooth([1, 2, 3], 0.5);
  assertEquals(out.length, 3);
  assertAlmostEquals(out[0], 1, 1e-12);
  assertAlmostEquals(out[1], 5 / 3, 1e-12);
  assertAlmostEquals(out[2], 17 / 7, 1e-12);
});

Deno.test("smooth at TensorBoard's default 0.6 turns a step 0, 0, 1 into 0, 0, 25/49", () => {
  const out = smooth([0, 0, 1], 0.6);
  assertAlmostEquals(out[0], 0, 1e-12);
  assertAlmostEquals(out[1], 0, 1e-12);
  // 0.4 / (1 − 0.6³) = 0.4 / 0.784
  assertAlmostEquals(out[2], 25 / 49, 1e-12);
});

Deno.test("smooth debiases: the first point is the raw first value, a constant stays constant", () => {
  const out = smooth([7, 7, 7, 7], 0.9);
  for (const v of out) assertAlmostEquals(v, 7, 1e-12);
});

Deno.test("smooth with weight 0 returns the values unchanged", () => {
  assertEquals(smooth([3, -1, 4.5], 0), [3, -1, 4.5]);
  assertEquals(smooth([], 0.6), []);
});
