/// <reference lib="dom" />
/**
 * A run's published targets and claims beside what it measured.
 *
 * @module
 */
import type { RunSummary } from "../../lib/core/run_store.ts";
import { formatMeasured, formatValue, verdictClass } from "./format.ts";

/** The card of a completed run's summary.json, its table `#targets`. */
export function TargetsTable({ summary }: { summary: RunSummary }) {
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
            <th>tolerance</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {summary.targets.map((t) => (
            <tr>
              <td>{t.metric}</td>
              <td>{t.source}</td>
              <td>{formatValue(t.paper)}</td>
              <td>{formatMeasured(t.ours)}</td>
              <td>±{t.tolerance}</td>
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
    </div>
  );
}
