/**
 * Reference results: the runs behind the scorecard, kept as data. Each is one
 * completed run's final metrics, config, claims' verdicts and compacted target
 * curves, with the commit, machine and wall time it was made at, in
 * `data/results/<experiment>/<preset>/seed-<seed>[-<overrides>].json`. The
 * scorecard, README and dashboard recompute verdicts from these with the
 * targets of today, so a changed target changes its verdict without a rerun.
 *
 * @module
 */
import { join } from "node:path";
import type { CurvePoints } from "./curves.ts";
import { type Verdict, VERDICTS } from "./targets.ts";
import type { SummaryView } from "./run_layout.ts";
import { isObject, readSmallFile, writeJsonAtomic } from "./run_files.ts";
import { configOverrides, listRuns, readConfig, readSummary } from "./run_reader.ts";

/** One kept run. */
export interface ReferenceResult {
  /** The experiment's registered name. */
  experiment: string;
  /** The preset the run started from. */
  preset: string;
  /** The run's seed. */
  seed: number;
  /** Config keys the command line set beyond the preset (`--steps 100`); [] for the preset as defined. */
  overrides: string[];
  /** The fully resolved config (claims are judged on it), null when it was not kept. */
  config: Record<string, unknown> | null;
  /** Git commit of the run, null when unknown. */
  commit: string | null;
  /** Host and backend the run was made on. */
  machine: string | null;
  /** The TF.js backend the run used ("webgpu", "wasm", "cpu"), null when unknown. */
  backend: string | null;
  /** Seconds the run took, null when unknown. */
  wall_time_s: number | null;
  /** When the run was made (ISO 8601), null when unknown. */
  created: string | null;
  /** The run's final metrics (every key, or only the targets' where that is all that was kept). */
  metrics: Record<string, number>;
  /** Learning curves of target metrics, compacted to at most {@linkcode CURVE_POINTS} points each. */
  curves: Record<string, CurvePoints>;
  /** The claims' verdicts as the run judged them; used when the config was not kept to judge again. */
  claims: { text: string; verdict: Verdict }[];
  /** Where this record comes from: the run's id, or what it was recovered from. */
  provenance: string;
}

/** Points kept of a curve. */
export const CURVE_POINTS = 48;

/** The default results folder: `data/results` of the project. */
export const RESULTS_FOLDER = "data/results";

/**
 * At most `max` points of a curve, evenly spaced by index, always keeping the
 * first and the last (the last point is the trend's end, which verdicts read).
 */
export function compactCurve(points: CurvePoints, max = CURVE_POINTS): CurvePoints {
  if (points.length <= max) return points.map(([s, v]) => [s, v]);
  return Array.from({ length: max }, (_, i) => points[Math.round((i * (points.length - 1)) / (max - 1))]);
}

/** The record of a completed run's summary (its config as run, from config.json). */
export function resultOfSummary(
  summary: SummaryView,
  config: Record<string, unknown> | null,
  machine: string | null,
  created: string | null,
): ReferenceResult {
  const curves: Record<string, CurvePoints> = {};
  for (const t of summary.targets) if (t.curve?.points.length) curves[t.metric] = compactCurve(t.curve.points);
  return {
    experiment: summary.experiment,
    preset: summary.preset,
    seed: summary.seed,
    overrides: summary.overrides ?? [],
    config,
    commit: summary.git_commit ?? null,
    machine,
    backend: summary.backend || null,
    wall_time_s: Number.isFinite(summary.wall_time_s) ? summary.wall_time_s : null,
    created,
    metrics: summary.metrics,
    curves,
    claims: summary.claims.map((c) => ({ text: c.text, verdict: c.verdict })),
    provenance: `run ${summary.run_id}`,
  };
}

/** The file of a result under `folder`: overrides make a name of their own so that they never replace the preset's. */
export function resultPath(
  folder: string,
  r: Pick<ReferenceResult, "experiment" | "preset" | "seed" | "overrides">,
): string {
  const suffix = r.overrides.length
    ? `-${r.overrides.join("_").replace(/[^A-Za-z0-9.=_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 80)}`
    : "";
  return join(folder, r.experiment, r.preset, `seed-${r.seed}${suffix}.json`);
}

