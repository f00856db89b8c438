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
  // A "|" inside a cell (|cos|, a list of choices) would end the cell: Markdown needs it escaped.
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const at = cell(run);
  return [
    ...summary.targets.map((t) =>
      `| ${at} | ${cell(t.source)} | ${cell(t.metric)} | ${format(t.paper)} | ${format(t.ours)} | ${
        cell(comparisonText(t))
      } | ${curveCell(t)} | ${t.verdict} |`
    ),
    ...summary.claims.map((c) => `| ${at} | ${cell(c.source)} | ${cell(c.text)} | holds | | | | ${c.verdict} |`),
    ...(summary.problem ? [`| ${at} | | ${cell(summary.problem)} | | | | | not measured |`] : []),
  ];
}

/** File name of a summary's curve drawing under the curves folder. */
export const curvesFileName = (summary: SummaryView) => `${summary.experiment}-${summary.preset}.svg`;

/**
 * What an earlier `scorecard --write` put in a README for one (experiment,
 * preset): its table rows, its "cannot show" line and its curve image, as
 * written (a run store on another machine made them).
 */
export interface WrittenEntry {
  rows: string[];
  limits: string[];
  images: string[];
}

/** The key "experiment/preset" of a written line, or null for lines of no run. */
function writtenKey(line: string): string | null {
  const match = line.match(/^\| (\S+) \((\w+), seed /) ?? line.match(/^- (\S+) \((\w+)\): /) ??
    line.match(/^!\[(\S+) \((\w+)\) learning curves\]/);
  return match ? `${match[1]}/${match[2]}` : null;
}

/** The entries of a written scorecard section, keyed "experiment/preset". */
export function writtenScorecard(section: string): Map<string, WrittenEntry> {
  const entries = new Map<string, WrittenEntry>();
  for (const line of section.split("\n")) {
    const key = writtenKey(line);
    if (!key) continue;
    const entry = entries.get(key) ?? entries.set(key, { rows: [], limits: [], images: [] }).get(key)!;
    (line.startsWith("|") ? entry.rows : line.startsWith("-") ? entry.limits : entry.images).push(line);
  }
  return entries;
}

/** The verdict (last cell) of a written table row; escaped pipes belong to their cell. */
const writtenVerdict = (row: string) => row.split(/(?<!\\)\|/).at(-2)!.trim();

/**
 * The scorecard as Markdown: the verdict tally, the table, what each preset
 * cannot show, and, with `curves`, an image of each run's target curves
 * (published value dashed) from the folder `curves.folder` (relative to the
 * Markdown file). A preset's limits are its experiment's text of now when
 * `currentLimits` gives one (written after its measured run, it says what
 * that run showed), else the text the run recorded. Entries of `written`
 * (an earlier section) whose experiment and preset have no summary here are
 * kept as they were, so that a run store holding only some runs updates
 * those and leaves the others' rows, which earlier runs measured.
 */
export function scorecardMarkdown(
  summaries: SummaryView[],
  curves?: { folder: string },
  currentLimits?: (experiment: string, preset: string) => string | undefined,
  written: Map<string, WrittenEntry> = new Map(),
): string {
  const header = [
    "| experiment | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|",
  ];
  const fresh = new Map(summaries.map((s) => [`${s.experiment}/${s.preset}`, s]));
  const kept = [...written].filter(([key]) => !fresh.has(key));
  if (summaries.length === 0 && kept.length === 0) {
    return [...header, "| (no completed runs yet) | | | | | | | |"].join("\n");
  }
  const entries = [
    ...[...fresh].map(([key, summary]) => {
      const text = currentLimits?.(summary.experiment, summary.preset) || summary.preset_limits;
      return {
        key,
        rows: summaryRows(summary),
        limits: typeof text === "string" && text ? [`- ${summary.experiment} (${summary.preset}): ${text}`] : [],
        images: curves && hasCurves(summary)
          ? [
            `![${summary.experiment} (${summary.preset}) learning curves](${curves.folder}/${curvesFileName(summary)})`,
          ]
          : [],
      };
    }),
    ...kept.map(([key, entry]) => ({ key, ...entry, images: curves ? entry.images : [] })),
  ]
    .sort((a, b) => a.key.localeCompare(b.key));
  const verdicts = entries.flatMap((e) => e.rows.map(writtenVerdict));
  const tally = VERDICTS.map((v) => `${verdicts.filter((x) => x === v).length} ${v}`).join(" · ");
  const limits = entries.flatMap((e) => e.limits);
  const images = entries.flatMap((e) => e.images);
  return [
    `Verdicts: ${tally}.`,
    "",
    ...header,
    ...entries.flatMap((e) => e.rows),
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
