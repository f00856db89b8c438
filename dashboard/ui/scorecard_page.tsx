/// <reference lib="dom" />
/**
 * The reproduction scorecard: every published target and claim judged with
 * today's targets on the kept results and this store's runs, seeds of one
 * configuration together (mean and 95% interval), analogues apart.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { groupLabel, oursText, type ScoredGroup } from "../../lib/core/scorecard.ts";
import { curveCell } from "../../lib/core/curves.ts";
import { comparisonText } from "../../lib/core/targets.ts";
import { getJson } from "./api.ts";
import { formatValue, verdictClass } from "./format.ts";

/** What GET /api/scorecard answers. */
interface Scorecard {
  groups: ScoredGroup[];
  headline: string;
  skipped: string[];
}

/** The page `#/scorecard` (`#scorecard`), one row per target or claim. */
export function ScorecardPage() {
  const [card, setCard] = useState<Scorecard | null>(null);
  useEffect(() => {
    getJson<Scorecard>("/api/scorecard").then(setCard);
  }, []);
  if (!card) return <p>loading…</p>;
  if (!card.groups.length) return <p>No completed runs or kept results yet.</p>;
  return (
    <div>
      <p id="scorecard-headline">{card.headline}</p>
      {card.skipped.length > 0 && <p class="note">kept results not read: {card.skipped.join("; ")}</p>}
      <table id="scorecard">
        <thead>
          <tr>
            <th>experiment</th>
            <th>class</th>
            <th>source</th>
            <th>metric or finding</th>
            <th>published</th>
            <th>ours (95% interval with ≥ 3 seeds)</th>
            <th>reproduced when</th>
            <th>curve</th>
            <th>verdict</th>
          </tr>
        </thead>
        <tbody>
          {card.groups.flatMap((g) => [
            ...g.targets.map((t) => (
              <tr class={t.kind === "analogue" ? "analogue" : ""}>
                <td>
                  {g.experiment}
                  <div class="note">{groupLabel(g)}</div>
                </td>
                <td title={t.standIn ?? ""}>{t.kind}</td>
                <td title={`tolerance: ${t.toleranceSource}`}>{t.source}</td>
                <td>{t.metric}</td>
                <td>{formatValue(t.paper)}</td>
                <td>{oursText(t)}</td>
                <td>{comparisonText(t)}</td>
                <td title={t.curve ? `learning curve of ${t.curve.metric}` : "no curve kept"}>
                  {t.curve ? curveCell({ ...t, curve: t.curve }) : ""}
                </td>
                <td class={verdictClass(t.verdict, t.kind)}>{t.verdict}</td>
              </tr>
            )),
            ...g.claims.map((c) => (
              <tr>
                <td>{g.experiment}</td>
                <td>claim</td>
                <td>{c.source}</td>
                <td>{c.text}</td>
                <td>holds</td>
                <td>{c.note ?? ""}</td>
                <td></td>
                <td></td>
                <td class={verdictClass(c.verdict)}>{c.verdict}</td>
              </tr>
            )),
            ...(g.problem
              ? [
                <tr key={`${groupLabel(g)} problem`}>
                  <td>{g.experiment}</td>
                  <td></td>
                  <td></td>
                  <td>{g.problem}</td>
                  <td></td>
                  <td></td>
                  <td></td>
                  <td></td>
                  <td>not measured</td>
                </tr>,
              ]
              : []),
          ])}
        </tbody>
      </table>
    </div>
  );
}
