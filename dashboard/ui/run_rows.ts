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

/** One term of a filter: `key<op>value` compares a field, a bare word searches the run's text. */
type FilterTerm = { key: string; op: "<" | "<=" | ">" | ">=" | "=" | "!="; value: string } | { text: string };

/** The terms of a filter query: words separated by spaces. */
export function parseFilter(query: string): FilterTerm[] {
  return query.trim().split(/\s+/).filter((w) => w).map((word) => {
    const m = /^([^<>=!:]+)(<=|>=|!=|<|>|=|:)(.+)$/.exec(word);
    return m ? { key: m[1], op: m[2] === ":" ? "=" : m[2] as "<" | "<=" | ">" | ">=" | "=" | "!=", value: m[3] } : {
      text: word.toLowerCase(),
    };
  });
}

/** A run's value of a filter key: a run field (status, seed, id, …), a config key, or a metric (the reducer's value). */
function filterValue(run: RunRow, key: string, reducer: keyof Reducers): unknown {
  if (key in run && key !== "config" && key !== "metrics") return (run as unknown as Record<string, unknown>)[key];
  if (key in run.config) return run.config[key];
  return run.metrics[key]?.[reducer];
}

function termHolds(run: RunRow, term: FilterTerm, reducer: keyof Reducers): boolean {
  if ("text" in term) {
    return JSON.stringify([run.experiment, run.id, run.status, run.backend, run.config, run.tags]).toLowerCase()
      .includes(term.text);
  }
  const value = filterValue(run, term.key, reducer);
  if (value === undefined) return term.op === "!=";
  const number = Number(term.value);
  const numeric = typeof value === "number" && term.value.trim() !== "" && Number.isFinite(number);
  const order = numeric
    ? (value as number) - number
    : String(typeof value === "string" ? value : JSON.stringify(value)).localeCompare(term.value);
  switch (term.op) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
    case "=":
      return order === 0;
    case "!=":
      return order !== 0;
  }
}

/**
 * The runs a filter keeps, sorted by the column (numbers numerically,
 * anything else as text, missing values as empty text). Every term must
 * hold: `lr<0.01`, `status:failed`, `seed=3`, `mcc>=0.9` (a metric, by
 * the table's reducer), `backend!=wasm`; a bare word matches the run's
 * experiment, id, status, backend, config or tags, case blind. Archived
 * runs are left out unless a term names `archived` (`archived:true`).
 */
export function visibleRows(runs: RunRow[], query: string, sort: SortState, reducer: keyof Reducers): RunRow[] {
  const terms = parseFilter(query);
  // Archived runs stay hidden unless the filter asks about them (archived:true).
  const askArchived = terms.some((t) => "key" in t && t.key === "archived");
  return runs
    .filter((r) => (askArchived || !r.archived) && terms.every((term) => termHolds(r, term, reducer)))
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
