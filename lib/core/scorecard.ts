/**
 * The reproduction scorecard: for every experiment and preset, the latest
 * completed run's targets and claims beside the published values, rendered
 * as Markdown (for the README and the terminal).
 *
 * @module
 */
import { join } from "node:path";
import { listRuns } from "./run_store.ts";

interface SummaryTarget {
  metric: string;
  paper: number;
  source: string;
  ours: number | null;
  verdict: string;
}

interface SummaryClaim {
  text: string;
  source: string;
  verdict: string;
}

/** The parts of summary.json the scorecard reads. */
export interface RunSummary {
  experiment: string;
  run_id: string;
  preset: string;
  seed: number;
  wall_time_s: number;
  targets: SummaryTarget[];
  claims: SummaryClaim[];
}

/** The latest completed run's summary per (experiment, preset), sorted by experiment then preset. */
export function latestSummaries(root: string): RunSummary[] {
  const seen = new Set<string>();
  const out: RunSummary[] = [];
  for (const run of listRuns(root)) {
    if (run.status !== "completed") continue;
    const key = `${run.info.experiment}/${run.info.preset}`;
    if (seen.has(key)) continue;
    try {
      out.push(JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json"))));
      seen.add(key);
    } catch {
      continue;
    }
  }
  return out.sort((a, b) => `${a.experiment}/${a.preset}`.localeCompare(`${b.experiment}/${b.preset}`));
}

const format = (value: number | null) => value === null ? "—" : Number(value.toFixed(3)).toString();

/** Markdown table rows of one summary: its targets, then its claims. */
export function summaryRows(summary: RunSummary): string[] {
  const run = `${summary.experiment} (${summary.preset}, seed ${summary.seed})`;
  return [
    ...summary.targets.map((t) =>
      `| ${run} | ${t.source} | ${t.metric} | ${format(t.paper)} | ${format(t.ours)} | ${t.verdict} |`
    ),
    ...summary.claims.map((c) => `| ${run} | ${c.source} | ${c.text} | holds | | ${c.verdict} |`),
  ];
}

/** The scorecard as a Markdown table. */
export function scorecardMarkdown(summaries: RunSummary[]): string {
  const header = [
    "| experiment | source | metric or finding | published | ours | verdict |",
    "|---|---|---|---|---|---|",
  ];
  if (summaries.length === 0) return [...header, "| (no completed runs yet) | | | | | |"].join("\n");
  return [...header, ...summaries.flatMap(summaryRows)].join("\n");
}

const BEGIN = "<!-- scorecard:begin -->";
const END = "<!-- scorecard:end -->";

/** Replaces the text between the scorecard markers of a README. */
export function replaceScorecard(readme: string, table: string): string {
  const start = readme.indexOf(BEGIN), end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README lacks the ${BEGIN} … ${END} markers`);
  return `${readme.slice(0, start + BEGIN.length)}\n${table}\n${readme.slice(end)}`;
}
