/// <reference lib="dom" />
/**
 * The runs page: controls, the runs table, and a chart per metric of the
 * selected runs.
 *
 * @module
 */
import { useMemo, useState } from "preact/hooks";
import type { RunRow } from "../run_index.ts";
import { ChartPanel } from "./chart_panel.tsx";
import { chartLines, type Line } from "./chart_lines.ts";
import { configKeys } from "./config_keys.ts";
import { runKey } from "./format.ts";
import { metricColumns, metricSections } from "./run_rows.ts";
import { RunsTable } from "./runs_table.tsx";
import { finalTable } from "./table_export.ts";
import type { HashControl } from "./use_hash.ts";
import { useLiveSeries } from "./use_live_series.ts";
import { readView, toggledSelection } from "./url_state.ts";
import { ViewControls } from "./view_controls.tsx";

/** Props of {@linkcode RunsPage}. */
export interface RunsPageProps {
  hash: HashControl;
  runs: RunRow[];
}

/** The runs page (`#/`), its whole view read from the URL. */
export function RunsPage(props: RunsPageProps) {
  const { params, update } = props.hash;
  const view = readView(params);
  const data = useLiveSeries(props.runs, view.selected);
  const [exportText, setExportText] = useState("");
  const selectedRuns = props.runs.filter((r) => view.selected.has(runKey(r)));
  const needle = view.metricFilter.toLowerCase();
  const metricNames = [...new Set(selectedRuns.flatMap((r) => [...(data[runKey(r)]?.keys() ?? [])]))]
    .filter((m) => m.toLowerCase().includes(needle)).sort();
  const grouping = view.groupBy.length ? view.groupBy : view.group ? [] : null;
  // Each chart's lines are built once per change of the data, the selection or the grouping, not per render.
  const selectionKey = selectedRuns.map(runKey).join(",");
  const groupingKey = JSON.stringify(grouping);
  const lines = useMemo(() => {
    const built = new Map<string, Line[]>();
    return (metric: string) => {
      if (!built.has(metric)) built.set(metric, chartLines(metric, selectedRuns, data, grouping, view.band));
      return built.get(metric)!;
    };
  }, [data, selectionKey, groupingKey, view.band]);
  const visibleColumns = metricColumns(props.runs, view.columns);
  const sections = metricSections(metricNames);
  if (!props.runs.length) {
    return (
      <p id="no-runs">
        No runs yet: <code>deno task demo</code> runs the quick reproduction, and its run appears here as it trains.
      </p>
    );
  }
  return (
    <div>
      <ViewControls
        params={params}
        update={update}
        smoothing={view.smoothing}
        canExport={selectedRuns.length > 0}
        configKeys={configKeys(props.runs.map((r) => r.config)).sort()}
        onExport={(format) =>
          setExportText(
            finalTable(selectedRuns, format, { reducer: view.reducer, grouping, columns: visibleColumns }),
          )}
      />
      {exportText && <textarea readOnly value={exportText}></textarea>}
      <RunsTable
        runs={props.runs}
        selected={view.selected}
        query={view.query}
        onlyDiff={view.onlyDiff}
        reducer={view.reducer}
        toggle={(key) => update({ sel: toggledSelection(view.selected, key) })}
        sort={view.sort}
        setSort={(sort) => update({ sort: sort.column, desc: sort.descending ? "1" : "0" })}
        selectAll={(keys) => update({ sel: keys.join(",") })}
        columns={view.columns}
        setColumns={(columns) => update({ cols: columns.join(",") })}
        metricFilter={view.metricFilter}
      />
      {!selectedRuns.length && <p>Select runs to chart their metrics.</p>}
      {sections.map(([prefix, metrics], i) => (
        // A section per name prefix (`L1/…`, `train/…`); with many metrics only the first starts open.
        <details key={prefix} class="metric-section" open={i === 0 || metricNames.length <= 40}>
          <summary>
            {prefix} <small>({metrics.length} chart{metrics.length > 1 ? "s" : ""})</small>
          </summary>
          <div class="charts">
            {metrics.map((metric) => (
              <ChartPanel
                key={metric}
                metric={metric}
                lines={lines(metric)}
                smoothing={view.smoothing}
                logY={view.logY}
                xAxis={view.xAxis}
              />
            ))}
          </div>
        </details>
      ))}
    </div>
  );
}
