/**
 * Learning curves of a run's targets: the series a target's metric took
 * during training, read from metrics.jsonl; the trend of its last third
 * (which the "still rising" verdict of lib/core/targets.ts reads); and its
 * drawings (a text sparkline for tables, an SVG panel per target with the
 * published value as a horizontal line) shared by the scorecard and the
 * dashboard. It imports nothing, so that the run store, the targets and the
 * browser's pages can all use it.
 *
 * @module
 */

/** A learning curve: (step, value) points in step order. */
export type CurvePoints = [number, number][];

/** A target's learning curve in summary.json. */
export interface TargetCurve {
  /** The logged metric it was read from (`*` stands for any characters but "/", e.g. a seed). */
  metric: string;
  /** The curve's (step, value) points. */
  points: CurvePoints;
  /** The least-squares trend of the last third of the steps (null with fewer than three points). */
  trend?: CurveTrend | null;
  /** Written by earlier versions: the change over the last quarter of the steps. Verdicts no longer read it. */
  change_last_quarter?: number | null;
}

/**
 * A straight line through the last third of a curve's steps: its slope per
 * step with the slope's standard error (from the residuals about the line:
 * the curve's own noise), and where the line reaches at twice the steps run.
 */
export interface CurveTrend {
  /** The line's slope, in metric units per step. */
  slope: number;
  /** The slope's standard error, from the residuals about the line. */
  slope_se: number;
  /** The step the projection is for: twice the last step. */
  projected_at: number;
  /** The line's value at `projected_at`. */
  projected: number;
}

/** A logged metric's steps `x` and values `y`, in step order (as the run store's metrics reader keeps them). */
export interface StepSeries {
  /** Steps, ascending. */
  x: readonly number[];
  /** The metric's value at each step of `x`. */
  y: readonly number[];
}

/** What the table cells and drawings of curves need of a summary's target. */
export interface CurvedTarget {
  /** Key in the run's final metrics. */
  metric: string;
  /** The published value. */
  paper: number;
  /** The run's final value, null when not measured. */
  ours: number | null;
  /** The target's verdict. */
  verdict: string;
  /** The learning curve, when the run logged one. */
  curve?: TargetCurve | null;
}

/**
 * Minimum and maximum of `values[start..end)` (Infinity and -Infinity when
 * empty), by a loop: spreading a long array into `Math.min` overflows the stack.
 */
export function extremes(values: ArrayLike<number>, start = 0, end = values.length): { min: number; max: number } {
  let min = Infinity, max = -Infinity;
  for (let i = start; i < end; i++) {
    if (values[i] < min) min = values[i];
    if (values[i] > max) max = values[i];
  }
  return { min, max };
}

/**
 * Points of every logged metric matching `pattern` (`*`: any characters but
 * "/"), averaged per step over the metrics that matched.
 */
export function curveOf(series: ReadonlyMap<string, StepSeries>, pattern: string): CurvePoints {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  const regex = new RegExp(`^${escaped.join("[^/]*")}$`);
  const matched = [...series].filter(([key]) => regex.test(key));
  return meanByStep(matched.map(([, s]) => s.x.map((step, i): [number, number] => [step, s.y[i]])));
}

/** The per-step mean of several curves (e.g. one per seed), in step order. */
export function meanByStep(curves: Iterable<CurvePoints>): CurvePoints {
  const byStep = new Map<number, { sum: number; n: number }>();
  for (const points of curves) {
    for (const [step, value] of points) {
      const at = byStep.get(step) ?? { sum: 0, n: 0 };
      at.sum += value;
      at.n += 1;
      byStep.set(step, at);
    }
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, { sum, n }]) => [step, sum / n]);
}

/**
 * The trend of the last third of a curve's steps (first + ⅔·(last − first)
 * onward; the last three points when fewer lie there): least-squares slope,
 * its standard error from the residuals (n − 2 degrees of freedom), and the
 * line's value at twice the last step. Null with fewer than three points.
 */
export function lastThirdTrend(points: CurvePoints): CurveTrend | null {
  if (points.length < 3) return null;
  const first = points[0][0], last = points[points.length - 1][0];
  let window = points.filter(([step]) => step >= first + (2 / 3) * (last - first));
  if (window.length < 3) window = points.slice(-3);
  const n = window.length;
  const mx = window.reduce((a, [x]) => a + x, 0) / n;
  const my = window.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0, sxx = 0;
  for (const [x, y] of window) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  if (!(sxx > 0)) return null;
  const slope = sxy / sxx;
  const residuals = window.reduce((a, [x, y]) => a + (y - my - slope * (x - mx)) ** 2, 0);
  const slopeSe = Math.sqrt(residuals / (n - 2) / sxx);
  return { slope, slope_se: slopeSe, projected_at: 2 * last, projected: my + slope * (2 * last - mx) };
}

/** The curve of a target in summary.json, or null when nothing matching was logged. */
export function targetCurve(series: ReadonlyMap<string, StepSeries>, metric: string): TargetCurve | null {
  const points = curveOf(series, metric);
  if (points.length === 0) return null;
  return { metric, points, trend: lastThirdTrend(points) };
}

const BARS = "▁▂▃▄▅▆▇█";

/** The curve as a text sparkline of at most `width` characters, scaled to its own range. */
export function sparkline(points: CurvePoints, width = 12): string {
  if (points.length === 0) return "";
  const picked = points.length <= width
    ? points
    : Array.from({ length: width }, (_, i) => points[Math.round((i * (points.length - 1)) / (width - 1))]);
  const values = picked.map(([, y]) => y);
  const { min: lo, max: hi } = extremes(values);
  return values.map((v) => BARS[hi > lo ? Math.round(((v - lo) / (hi - lo)) * (BARS.length - 1)) : 0]).join("");
}

