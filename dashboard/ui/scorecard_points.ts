/**
 * The scorecard's scatter of published against measured values, as numbers:
 * the scale both axes share, where each target lands in the plot, its ticks,
 * the colour of each verdict and the link of each point. The drawing itself
 * is scorecard_scatter.tsx.
 *
 * @module
 */
import { formatValue, groupLabel, oursText, type ScoredGroup, type ScoredTarget } from "../../lib/core/scorecard.ts";

/** A verdict as the scorecard writes it (lib/core/targets.ts `Verdict`). */
export type VerdictName = "reproduced" | "still rising" | "not reproduced" | "not measured";

/**
 * The colour of each verdict, in the scatter and in the tables' verdict
 * badges alike: Paul Tol's "bright" scheme (green, yellow, rose, grey),
 * whose colours differ in lightness as well as hue and so stay apart for
 * red–green colour-blind readers, on light and dark backgrounds.
 */
export const VERDICT_COLOURS: Readonly<Record<VerdictName, string>> = {
  "reproduced": "#228833",
  "still rising": "#ccbb44",
  "not reproduced": "#ee6677",
  "not measured": "#bbbbbb",
};

/** The colour of a verdict ({@linkcode VERDICT_COLOURS}); anything else is drawn as "not measured". */
export function verdictColour(verdict: string): string {
  return VERDICT_COLOURS[verdict as VerdictName] ?? VERDICT_COLOURS["not measured"];
}

/**
 * How values map onto an axis. "symlog" is sign(v)·log10(1 + |v|/constant):
 * close to linear within ±constant, so 0 and negative values have a place,
 * and one decade per step beyond it, as on a log scale.
 */
export type AxisScale = { kind: "linear" } | { kind: "log" } | { kind: "symlog"; constant: number };

/** More than this ratio between the largest and smallest magnitude (two decades) calls for a logarithmic axis. */
export const LOG_SPAN = 100;

/**
 * The scale both axes share for these values (published values, measured
 * values and interval ends): linear when the magnitudes span two decades or
 * less; log when they span more and all are positive; otherwise symlog.
 *
 * Why symlog for values ≤ 0: the targets include gains that came out
 * negative and published values of exactly 0, which a log axis cannot place,
 * while a linear axis over 0…35 squeezes the many targets between 0 and 1
 * into a corner. Symlog keeps one plot (the diagonal stays a straight line,
 * which a second panel would break) and places 0 and negatives on it. Its
 * linear part reaches to the power of ten at or below the median magnitude,
 * so half the values sit on the near-linear part and the decades above
 * still read as on a log axis.
 *
 * @example
 * ```ts
 * chooseScale([0.2, 0.9]); // { kind: "linear" }
 * chooseScale([0.01, 5]); // { kind: "log" }
 * chooseScale([-0.2, 0.3, 40]); // { kind: "symlog", constant: 0.1 }
 * ```
 */
export function chooseScale(values: readonly number[]): AxisScale {
  const finite = values.filter(Number.isFinite);
  const magnitudes = finite.map(Math.abs).filter((m) => m > 0).sort((a, b) => a - b);
  if (magnitudes.length < 2 || magnitudes[magnitudes.length - 1] / magnitudes[0] <= LOG_SPAN) {
    return { kind: "linear" };
  }
  if (finite.every((v) => v > 0)) return { kind: "log" };
  const median = magnitudes[Math.floor((magnitudes.length - 1) / 2)];
  return { kind: "symlog", constant: 10 ** Math.floor(Math.log10(median)) };
}

/** A value on the scale's axis (before it is stretched to pixels); -Infinity for a value ≤ 0 on a log axis. */
export function transform(scale: AxisScale, value: number): number {
  if (scale.kind === "linear") return value;
  if (scale.kind === "log") return value > 0 ? Math.log10(value) : -Infinity;
  return Math.sign(value) * Math.log10(1 + Math.abs(value) / scale.constant);
}

/** The value at a point of the scale's axis (the inverse of {@linkcode transform}). */
export function untransform(scale: AxisScale, at: number): number {
  if (scale.kind === "linear") return at;
  if (scale.kind === "log") return 10 ** at;
  return Math.sign(at) * scale.constant * (10 ** Math.abs(at) - 1);
}

/** What a target needs to be placed (a lib/core/scorecard.ts `ScoredTarget` fits). */
export interface PlottedTarget {
  /** The published value: x. */
  paper: number;
  /** The seeds' mean: y; null when not measured. */
  ours: number | null;
  /** The 95% interval of the mean, drawn as a vertical bar. */
  interval: [number, number] | null;
  /** Allowed distance from `paper`; not finite for results written before targets had one. */
  tolerance: number;
  /** "match": within ±tolerance; "higher" / "lower": that far short of `paper` at most, or beyond. */
  direction: "match" | "higher" | "lower";
}

