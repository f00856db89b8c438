/**
 * One run's metrics as series per metric name: fetched once from the API,
 * then grown by the rows its live event stream sends.
 *
 * @module
 */
import type { MetricsRow, Series } from "../../lib/core/run_store.ts";

/** A run's series by metric name. */
export type RunSeries = Record<string, Series>;

/**
 * A copy of `series` with the values of each metrics.jsonl row (as the
 * event stream sends them) appended to their metrics' series at the row's
 * step and time; a metric seen for the first time starts a new series. The
 * input is left untouched, as state updates need.
 *
 * @example
 * ```ts
 * appendRows({}, [{ step: 5, time: 0.5, loss: 2 }]); // { loss: { x: [5], t: [0.5], y: [2] } }
 * ```
 */
export function appendRows(series: RunSeries, rows: MetricsRow[]): RunSeries {
  const next: RunSeries = { ...series };
  for (const row of rows) {
    for (const [metric, value] of Object.entries(row)) {
      if (metric === "step" || metric === "time") continue;
      const s = next[metric] ?? { x: [], t: [], y: [] };
      next[metric] = { x: [...s.x, row.step], t: [...s.t, row.time], y: [...s.y, value] };
    }
  }
  return next;
}