/** Writes a result under `folder` (atomically); returns its path. */
export function writeResult(folder: string, result: ReferenceResult): string {
  const path = resultPath(folder, result);
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  writeJsonAtomic(path, result);
  return path;
}

const isNumberRecord = (v: unknown): v is Record<string, number> =>
  isObject(v) && Object.values(v).every((x) => typeof x === "number");

/** Whether a parsed file is a result this version can read; the reason when not. */
function resultProblem(v: unknown): string | null {
  if (!isObject(v)) return "not a JSON object";
  for (const key of ["experiment", "preset", "provenance"]) if (typeof v[key] !== "string") return `no ${key}`;
  if (!Number.isInteger(v.seed)) return "no integer seed";
  if (!Array.isArray(v.overrides) || !v.overrides.every((o) => typeof o === "string")) return "overrides malformed";
  if (!isNumberRecord(v.metrics)) return "metrics malformed";
  if (!isObject(v.curves)) return "curves malformed";
  if (!Array.isArray(v.claims) || !v.claims.every((c) => isObject(c) && VERDICTS.includes(c.verdict as Verdict))) {
    return "claims malformed";
  }
  return null;
}

/**
 * Every result under `folder` (none when it does not exist), sorted by
 * experiment, preset, overrides and seed; files that do not parse or lack
 * parts are returned in `skipped` with the reason, never silently dropped.
 */
export function readResults(folder: string): { results: ReferenceResult[]; skipped: string[] } {
  const results: ReferenceResult[] = [], skipped: string[] = [];
  const walk = (dir: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) walk(path);
      else if (entry.isFile && entry.name.endsWith(".json")) {
        try {
          const parsed = JSON.parse(readSmallFile(path));
          const problem = resultProblem(parsed);
          if (problem) skipped.push(`${path}: ${problem}`);
          else results.push({ config: null, commit: null, machine: null, backend: null, ...parsed });
        } catch (error) {
          skipped.push(`${path}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  };
  walk(folder);
  const key = (r: ReferenceResult) => `${r.experiment}\u0000${r.preset}\u0000${r.overrides.join(" ")}`;
  results.sort((a, b) => key(a).localeCompare(key(b)) || a.seed - b.seed);
  return { results, skipped };
}

/**
 * The latest completed run per (experiment, preset, overrides, seed) of a run
 * store as results, newest first per key. A run whose summary.json is missing
 * or does not parse is passed over for the one before it.
 */
export function runStoreResults(root: string): ReferenceResult[] {
  const chosen = new Map<string, ReferenceResult>();
  for (const run of listRuns(root)) {
    if (run.status !== "completed") continue;
    const key = [run.info.experiment, run.info.preset, configOverrides(run.info.argv).join(" "), run.info.seed].join(
      "\u0000",
    );
    if (chosen.has(key)) continue;
    const summary = readSummary(run.dir);
    if (!summary || summary.problem) continue;
    chosen.set(key, resultOfSummary(summary, readConfig(run.dir), run.info.host ?? null, run.info.created ?? null));
  }
  return [...chosen.values()];
}

/**
 * The kept results of `keptFolder` with a run store's latest runs in place of
 * those of the same experiment, preset, overrides and seed (`runsRoot` null:
 * the kept results alone; `keptFolder` null: the store alone), and the kept
 * files that could not be read.
 */
export function mergedResults(
  keptFolder: string | null,
  runsRoot: string | null,
): { results: ReferenceResult[]; skipped: string[] } {
  const kept = keptFolder === null ? { results: [], skipped: [] } : readResults(keptFolder);
  const local = runsRoot === null ? [] : runStoreResults(runsRoot);
  const seedKey = (r: ReferenceResult) => [r.experiment, r.preset, r.overrides.join(" "), r.seed].join("\u0000");
  const replaced = new Set(local.map(seedKey));
  return { results: [...kept.results.filter((r) => !replaced.has(seedKey(r))), ...local], skipped: kept.skipped };
}
