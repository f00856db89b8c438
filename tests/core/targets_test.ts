/** Verdicts of targets by direction, at and beyond the tolerance's edge, and their text. */
import { assertAlmostEquals, assertEquals } from "../assert.ts";
import { comparisonText, nullGateProblems, seedsVerdict, targetVerdict } from "../../lib/core/targets.ts";

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

Deno.test("the null-model gate refuses a band that holds a trivial model, or a tolerance over half the way to it", () => {
  const target = (tolerance: number, direction: "match" | "higher" | "lower", nulls: number[]) => ({
    metric: "m",
    paper: 0.8,
    tolerance,
    direction,
    toleranceSource: "rule",
    nulls: nulls.map((value) => ({ value, model: `null ${value}` })),
  });
  assertEquals(nullGateProblems(target(0.1, "higher", [0.5])), []);
  // Chance at 0.5 lies 0.3 below: a tolerance of 0.15 is the most the gate allows, 0.16 is too wide.
  assertEquals(nullGateProblems(target(0.15, "higher", [0.5])), []);
  assertEquals(nullGateProblems(target(0.16, "higher", [0.5])), [
    'm: tolerance 0.16 exceeds half the way from 0.8 to null "null 0.5" (0.5)',
  ]);
  assertEquals(nullGateProblems(target(0.4, "match", [0.5])), [
    'm: null "null 0.5" (0.5) is "reproduced" by 0.8 ± 0.4',
  ]);
  // A "higher" target whose null scores above the published value: the null is "reproduced".
  assertEquals(nullGateProblems(target(0.05, "higher", [0.9])), [
    'm: null "null 0.9" (0.9) is "reproduced" by ≥ 0.75 (0.8 − 0.05)',
  ]);
  // A "lower" target (an error): a null far above is excluded, one below (a smaller error) is "reproduced".
  assertEquals(nullGateProblems(target(0.05, "lower", [0.9])), []);
  assertEquals(nullGateProblems(target(0.05, "lower", [0.1])), [
    'm: null "null 0.1" (0.1) is "reproduced" by ≤ 0.85 (0.8 + 0.05)',
  ]);
  assertEquals(nullGateProblems({ ...target(0.1, "match", []), toleranceSource: " " }), [
    "m: no null model",
    "m: no tolerance source",
  ]);
});

Deno.test("seeds: one gives its own verdict, three or more their mean with a 95% t-interval that must exclude the nulls", () => {
  const target = { paper: 0.8, tolerance: 0.1, direction: "match" as const, nulls: [{ value: 0.5 }] };
  assertEquals(seedsVerdict(target, [0.75]), { verdict: "reproduced", n: 1, mean: 0.75, interval: null });
  assertEquals(seedsVerdict(target, [null, undefined]), { verdict: "not measured", n: 0, mean: null, interval: null });
  const two = seedsVerdict(target, [0.7, 0.8]);
  assertEquals([two.verdict, two.interval], ["reproduced", null]);
  assertAlmostEquals(two.mean!, 0.75, 1e-12);
  // Mean 0.8, s.d. 0.1: half width t(0.975, 3) · 0.1 / 2 = 3.182446305284263 · 0.05 (scipy.stats.t.ppf).
  const four = seedsVerdict(target, [0.7, 0.8, 0.9, 0.8 + 0 * Math.sqrt(0)]);
  assertEquals(four.n, 4);
  const sd = Math.sqrt((0.01 + 0 + 0.01 + 0) / 3);
  assertAlmostEquals(four.interval![1] - four.mean!, 3.182446305284263 * sd / 2, 1e-9);
  assertEquals(four.verdict, "reproduced");
  // In the band on average, but the seeds cannot tell the run from chance (0.5 lies inside the interval).
  assertEquals(seedsVerdict(target, [0.45, 0.8, 1.1]).verdict, "not reproduced");
});
