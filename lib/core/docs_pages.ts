/**
 * The generated pages of docs/ (and README.md's short scorecard) as Markdown,
 * from the experiments' definitions and the kept results: one page per
 * experiment, the full scorecard, the bibliography. Pure functions of their
 * arguments (no clock, no machine, no git), so that a test can render them
 * again and tell when docs/ is stale; lib/core/docs_files.ts formats, writes
 * and compares them.
 *
 * @module
 */
import { curveCell, summaryCurvesSvg } from "./curves.ts";
import { citedPapers, type Paper } from "./papers.ts";
import { type ReferenceResult, resultPath, RESULTS_FOLDER } from "./reference_results.ts";
import {
  curvesFileName,
  formatValue,
  groupLabel,
  oursText,
  scorecardMarkdown,
  type ScoredExperiment,
  type ScoredGroup,
  scoreResults,
  verdictCounts,
} from "./scorecard.ts";
import { comparisonText } from "./targets.ts";
import { PRESETS } from "./experiment.ts";
import { tableCell } from "./readme.ts";

/** What the pages read of an experiment (an `Experiment` of lib/core/experiment.ts fits). */
export interface DocExperiment extends ScoredExperiment {
  /** One-line summary of what the experiment reproduces. */
  description: string;
  /** Bibliography key and the document's section or table its method and targets come from. */
  source: string;
  /** Preset name → the config values it sets, listed on the experiment's page. */
  presets: Record<string, unknown>;
  /** The published finding in at most {@linkcode FINDING_WORDS} words (else the description stands in). */
  finding?: string;
}

/** Words of a finding in README's short table. */
export const FINDING_WORDS = 12;

/** Where the generated files go, relative to the project root. */
export const DOCS_PATHS = {
  experiments: "docs/experiments",
  curves: "docs/curves",
  scorecard: "docs/scorecard.md",
  papers: "docs/papers.md",
  readme: "README.md",
} as const;

/** README.md's section (between its markers) that holds the short scorecard. */
export const README_SECTION = "scorecard";

/** The generated files by path relative to the project root, and README.md's short scorecard section. */
export interface RenderedDocs {
  /** Path relative to the project root → Markdown or SVG text. */
  files: Map<string, string>;
  /** The Markdown between README.md's scorecard markers. */
  readmeSection: string;
}

/** A preset's place in PRESETS: the order pages list presets, and of "most complete" for README's row (last first). */
const presetRank = (preset: string) => {
  const i = (PRESETS as readonly string[]).indexOf(preset);
  return i < 0 ? PRESETS.length : i;
};

/** `text` ended by a full stop unless it ends with one already (or another closing mark). */
const sentence = (text: string) => /[.!?]$/.test(text) ? text : `${text}.`;

/** Text safe inside a Markdown table cell of these pages, where a "*" (ε*) may also start emphasis. */
const cell = (text: string) => tableCell(text).replaceAll("*", "\\*");

/** `text` with every citation key of `papers` linked to its entry of papers.md at `href` (e.g. "../papers.md"). */
export function linkCitations(text: string, href: string, papers: readonly Paper[]): string {
  const keys = citedPapers(text).filter((key) => papers.some((p) => p.key === key));
  if (keys.length === 0) return text;
  return text.replace(new RegExp(`\\b(${keys.join("|")})\\b`, "g"), (key) => `[${key}](${href}#${key.toLowerCase()})`);
}