/**
 * A target's curve for a table cell: its sparkline, then where the trend of
 * its last third projects at twice the steps run ("→ 0.41 at 2×").
 */
export function curveCell(target: Pick<CurvedTarget, "curve">): string {
  const curve = target.curve;
  if (!curve || curve.points.length === 0) return "";
  const trend = lastThirdTrend(curve.points);
  const projection = trend ? ` → ${Number(trend.projected.toPrecision(2))} at 2×` : "";
  return `${sparkline(curve.points)}${projection}`;
}

/** One panel of {@linkcode curvesSvg}. */
export interface CurvePanel {
  /** The panel's heading (usually the metric). */
  title: string;
  /** The learning curve drawn in blue. */
  points: CurvePoints;
  /** The published value, drawn as a dashed line. */
  paper: number;
  /** The final measured value, marked at the last step (it may use more samples than the curve's points). */
  ours: number | null;
  /** Shown under the title. */
  verdict: string;
}

const escapeXml = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);

const tick = (v: number) => Number(v.toPrecision(3)).toString();

/**
 * Panels side by side in rows of `columns`: each target's curve (blue), its
 * published value as a dashed horizontal line (red), the final value as a
 * dot, and the verdict under the title. Self-contained SVG text.
 */
export function curvesSvg(panels: readonly CurvePanel[], columns = 4): string {
  const w = 220, h = 150, pad = { left: 40, right: 10, top: 34, bottom: 22 };
  const cols = Math.max(1, Math.min(columns, panels.length));
  const rows = Math.max(1, Math.ceil(panels.length / cols));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * w}" height="${rows * h}" viewBox="0 0 ${cols * w} ${
      rows * h
    }" font-family="sans-serif" font-size="10">`,
    `<rect width="100%" height="100%" fill="white"/>`,
  ];
  panels.forEach((panel, index) => {
    const ox = (index % cols) * w, oy = Math.floor(index / cols) * h;
    const curve = extremes(panel.points.map(([, y]) => y));
    const ours = panel.ours ?? panel.paper;
    let lo = Math.min(curve.min, panel.paper, ours), hi = Math.max(curve.max, panel.paper, ours);
    const margin = hi > lo ? 0.08 * (hi - lo) : Math.max(0.05, Math.abs(hi) * 0.05);
    lo -= margin;
    hi += margin;
    const lastStep = panel.points.length > 0 ? panel.points[panel.points.length - 1][0] : 1;
    const firstStep = Math.min(0, panel.points[0]?.[0] ?? 0);
    const sx = (step: number) =>
      ox + pad.left + ((step - firstStep) / Math.max(1e-9, lastStep - firstStep)) * (w - pad.left - pad.right);
    const sy = (v: number) => oy + pad.top + (1 - (v - lo) / (hi - lo)) * (h - pad.top - pad.bottom);
    const x0 = ox + pad.left, x1 = ox + w - pad.right, y0 = oy + pad.top, y1 = oy + h - pad.bottom;
    parts.push(
      `<text x="${ox + 6}" y="${oy + 13}" font-weight="bold">${escapeXml(panel.title)}</text>`,
      `<text x="${ox + 6}" y="${oy + 26}" fill="#555">${escapeXml(panel.verdict)}</text>`,
      `<path d="M${x0} ${y0}V${y1}H${x1}" fill="none" stroke="#999"/>`,
      `<text x="${x0 - 3}" y="${sy(hi - margin) + 3}" text-anchor="end">${tick(hi - margin)}</text>`,
      `<text x="${x0 - 3}" y="${sy(lo + margin) + 3}" text-anchor="end">${tick(lo + margin)}</text>`,
      // A target measured only at the end has no steps to label.
      panel.points.length > 0 ? `<text x="${x1}" y="${y1 + 14}" text-anchor="end">${tick(lastStep)} steps</text>` : "",
      `<line x1="${x0}" x2="${x1}" y1="${sy(panel.paper)}" y2="${
        sy(panel.paper)
      }" stroke="#c0392b" stroke-dasharray="4 3"/>`,
    );
    if (panel.points.length > 0) {
      const d = panel.points.map(([s, v], i) => `${i === 0 ? "M" : "L"}${sx(s).toFixed(1)} ${sy(v).toFixed(1)}`);
      parts.push(`<path d="${d.join("")}" fill="none" stroke="#2c6fbb" stroke-width="1.5"/>`);
    } else {
      parts.push(`<text x="${(x0 + x1) / 2}" y="${(y0 + y1) / 2}" text-anchor="middle" fill="#777">no curve</text>`);
    }
    if (panel.ours !== null) {
      parts.push(`<circle cx="${sx(lastStep).toFixed(1)}" cy="${sy(panel.ours).toFixed(1)}" r="3" fill="#2c6fbb"/>`);
    }
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/** The learning-curve panels of a summary's targets, in its table's order. */
export function curvePanels(summary: { targets: readonly CurvedTarget[] }): CurvePanel[] {
  return summary.targets.map((t) => ({
    title: t.metric,
    points: t.curve?.points ?? [],
    paper: t.paper,
    ours: t.ours,
    verdict: t.verdict,
  }));
}

/** Whether any target of a summary has a learning curve with points (and so a drawing). */
export function hasCurves(summary: { targets: readonly CurvedTarget[] }): boolean {
  return summary.targets.some((t) => (t.curve?.points.length ?? 0) > 0);
}

/** The curve drawing of a summary's targets (SVG), or null when none of them has a curve. */
export function summaryCurvesSvg(summary: { targets: readonly CurvedTarget[] }): string | null {
  return hasCurves(summary) ? curvesSvg(curvePanels(summary)) : null;
}
