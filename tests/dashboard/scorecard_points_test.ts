import { assertAlmostEquals, assertEquals } from "../assert.ts";
import type { ScoredGroup, ScoredTarget } from "../../lib/core/scorecard.ts";
import {
  axisTicks,
  chooseScale,
  placeTarget,
  plotFrame,
  type PlottedTarget,
  pointTitle,
  runLink,
  scatterEntries,
  tickLabel,
  transform,
  untransform,
  VERDICT_COLOURS,
  verdictColour,
  xPixel,
  yPixel,
} from "../../dashboard/ui/scorecard_points.ts";

const AREA = { left: 10, top: 20, size: 100 };

/** A target of the scatter: published `paper`, measured `ours`, a match within ±tolerance unless told. */
function plotted(paper: number, ours: number | null, fields: Partial<PlottedTarget> = {}): PlottedTarget {
  return { paper, ours, interval: null, tolerance: 0.1, direction: "match", ...fields };
}

Deno.test("chooseScale: linear within two decades, log beyond them when all values are positive, symlog else", () => {
  assertEquals(chooseScale([0.2, 0.9]), { kind: "linear" });
  // 1 / 0.01 = 100 is two decades exactly: still linear.
  assertEquals(chooseScale([0.01, 1]), { kind: "linear" });
  assertEquals(chooseScale([0.01, 5]), { kind: "log" });
  // Zeros do not count in the span: 0.9 / 0.5 < 100.
  assertEquals(chooseScale([0, 0.5, 0.9]), { kind: "linear" });
  // 40 / 0.2 = 200 with a negative value: symlog; median magnitude 0.3 → constant 10^floor(log10 0.3) = 0.1.
  assertEquals(chooseScale([-0.2, 0.3, 40]), { kind: "symlog", constant: 0.1 });
  // Magnitudes [0.003, 2] (the 0 left out): the lower median 0.003 → 0.001.
  assertEquals(chooseScale([0, 0.003, 2]), { kind: "symlog", constant: 0.001 });
  assertEquals(chooseScale([NaN, 1]), { kind: "linear" });
  assertEquals(chooseScale([]), { kind: "linear" });
});

Deno.test("transform and untransform: log10 on a log axis, sign·log10(1 + |v|/c) on a symlog one", () => {
  const symlog = { kind: "symlog", constant: 0.1 } as const;
  assertEquals(transform({ kind: "linear" }, -3), -3);
  assertEquals(transform({ kind: "log" }, 100), 2);
  assertEquals(transform({ kind: "log" }, 0), -Infinity);
  assertAlmostEquals(transform(symlog, 9.9), 2, 1e-12); // log10(1 + 99)
  assertAlmostEquals(transform(symlog, -0.9), -1, 1e-12); // −log10(1 + 9)
  assertEquals(transform(symlog, 0), 0);
  assertAlmostEquals(untransform(symlog, 2), 9.9, 1e-12);
  assertAlmostEquals(untransform(symlog, -1), -0.9, 1e-12);
  assertAlmostEquals(untransform({ kind: "log" }, -2), 0.01, 1e-15);
});

