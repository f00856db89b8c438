/**
 * The selected runs' final metrics as a table to paste into a paper or a
 * report.
 *
 * @module
 */
import type { RunRow } from "../run_index.ts";
import { formatValue, runKey } from "./format.ts";

/** Formats {@linkcode finalTable} can write. */
export type TableFormat = "markdown" | "latex";

/**
 * One row per run and one column per metric (sorted by name), holding each
 * metric's last value; a run that lacks a metric gets an empty cell. LaTeX
 * escapes underscores, the one special character run keys and metric names
 * are likely to hold.
 *
 * @example
 * ```ts
 * finalTable([{ experiment: "a", id: "1", metrics: { loss: { last: 2, min: 1, max: 3 } } }], "markdown");
 * // "| run | loss |\n|---|---|\n| a/1 | 2 |"
 * ```
 */
export function finalTable(runs: Pick<RunRow, "experiment" | "id" | "metrics">[], format: TableFormat): string {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))].sort();
  const rows = runs.map((r) => [runKey(r), ...keys.map((k) => formatValue(r.metrics[k]?.last ?? ""))]);
  if (format === "markdown") {
    return [
      `| run | ${keys.join(" | ")} |`,
      `|---|${keys.map(() => "---|").join("")}`,
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n");
  }
  const escape = (s: string) => s.replaceAll("_", "\\_");
  return [`\\begin{tabular}{l${"r".repeat(keys.length)}}`, `run & ${keys.map(escape).join(" & ")} \\\\ \\hline`]
    .concat(rows.map((r) => `${r.map(escape).join(" & ")} \\\\`), ["\\end{tabular}"]).join("\n");
}
