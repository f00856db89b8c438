/**
 * The reproduction scorecard: every experiment's targets and claims judged
 * again, with the targets of today, on kept results (see
 * lib/core/reference_results.ts) or on a run store's latest runs. Seeds of
 * one configuration are judged together (their mean and 95% interval);
 * like-for-like targets are counted apart from analogues.
 *
 * @module
 */
import { curveCell, lastThirdTrend, meanByStep, type TargetCurve } from "./curves.ts";
import type { ReferenceResult } from "./reference_results.ts";
import {
  type Claim,
  comparisonText,
  seedsVerdict,
  type Target,
  type TargetDirection,
  type Verdict,
  VERDICTS,
} from "./targets.ts";
import type { SummaryView } from "./run_layout.ts";
import { tableCell } from "./readme.ts";

/** What the scorecard reads of an experiment today (an `Experiment` of lib/core/experiment.ts fits). */
export interface ScoredExperiment {
  /** The experiment's registered name. */
  name: string;
  /** Its published targets, as registered today. */
  targets: readonly Target[];
  /** Its qualitative claims, as registered today. */
  claims: readonly Claim[];
  /** Preset name → what that preset cannot show, and why. */
  presetLimits?: Partial<Record<string, string>>;
}

/** One target of a scored configuration. */
export interface ScoredTarget {
  /** Key in the run's final metrics. */
  metric: string;
  /** Where it is published: document and table. */
  source: string;
  /** The published value. */
  paper: number;
  /** Allowed distance from `paper` for "reproduced". */
  tolerance: number;
  /** Match within tolerance, or at least as good in this direction. */
  direction: TargetDirection;
  /** Whether the run measures the document's quantity or a stand-in for it. */
  kind: "like-for-like" | "analogue";
  /** For an analogue, what stands in for what; null when not stated. */
  standIn: string | null;
  /** Where the tolerance comes from. */
  toleranceSource: string;
  /** The verdict over the group's seeds. */
  verdict: Verdict;
  /** Seeds that measured it. */
  n: number;
  /** The seeds' mean (the value, with one seed). */
  ours: number | null;
  /** The 95% interval of the mean with three or more seeds. */
  interval: [number, number] | null;
  /** The learning curve (averaged per step over the seeds), null when none was kept. */
  curve: TargetCurve | null;
}

/** One claim of a scored configuration. */
export interface ScoredClaim {
  /** The finding, in words. */
  text: string;
  /** Where it is published. */
  source: string;
  /** The verdict over the group's seeds. */
  verdict: Verdict;
  /** "holds in 2 of 3 seeds", or how the verdict was reached when not judged again. */
  note: string | null;
}

/** An experiment's preset (and config overrides) over its seeds, judged with the targets of today. */
export interface ScoredGroup {
  /** The experiment's registered name. */
  experiment: string;
  /** The preset the runs started from. */
  preset: string;
  /** Config keys the command line set beyond the preset; [] for the preset as defined. */
  overrides: string[];
  /** The seed of each of the group's runs. */
  seeds: number[];
  /** Short commits of the runs. */
  commits: string[];
  /** Whether a run is older than the experiment's code (its commit predates the last change of the code). */
  stale: boolean;
  /** Each run's provenance (its run id, or what it was recovered from), distinct. */
  provenance: string[];
  /** Mean seconds per run, null when a run's time is unknown. */
  wall_time_s: number | null;
  /** Each target with its verdict over the seeds. */
  targets: ScoredTarget[];
  /** Each claim with its verdict over the seeds. */
  claims: ScoredClaim[];
  /** What the preset cannot show, and why. */
  limits: string | null;
  /** Why this group cannot be judged (an experiment no longer registered). */
  problem: string | null;
}

/** A claim judged on each seed's metrics and config (kept verdicts where the config was not kept). */
function scoreClaim(claim: ScoredExperiment["claims"][number], seeds: ReferenceResult[]): ScoredClaim {
  const judged = seeds.map((r): boolean | undefined => {
    if (r.config === null) {
      const kept = r.claims.find((c) => c.text === claim.text)?.verdict;
      return kept === "reproduced" ? true : kept === "not reproduced" ? false : undefined;
    }
    try {
      return claim.holds(r.metrics, r.config);
    } catch {
      return undefined; // a claim written after the run reads metrics the run did not log
    }
  });
  const measured = judged.filter((j) => j !== undefined);
  const holding = measured.filter((j) => j).length;
  const verdict: Verdict = measured.length === 0
    ? "not measured"
    : holding === measured.length
    ? "reproduced"
    : "not reproduced";
  const recorded = seeds.some((r) => r.claims.some((c) => c.text === claim.text));
  const kept = seeds.every((r) => r.config === null)
    ? recorded ? "as judged by the run (config not kept)" : "new or reworded since the run (config not kept)"
    : null;
  const note = seeds.length > 1 && measured.length > 0 ? `holds in ${holding} of ${measured.length} seeds` : kept;
  return { text: claim.text, source: claim.source, verdict, note };
}

