/// <reference lib="dom" />
/**
 * A run's page's charts: one card per metric the run logged, growing live
 * while it trains, with the published value of each target of its
 * experiment drawn on the metric that is its learning curve.
 *
 * @module
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { RunSummary, Series } from "../../lib/core/run_layout.ts";
import type { RegistrySnapshot } from "../registry.ts";
import type { RunRow } from "../run_index.ts";
import { getJson } from "./api.ts";
import { ChartPanel } from "./chart_panel.tsx";
import { chartLines, type Line } from "./chart_lines.ts";
import { runKey } from "./format.ts";
import { publishedFor, type PublishedTarget, type Reference } from "./published_lines.ts";
import { metricSections } from "./run_rows.ts";
import { useLiveSeries } from "./use_live_series.ts";

/** The registry's targets by experiment, fetched once per page (they change only with the code). */
let targetsByExperiment: Promise<Map<string, PublishedTarget[]>> | null = null;
function publishedTargets(): Promise<Map<string, PublishedTarget[]>> {
  targetsByExperiment ??= getJson<RegistrySnapshot>("/api/registry")
    .then((r) => new Map(r.experiments.map((e) => [e.name, e.targets])))
    .catch(() => {
      // A failed fetch is tried again by the next page that asks; meanwhile the charts have no published lines.
      targetsByExperiment = null;
      return new Map();
    });
  return targetsByExperiment;
}

/** Props of {@linkcode RunCharts}. */
export interface RunChartsProps {
  /** The run's row in the listing (its status drives the live stream). */
  run: RunRow;
  /** Its summary.json, null while it has none: it names the metric each target's curve was read from. */
  summary: RunSummary | null;
}

/**
 * The charts `#run-charts` of one run: a card per logged metric, in
 * sections by name prefix (only the first open when there are many),
 * smoothed lightly, against steps.
 */
export function RunCharts(props: RunChartsProps) {
  const key = runKey(props.run);
  const selected = useMemo(() => new Set([key]), [key]);
  const data = useLiveSeries([props.run], selected);
  const [registry, setRegistry] = useState<PublishedTarget[]>([]);
  useEffect(() => {
    publishedTargets().then((byName) => setRegistry(byName.get(props.run.experiment) ?? []));
  }, [props.run.experiment]);
  const series = data[key];
  const names = [...(series?.keys() ?? [])].sort().join("\n");
  const metrics = useMemo(() => names ? names.split("\n") : [], [names]);
  // A metric's lines are built again only when its own series changed (the stream grows the metrics a row
  // names): the other cards are handed the same lines and do not redraw.
  const built = useRef(new Map<string, { series: Series; lines: Line[] }>());
  const lines = useMemo(() => {
    for (const m of metrics) {
      if (built.current.get(m)?.series === series.get(m)) continue;
      built.current.set(m, { series: series.get(m)!, lines: chartLines(m, [props.run], data, null) });
    }
    return built.current;
  }, [series]);
  const references = useMemo(() => {
    const byMetric = new Map<string, Reference[]>();
    for (const m of metrics) byMetric.set(m, publishedFor(m, registry, props.summary?.targets ?? null));
    return byMetric;
  }, [metrics, registry, props.summary]);
  if (!metrics.length) return null;
  const sections = metricSections(metrics);
  return (
    <div id="run-charts">
      {sections.map(([prefix, names], i) => (
        <details key={prefix} class="metric-section" open={i === 0 || metrics.length <= 40}>
          <summary>
            {prefix} <small>({names.length} chart{names.length > 1 ? "s" : ""})</small>
          </summary>
          <div class="charts">
            {names.map((metric) => (
              <ChartPanel
                key={metric}
                metric={metric}
                lines={lines.get(metric)!.lines}
                references={references.get(metric)}
                smoothing={0}
                logY={false}
                xAxis="step"
              />
            ))}
          </div>
        </details>
      ))}
    </div>
  );
}
