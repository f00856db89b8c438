/**
 * The dashboard's view of the run store: validated paths, and per-run
 * metrics kept up to date by the run store's incremental
 * {@linkcode MetricsReader} (each request reads only the bytes appended
 * since the last one, a chunk at a time). A run whose metrics cannot be read
 * is listed with the reason as its `problem`; the others are not held up.
 *
 * @module
 */
import { basename, dirname, join, resolve, sep } from "node:path";
import { isRunId, type MetricsRow, type Reducers, type RunStatus } from "../lib/core/run_layout.ts";
import { lastBeat } from "../lib/core/run_lock.ts";
import { listRuns, readConfig, readRunNotes, readSummary, type RunListing } from "../lib/core/run_reader.ts";
import { MetricsReader } from "../lib/core/run_metrics.ts";

// The page's tables are typed with the reducers the run store keeps.
export type { Reducers } from "../lib/core/run_layout.ts";

const EXPERIMENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * Points the dashboard keeps per metric of a run: far more than a chart is
 * pixels wide, and few enough that runs of millions of steps fit in memory
 * (older points are thinned, keeping spikes; the reducers stay exact).
 */
export const POINTS_KEPT_PER_METRIC = 50_000;

/** Whether `experiment/id` names a run the dashboard serves: an experiment name and a run id, nothing else. */
export function isRunName(experiment: string, id: string): boolean {
  return EXPERIMENT.test(experiment) && isRunId(id);
}

/** A run as the dashboard lists it. */
export interface RunRow {
  experiment: string;
  id: string;
  status: RunStatus;
  created: string;
  ended: string | null;
  duration_s: number;
  backend: string | null;
  seed: number;
  preset: string;
  tags: string[];
  config: Record<string, unknown>;
  metrics: Record<string, Reducers>;
  /** The final scores of summary.json (`metrics`), written when the run completed; empty before. */
  final: Record<string, number>;
  skipped: number;
  /** What is wrong with the run's run.json, or why its metrics cannot be read, when something is. */
  problem?: string;
  /** A person's note on the run (notes.json). */
  note: string;
  /** Hidden from the runs table unless asked for (`archived:true`). */
  archived: boolean;
}

/** Reads runs under one root, refusing any path that leaves it. */
export class RunIndex {
  readonly root: string;
  #readers = new Map<string, MetricsReader>();
  #configs = new Map<string, Record<string, unknown>>();
  #finals = new Map<string, Record<string, number>>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  /**
   * The directory of run `experiment/id`, or null when the names are not
   * valid run names or the directory (after resolving links) is not inside the root.
   */
  runDir(experiment: string, id: string): string | null {
    if (!isRunName(experiment, id)) return null;
    try {
      const real = Deno.realPathSync(join(this.root, experiment, id));
      const realRoot = Deno.realPathSync(this.root);
      return real.startsWith(realRoot + sep) && Deno.statSync(real).isDirectory ? real : null;
    } catch {
      return null;
    }
  }

  /** A file inside a run directory given by a relative path, or null when it would leave the run. */
  runFile(dir: string, relative: string): string | null {
    if (relative.split("/").some((part) => part === "" || part === "." || part === "..")) return null;
    try {
      const real = Deno.realPathSync(join(dir, relative));
      return real.startsWith(dir + sep) && Deno.statSync(real).isFile ? real : null;
    } catch {
      return null;
    }
  }

  /**
   * A run's metrics, brought up to date by reading only what was appended
   * since the last call; throws what reading metrics.jsonl throws (a
   * directory in its place, no permission).
   */
  metrics(dir: string): MetricsReader {
    let reader = this.#readers.get(dir);
    if (!reader) this.#readers.set(dir, reader = new MetricsReader(0, { maxPointsPerKey: POINTS_KEPT_PER_METRIC }));
    reader.catchUp(join(dir, "metrics.jsonl"));
    return reader;
  }

  /**
   * Rows appended since byte `offset` of a run's metrics (for live streaming),
   * and the offset after the last complete line.
   */
  tail(dir: string, offset: number): { rows: MetricsRow[]; offset: number } {
    const reader = new MetricsReader(offset);
    const rows = reader.update(join(dir, "metrics.jsonl"));
    return { rows, offset: reader.offset };
  }

  /** Every readable run, newest first, with config and metric reducers (see {@linkcode listRuns}). */
  list(now = Date.now()): RunRow[] {
    return listRuns(this.root, { now }).flatMap((run) => {
      const dir = this.runDir(basename(dirname(run.dir)), basename(run.dir));
      return dir ? [this.#row({ ...run, dir }, now)] : [];
    });
  }

  #row(run: RunListing, now: number): RunRow {
    const { dir, info, status } = run;
    let config = this.#configs.get(dir);
    if (!config) {
      config = readConfig(dir) ?? {};
      this.#configs.set(dir, config);
    }
    let metrics: MetricsReader | null = null;
    const problems = run.problem ? [run.problem] : [];
    try {
      metrics = this.metrics(dir);
    } catch (error) {
      problems.push(metricsProblem(error));
    }
    // A run that died without ending: its writer's last sign of life (the lock touched every few seconds).
    const end = info.ended ? Date.parse(info.ended) : status === "running" ? now : lastBeat(dir, info);
    // Time between an attempt's end and its resume is idle, not the run's.
    const idle = (info.resumes ?? []).reduce((sum, r) => {
      const gap = Date.parse(r.at) - Date.parse(r.stopped ?? "");
      return sum + (Number.isFinite(gap) && gap > 0 ? gap : 0);
    }, 0);
    const duration = (end - Date.parse(info.created) - idle) / 1000;
    const backend = (info.backend as { name?: unknown } | null)?.name;
    const notes = readRunNotes(dir);
    return {
      final: status === "completed" ? this.#final(dir) : {},
      experiment: info.experiment,
      id: info.id,
      status,
      created: info.created,
      ended: info.ended,
      // Unknown when run.json lacks its dates; the table shows a number either way.
      duration_s: Number.isFinite(duration) ? Math.max(0, duration) : 0,
      backend: typeof backend === "string" ? backend : null,
      seed: info.seed,
      preset: info.preset,
      tags: [info.preset, `seed ${info.seed}`, ...notes.tags],
      note: notes.note,
      archived: notes.archived,
      config,
      metrics: metrics ? Object.fromEntries(metrics.reducers) : {},
      skipped: metrics ? metrics.skipped + (status !== "running" && metrics.pending > 0 ? 1 : 0) : 0,
      ...(problems.length ? { problem: problems.join("; ") } : {}),
    };
  }

  /** A completed run's final scores, read once: summary.json is written when the run completes and not again. */
  #final(dir: string): Record<string, number> {
    let final = this.#finals.get(dir);
    if (!final) {
      const metrics = readSummary(dir)?.metrics ?? {};
      final = Object.fromEntries(
        Object.entries(metrics).filter((e): e is [string, number] => typeof e[1] === "number" && Number.isFinite(e[1])),
      );
      this.#finals.set(dir, final);
    }
    return final;
  }
}

/** Why a run's metrics.jsonl could not be read, from what reading it threw. */
export function metricsProblem(error: unknown): string {
  return `metrics.jsonl cannot be read: ${error instanceof Error ? error.message : String(error)}`;
}
