/** Learning curves: reading them from logged series, their trend at the end, verdicts, and their drawings. */
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import {
  curveCell,
  curveOf,
  type CurvePoints,
  curvesSvg,
  lastThirdTrend,
  sparkline,
  type StepSeries,
  targetCurve,
} from "../../lib/core/curves.ts";
import { stillRising, targetVerdict, TREND_T } from "../../lib/core/targets.ts";

const series = (entries: Record<string, [number, number][]>): Map<string, StepSeries> =>
  new Map(
    Object.entries(entries).map((
      [key, points],
    ) => [key, { x: points.map((p) => p[0]), y: points.map((p) => p[1]) }]),
  );

Deno.test("curveOf reads one metric, or averages the metrics a * pattern matches per step (not across '/')", () => {
  const logged = series({
    "slowvae/seed0/mcc": [[100, 0.2], [200, 0.4]],
    "slowvae/seed1/mcc": [[100, 0.4], [200, 0.8]],
    "slowvae/seed1/mcc/x": [[100, 9]],
    "slowvae(γ=1)/seed0/mcc": [[100, 7]],
    "L1/pcl/mcc": [[50, 0.5]],
  });
  const mean = curveOf(logged, "slowvae/seed*/mcc");
  assertEquals(mean.map(([s]) => s), [100, 200]);
  assertAlmostEquals(mean[0][1], 0.3, 1e-12);
  assertAlmostEquals(mean[1][1], 0.6, 1e-12);
  // Regex characters in names are literal.
  assertEquals(curveOf(logged, "slowvae(γ=1)/seed*/mcc"), [[100, 7]]);
  assertEquals(curveOf(logged, "L1/pcl/mcc"), [[50, 0.5]]);
  assertEquals(curveOf(logged, "nothing"), []);
  assertEquals(targetCurve(logged, "nothing"), null);
});

Deno.test("the trend of the last third is the least-squares line there, with its slope's standard error", () => {
  // y = 0.001·step exactly: slope 0.001, no residual noise, 4.0 at twice the 2,000 steps.
  const line: CurvePoints = [250, 500, 750, 1000, 1250, 1500, 1750, 2000].map((s) => [s, 0.001 * s]);
  const exact = lastThirdTrend(line)!;
  assertAlmostEquals(exact.slope, 0.001, 1e-15);
  assertAlmostEquals(exact.slope_se, 0, 1e-12);
  assertEquals(exact.projected_at, 4000);
  assertAlmostEquals(exact.projected, 4, 1e-9);
  // The last third of 0..3000 is 2000..3000: the points at 2000, 2500, 3000 lie on a line of slope 2e-4.
  const bent: CurvePoints = [[0, 0], [1000, 0.4], [2000, 0.5], [2500, 0.6], [3000, 0.7]];
  assertAlmostEquals(lastThirdTrend(bent)!.slope, 2e-4, 1e-15);
  // Fewer than three points in the window: the last three, (2, 0.7), (3, 0.5), (4, 0.7): slope 0,
  // residuals 0.0667, −0.1333, 0.0667 with one degree of freedom, Σ(x − x̄)² = 2.
  const noisy = lastThirdTrend([[1, 0.5], [2, 0.7], [3, 0.5], [4, 0.7]])!;
  assertAlmostEquals(noisy.slope, 0, 1e-12);
  assertAlmostEquals(noisy.slope_se, Math.sqrt((0.04 / 9 + 0.16 / 9 + 0.04 / 9) / 2), 1e-12);
  assertEquals(lastThirdTrend([[1000, 0.2], [2000, 0.4]]), null);
});

