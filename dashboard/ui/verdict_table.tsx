/// <reference lib="dom" />
/**
 * The table of published targets and claims beside what was measured, shared
 * by a run's page and the scorecard: each page writes its own leading cells
 * (which run, which metric), and the columns from the published value to the
 * verdict are the same in both.
 *
 * @module
 */
import type { ComponentChildren } from "preact";
import { curveCell, type TargetCurve } from "../../lib/core/curves.ts";
import { type Comparison, comparisonText } from "../../lib/core/targets.ts";
import { formatValue, verdictClass } from "./format.ts";
import { verdictColour } from "./scorecard_points.ts";

/** One row of a {@linkcode VerdictTable}. */
export interface VerdictRow {
  key?: string;
  /** The row's element id, for links to it. */
  id?: string;
  class?: string;
  /** The page's own cells (`<td>`s), one per leading heading of the table. */
  lead: ComponentChildren;
  /** The published value; "holds" for a claim. */
  published: string;
  /** What we measured, as the page writes it (a claim's note). */
  ours: string;
  /** What "reproduced" means for a target; empty for a claim. */
  rule: string;
  /** The learning curve's cell, shown in tables with a curve column; null leaves it empty. */
  curve: { text: string; title: string } | null;
  verdict: string;
  /** The CSS class that colours the verdict ({@linkcode verdictClass}). */
  verdictClass: string;
  /** An analogue's verdict badge is hollow, as its point in the scorecard scatter. */
  analogue?: boolean;
}

/** A target's row: `ours` as the page writes it; `kind` "analogue" gives the verdict the analogues' colour. */
export function targetRow(
  target: Comparison & { verdict: string; curve?: TargetCurve | null },
  lead: ComponentChildren,
  ours: string,
  kind?: string,
): VerdictRow {
  const curve = target.curve;
  return {
    lead,
    published: formatValue(target.paper),
    ours,
    rule: comparisonText(target),
    curve: { text: curveCell(target), title: curve ? `learning curve of ${curve.metric}` : "no curve kept" },
    verdict: target.verdict,
    verdictClass: verdictClass(target.verdict, kind),
    analogue: kind === "analogue",
  };
}

/** A claim's row: it is published as holding; `note` says how the verdict was reached, where the page has one. */
export function claimRow(claim: { verdict: string }, lead: ComponentChildren, note = ""): VerdictRow {
  return {
    lead,
    published: "holds",
    ours: note,
    rule: "",
    curve: null,
    verdict: claim.verdict,
    verdictClass: verdictClass(claim.verdict),
  };
}

/**
 * A table `#id` of targets and claims: the `lead` headings (the rows' own
 * cells), then published, `ours` (its heading), "reproduced when", the
 * learning curve with `curves`, and the verdict.
 */
export function VerdictTable(
  { id, lead, ours, curves = false, rows }: {
    id: string;
    lead: readonly string[];
    ours: string;
    curves?: boolean;
    rows: readonly VerdictRow[];
  },
) {
  const headings = [...lead, "published", ours, "reproduced when", ...(curves ? ["curve"] : []), "verdict"];
  return (
    <table id={id}>
      <thead>
        <tr>{headings.map((h) => <th key={h}>{h}</th>)}</tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key} id={row.id} class={row.class}>
            {row.lead}
            <td>{row.published}</td>
            <td>{row.ours}</td>
            <td>{row.rule}</td>
            {curves && <td title={row.curve?.title}>{row.curve && <CurveText text={row.curve.text} />}</td>}
            <td class={row.verdictClass}>
              <VerdictBadge verdict={row.verdict} analogue={row.analogue ?? false} />
              {row.verdict}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The verdict's colour as a dot before its text, the same colour and shape as
 * the scorecard scatter's points: filled, hollow for an analogue.
 */
function VerdictBadge({ verdict, analogue }: { verdict: string; analogue: boolean }) {
  const colour = verdictColour(verdict);
  return (
    <span
      class="verdict-badge"
      aria-hidden="true"
      style={analogue ? { border: `2px solid ${colour}` } : { background: colour, border: `2px solid ${colour}` }}
    />
  );
}

/** A curve cell's sparkline, then its projection ("→ 0.41 at 2×") on a line of its own: the column stays narrow. */
function CurveText({ text }: { text: string }) {
  const [sparkline, ...projection] = text.split(" → ");
  return (
    <>
      <span class="curve-sparkline">{sparkline}</span>
      {projection.length > 0 && <span class="curve-projection">→ {projection.join(" → ")}</span>}
    </>
  );
}
