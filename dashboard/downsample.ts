/**
 * Read-side downsampling that never hides a spike: the series is cut into
 * buckets and each bucket keeps its minimum and its maximum (in their
 * original order); the first and last points are always kept.
 *
 * @module
 */
import type { Series } from "../lib/core/run_layout.ts";

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