/** The square plot area in pixels and the range of the axis (after {@linkcode transform}) it shows. */
export interface PlotFrame {
  scale: AxisScale;
  /** Axis range shown, after the transform, the same on x and y. */
  from: number;
  to: number;
  /** Left and top edge of the plot area, and its side, in pixels. */
  left: number;
  top: number;
  size: number;
}

/** Every value of a target that the plot shows: published, ours, interval ends and tolerance ends. */
function shownValues(t: PlottedTarget): number[] {
  const tolerance = Number.isFinite(t.tolerance) ? [t.paper - t.tolerance, t.paper + t.tolerance] : [];
  return [t.paper, ...(t.ours === null ? [] : [t.ours]), ...(t.interval ?? []), ...tolerance];
}

/**
 * The frame that shows every measured target: its scale chosen from the
 * published values, our values and interval ends (tolerances do not decide
 * the scale, and a tolerance end a log axis cannot show is cut at the edge),
 * the range padded by `pad` of its width on either side.
 */
export function plotFrame(
  targets: readonly PlottedTarget[],
  area: { left: number; top: number; size: number },
  pad = 0.04,
): PlotFrame {
  const measured = targets.filter((t) => t.ours !== null);
  const scale = chooseScale(measured.flatMap((t) => [t.paper, t.ours!, ...(t.interval ?? [])]));
  const placed = measured.flatMap(shownValues).map((v) => transform(scale, v)).filter(Number.isFinite);
  let from = placed.length ? Math.min(...placed) : 0;
  let to = placed.length ? Math.max(...placed) : 1;
  if (to === from) [from, to] = [from - 0.5, to + 0.5];
  const margin = (to - from) * pad;
  return { scale, from: from - margin, to: to + margin, ...area };
}

/** A value's pixel on the x axis of a frame (values a log axis cannot show are put at its left edge). */
export function xPixel(frame: PlotFrame, value: number): number {
  const at = Math.max(transform(frame.scale, value), frame.from);
  return frame.left + (at - frame.from) / (frame.to - frame.from) * frame.size;
}

/** A value's pixel on the y axis of a frame (up is larger; values a log axis cannot show are put at its bottom). */
export function yPixel(frame: PlotFrame, value: number): number {
  const at = Math.max(transform(frame.scale, value), frame.from);
  return frame.top + frame.size - (at - frame.from) / (frame.to - frame.from) * frame.size;
}

/** Where a measured target is drawn, in pixels. */
export interface Placement {
  /** The point: (published, ours). */
  x: number;
  y: number;
  /** The 95% interval's bar, top and bottom; null without an interval. */
  interval: { top: number; bottom: number } | null;
  /**
   * The tolerance as a vertical segment at x from paper − tolerance to
   * paper + tolerance; `open` says which end goes on ("higher": up,
   * "lower": down). Null without a finite tolerance.
   */
  tolerance: { top: number; bottom: number; open: "up" | "down" | null } | null;
}

/** Where a target is drawn in a frame; null for a target without a measured value. */
export function placeTarget(frame: PlotFrame, t: PlottedTarget): Placement | null {
  if (t.ours === null) return null;
  const x = xPixel(frame, t.paper);
  return {
    x,
    y: yPixel(frame, t.ours),
    interval: t.interval ? { top: yPixel(frame, t.interval[1]), bottom: yPixel(frame, t.interval[0]) } : null,
    tolerance: Number.isFinite(t.tolerance)
      ? {
        top: yPixel(frame, t.paper + t.tolerance),
        bottom: yPixel(frame, t.paper - t.tolerance),
        open: t.direction === "higher" ? "up" : t.direction === "lower" ? "down" : null,
      }
      : null,
  };
}

/**
 * Round values to label an axis from `from` to `to` (after the transform):
 * steps of 1, 2 or 5 × 10^k on a linear axis (about `count` of them); powers
 * of ten on a log axis (with 2× and 5× between when fewer than three
 * fit); 0 and ±constant·10^k on a symlog axis.
 */
