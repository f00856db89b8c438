/// <reference lib="dom" />
/**
 * The reproduction scorecard: every published target and claim judged with
 * today's targets on the kept results and this store's runs, seeds of one
 * configuration together (mean and 95% interval), analogues apart.
 *
 * @module
 */
import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { groupLabel, oursText, type ScoredGroup } from "../../lib/core/scorecard.ts";
import type { RunRow } from "../run_index.ts";
import { getJson } from "./api.ts";
import { ScorecardScatter } from "./scorecard_scatter.tsx";
import { scatterEntries, targetRowId } from "./scorecard_points.ts";
import { claimRow, targetRow, type VerdictRow, VerdictTable } from "./verdict_table.tsx";

/** What GET /api/scorecard answers. */
interface Scorecard {
  groups: ScoredGroup[];
  headline: string;
  skipped: string[];
}

/**
 * A metric's name with a line break allowed after each "/", so a long name
 * wraps at its parts rather than widening the table.
 */
function breakable(name: string) {
  return name.split("/").map((part, i, parts) => (
    <Fragment key={i}>
      {part}
      {i < parts.length - 1 && (
        <>
          /<wbr />
        </>
      )}
    </Fragment>
  ));
}

/**
 * The page `#/scorecard`: the headline, the scatter of published against
 * measured values, then the table `#scorecard`, one row per target or claim.
 */
export function ScorecardPage() {
  // The scorecard with the runs of this store (a point links to its run when the store holds it), shown once both
  // are read, so no point changes its link after it is drawn; without the runs, every point leads to its row.
  const [loaded, setLoaded] = useState<{ card: Scorecard; storeRuns: ReadonlySet<string> } | null>(null);
  useEffect(() => {
    const runs = getJson<{ runs: RunRow[] }>("/api/runs")
      .then(({ runs }) => new Set(runs.map((r) => `${r.experiment}/${r.id}`)))
      .catch(() => new Set<string>());
    Promise.all([getJson<Scorecard>("/api/scorecard"), runs]).then(([card, storeRuns]) =>
      setLoaded({ card, storeRuns })
    );
  }, []);
  const entries = useMemo(() => loaded && scatterEntries(loaded.card.groups, loaded.storeRuns), [loaded]);
  if (!loaded || !entries) return <p>loading…</p>;
  const { card } = loaded;
  if (!card.groups.length) return <p>No completed runs or kept results yet.</p>;
  return (
    <div class="scorecard-page">
      <p id="scorecard-headline">{card.headline}</p>
      {card.skipped.length > 0 && <p class="note">kept results not read: {card.skipped.join("; ")}</p>}
      <ScorecardScatter plotted={entries.plotted} unmeasured={entries.unmeasured} />
      <VerdictTable
        id="scorecard"
        lead={["experiment", "class", "source", "metric or finding"]}
        ours="ours (95% interval with ≥ 3 seeds)"
        curves
        rows={card.groups.flatMap((g, gi) => [
          ...g.targets.map((t, ti) => ({
            ...targetRow(
              t,
              <>
                <td>
                  {g.experiment}
                  <div class="note">{groupLabel(g)}</div>
                </td>
                <td title={t.standIn ?? ""}>{t.kind}</td>
                <td title={`tolerance: ${t.toleranceSource}`}>{t.source}</td>
                <td class="metric-name">{breakable(t.metric)}</td>
              </>,
              oursText(t),
              t.kind,
            ),
            id: targetRowId(gi, ti),
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
