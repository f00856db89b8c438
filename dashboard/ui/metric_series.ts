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
 * event stream sends them) placed in their metrics' series at the row's step
 * and time: a step already present takes the new value (the last write for a
 * step wins, as after `--resume`, and as the run store's reader does), a new
 * step goes in step order; a metric seen for the first time starts a new
 * series. The input is left untouched, as state updates need.
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
      const [x, t, y] = [[...s.x], [...s.t], [...s.y]];
      let at = x.length;
      while (at > 0 && x[at - 1] > row.step) at--;
      const replace = at > 0 && x[at - 1] === row.step;
      x.splice(replace ? at - 1 : at, replace ? 1 : 0, row.step);
      t.splice(replace ? at - 1 : at, replace ? 1 : 0, row.time);
      y.splice(replace ? at - 1 : at, replace ? 1 : 0, value);
      next[metric] = { x, t, y };
    }
  }
  return next;
}
