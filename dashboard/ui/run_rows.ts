/**
 * What the runs table shows: its columns, which runs pass the filter, and
 * their order.
 *
 * @module
 */
import type { Reducers, RunRow } from "../run_index.ts";
import { configKeys, differingKeys } from "./config_keys.ts";

/** Metric columns beyond this many are left out, so the table stays readable. */
const MAX_METRIC_COLUMNS = 12;

/** The column the table is sorted by, and in which direction. */
export interface SortState {
  /** A run field (`created`), `config:<key>` or `metric:<key>`. */
  column: string;
  descending: boolean;
}

/** Newest runs first until a header is clicked. */
export const DEFAULT_SORT: SortState = { column: "created", descending: true };

/**
 * The config columns, sorted by key: all of them, or only those whose values
 * differ between the runs.
 *
 * @example
 * ```ts
 * configColumns([{ config: { lr: 1, b: 2 } }, { config: { lr: 1, b: 3 } }], true); // ["b"]
 * ```
 */
export function configColumns(runs: Pick<RunRow, "config">[], onlyDiff: boolean): string[] {
  const configs = runs.map((r) => r.config);
  return (onlyDiff ? differingKeys(configs) : configKeys(configs)).sort();
}

/**
 * The metric columns: top-level metrics before namespaced ones (those with a
 * `/`), each in the order first seen, at most twelve.
 *
 * @example
 * ```ts
 * metricColumns([{ metrics: { "mcc/a": m, loss: m } }]); // ["loss", "mcc/a"]
 * ```
 */
export function metricColumns(runs: Pick<RunRow, "metrics">[]): string[] {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))];
  return keys.filter((k) => !k.includes("/")).concat(keys.filter((k) => k.includes("/"))).slice(0, MAX_METRIC_COLUMNS);
}

/** The value a run shows in a column (see {@linkcode SortState.column}); metric columns show `reducer`. */
export function cellValue(run: RunRow, column: string, reducer: keyof Reducers): unknown {
  if (column.startsWith("config:")) return run.config[column.slice(7)];
  if (column.startsWith("metric:")) return run.metrics[column.slice(7)]?.[reducer];
  return (run as unknown as Record<string, unknown>)[column];
}

/**
 * The runs whose experiment, status, config or tags contain `query` (case
 * blind), sorted by the column: numbers numerically, anything else as text,
 * missing values as empty text.
 */
export function visibleRows(runs: RunRow[], query: string, sort: SortState, reducer: keyof Reducers): RunRow[] {
  const needle = query.toLowerCase();
  return runs
    .filter((r) => !needle || JSON.stringify([r.experiment, r.status, r.config, r.tags]).toLowerCase().includes(needle))
    .sort((a, b) => {
      const x = cellValue(a, sort.column, reducer), y = cellValue(b, sort.column, reducer);
      const order = typeof x === "number" && typeof y === "number"
        ? x - y
        : String(x ?? "").localeCompare(String(y ?? ""));
      return sort.descending ? -order : order;
    });
}

/**
 * The sort after a click on a column's header: the same column flips its
 * direction, another column starts descending.
 */
export function nextSort(sort: SortState, column: string): SortState {
  return { column, descending: sort.column === column ? !sort.descending : true };
}
