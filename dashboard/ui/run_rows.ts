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
 * Every metric a run can show in the table: final scores (summary.json)
 * first, then logged metrics, top-level before namespaced ones (those with
 * a `/`), each in the order first seen.
 *
 * @example
 * ```ts
 * metricKeys([{ metrics: { "mcc/a": m, loss: m }, final: { "mcc/L1": 0.9 } }]); // ["mcc/L1", "loss", "mcc/a"]
 * ```
 */
export function metricKeys(runs: MetricRow[]): string[] {
  const logged = [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))];
  return [
    ...new Set([
      ...runs.flatMap((r) => Object.keys(r.final ?? {})),
      ...logged.filter((k) => !k.includes("/")),
      ...logged.filter((k) => k.includes("/")),
    ]),
  ];
}

/**
 * The metric columns: the chosen ones (the URL's `cols`) that some run has,
 * in the order chosen, or else the first twelve of {@linkcode metricKeys}.
 */
export function metricColumns(runs: MetricRow[], chosen: string[] = []): string[] {
  const keys = metricKeys(runs);
  const present = new Set(keys);
  const kept = chosen.filter((k) => present.has(k));
  return kept.length ? kept : keys.slice(0, MAX_METRIC_COLUMNS);
}

/**
 * Metric names in sections by their first path segment (`L1/slowflow/mcc`
 * in `L1`; a name without `/` in "metrics"), sections in order of first appearance.
 *
 * @example
 * ```ts
 * metricSections(["L1/a", "loss", "L1/b"]); // [["L1", ["L1/a", "L1/b"]], ["metrics", ["loss"]]]
 * ```
 */
export function metricSections(names: string[]): [string, string[]][] {
  const sections = new Map<string, string[]>();
  for (const name of names) {
    const prefix = name.includes("/") ? name.slice(0, name.indexOf("/")) : "metrics";
    sections.set(prefix, [...(sections.get(prefix) ?? []), name]);
  }
  return [...sections.entries()];
}

/** What {@linkcode metricValue} reads of a run. */
export type MetricRow = Pick<RunRow, "metrics"> & Partial<Pick<RunRow, "final">>;

/**
 * A run's value of metric `key`: its final score when summary.json has one
 * (a single number, whatever the reducer), else the reducer's value of the
 * logged metric.
 */
export function metricValue(run: MetricRow, key: string, reducer: keyof Reducers): number | undefined {
  // Own keys only: a metric named like an Object method (`constructor`) is not found on the prototype.
  const final = run.final && Object.hasOwn(run.final, key) ? run.final[key] : undefined;
  return final ?? (Object.hasOwn(run.metrics, key) ? run.metrics[key][reducer] : undefined);
}

/** Whether `key` is a final score (summary.json) of any of the runs, so that the reducer does not apply to it. */
export function isFinalScore(runs: MetricRow[], key: string): boolean {
  return runs.some((r) => r.final !== undefined && Object.hasOwn(r.final, key));
}

/** The value a run shows in a column (see {@linkcode SortState.column}); metric columns show `reducer`. */
export function cellValue(run: RunRow, column: string, reducer: keyof Reducers): unknown {
  if (column.startsWith("config:")) return run.config[column.slice(7)];
  if (column.startsWith("metric:")) return metricValue(run, column.slice(7), reducer);
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
  if (key in run && key !== "config" && key !== "metrics" && key !== "final") {
    return (run as unknown as Record<string, unknown>)[key];
  }
  if (key in run.config) return run.config[key];
  return metricValue(run, key, reducer);
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
