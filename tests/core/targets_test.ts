/** Verdicts of targets by direction, at and beyond the tolerance's edge, and their text. */
import { assertEquals } from "../assert.ts";
import { comparisonText, targetVerdict } from "../../lib/core/targets.ts";

Deno.test("a target's verdict depends on its direction: beating a score is not a failure to reproduce it", () => {
  const at = (direction: "match" | "higher" | "lower", ours: number | null) =>
    targetVerdict({ paper: 0.5, tolerance: 0.25, direction }, ours);
  // Exactly representable edges: 0.25 and 0.75 are the tolerance's bounds.
  assertEquals([0.2, 0.25, 0.75, 0.8].map((v) => at("match", v)), [
    "not reproduced",
    "reproduced",
    "reproduced",
    "not reproduced",
  ]);
  assertEquals([0.2, 0.25, 0.75, 0.99].map((v) => at("higher", v)), [
    "not reproduced",
    "reproduced",
    "reproduced",
    "reproduced",
  ]);
  assertEquals([0.01, 0.25, 0.75, 0.8].map((v) => at("lower", v)), [
    "reproduced",
    "reproduced",
    "reproduced",
    "not reproduced",
  ]);
  assertEquals([null, NaN, Infinity].map((v) => at("match", v)), ["not measured", "not measured", "not measured"]);
});

Deno.test("comparisonText says what counts as reproduced", () => {
  assertEquals(comparisonText({ paper: 0.997, tolerance: 0.03, direction: "match" }), "0.997 ± 0.03");
  assertEquals(comparisonText({ paper: 0.997, tolerance: 0.03, direction: "higher" }), "≥ 0.967 (0.997 − 0.03)");
  assertEquals(comparisonText({ paper: 0.5, tolerance: 0.1, direction: "lower" }), "≤ 0.6 (0.5 + 0.1)");
});