/**
 * Results grouped by (experiment, preset, overrides) and judged with the
 * experiments of today: targets that apply to the group's config (all whose
 * metric a seed measured, where the config was not kept), each over the
 * seeds; claims judged on each seed. `isStale` says whether a result's run
 * predates its experiment's code.
 */
export function scoreResults(
  results: readonly ReferenceResult[],
  lookup: (name: string) => ScoredExperiment | undefined,
  isStale: (result: ReferenceResult) => boolean = () => false,
): ScoredGroup[] {
  const groups = new Map<string, ReferenceResult[]>();
  for (const r of results) {
    const key = `${r.experiment}\u0000${r.preset}\u0000${r.overrides.join(" ")}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const scored = [...groups.values()].map((seeds): ScoredGroup => {
    const [first] = seeds;
    const experiment = lookup(first.experiment);
    const base = {
      experiment: first.experiment,
      preset: first.preset,
      overrides: first.overrides,
      seeds: seeds.map((r) => r.seed),
      commits: [...new Set(seeds.flatMap((r) => r.commit ? [r.commit.slice(0, 7)] : []))],
      stale: seeds.some(isStale),
      provenance: [...new Set(seeds.map((r) => r.provenance))],
      wall_time_s: seeds.every((r) => r.wall_time_s !== null)
        ? seeds.reduce((a, r) => a + r.wall_time_s!, 0) / seeds.length
        : null,
    };
    if (!experiment) {
      return { ...base, targets: [], claims: [], limits: null, problem: `no experiment ${first.experiment} today` };
    }
    const applies = (t: ScoredExperiment["targets"][number]) =>
      seeds.some((r) => r.config === null ? t.metric in r.metrics : t.appliesTo?.(r.config) ?? true);
    const targets = experiment.targets.filter(applies).map((t): ScoredTarget => {
      const curves = seeds.flatMap((r) => r.curves[t.metric] ? [r.curves[t.metric]] : []);
      const points = meanByStep(curves);
      const curve = points.length ? { metric: t.metric, points, trend: lastThirdTrend(points) } : null;
      const judged = seedsVerdict(t, seeds.map((r) => r.metrics[t.metric]), curve);
      return {
        metric: t.metric,
        source: t.source,
        paper: t.paper,
        tolerance: t.tolerance,
        direction: t.direction,
        kind: t.kind,
        standIn: t.standIn ?? null,
        toleranceSource: t.toleranceSource,
        verdict: judged.verdict,
        n: judged.n,
        ours: judged.mean,
        interval: judged.interval,
        curve,
      };
    });
    return {
      ...base,
      targets,
      claims: experiment.claims.map((c) => scoreClaim(c, seeds)),
      limits: experiment.presetLimits?.[first.preset] ?? null,
      problem: null,
    };
  });
  const key = (g: ScoredGroup) => `${g.experiment}/${g.preset}/${g.overrides.join(" ")}`;
  return scored.sort((a, b) => key(a).localeCompare(key(b)));
}

/** Verdict counts of targets of one class, or of claims. */
export function verdictCounts(verdicts: readonly Verdict[]): Record<Verdict, number> {
  return Object.fromEntries(VERDICTS.map((v) => [v, verdicts.filter((x) => x === v).length])) as Record<
    Verdict,
    number
  >;
}

/**
 * The headline: like-for-like targets' verdicts, then how many analogues
 * agree with their published number, then the claims.
 */
export function scorecardHeadline(groups: readonly ScoredGroup[]): string {
  const targets = groups.flatMap((g) => g.targets);
  const like = verdictCounts(targets.filter((t) => t.kind === "like-for-like").map((t) => t.verdict));
  const analogues = targets.filter((t) => t.kind === "analogue");
  const claims = verdictCounts(groups.flatMap((g) => g.claims.map((c) => c.verdict)));
  return [
    `Like-for-like targets: ${VERDICTS.map((v) => `${like[v]} ${v}`).join(" · ")}.`,
    `Analogues agreeing: ${analogues.filter((t) => t.verdict === "reproduced").length} of ${analogues.length}` +
    ` (stand-ins for the document's data, model or scale; counted apart).`,
    `Claims: ${claims.reproduced} hold · ${claims["not reproduced"]} do not · ${claims["not measured"]} not measured.`,
  ].join(" ");
}

/** A number as the scorecard prints it: at most 3 decimals, "—" when absent. */
export const formatValue = (value: number | null): string => value === null ? "—" : Number(value.toFixed(3)).toString();

/** "0.61", or "0.61 [0.55, 0.67], 3 seeds" with an interval. */
export function oursText(t: Pick<ScoredTarget, "ours" | "interval" | "n">): string {
  if (t.interval) {
    return `${formatValue(t.ours)} [${formatValue(t.interval[0])}, ${formatValue(t.interval[1])}], ${t.n} seeds`;
  }
  return t.n > 1 ? `${formatValue(t.ours)}, ${t.n} seeds` : formatValue(t.ours);
}

/** "abs-mnist (quick, seed 0, ca94db3)" or "(quick, seeds 0–2, --steps 10, …; older than the code)". */
export function groupLabel(g: ScoredGroup): string {
  const seeds = g.seeds.length === 1 ? `seed ${g.seeds[0]}` : `seeds ${g.seeds.join(", ")}`;
  const parts = [g.preset, seeds, ...g.overrides, ...g.commits];
  return `${g.experiment} (${parts.join(", ")}${g.stale ? "; older than the code" : ""})`;
}

/**
 * Markdown rows of one group: its targets, then its claims, then its problem;
 * `cite` rewrites a source cell (to link its citation keys).
 */
export function groupRows(g: ScoredGroup, cite: (source: string) => string = (s) => s): string[] {
  const cell = tableCell;
  const at = cell(groupLabel(g));
  return [
    ...g.targets.map((t) =>
      `| ${at} | ${t.kind} | ${cite(cell(t.source))} | ${cell(t.metric)} | ${formatValue(t.paper)} | ${oursText(t)} | ${
        cell(comparisonText(t))
      } | ${curveCell(t)} | ${t.verdict} |`
    ),
    ...g.claims.map((c) =>
      `| ${at} | claim | ${cite(cell(c.source))} | ${cell(c.text)} | holds | ${cell(c.note ?? "")} | | | ${c.verdict} |`
    ),
    ...(g.problem ? [`| ${at} | | | ${cell(g.problem)} | | | | | not measured |`] : []),
  ];
}

/** File name of a group's curve drawing under the curves folder. */
export const curvesFileName = (g: Pick<ScoredGroup, "experiment" | "preset">): string =>
  `${g.experiment}-${g.preset}.svg`;

/**
 * The scorecard as Markdown: the headline, the table, what each preset
 * cannot show, and, with `curves`, an image of each group's target curves
 * from the folder `curves.folder` (relative to the Markdown file); `cite`
 * rewrites each source cell (see {@linkcode groupRows}).
 */
export function scorecardMarkdown(
  groups: readonly ScoredGroup[],
  curves?: { folder: string; drawn: ReadonlySet<string> },
  cite?: (source: string) => string,
): string {
  const header = [
    "| experiment | class | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  if (groups.length === 0) return [...header, "| (no results yet) | | | | | | | | |"].join("\n");
  const limits = groups.flatMap((g) => g.limits ? [`- ${g.experiment} (${g.preset}): ${g.limits}`] : []);
  const images = curves
    ? groups.filter((g) => curves.drawn.has(curvesFileName(g))).map((g) =>
      `![${g.experiment} (${g.preset}) learning curves](${curves.folder}/${curvesFileName(g)})`
    )
    : [];
  return [
    scorecardHeadline(groups),
    "",
    ...header,
    ...groups.flatMap((g) => groupRows(g, cite)),
    ...(limits.length > 0 ? ["", "What each preset cannot show, and why:", "", ...limits] : []),
    ...(images.length > 0
      ? ["", "Learning curves of each target (blue; dot: the final value), published value dashed red:", "", ...images]
      : []),
  ].join("\n");
}

/**
 * One run's own verdicts as it printed them when it ended (the targets of
 * the run's time): each target beside its published number, then the claims.
 */
export function summaryMarkdown(summary: SummaryView): string {
  const cell = tableCell;
  const commit = summary.git_commit ? `, ${summary.git_commit.slice(0, 7)}` : "";
  const overrides = summary.overrides?.length ? `, ${summary.overrides.join(" ")}` : "";
  const at = cell(`${summary.experiment} (${summary.preset}, seed ${summary.seed}${overrides}${commit})`);
  return [
    "| experiment | class | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|---|",
    ...summary.targets.map((t) =>
      `| ${at} | ${t.kind ?? ""} | ${cell(t.source)} | ${cell(t.metric)} | ${formatValue(t.paper)} | ${
        formatValue(t.ours)
      } | ${cell(comparisonText(t))} | ${curveCell(t)} | ${t.verdict} |`
    ),
    ...summary.claims.map((c) =>
      `| ${at} | claim | ${cell(c.source)} | ${cell(c.text)} | holds | | | | ${c.verdict} |`
    ),
    ...(summary.problem ? [`| ${at} | | | ${cell(summary.problem)} | | | | | not measured |`] : []),
  ].join("\n");
}

/** A run's own result tables (`details.results`): a title and rows of equal keys, printed after its verdicts. */
export interface ResultTable {
  /** Printed as a heading above the table. */
  title: string;
  /** The table's rows: column name → cell (null prints "—"). */
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
    typeof v === "number" ? formatValue(v) : v === null || v === undefined ? "—" : tableCell(String(v));
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
