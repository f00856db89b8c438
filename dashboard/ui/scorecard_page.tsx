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
import { getJson } from "./api.ts";
import { claimRow, targetRow, type VerdictRow, VerdictTable } from "./verdict_table.tsx";

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
      <VerdictTable
        id="scorecard"
        lead={["experiment", "class", "source", "metric or finding"]}
        ours="ours (95% interval with ≥ 3 seeds)"
        curves
        rows={card.groups.flatMap((g) => [
          ...g.targets.map((t) => ({
            ...targetRow(
              t,
              <>
                <td>
                  {g.experiment}
                  <div class="note">{groupLabel(g)}</div>
                </td>
                <td title={t.standIn ?? ""}>{t.kind}</td>
                <td title={`tolerance: ${t.toleranceSource}`}>{t.source}</td>
                <td>{t.metric}</td>
              </>,
              oursText(t),
              t.kind,
            ),
            class: t.kind === "analogue" ? "analogue" : "",
          })),
          ...g.claims.map((c) =>
            claimRow(
              c,
              <>
                <td>{g.experiment}</td>
                <td>claim</td>
                <td>{c.source}</td>
                <td>{c.text}</td>
              </>,
              c.note ?? "",
            )
          ),
          ...(g.problem ? [problemRow(g, g.problem)] : []),
        ])}
      />
    </div>
  );
}

/** The row of a group that cannot be judged: why, under "metric or finding", and "not measured". */
function problemRow(g: ScoredGroup, problem: string): VerdictRow {
  return {
    key: `${groupLabel(g)} problem`,
    lead: (
      <>
        <td>{g.experiment}</td>
        <td></td>
        <td></td>
        <td>{problem}</td>
      </>
    ),
    published: "",
    ours: "",
    rule: "",
    curve: null,
    verdict: "not measured",
    verdictClass: "",
  };
}
