/// <reference lib="dom" />
/**
 * The runs table: one row per run with its config and metric columns,
 * filterable, sortable by any column, with a checkbox to chart each run.
 *
 * @module
 */
import { useMemo } from "preact/hooks";
import type { Reducers, RunRow } from "../run_index.ts";
import { formatValue, runKey } from "./format.ts";
import { configColumns, metricColumns, nextSort, type SortState, visibleRows } from "./run_rows.ts";

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
}

/** The runs table (`#runs`); each row carries its run key as `data-run`. */
export function RunsTable(props: RunsTableProps) {
  const { sort, setSort } = props;
  const configKeys = useMemo(() => configColumns(props.runs, props.onlyDiff), [props.runs, props.onlyDiff]);
  const metricKeys = useMemo(() => metricColumns(props.runs), [props.runs]);
  const rows = visibleRows(props.runs, props.query, sort, props.reducer);
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
        <button type="button" onClick={() => props.selectAll(rows.map(runKey))}>chart all shown</button>
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
              {metricKeys.map((k) => header(`metric:${k}`, `${k} (${props.reducer})`))}
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
                  <a href={`#/run/${runKey(r)}`}>{r.experiment}</a> <small>{r.id}</small>
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
                {metricKeys.map((k) => <td key={k}>{formatValue(r.metrics[k]?.[props.reducer])}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
