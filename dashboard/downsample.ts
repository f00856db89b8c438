/**
 * Read-side downsampling that never hides a spike: the series is cut into
 * buckets and each bucket keeps its minimum and its maximum (in their
 * original order); the first and last points are always kept.
 *
 * @module
 */
import type { MetricsRow, Series } from "../lib/core/run_layout.ts";

// Callers of downsample name the series type beside it.
export type { Series } from "../lib/core/run_layout.ts";

/** Returns at most about `maxPoints` points of `series` (unchanged when it is shorter). */
export function downsample(series: Series, maxPoints: number): Series {
  const n = series.x.length;
  if (n <= maxPoints || maxPoints < 4) return series;
  const keep: number[] = [0];
  const buckets = Math.floor((maxPoints - 2) / 2);
  const inner = n - 2;
  for (let b = 0; b < buckets; b++) {
    const start = 1 + Math.floor((b * inner) / buckets);
    const end = 1 + Math.floor(((b + 1) * inner) / buckets);
    if (end <= start) continue;
    let lo = start, hi = start;
    for (let i = start; i < end; i++) {
      if (series.y[i] < series.y[lo]) lo = i;
      if (series.y[i] > series.y[hi]) hi = i;
    }
    if (lo === hi) keep.push(lo);
    else keep.push(Math.min(lo, hi), Math.max(lo, hi));
  }
  keep.push(n - 1);
  return { x: keep.map((i) => series.x[i]), t: keep.map((i) => series.t[i]), y: keep.map((i) => series.y[i]) };
}

/**
 * Rows of metrics.jsonl (in written order) thinned so that each metric keeps
 * about `maxPerMetric` points per stretch of rising steps, by
 * {@linkcode downsample}; rows with at most that many points are returned as
 * they are. A step lower than the one before starts a new stretch (a resumed
 * run logging again from its checkpoint), so that the order a reader relies
 * on to drop the stopped attempt's points is kept.
 */
export function thinRows(rows: readonly MetricsRow[], maxPerMetric: number): MetricsRow[] {
  if (rows.length <= maxPerMetric) return [...rows];
  const out: MetricsRow[] = [];
  let start = 0;
  for (let i = 1; i <= rows.length; i++) {
    if (i < rows.length && rows[i].step > rows[i - 1].step) continue;
    out.push(...thinStretch(rows.slice(start, i), maxPerMetric));
    start = i;
  }
  return out;
}

/** {@linkcode thinRows} of rows whose steps rise. */
function thinStretch(rows: readonly MetricsRow[], maxPerMetric: number): MetricsRow[] {
  if (rows.length <= maxPerMetric) return [...rows];
  const series = new Map<string, Series>();
  for (const row of rows) {
    for (const [metric, value] of Object.entries(row)) {
      if (metric === "step" || metric === "time") continue;
      let s = series.get(metric);
      if (!s) series.set(metric, s = { x: [], t: [], y: [] });
      s.x.push(row.step);
      s.t.push(row.time);
      s.y.push(value);
    }
  }
  // Kept values by step; entries, so that any metric name (`__proto__` too) is a plain key.
  const kept = new Map<number, { time: number; values: [string, number][] }>();
  for (const [metric, s] of series) {
    const thin = downsample(s, maxPerMetric);
    thin.x.forEach((step, i) => {
      let at = kept.get(step);
      if (!at) kept.set(step, at = { time: thin.t[i], values: [] });
      at.values.push([metric, thin.y[i]]);
    });
  }
  return [...kept].sort((a, b) => a[0] - b[0]).map(([step, { time, values }]) =>
    Object.fromEntries([["step", step], ["time", time], ...values]) as MetricsRow
  );
}