Deno.test("plotFrame and placeTarget: a linear frame over every value shown, y upwards", () => {
  // Values shown: 0.5, 0, 0.4, 0.6 and 0.8, 1, 0.9, 1, 0.6, 1.0 → the axis runs from 0 to 1 on both sides.
  const low = plotted(0.5, 0);
  const high = plotted(0.8, 1, { tolerance: 0.2, direction: "higher", interval: [0.9, 1] });
  const frame = plotFrame([low, high, plotted(50, null)], AREA, 0);
  assertEquals([frame.scale, frame.from, frame.to], [{ kind: "linear" }, 0, 1]);
  // x = 10 + 0.5·100; y = 20 + 100 − 0·100; the tolerance 0.4…0.6 at y = 80…60.
  const a = placeTarget(frame, low)!;
  assertEquals([a.x, a.y, a.interval], [60, 120, null]);
  assertAlmostEquals(a.tolerance!.top, 60, 1e-9);
  assertAlmostEquals(a.tolerance!.bottom, 80, 1e-9);
  assertEquals(a.tolerance!.open, null);
  // x = 10 + 80; y(1) = 20; interval 0.9…1 at 30…20; tolerance 0.6…1.0 at 60…20, open upwards.
  const b = placeTarget(frame, high)!;
  assertAlmostEquals(b.x, 90, 1e-9);
  assertEquals(b.y, 20);
  assertAlmostEquals(b.interval!.bottom, 30, 1e-9);
  assertEquals(b.interval!.top, 20);
  assertAlmostEquals(b.tolerance!.bottom, 60, 1e-9);
  assertEquals([b.tolerance!.top, b.tolerance!.open], [20, "up"]);
  assertEquals(placeTarget(frame, plotted(50, null)), null);
  // A pad of 4% on either side: from −0.04 to 1.04, so 0 sits 0.04/1.08 of the side from the left.
  const padded = plotFrame([low, high], AREA);
  assertAlmostEquals(padded.from, -0.04, 1e-12);
  assertAlmostEquals(xPixel(padded, 0), 10 + 100 * 0.04 / 1.08, 1e-9);
});

Deno.test("plotFrame on a log axis: a tolerance end below 0 is cut at the frame's edge", () => {
  // Published 1 ± 2 and 100 (no finite tolerance); ours 10 and 1000: from log10 1 = 0 to log10 1000 = 3.
  const small = plotted(1, 10, { tolerance: 2, direction: "lower" });
  const big = plotted(100, 1000, { tolerance: Infinity });
  const frame = plotFrame([small, big], AREA, 0);
  assertEquals([frame.scale, frame.from, frame.to], [{ kind: "log" }, 0, 3]);
  const a = placeTarget(frame, small)!;
  // x(1) = 10; y(10) = 20 + 100 − 100/3; tolerance top y(3) = 120 − 100·log10(3)/3, bottom (−1) at the bottom edge.
  assertEquals(a.x, 10);
  assertAlmostEquals(a.y, 120 - 100 / 3, 1e-9);
  assertAlmostEquals(a.tolerance!.top, 120 - 100 * Math.log10(3) / 3, 1e-9);
  assertEquals([a.tolerance!.bottom, a.tolerance!.open], [120, "down"]);
  assertEquals(placeTarget(frame, big)!.tolerance, null);
  assertAlmostEquals(yPixel(frame, 1000), 20, 1e-9);
});