Deno.test("'still rising' needs a trend above the curve's noise that reaches the band within twice the steps", () => {
  const rising = targetCurve(series({ m: [[500, 0.5], [1000, 0.6], [1500, 0.7], [2000, 0.8]] }), "m");
  const flat = targetCurve(series({ m: [[500, 0.79], [1000, 0.8], [1500, 0.8], [2000, 0.8]] }), "m");
  const falling = targetCurve(series({ m: [[500, 0.9], [1000, 0.85], [1500, 0.8], [2000, 0.75]] }), "m");
  const higher = { paper: 0.95, tolerance: 0.05, direction: "higher" as const };
  // Rising 2e-4 a step: at 4,000 steps the line is at 1.2, inside the band ≥ 0.9.
  assertEquals(targetVerdict(higher, 0.8, rising), "still rising");
  assertEquals(targetVerdict(higher, 0.8, flat), "not reproduced");
  assertEquals(targetVerdict(higher, 0.8, falling), "not reproduced");
  assertEquals(targetVerdict(higher, 0.8), "not reproduced");
  assertEquals(targetVerdict(higher, 0.93, flat), "reproduced");
  // A rise too slow to reach the band by twice the steps is not "still rising": 1.2 at 4,000 < 1.3.
  assertEquals(targetVerdict({ paper: 1.4, tolerance: 0.1, direction: "higher" }, 0.8, rising), "not reproduced");
  // "lower" wants a falling curve; "match" a curve moving toward the published value from either side.
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "lower" }, 0.75, falling), "still rising");
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "match" }, 0.75, falling), "still rising");
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "match" }, 0.8, rising), "not reproduced");
  // Two points say nothing of a trend's end.
  const two = targetCurve(series({ m: [[1000, 0.1], [2000, 0.8]] }), "m");
  assertEquals(stillRising(higher, two), false);
  // A slope within the noise: +0.01 a point on a curve that jumps ±0.1 is not a trend.
  const noisy: CurvePoints = [[1, 0.5], [2, 0.7], [3, 0.51], [4, 0.71], [5, 0.52], [6, 0.72]];
  const trend = lastThirdTrend(noisy)!;
  assert(trend.slope > 0 && trend.slope < TREND_T * trend.slope_se, JSON.stringify(trend));
  assertEquals(
    stillRising({ paper: 0.8, tolerance: 0.05, direction: "higher" }, { metric: "m", points: noisy }),
    false,
  );
});

Deno.test("sparklines scale to the curve's range and the table cell adds the trend's projection at twice the steps", () => {
  assertEquals(sparkline([[1, 0], [2, 0.5], [3, 1]]), "▁▅█");
  assertEquals(sparkline([[1, 2], [2, 2]]), "▁▁");
  assertEquals(sparkline(Array.from({ length: 100 }, (_, i): [number, number] => [i, i])).length, 12);
  assertEquals(sparkline([]), "");
  const target = {
    metric: "m",
    paper: 1,
    source: "",
    tolerance: 0.1,
    direction: "higher" as const,
    ours: 0.5,
    verdict: "still rising" as const,
    curve: { metric: "m", points: [[1, 0], [2, 0.5], [3, 1]] as CurvePoints },
  };
  // The line through the three points reaches 0.5·6 − 0.5 = 2.5 at step 6.
  assertEquals(curveCell(target), "▁▅█ → 2.5 at 2×");
  assertEquals(curveCell({ ...target, curve: { ...target.curve, points: [[1, 0], [2, 1]] } }), "▁█");
  assertEquals(curveCell({ ...target, curve: null }), "");
});

Deno.test("the SVG draws each curve with its published value as a dashed line, and escapes names", () => {
  const svg = curvesSvg([
    { title: "mcc/<L1>", points: [[0, 0], [100, 0.5]], paper: 1, ours: 0.5, verdict: "still rising" },
    { title: "dci", points: [], paper: 0.2, ours: null, verdict: "not measured" },
  ]);
  assert(svg.startsWith("<svg") && svg.endsWith("</svg>"));
  assert(svg.includes("mcc/&lt;L1&gt;") && !svg.includes("<L1>"));
  assertEquals(svg.match(/stroke-dasharray/g)?.length, 2, "one published line per panel");
  assert(svg.includes("no curve"), "a panel without points says so");
  // The published line of panel 1 (value 1, the top of its range) lies above its curve's end (0.5).
  const published = Number(svg.match(/<line x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)"/)![1]);
  const dotY = Number(svg.match(/<circle cx="[\d.]+" cy="([\d.]+)"/)![1]);
  assert(published < dotY, `published y ${published} should be above the final value's y ${dotY}`);
});
