/**
 * Learning curves of a run's targets: the series a target's metric took
 * during training, read from metrics.jsonl; whether it was still rising
 * toward the published value when the budget ended; and its drawings (a
 * text sparkline for tables, an SVG panel per target with the published
 * value as a horizontal line) shared by the scorecard and the dashboard.
 *
 * @module
 */
import type { Series, SummaryTarget, TargetDirection } from "./run_store.ts";

/** A learning curve: (step, value) points in step order. */
export type CurvePoints = [number, number][];

/** A target's learning curve in summary.json. */
export interface TargetCurve {
  /** The logged metric it was read from (`*` stands for any characters but "/", e.g. a seed). */
  metric: string;
  points: CurvePoints;
  /**
   * Change of the metric over the last quarter of the steps, from a least-squares
   * line (signed; null with fewer than two points).
   */
  change_last_quarter: number | null;
}

/**
 * A curve counts as still rising when, over the last quarter of its steps, it
 * moved toward the published value by at least this fraction of that value's
 * magnitude (e.g. 0.0098 MCC for a published 0.975).
 */
export const RISING_FRACTION = 0.01;

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
export function curveOf(series: ReadonlyMap<string, Series>, pattern: string): CurvePoints {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  const regex = new RegExp(`^${escaped.join("[^/]*")}$`);
  const byStep = new Map<number, { sum: number; n: number }>();
  for (const [key, s] of series) {
    if (!regex.test(key)) continue;
    s.x.forEach((step, i) => {
      const at = byStep.get(step) ?? { sum: 0, n: 0 };
      at.sum += s.y[i];
      at.n += 1;
      byStep.set(step, at);
    });
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, { sum, n }]) => [step, sum / n]);
}

/**
 * Change over the last quarter of a curve's steps (0.75·last step … last
 * step): the slope of a least-squares line through the points in that window
 * (the last two points when fewer lie in it), times a quarter of the last step.
 */
export function changeOverLastQuarter(points: CurvePoints): number | null {
  if (points.length < 2) return null;
  const last = points[points.length - 1][0];
  let window = points.filter(([step]) => step >= 0.75 * last);
  if (window.length < 2) window = points.slice(-2);
  const n = window.length;
  const mx = window.reduce((a, [x]) => a + x, 0) / n;
  const my = window.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0, sxx = 0;
  for (const [x, y] of window) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx > 0 ? (sxy / sxx) * 0.25 * last : 0;
}

/** The curve of a target in summary.json, or null when nothing matching was logged. */
export function targetCurve(series: ReadonlyMap<string, Series>, metric: string): TargetCurve | null {
  const points = curveOf(series, metric);
  if (points.length === 0) return null;
  return { metric, points, change_last_quarter: changeOverLastQuarter(points) };
}

/**
 * Whether a curve ended still moving toward the published value: its change
 * over the last quarter is at least {@linkcode RISING_FRACTION} of |paper| in
 * the target's direction ("lower": falling; "match": toward `paper` from the
 * curve's last value). Needs three points: two say nothing of a trend's end.
 */
export function stillRising(
  target: { paper: number; direction: TargetDirection },
  curve: TargetCurve | null | undefined,
): boolean {
  if (!curve || curve.points.length < 3 || curve.change_last_quarter === null) return false;
  const last = curve.points[curve.points.length - 1][1];
  const toward = target.direction === "higher" ? 1 : target.direction === "lower" ? -1 : Math.sign(target.paper - last);
  return toward * curve.change_last_quarter >= RISING_FRACTION * Math.abs(target.paper);
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

const signed = (value: number) => `${value >= 0 ? "+" : "−"}${Number(Math.abs(value).toPrecision(2))}`;

/** A target's curve for a table cell: its sparkline, then its change over the last quarter of the steps. */
export function curveCell(target: SummaryTarget): string {
  const curve = target.curve;
  if (!curve || curve.points.length === 0) return "";
  const change = curve.change_last_quarter === null ? "" : ` ${signed(curve.change_last_quarter)} last ¼`;
  return `${sparkline(curve.points)}${change}`;
}

/** One panel of {@linkcode curvesSvg}. */
export interface CurvePanel {
  title: string;
  points: CurvePoints;
  paper: number;
  /** The final measured value, marked at the last step (it may use more samples than the curve's points). */
  ours: number | null;
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
export function curvePanels(summary: { targets: readonly SummaryTarget[] }): CurvePanel[] {
  return summary.targets.map((t) => ({
    title: t.metric,
    points: t.curve?.points ?? [],
    paper: t.paper,
    ours: t.ours,
    verdict: t.verdict,
  }));
}

/** Whether any target of a summary has a learning curve with points (and so a drawing). */
export function hasCurves(summary: { targets: readonly SummaryTarget[] }): boolean {
  return summary.targets.some((t) => (t.curve?.points.length ?? 0) > 0);
}

/** The curve drawing of a summary's targets (SVG), or null when none of them has a curve. */
export function summaryCurvesSvg(summary: { targets: readonly SummaryTarget[] }): string | null {
  return hasCurves(summary) ? curvesSvg(curvePanels(summary)) : null;
}
