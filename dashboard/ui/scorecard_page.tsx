/// <reference lib="dom" />
/**
 * The reproduction scorecard: every published target and claim of the
 * latest completed run of each experiment and preset.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunSummary } from "../../lib/core/run_store.ts";
import { getJson } from "./api.ts";
import { formatMeasured, formatValue, verdictClass } from "./format.ts";
import { curveCell } from "../../lib/core/curves.ts";

/** The page `#/scorecard` (`#scorecard`), one row per target or claim. */
export function ScorecardPage() {
  const [summaries, setSummaries] = useState<RunSummary[] | null>(null);
  useEffect(() => {
    getJson<{ summaries: RunSummary[] }>("/api/scorecard").then((b) => setSummaries(b.summaries));
  }, []);
  if (!summaries) return <p>loading…</p>;
  if (!summaries.length) return <p>No completed runs yet.</p>;
  return (
    <table id="scorecard">
      <thead>
        <tr>
          <th>experiment</th>
          <th>preset</th>
          <th>source</th>
          <th>metric or finding</th>
          <th>published</th>
          <th>ours</th>
          <th>curve</th>
          <th>verdict</th>
        </tr>
      </thead>
      <tbody>
        {summaries.flatMap((s) => [
          ...s.targets.map((t) => (
            <tr>
              <td>
                <a href={`#/run/${s.experiment}/${s.run_id}`}>{s.experiment}</a>
              </td>
              <td>{s.preset}</td>
              <td>{t.source}</td>
              <td>{t.metric}</td>
              <td>{formatValue(t.paper)}</td>
              <td>{formatMeasured(t.ours)}</td>
              <td title={t.curve ? `learning curve of ${t.curve.metric}` : "no curve logged"}>{curveCell(t)}</td>
              <td class={verdictClass(t.verdict)}>{t.verdict}</td>
            </tr>
          )),
          ...s.claims.map((c) => (
            <tr>
              <td>{s.experiment}</td>
              <td>{s.preset}</td>
              <td>{c.source}</td>
              <td>{c.text}</td>
              <td>holds</td>
              <td></td>
              <td></td>
              <td class={verdictClass(c.verdict)}>{c.verdict}</td>
            </tr>
          )),
        ])}
      </tbody>
    </table>
  );
}
