/// <reference lib="dom" />
/**
 * A run's published targets and claims beside what it measured.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import type { RegistrySnapshot } from "../registry.ts";
import { getJson } from "./api.ts";
import { formatMeasured } from "./format.ts";
import { metricTitle } from "./metric_docs.ts";
import { claimRow, targetRow, VerdictTable } from "./verdict_table.tsx";

/** The card of a completed run's summary.json, its table `#targets`; a metric's name shows its definition on hover. */
export function TargetsTable({ summary }: { summary: RunSummary }) {
  const [metrics, setMetrics] = useState<RegistrySnapshot["metrics"]>();
  useEffect(() => {
    getJson<RegistrySnapshot>("/api/registry").then((r) => setMetrics(r.metrics)).catch(() => {});
  }, []);
  return (
    <div class="card">
      <h3>
        <span>published targets ({summary.source})</span>
        <span>{summary.wall_time_s} s</span>
      </h3>
      <VerdictTable
        id="targets"
        lead={["metric or finding", "source"]}
        ours="ours"
        rows={[
          ...summary.targets.map((t) =>
            targetRow(
              t,
              <>
                <td title={metricTitle(metrics, t.metric)}>{t.metric}</td>
                <td>{t.source}</td>
              </>,
              formatMeasured(t.ours),
            )
          ),
          ...summary.claims.map((c) =>
            claimRow(
              c,
              <>
                <td>{c.text}</td>
                <td>{c.source}</td>
              </>,
            )
          ),
        ]}
      />
      {summary.preset_limits && <p class="preset-limits">preset {summary.preset}: {summary.preset_limits}</p>}
    </div>
  );
}
