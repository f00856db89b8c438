/**
 * The reproduction scorecard: for every experiment and preset, the latest
 * completed run's targets and claims beside the published values, rendered
 * as Markdown (for the README and the terminal).
 *
 * @module
 */
import { comparisonText } from "./targets.ts";
import { listRuns, readSummary, type SummaryView } from "./run_store.ts";

/**
 * The latest completed run's summary per (experiment, preset), sorted by
 * experiment then preset. A run whose summary.json is missing or does not
 * parse is passed over for the one before it; a summary that parses but
 * lacks parts is shown with its `problem` (see {@linkcode readSummary}).
 */
export function latestSummaries(root: string): SummaryView[] {
  const seen = new Set<string>();
  const out: SummaryView[] = [];
  for (const run of listRuns(root)) {
    if (run.status !== "completed") continue;
    const key = `${run.info.experiment}/${run.info.preset}`;
    if (seen.has(key)) continue;
    const summary = readSummary(run.dir);
    if (!summary) continue;
    out.push(summary);
    seen.add(key);
  }
  return out.sort((a, b) => `${a.experiment}/${a.preset}`.localeCompare(`${b.experiment}/${b.preset}`));
}

const format = (value: number | null) => value === null ? "—" : Number(value.toFixed(3)).toString();

/** Markdown table rows of one summary: its targets, then its claims, then what is wrong with it, if anything. */
export function summaryRows(summary: SummaryView): string[] {
  const run = `${summary.experiment} (${summary.preset}, seed ${summary.seed})`;
  return [
    ...summary.targets.map((t) =>
      `| ${run} | ${t.source} | ${t.metric} | ${format(t.paper)} | ${format(t.ours)} | ${
        comparisonText(t)
      } | ${t.verdict} |`
    ),
    ...summary.claims.map((c) => `| ${run} | ${c.source} | ${c.text} | holds | | | ${c.verdict} |`),
    ...(summary.problem ? [`| ${run} | | ${summary.problem} | | | | not measured |`] : []),
  ];
}

/** The scorecard as a Markdown table. */
export function scorecardMarkdown(summaries: SummaryView[]): string {
  const header = [
    "| experiment | source | metric or finding | published | ours | reproduced when | verdict |",
    "|---|---|---|---|---|---|---|",
  ];
  if (summaries.length === 0) return [...header, "| (no completed runs yet) | | | | | | |"].join("\n");
  return [...header, ...summaries.flatMap(summaryRows)].join("\n");
}