export function axisTicks(scale: AxisScale, from: number, to: number, count = 6): number[] {
  const inside = (v: number) => {
    const at = transform(scale, v);
    return at >= from - 1e-9 && at <= to + 1e-9;
  };
  if (scale.kind === "linear") {
    const rough = (to - from) / count;
    const power = 10 ** Math.floor(Math.log10(rough));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
    // Whole multiples of the step, counted so float noise (−0.3 / 0.1 = −2.9999999999999996) loses no edge tick.
    return range(Math.ceil(from / step - 1e-9), Math.floor(to / step + 1e-9)).map((i) => roundTick(i * step));
  }
  if (scale.kind === "log") {
    const decades = range(Math.floor(from), Math.ceil(to)).map((k) => 10 ** k);
    const ticks = decades.filter(inside);
    if (ticks.length >= 3) return ticks.map(roundTick);
    return decades.flatMap((d) => [d, 2 * d, 5 * d]).filter(inside).map(roundTick);
  }
  const c = scale.constant;
  // |v| = c·10^k sits at log10(1 + 10^k), a little beyond k: decades from k = 0 up to the edge.
  const reach = Math.ceil(Math.max(Math.abs(from), Math.abs(to)));
  const decades = range(0, reach).map((k) => c * 10 ** k);
  return [...decades.map((d) => -d).reverse(), 0, ...decades].filter(inside).map(roundTick);
}

/** The integers from `a` to `b`, both included. */
function range(a: number, b: number): number[] {
  return Array.from({ length: Math.max(0, b - a + 1) }, (_, i) => a + i);
}

/** A tick value without the float noise of its computation (0.30000000000000004 → 0.3). */
function roundTick(v: number): number {
  return v === 0 ? 0 : Number(v.toPrecision(12));
}

/** A tick's label: "0.001", "0.5", "10", "1e+4". */
export function tickLabel(v: number): string {
  const a = Math.abs(v);
  return a !== 0 && (a >= 1e4 || a < 1e-3) ? v.toExponential(0) : String(Number(v.toPrecision(3)));
}

/**
 * The run a group's point links to: `experiment/id` of the first of its runs
 * (a provenance "run <id>") that this store holds, or null when it holds
 * none (the group is a kept result, or its runs were removed).
 *
 * @example
 * ```ts
 * runLink({ experiment: "ica-toy", provenance: ["run 20240101-120000-abcdef"] }, new Set(["ica-toy/20240101-120000-abcdef"]));
 * // "ica-toy/20240101-120000-abcdef"
 * ```
 */
export function runLink(
  group: { experiment: string; provenance: readonly string[] },
  storeRuns: ReadonlySet<string>,
): string | null {
  for (const p of group.provenance) {
    const id = /^run (\S+)$/.exec(p)?.[1];
    if (id && storeRuns.has(`${group.experiment}/${id}`)) return `${group.experiment}/${id}`;
  }
  return null;
}

/** The id of a target's row in the scorecard table (`g` the group's index, `t` the target's within it). */
export const targetRowId = (g: number, t: number): string => `scorecard-target-${g}-${t}`;

/** One target of the scatter, with what its point names and where it links. */
export interface ScatterEntry {
  target: ScoredTarget;
  /** The group's label: experiment, preset, seeds, commits ({@linkcode groupLabel}). */
  group: string;
  experiment: string;
  /** `experiment/id` of a run of the group in this store, else null (the point then leads to its table row). */
  run: string | null;
  /** The id of the target's row in the table ({@linkcode targetRowId}). */
  row: string;
}

/**
 * Every target of the scorecard, in table order, split into those with a
 * measured value (plotted) and those without (listed under the plot).
 * `storeRuns` holds the `experiment/id` of each run of this store.
 */
export function scatterEntries(
  groups: readonly ScoredGroup[],
  storeRuns: ReadonlySet<string>,
): { plotted: ScatterEntry[]; unmeasured: ScatterEntry[] } {
  const entries = groups.flatMap((g, gi) => {
    const run = runLink(g, storeRuns);
    const group = groupLabel(g);
    return g.targets.map((target, ti) => ({ target, group, experiment: g.experiment, run, row: targetRowId(gi, ti) }));
  });
  return {
    plotted: entries.filter((e) => e.target.ours !== null),
    unmeasured: entries.filter((e) => e.target.ours === null),
  };
}

/**
 * A point's tooltip: the group, the metric and its source, published beside
 * ours, the verdict and class, and for an analogue what stands in for what.
 */
export function pointTitle(entry: ScatterEntry): string {
  const t = entry.target;
  return [
    entry.group,
    `${t.metric} (${t.source})`,
    `published ${formatValue(t.paper)} · ours ${oursText(t)}`,
    `${t.verdict} (${t.kind})`,
    ...(t.kind === "analogue" ? [`stand-in: ${t.standIn ?? "not stated"}`] : []),
    entry.run ? "click: the run" : "click: its row in the table",
  ].join("\n");
}
