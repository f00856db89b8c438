/**
 * The selected runs' final metrics as a table to paste into a paper or a
 * report: what the runs table shows (its reducer, its seed grouping).
 *
 * @module
 */
import { meanSd } from "../../lib/core/matrix.ts";
import type { Reducers, RunRow } from "../run_index.ts";
import { differingKeys, settingLabel } from "./config_keys.ts";
import { formatValue } from "./format.ts";
import { metricKeys, metricValue } from "./run_rows.ts";
import { runGroups } from "./seed_bands.ts";

/** Formats {@linkcode finalTable} can write. */
export type TableFormat = "markdown" | "latex";

/** What the table shows of each metric. */
export interface TableOptions {
  /** The reducer of the runs table: each metric's last, min or max value (default last). */
  reducer?: keyof Reducers;
  /**
   * Groups as rows, each mean ± sample s.d. (n − 1) over its runs: `[]`
   * groups runs that differ only in seed, config keys group runs sharing
   * their values (see {@linkcode runGroups}); null or absent, a row per run.
   */
  grouping?: string[] | null;
  /** The metric columns, in order (the runs table's); absent, every metric sorted by name. */
  columns?: string[];
}

type ExportRun = Pick<RunRow, "experiment" | "id" | "seed" | "config" | "metrics"> & Partial<Pick<RunRow, "final">>;

/** LaTeX's special characters, each as text. */
const LATEX: Record<string, string> = {
  "\\": "\\textbackslash{}",
  "{": "\\{",
  "}": "\\}",
  "$": "\\$",
  "&": "\\&",
  "#": "\\#",
  "^": "\\textasciicircum{}",
  "_": "\\_",
  "%": "\\%",
  "~": "\\textasciitilde{}",
};

/** `text` with every LaTeX special character escaped. */
export function latexEscape(text: string): string {
  return text.replace(/[\\{}$&#^_%~]/g, (c) => LATEX[c]);
}

/**
 * One row per run (or per group) and one column per metric, holding the
 * reducer's value (a final score as it is); a run that lacks a metric gets
 * an empty cell. Rows are named by the experiment and the config keys that
 * differ between the exported runs, then the seed (or the group's size).
 *
 * @example
 * ```ts
 * finalTable([{ experiment: "a", id: "1", seed: 0, config: {}, metrics: { loss: { last: 2, min: 1, max: 3 } } }], "markdown");
 * // "| run | loss |\n|---|---|\n| a seed 0 | 2 |"
 * ```
 */
export function finalTable(runs: ExportRun[], format: TableFormat, options: TableOptions = {}): string {
  const reducer = options.reducer ?? "last";
  const keys = options.columns ?? metricKeys(runs).sort();
  const differing = differingKeys(runs.map((r) => r.config));
  const setting = (r: ExportRun) => settingLabel(r.experiment, r.config, differing);
  const pm = format === "latex" ? " $\\pm$ " : " ± ";
  const grouping = options.grouping ?? null;
  const rows: string[][] = grouping
    ? runGroups(runs, grouping).map((g) => [
      g.label,
      ...keys.map((k) => {
        const values = g.runs.map((r) => metricValue(r, k, reducer)).filter((v): v is number => typeof v === "number");
        if (!values.length) return "";
        const { mean, sd } = meanSd(values);
        return values.length < 2 ? formatValue(mean) : `${formatValue(mean)}${pm}${formatValue(sd)}`;
      }),
    ])
    : runs.map((
      r,
    ) => [`${setting(r)} seed ${r.seed}`, ...keys.map((k) => formatValue(metricValue(r, k, reducer) ?? ""))]);
  const header = grouping ? "setting" : "run";
  if (format === "markdown") {
    return [
      `| ${header} | ${keys.join(" | ")} |`,
      `|---|${keys.map(() => "---|").join("")}`,
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ].join("\n");
  }
  const cell = (s: string) => s.split(pm).map(latexEscape).join(pm);
  return [
    `\\begin{tabular}{l${"r".repeat(keys.length)}}`,
    `${header} & ${keys.map(latexEscape).join(" & ")} \\\\ \\hline`,
  ]
    .concat(rows.map((r) => `${r.map(cell).join(" & ")} \\\\`), ["\\end{tabular}"]).join("\n");
}