Deno.test("axisTicks: 1-2-5 steps, decades, and 0 with ±c·10^k on a symlog axis", () => {
  // (1 − 0)/6 = 0.167 → the first of 0.1, 0.2, 0.5, 1 at least that: 0.2.
  assertEquals(axisTicks({ kind: "linear" }, 0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assertEquals(axisTicks({ kind: "linear" }, -0.3, 0.3), [-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3]);
  assertEquals(axisTicks({ kind: "log" }, 0, 3), [1, 10, 100, 1000]);
  // Only 10^0 lies within 10^−0.2 … 10^0.9: 2× and 5× are added (0.5 lies at −0.30, 10 at 1: outside).
  assertEquals(axisTicks({ kind: "log" }, -0.2, 0.9), [1, 2, 5]);
  // c = 0.1: ±0.1 at ±0.301, 1 at 1.04, 10 at 2.004, 100 at 3.0; −1 at −1.04 lies outside −1.
  assertEquals(axisTicks({ kind: "symlog", constant: 0.1 }, -1, 2.5), [-0.1, 0, 0.1, 1, 10]);
});

Deno.test("tickLabel: three significant digits, exponents for the very small and large", () => {
  assertEquals(tickLabel(0.30000000000000004), "0.3");
  assertEquals(tickLabel(0.001), "0.001");
  assertEquals(tickLabel(0.0001), "1e-4");
  assertEquals(tickLabel(20000), "2e+4");
  assertEquals(tickLabel(-0.1), "-0.1");
  assertEquals(tickLabel(0), "0");
});

Deno.test("verdictColour: Paul Tol's bright green, yellow, rose and grey; unknown verdicts grey", () => {
  assertEquals(verdictColour("reproduced"), "#228833");
  assertEquals(verdictColour("still rising"), "#ccbb44");
  assertEquals(verdictColour("not reproduced"), "#ee6677");
  assertEquals(verdictColour("not measured"), "#bbbbbb");
  assertEquals(verdictColour("holds"), "#bbbbbb");
  assertEquals(new Set(Object.values(VERDICT_COLOURS)).size, 4);
});

/** A scored target of `metric`, published 0.9, measured `ours`. */
function target(metric: string, ours: number | null, fields: Partial<ScoredTarget> = {}): ScoredTarget {
  return {
    metric,
    source: "Table 1",
    paper: 0.9,
    tolerance: 0.05,
    direction: "match",
    kind: "like-for-like",
    standIn: null,
    toleranceSource: "the paper's s.d.",
    verdict: ours === null ? "not measured" : "reproduced",
    n: ours === null ? 0 : 1,
    ours,
    interval: null,
    curve: null,
    ...fields,
  };
}

/** A scored group of `experiment` (preset quick, seed 0) from `provenance`. */
function group(experiment: string, provenance: string[], targets: ScoredTarget[]): ScoredGroup {
  return {
    experiment,
    preset: "quick",
    overrides: [],
    seeds: [0],
    commits: [],
    stale: false,
    provenance,
    wall_time_s: null,
    targets,
    claims: [],
    limits: null,
    problem: null,
  };
}

Deno.test("runLink: the first run of the group that the store holds", () => {
  const g = { experiment: "ica-toy", provenance: ["recovered from the README", "run a", "run b"] };
  assertEquals(runLink(g, new Set(["ica-toy/b"])), "ica-toy/b");
  assertEquals(runLink(g, new Set(["ica-toy/a", "ica-toy/b"])), "ica-toy/a");
  // The same id under another experiment is another run.
  assertEquals(runLink(g, new Set(["toy/a"])), null);
  assertEquals(runLink(g, new Set()), null);
});

Deno.test("scatterEntries and pointTitle: measured targets plotted, the others listed; a tooltip per point", () => {
  const groups = [
    group("ica-toy", ["run r1"], [target("mcc/L1", 0.95), target("mcc/L2", null)]),
    group("vae", ["kept"], [
      target("mig", 0.02, {
        kind: "analogue",
        standIn: "dSprites at 32 px",
        verdict: "not reproduced",
        n: 3,
        interval: [0.01, 0.03],
      }),
    ]),
  ];
  const { plotted, unmeasured } = scatterEntries(groups, new Set(["ica-toy/r1"]));
  assertEquals(plotted.map((e) => [e.experiment, e.target.metric, e.run, e.row]), [
    ["ica-toy", "mcc/L1", "ica-toy/r1", "scorecard-target-0-0"],
    ["vae", "mig", null, "scorecard-target-1-0"],
  ]);
  assertEquals(unmeasured.map((e) => [e.target.metric, e.row]), [["mcc/L2", "scorecard-target-0-1"]]);
  assertEquals(pointTitle(plotted[0]).split("\n"), [
    "ica-toy (quick, seed 0)",
    "mcc/L1 (Table 1)",
    "published 0.9 · ours 0.95",
    "reproduced (like-for-like)",
    "click: the run",
  ]);
  assertEquals(pointTitle(plotted[1]).split("\n"), [
    "vae (quick, seed 0)",
    "mig (Table 1)",
    "published 0.9 · ours 0.02 [0.01, 0.03], 3 seeds",
    "not reproduced (analogue)",
    "stand-in: dSprites at 32 px",
    "click: its row in the table",
  ]);
});
