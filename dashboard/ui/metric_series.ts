/**
 * One run's metrics as series per metric name: fetched once from the API,
 * then grown by the rows its live event stream sends.
 *
 * @module
 */
import type { MetricsRow, Series } from "../../lib/core/run_layout.ts";
import { downsample } from "../downsample.ts";

/** A run's series by metric name: a Map, so that any name (`constructor`, `__proto__`) is a metric like another. */
export type RunSeries = Map<string, Series>;

/**
 * Points a series holds at most in the page: past it, the series is thinned
 * to half (each bucket's lowest and highest value, the first and last
 * points kept), so that a run logging thousands of lines a second for hours
 * keeps the page's memory and each redraw's work bounded.
 */
export const POINTS_HELD_PER_SERIES = 8000;

/** A run's series as the API sends them (an object by metric name), as a Map. */
export function seriesOf(record: Record<string, Series>): RunSeries {
  return new Map(Object.entries(record));
}

/**
 * A copy of `series` with the values of each metrics.jsonl row (as the
 * event stream sends them) placed in their metrics' series at the row's step
 * and time. A step below a metric's last one means the run was resumed from
 * an earlier checkpoint: the points from that step on belong to the attempt
 * that stopped, and are dropped (the resumed attempt logs them again), so
 * the line does not jump back, and the thinned series the page fetched does
 * not gain the resumed rows between its own points. A metric seen for the
 * first time starts a new series. A series longer than `maxPoints` is
 * thinned to half of it. The input is left untouched, as state updates need.
 *
 * @example
 * ```ts
 * appendRows(new Map(), [{ step: 5, time: 0.5, loss: 2 }]); // Map { loss: { x: [5], t: [0.5], y: [2] } }
 * ```
 */
export function appendRows(series: RunSeries, rows: MetricsRow[], maxPoints = POINTS_HELD_PER_SERIES): RunSeries {
  const next: RunSeries = new Map(series);
  const copied = new Set<string>();
  for (const row of rows) {
    for (const [metric, value] of Object.entries(row)) {
      if (metric === "step" || metric === "time") continue;
      let s = next.get(metric) ?? { x: [], t: [], y: [] };
      if (!copied.has(metric)) {
        s = { x: [...s.x], t: [...s.t], y: [...s.y] };
        copied.add(metric);
      }
      let keep = s.x.length;
      while (keep > 0 && s.x[keep - 1] >= row.step) keep--;
      s.x.length = s.t.length = s.y.length = keep;
      s.x.push(row.step);
      s.t.push(row.time);
      s.y.push(value);
      next.set(metric, s);
    }
  }
  for (const metric of copied) {
    const s = next.get(metric)!;
    if (s.x.length > maxPoints) next.set(metric, downsample(s, Math.floor(maxPoints / 2)));
  }
  return next;
}