/** "42 s", "9 min 29 s", "1 h 12 min": a wall time of seconds. */
export function wallTimeText(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** The command that makes a group's runs: its preset, its seed where one, its overrides. */
export function groupCommand(g: Pick<ScoredGroup, "experiment" | "preset" | "seeds" | "overrides">): string {
  const seed = g.seeds.length === 1 && g.seeds[0] !== 0 ? [`--seed ${g.seeds[0]}`] : [];
  return [`deno task run ${g.experiment} --preset ${g.preset}`, ...seed, ...g.overrides].join(" ");
}

/** The finding for README's table: the experiment's own, else its description. */
export const shortFinding = (e: Pick<DocExperiment, "description" | "finding">): string => e.finding ?? e.description;

/** The groups of one experiment, most complete preset first (paper, long, quick, smoke), then as scored. */
function experimentGroups(groups: readonly ScoredGroup[], name: string): ScoredGroup[] {
  return groups.filter((g) => g.experiment === name).sort((a, b) => presetRank(b.preset) - presetRank(a.preset));
}

/** "1 of 10", "1 of 18 (1 rising)", "": how many of `targets` reproduced. */
function reproducedOf(targets: ScoredGroup["targets"]): string {
  if (targets.length === 0) return "";
  const rising = targets.filter((t) => t.verdict === "still rising").length;
  const reproduced = targets.filter((t) => t.verdict === "reproduced").length;
  return `${reproduced} of ${targets.length}${rising > 0 ? ` (${rising} rising)` : ""}`;
}

/** "2 of 6 (2 unmeasured)": how many measured claims hold, and how many were not measured. */
function claimsHeld(claims: ScoredGroup["claims"]): string {
  if (claims.length === 0) return "";
  const n = verdictCounts(claims.map((c) => c.verdict));
  const measured = claims.length - n["not measured"];
  const unmeasured = n["not measured"] > 0 ? ` (${n["not measured"]} unmeasured)` : "";
  return measured > 0 ? `${n.reproduced} of ${measured}${unmeasured}` : `none measured${unmeasured}`;
}

/** README.md's short scorecard: one row per experiment, linked to its page. */
export function readmeScorecard(experiments: readonly DocExperiment[], groups: readonly ScoredGroup[]): string {
  const rows = experiments.map((e) => {
    const [best] = experimentGroups(groups, e.name);
    const link = `[${e.name}](${DOCS_PATHS.experiments}/${e.name}.md)`;
    const byKind = (kind: string) => best ? reproducedOf(best.targets.filter((t) => t.kind === kind)) : "";
    return `| ${link} | ${cell(shortFinding(e))} | ${best ? best.preset : "none"} | ${byKind("like-for-like")} | ${
      byKind("analogue")
    } | ${best ? claimsHeld(best.claims) : ""} |`;
  });
  return [
    `One row per experiment, each also a task (\`deno task <name>\`): the published finding, and its most complete ` +
    `kept run (paper, then long, then quick) with the targets reproduced by class and the claims that hold. A ` +
    `like-for-like target measures the document's own quantity; an analogue measures it on a stand-in (another ` +
    `dataset, model or scale) and is counted apart. Every target and claim: [${DOCS_PATHS.scorecard}](${DOCS_PATHS.scorecard}). ` +
    `Written by \`deno task docs\` from ${RESULTS_FOLDER}.`,
    "",
    "| experiment | finding | run | like-for-like | analogue | claims hold |",
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/**
 * One group's targets and claims as a table of the experiment's page; each
 * target's stand-in (an analogue's) or scale (a like-for-like's) is written
 * once under the table and referred to by its number in the class column.
 */
function groupTable(g: ScoredGroup, cite: (text: string) => string): string[] {
  const notes = [...new Set(g.targets.flatMap((t) => t.standIn === null ? [] : [t.standIn]))];
  const kind = (t: ScoredGroup["targets"][number]) =>
    t.standIn === null ? t.kind : `${t.kind} (${notes.indexOf(t.standIn) + 1})`;
  return [
    "| metric or finding | class | source | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|",
    ...g.targets.map((t) =>
      `| \`${tableCell(t.metric)}\` | ${kind(t)} | ${cite(cell(t.source))} | ${formatValue(t.paper)} | ${
        oursText(t)
      } | ${cell(comparisonText(t))} | ${curveCell(t)} | ${t.verdict} |`
    ),
    ...g.claims.map((c) =>
      `| ${cell(c.text)} | claim | ${cite(cell(c.source))} | holds | ${cell(c.note ?? "")} | | | ${c.verdict} |`
    ),
    ...(notes.length > 0
      ? ["", "What stands in for the document's data, model or scale:", "", ...notes.map((n, i) => `- (${i + 1}) ${n}`)]
      : []),
  ];
}

/** Where a group's numbers come from: the command, each seed's kept file (linked through `up` to the root) and its commit. */
function groupProvenance(g: ScoredGroup, results: readonly ReferenceResult[], up: string): string[] {
  const seeds = results.filter((r) =>
    r.experiment === g.experiment && r.preset === g.preset && r.overrides.join(" ") === g.overrides.join(" ")
  );
  const kept = seeds.map((r) => {
    const path = resultPath(RESULTS_FOLDER, r);
    const commit = r.commit ? `commit ${r.commit.slice(0, 7)}` : "commit not recorded";
    return `- seed ${r.seed}: [${path}](${up}${path}), run at ${commit}${
      r.backend ? ` on the ${r.backend} backend` : ""
    }; provenance: ${r.provenance}`;
  });
  return [
    `Numbers from \`${groupCommand(g)}\`${g.seeds.length > 1 ? ` over seeds ${g.seeds.join(", ")}` : ""}, kept in:`,
    "",
    ...kept,
    "",
    "Verdicts are judged again with today's targets and claims, as `deno task scorecard` does; seeds of one " +
    "configuration are judged together (their mean and 95% interval).",
  ];
}

/** The page of one experiment, at docs/experiments/<name>.md; `drawn` holds the curve files that exist. */
export function experimentPage(
  e: DocExperiment,
  groups: readonly ScoredGroup[],
  results: readonly ReferenceResult[],
  papers: readonly Paper[],
  drawn: ReadonlySet<string>,
): string {
  const mine = experimentGroups(groups, e.name).sort((a, b) =>
    presetRank(a.preset) - presetRank(b.preset) || a.overrides.join(" ").localeCompare(b.overrides.join(" "))
  );
  const cite = (text: string) => linkCitations(text, "../papers.md", papers);
  const presets = Object.keys(e.presets).sort((a, b) => presetRank(a) - presetRank(b) || a.localeCompare(b));
  const presetRows = [
    ...presets.map((p) => ({ preset: p, group: mine.find((g) => g.preset === p && g.overrides.length === 0) })),
    ...mine.filter((g) => g.overrides.length > 0).map((g) => ({ preset: g.preset, group: g })),
  ].map(({ preset, group }) => {
    const command = group ? groupCommand(group) : `deno task run ${e.name} --preset ${preset}`;
    const wall = group && group.wall_time_s !== null
      ? `${wallTimeText(group.wall_time_s)}${group.seeds.length > 1 ? " (mean over the seeds)" : ""}`
      : "not measured";
    const kept = group ? `${group.seeds.length === 1 ? "seed" : "seeds"} ${group.seeds.join(", ")}` : "none";
    return `| ${preset} | \`${command}\` | ${wall} | ${kept} |`;
  });
  const sections = mine.flatMap((g) => {
    const title = [g.preset, ...g.overrides].join(", ");
    const curve = curvesFileName(g);
    return [
      `## Results: ${title}`,
      "",
      ...groupProvenance(g, results, "../../"),
      "",
      ...(g.targets.length + g.claims.length > 0 ? groupTable(g, cite) : ["Nothing of this run is judged today."]),
      ...(drawn.has(curve)
        ? [
          "",
          `Learning curves of each target (blue; dot: the final value), published value dashed red:`,
          "",
          `![${cell(groupLabel(g))} learning curves](../curves/${curve})`,
        ]
        : []),
      "",
    ];
  });
  const unjudged = mine.length > 0 ? [] : [
    "## Targets and claims",
    "",
    "No kept result yet: run a preset, keep the run with `deno task scorecard --keep <run dir>`, then " +
    "`deno task docs`.",
    "",
    "| metric or finding | class | source | published | reproduced when |",
    "|---|---|---|---|---|",
    ...e.targets.map((t) =>
      `| \`${tableCell(t.metric)}\` | ${t.kind} | ${cite(cell(t.source))} | ${formatValue(t.paper)} | ${
        cell(comparisonText(t))
      } |`
    ),
    ...e.claims.map((c) => `| ${cell(c.text)} | claim | ${cite(cell(c.source))} | holds | |`),
    "",
  ];
  const limits = presets.flatMap((p) => e.presetLimits?.[p] ? [`- ${p}: ${e.presetLimits[p]}`] : []);
  return [
    `# ${e.name}`,
    "",
    ...(e.finding === undefined ? [] : [`**${sentence(e.finding)}**`, ""]),
    sentence(e.description),
    "",
    sentence(`Source: ${cite(e.source)}`),
    "",
    "## Presets",
    "",
    "| preset | command | wall time of the kept run | kept seeds |",
    "|---|---|---|---|",
    ...presetRows,
    "",
    ...sections,
    ...unjudged,
    "## What each preset cannot reproduce, and why",
    "",
    ...(limits.length > 0 ? limits : ["The experiment states no limit of its presets."]),
    "",
    `Written by \`deno task docs\` from the experiment's definition and ${RESULTS_FOLDER}/${e.name}/; ` +
    "edit those, not this page.",
  ].join("\n");
}

/** docs/scorecard.md: every kept group's targets and claims, and the drawings of their learning curves. */
export function scorecardPage(
  groups: readonly ScoredGroup[],
  papers: readonly Paper[],
  drawn: ReadonlySet<string>,
): string {
  const cite = (text: string) => linkCitations(text, "papers.md", papers);
  return [
    "# Reproduction scorecard",
    "",
    `Every target and claim of every kept result (${RESULTS_FOLDER}), judged with today's targets as ` +
    "`deno task scorecard` does; seeds of one configuration are judged together (their mean and 95% interval). " +
    "Each experiment's page in [experiments/](experiments/) says which command and which commit its numbers come " +
    "from. Written by `deno task docs`.",
    "",
    scorecardMarkdown(groups, { folder: "curves", drawn }, cite),
  ].join("\n");
}

/** docs/papers.md: the source documents, each reprinted paper under its thesis, and the experiments citing each. */
export function papersPage(papers: readonly Paper[], experiments: readonly DocExperiment[]): string {
  const citing = (key: string) =>
    experiments.filter((e) =>
      [e.source, ...e.targets.map((t) => t.source), ...e.claims.map((c) => c.source)].some((s) =>
        citedPapers(s).includes(key)
      )
    ).map((e) => `[${e.name}](experiments/${e.name}.md)`);
  const entry = (p: Paper, level: string) => {
    const cited = citing(p.key);
    return [
      `${level} ${p.key}`,
      "",
      `${p.authors}: _${p.title}_.`,
      "",
      `- Year: ${p.year}.`,
      `- Venue: ${p.venue}.`,
      `- Numbering: ${p.numbering}.`,
      ...(cited.length > 0 ? [`- Cited by: ${cited.join(", ")}.`] : []),
      "",
    ];
  };
  const documents = papers.filter((p) => p.reprintedIn === undefined);
  return [
    "# Papers",
    "",
    "The documents latentlab reproduces, each under the key that `source` fields, comments and these pages cite: " +
    'the key, then a location in the document\'s own numbering ("Schott2019 Table 1", "Schneider2023 Table 2.1"). ' +
    "Papers reprinted inside a thesis are listed under it and cited by their own key. Written by `deno task docs` " +
    "from lib/core/papers.ts.",
    "",
    ...documents.flatMap((d) => {
      const reprints = papers.filter((p) => p.reprintedIn === d.key);
      return [
        ...entry(d, "##"),
        ...(reprints.length > 0 ? [`Reprinted in ${d.key}:`, "", ...reprints.flatMap((p) => entry(p, "###"))] : []),
      ];
    }),
  ].join("\n").trimEnd();
}

/**
 * Every generated file (Markdown not yet formatted by deno fmt; the curve
 * drawings as SVG) by path relative to the project root, and README.md's
 * short scorecard section, from the experiments of today and the kept results.
 */
export function renderDocs(
  experiments: readonly DocExperiment[],
  results: readonly ReferenceResult[],
  papers: readonly Paper[],
): RenderedDocs {
  const groups = scoreResults(results, (name) => experiments.find((e) => e.name === name));
  const files = new Map<string, string>();
  const drawn = new Set<string>();
  for (const g of groups) {
    const svg = summaryCurvesSvg(g);
    if (svg === null) continue;
    files.set(`${DOCS_PATHS.curves}/${curvesFileName(g)}`, svg);
    drawn.add(curvesFileName(g));
  }
  for (const e of [...experiments].sort((a, b) => a.name.localeCompare(b.name))) {
    files.set(`${DOCS_PATHS.experiments}/${e.name}.md`, experimentPage(e, groups, results, papers, drawn) + "\n");
  }
  files.set(DOCS_PATHS.scorecard, scorecardPage(groups, papers, drawn) + "\n");
  files.set(DOCS_PATHS.papers, papersPage(papers, experiments) + "\n");
  return { files, readmeSection: readmeScorecard(experiments, groups) };
}
