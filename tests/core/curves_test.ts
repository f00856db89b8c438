/** Learning curves: reading them from logged series, their trend at the end, verdicts, and their drawings. */
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import {
  changeOverLastQuarter,
  curveCell,
  curveOf,
  type CurvePoints,
  curvesSvg,
  RISING_FRACTION,
  sparkline,
  stillRising,
  targetCurve,
} from "../../lib/core/curves.ts";
import type { Series } from "../../lib/core/run_store.ts";
import { targetVerdict } from "../../lib/core/targets.ts";

const series = (entries: Record<string, [number, number][]>): Map<string, Series> =>
  new Map(
    Object.entries(entries).map((
      [key, points],
    ) => [key, { x: points.map((p) => p[0]), t: points.map(() => 0), y: points.map((p) => p[1]) }]),
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

Deno.test("the change over the last quarter is the least-squares slope there times a quarter of the steps", () => {
  // y = 0.001·step exactly: over a quarter of 2,000 steps the change is 0.5.
  const line: CurvePoints = [250, 500, 750, 1000, 1250, 1500, 1750, 2000].map((s) => [s, 0.001 * s]);
  assertAlmostEquals(changeOverLastQuarter(line)!, 0.5, 1e-12);
  // Points 1500, 1750, 2000 lie in the window; their fit: slope (0.9 − 0.6)/500.
  const bent: CurvePoints = [[500, 0], [1000, 0.5], [1500, 0.6], [1750, 0.75], [2000, 0.9]];
  assertAlmostEquals(changeOverLastQuarter(bent)!, (0.3 / 500) * 500, 1e-12);
  // One point in the window: the last two points.
  assertAlmostEquals(changeOverLastQuarter([[1000, 0.2], [2000, 0.4]])!, 0.2 * 0.5, 1e-12);
  assertEquals(changeOverLastQuarter([[1000, 0.2]]), null);
});

Deno.test("a curve still rising toward the published value turns 'not reproduced' into 'still rising'", () => {
  const rising = targetCurve(series({ m: [[500, 0.5], [1000, 0.6], [1500, 0.7], [2000, 0.8]] }), "m");
  const flat = targetCurve(series({ m: [[500, 0.79], [1000, 0.8], [1500, 0.8], [2000, 0.8]] }), "m");
  const falling = targetCurve(series({ m: [[500, 0.9], [1000, 0.85], [1500, 0.8], [2000, 0.75]] }), "m");
  const higher = { paper: 0.95, tolerance: 0.05, direction: "higher" as const };
  assertEquals(targetVerdict(higher, 0.8, rising), "still rising");
  assertEquals(targetVerdict(higher, 0.8, flat), "not reproduced");
  assertEquals(targetVerdict(higher, 0.8, falling), "not reproduced");
  assertEquals(targetVerdict(higher, 0.8), "not reproduced");
  assertEquals(targetVerdict(higher, 0.93, flat), "reproduced");
  // "lower" wants a falling curve; "match" a curve moving toward the published value from either side.
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "lower" }, 0.75, falling), "still rising");
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "match" }, 0.75, falling), "still rising");
  assertEquals(targetVerdict({ paper: 0.5, tolerance: 0.05, direction: "match" }, 0.8, rising), "not reproduced");
  // Two points say nothing of a trend's end.
  const two = targetCurve(series({ m: [[1000, 0.1], [2000, 0.8]] }), "m");
  assertEquals(stillRising(higher, two), false);
  // The threshold is RISING_FRACTION of |paper| over the last quarter.
  const just = (change: number) =>
    stillRising(higher, {
      metric: "m",
      points: [[1, 0], [2, 0], [3, 0]],
      change_last_quarter: change,
    });
  assertEquals([just(RISING_FRACTION * 0.95 * 1.01), just(RISING_FRACTION * 0.95 * 0.99)], [true, false]);
});

Deno.test("sparklines scale to the curve's range and the table cell adds the last quarter's change", () => {
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
    curve: { metric: "m", points: [[1, 0], [2, 0.5], [3, 1]] as CurvePoints, change_last_quarter: 0.125 },
  };
  assertEquals(curveCell(target), "▁▅█ +0.13 last ¼");
  assertEquals(curveCell({ ...target, curve: { ...target.curve, change_last_quarter: -0.004 } }), "▁▅█ −0.004 last ¼");
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
