/// <reference lib="dom" />
/**
 * The runs table: one row per run with its config and metric columns,
 * filterable, sortable by any column, with a checkbox to chart each run.
 *
 * @module
 */
import { useMemo } from "preact/hooks";
import type { Reducers, RunRow } from "../run_index.ts";
import { formatValue, runKey, runPath } from "./format.ts";
import {
  configColumns,
  isFinalScore,
  metricColumns,
  metricKeys,
  metricValue,
  nextSort,
  type SortState,
  visibleRows,
} from "./run_rows.ts";

/** Props of {@linkcode RunsTable}. */
export interface RunsTableProps {
  runs: RunRow[];
  /** Keys of the charted runs. */
  selected: Set<string>;
  toggle: (key: string) => void;
  query: string;
  onlyDiff: boolean;
  reducer: keyof Reducers;
  /** The sort, kept in the URL (`sort=column&desc=1`). */
  sort: SortState;
  setSort: (sort: SortState) => void;
  /** Charts exactly these runs (the ones the filter shows). */
  selectAll: (keys: string[]) => void;
  /** The chosen metric columns (the URL's `cols`); empty: the first twelve. */
  columns: string[];
  setColumns: (columns: string[]) => void;
  /** Only metric names containing this text are offered as columns. */
  metricFilter: string;
}

/** The runs table (`#runs`); each row carries its run key as `data-run`. */
export function RunsTable(props: RunsTableProps) {
  const { sort, setSort } = props;
  const rows = visibleRows(props.runs, props.query, sort, props.reducer);
  // "Only keys that differ" compares the runs the filter shows, not the whole store.
  const rowKeys = rows.map(runKey).join(",");
  const configKeys = useMemo(() => configColumns(rows, props.onlyDiff), [rowKeys, props.runs, props.onlyDiff]);
  const metricNames = useMemo(() => metricColumns(props.runs, props.columns), [props.runs, props.columns.join(",")]);
  // A button per header: sorting is reachable by keyboard, and screen readers hear the order.
  const header = (column: string, label: string) => (
    <th aria-sort={sort.column === column ? (sort.descending ? "descending" : "ascending") : "none"}>
      <button
        type="button"
        class="sort"
        onClick={() =>
          setSort(nextSort(sort, column))}
      >
        {label}
        {sort.column === column ? (sort.descending ? " ▼" : " ▲") : ""}
      </button>
    </th>
  );
  return (
    <>
      <p class="table-actions">
        {rows.length} of {props.runs.length} runs shown{" "}
        <button type="button" onClick={() => props.selectAll(rows.map(runKey))}>chart all shown</button>{" "}
        <ColumnChooser
          runs={props.runs}
          shown={metricNames}
          filter={props.metricFilter}
          setColumns={props.setColumns}
        />
      </p>
      <div class="scroll">
        <table id="runs">
          <thead>
            <tr>
              <th></th>
              {header("experiment", "experiment")}
              {header("status", "status")}
              {header("created", "created")}
              {header("duration_s", "duration")}
              {header("backend", "backend")}
              {configKeys.map((k) => header(`config:${k}`, k))}
              {metricNames.map((k) =>
                header(`metric:${k}`, `${k} (${isFinalScore(props.runs, k) ? "final" : props.reducer})`)
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={runKey(r)} class={props.selected.has(runKey(r)) ? "selected" : ""} data-run={runKey(r)}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`chart ${runKey(r)}`}
                    checked={props.selected.has(runKey(r))}
                    onChange={() =>
                      props.toggle(runKey(r))}
                  />
                </td>
                <td class="run-cell">
                  <a href={`#/run/${runPath(r)}`}>{r.experiment}</a> <small>{r.id}</small>
                  {r.problem && <div class="problem">⚠ {r.problem}</div>}
                  {r.reading && (
                    <div class="note reading">
                      reading metrics.jsonl: {Math.floor((100 * r.reading.bytes) / Math.max(1, r.reading.of))}% of{" "}
                      {(r.reading.of / 1e6).toFixed(0)} MB
                    </div>
                  )}
                  {r.skipped > 0 && (
                    <span class="skipped" title="malformed or torn lines of metrics.jsonl the reader passed over">
                      {` ⚠ ${r.skipped} line${r.skipped > 1 ? "s" : ""} skipped`}
                    </span>
                  )}
                  {r.note && <div class="note">{r.note}</div>}
                </td>
                <td class={`status-${r.status}`}>{r.status}</td>
                <td>{new Date(r.created).toLocaleString()}</td>
                <td>{r.duration_s.toFixed(1)} s</td>
                <td>{r.backend}</td>
                {configKeys.map((k) => <td key={k}>{formatValue(r.config[k])}</td>)}
                {metricNames.map((k) => <td key={k}>{formatValue(metricValue(r, k, props.reducer))}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/**
 * The metric columns to show (`#columns`): a checkbox per metric the runs
 * have (final scores first), those matching the metric filter.
 */
function ColumnChooser(props: {
  runs: RunRow[];
  shown: string[];
  filter: string;
  setColumns: (columns: string[]) => void;
}) {
  const all = useMemo(() => metricKeys(props.runs), [props.runs]);
  const needle = props.filter.toLowerCase();
  const offered = all.filter((k) => k.toLowerCase().includes(needle));
  const toggle = (key: string) =>
    props.setColumns(props.shown.includes(key) ? props.shown.filter((k) => k !== key) : [...props.shown, key]);
  return (
    <details id="columns">
      <summary>metric columns ({props.shown.length} of {all.length})</summary>
      <div class="column-choices">
        {offered.length < all.length && <small>{offered.length} matching “{props.filter}”</small>}
        {offered.map((k) => (
          <label key={k}>
            <input type="checkbox" checked={props.shown.includes(k)} onChange={() => toggle(k)} />
            {k}
            {isFinalScore(props.runs, k) ? " (final)" : ""}
          </label>
        ))}
        <button type="button" onClick={() => props.setColumns([])}>first twelve</button>
      </div>
    </details>
  );
}
