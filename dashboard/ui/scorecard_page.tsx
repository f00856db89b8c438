/// <reference lib="dom" />
/**
 * The reproduction scorecard: every published target and claim of the
 * latest completed run of each experiment and preset.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { SummaryView } from "../../lib/core/run_store.ts";
import { getJson } from "./api.ts";
import { formatMeasured, formatValue, verdictClass } from "./format.ts";
import { curveCell } from "../../lib/core/curves.ts";

/** Which run a row comes from: its id, seed, the config keys its command line set, its commit. */
function runOf(s: SummaryView): string {
  return [s.run_id, `seed ${s.seed}`, ...(s.overrides ?? []), s.git_commit ? s.git_commit.slice(0, 7) : ""]
    .filter((part) => part).join(" · ");
}

/** The page `#/scorecard` (`#scorecard`), one row per target or claim. */
export function ScorecardPage() {
  const [summaries, setSummaries] = useState<SummaryView[] | null>(null);
  useEffect(() => {
    getJson<{ summaries: SummaryView[] }>("/api/scorecard").then((b) => setSummaries(b.summaries));
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
                <div class="note">{runOf(s)}</div>
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
