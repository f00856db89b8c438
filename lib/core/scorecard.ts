/**
 * The reproduction scorecard: for every experiment and preset, the latest
 * completed run's targets and claims beside the published values, rendered
 * as Markdown (for the README and the terminal).
 *
 * @module
 */
import { comparisonText } from "./targets.ts";
import { curveCell, hasCurves } from "./curves.ts";
import { configOverrides, listRuns, readSummary, type SummaryView, VERDICTS } from "./run_store.ts";

/**
 * The latest completed run's summary per (experiment, preset), sorted by
 * experiment then preset; a run whose command line set config keys beyond
 * its preset is shown only when no run of the preset as defined exists. A
 * run whose summary.json is missing or does not parse is passed over for
 * the one before it; a summary that parses but lacks parts is shown with
 * its `problem` (see {@linkcode readSummary}).
 */
export function latestSummaries(root: string): SummaryView[] {
  const chosen = new Map<string, SummaryView>();
  for (const run of listRuns(root)) {
    if (run.status !== "completed") continue;
    const key = `${run.info.experiment}/${run.info.preset}`;
    const held = chosen.get(key);
    // Newest first: keep the first seen, unless it had overrides and this one has none.
    if (held && !(held.overrides?.length && configOverrides(run.info.argv).length === 0)) continue;
    const summary = readSummary(run.dir);
    if (summary) chosen.set(key, summary);
  }
  return [...chosen.values()].sort((a, b) =>
    `${a.experiment}/${a.preset}`.localeCompare(`${b.experiment}/${b.preset}`)
  );
}

const format = (value: number | null) => value === null ? "—" : Number(value.toFixed(3)).toString();

/** Markdown table rows of one summary: its targets, then its claims, then what is wrong with it, if anything. */
export function summaryRows(summary: SummaryView): string[] {
  const commit = summary.git_commit ? `, ${summary.git_commit.slice(0, 7)}` : "";
  const overrides = summary.overrides?.length ? `, ${summary.overrides.join(" ")}` : "";
  const run = `${summary.experiment} (${summary.preset}, seed ${summary.seed}${overrides}${commit})`;
  return [
    ...summary.targets.map((t) =>
      `| ${run} | ${t.source} | ${t.metric} | ${format(t.paper)} | ${format(t.ours)} | ${comparisonText(t)} | ${
        curveCell(t)
      } | ${t.verdict} |`
    ),
    ...summary.claims.map((c) => `| ${run} | ${c.source} | ${c.text} | holds | | | | ${c.verdict} |`),
    ...(summary.problem ? [`| ${run} | | ${summary.problem} | | | | | not measured |`] : []),
  ];
}

/** How many targets and claims have each verdict, e.g. "5 reproduced · 2 still rising · 3 not reproduced". */
export function verdictTally(summaries: SummaryView[]): string {
  const verdicts = summaries.flatMap((s) => [
    ...s.targets.map((t) => t.verdict),
    ...s.claims.map((c) => c.verdict),
    ...(s.problem ? ["not measured"] : []),
  ]);
  return VERDICTS.map((v) => `${verdicts.filter((x) => x === v).length} ${v}`).join(" · ");
}

/** File name of a summary's curve drawing under the curves folder. */
export const curvesFileName = (summary: SummaryView) => `${summary.experiment}-${summary.preset}.svg`;

/**
 * The scorecard as Markdown: the verdict tally, the table, what each preset
 * cannot show, and, with `curves`, an image of each run's target curves
 * (published value dashed) from the folder `curves.folder` (relative to the
 * Markdown file). A preset's limits are its experiment's text of now when
 * `currentLimits` gives one (written after its measured run, it says what
 * that run showed), else the text the run recorded.
 */
export function scorecardMarkdown(
  summaries: SummaryView[],
  curves?: { folder: string },
  currentLimits?: (experiment: string, preset: string) => string | undefined,
): string {
  const header = [
    "| experiment | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|",
  ];
  if (summaries.length === 0) return [...header, "| (no completed runs yet) | | | | | | | |"].join("\n");
  const images = curves
    ? summaries.filter(hasCurves).map((s) =>
      `![${s.experiment} (${s.preset}) learning curves](${curves.folder}/${curvesFileName(s)})`
    )
    : [];
  const limits = summaries.flatMap((s) => {
    const text = currentLimits?.(s.experiment, s.preset) || s.preset_limits;
    return typeof text === "string" && text ? [`- ${s.experiment} (${s.preset}): ${text}`] : [];
  });
  return [
    `Verdicts: ${verdictTally(summaries)}.`,
    "",
    ...header,
    ...summaries.flatMap(summaryRows),
    ...(limits.length > 0 ? ["", "What each preset cannot show, and why:", "", ...limits] : []),
    ...(images.length > 0
      ? ["", "Learning curves of each target (blue; dot: the final value), published value dashed red:", "", ...images]
      : []),
  ].join("\n");
}

/** A run's own result tables (`details.results`): a title and rows of equal keys, printed after its verdicts. */
export interface ResultTable {
  title: string;
  rows: Record<string, string | number | null>[];
}

/**
 * The result tables a run's `details.results` holds, as Markdown (numbers to
 * 3 decimals, absent cells "—"); "" when it holds none.
 */
export function resultTablesMarkdown(details: unknown): string {
  const tables = (details as { results?: unknown } | null)?.results;
  if (!Array.isArray(tables)) return "";
  const cell = (v: unknown) =>
    typeof v === "number" ? format(v) : v === null || v === undefined ? "—" : String(v).replaceAll("|", "\\|");
  return tables.flatMap((table: ResultTable) => {
    if (!table.rows?.length) return [];
    const keys = [...new Set(table.rows.flatMap((row) => Object.keys(row)))];
    return [
      `${table.title}:`,
      "",
      `| ${keys.join(" | ")} |`,
      `|${keys.map(() => "---").join("|")}|`,
      ...table.rows.map((row) => `| ${keys.map((k) => cell(row[k])).join(" | ")} |`),
      "",
    ];
  }).join("\n");
}
