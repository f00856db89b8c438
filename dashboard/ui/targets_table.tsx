/// <reference lib="dom" />
/**
 * A run's published targets and claims beside what it measured.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { comparisonText } from "../../lib/core/targets.ts";
import type { RegistrySnapshot } from "../registry.ts";
import { getJson } from "./api.ts";
import { formatMeasured, formatValue, verdictClass } from "./format.ts";
import { metricTitle } from "./metric_docs.ts";

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
      <table id="targets">
        <thead>
          <tr>
            <th>metric or finding</th>
            <th>source</th>
            <th>published</th>
            <th>ours</th>
            <th>reproduced when</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {summary.targets.map((t) => (
            <tr>
              <td title={metricTitle(metrics, t.metric)}>{t.metric}</td>
              <td>{t.source}</td>
              <td>{formatValue(t.paper)}</td>
              <td>{formatMeasured(t.ours)}</td>
              <td>{comparisonText(t)}</td>
              <td class={verdictClass(t.verdict)}>{t.verdict}</td>
            </tr>
          ))}
          {summary.claims.map((c) => (
            <tr>
              <td>{c.text}</td>
              <td>{c.source}</td>
              <td>holds</td>
              <td></td>
              <td></td>
              <td class={verdictClass(c.verdict)}>{c.verdict}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {summary.preset_limits && <p class="preset-limits">preset {summary.preset}: {summary.preset_limits}</p>}
    </div>
  );
}
