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
import { type MetricsRow, type Reducers, type RunStatus } from "../lib/core/run_layout.ts";
import { lastBeat } from "../lib/core/run_lock.ts";
import {
  listRuns,
  readConfig,
  readRunNotes,
  readSummary,
  type RunListing,
  skippedRunFolders,
} from "../lib/core/run_reader.ts";
import { MetricsReader } from "../lib/core/run_metrics.ts";

// The page's tables are typed with the reducers the run store keeps.
export type { Reducers } from "../lib/core/run_layout.ts";

/**
 * The names of experiment and run folders the dashboard serves: letters of
 * any script, digits, `_`, `.` and `-`, not starting with a dot: a folder
 * copied in under a name of its own (capitals, accents) is served as the
 * run ids the writer makes are; other names are listed as skipped, with why.
 */
const FOLDER_NAME = /^[\p{L}\p{N}_-][\p{L}\p{M}\p{N}_.-]{0,127}$/u;

/**
 * Points the dashboard keeps per metric of a run: far more than a chart is
 * pixels wide, and few enough that runs of millions of steps fit in memory
 * (older points are thinned, keeping spikes; the reducers stay exact).
 */
export const POINTS_KEPT_PER_METRIC = 50_000;

/** The largest metrics.jsonl the dashboard reads (a run of a million steps logging ten metrics writes about 200 MB). */
export const METRICS_FILE_BYTES = 2 * 1024 ** 3;

/**
 * How long one read of a run's metrics goes on before the server answers
 * other requests: a request waits at most about this long on another's read.
 */
export const READ_SLICE_MS = 25;

/** Bytes read at a time, so that one chunk's parsing fits well within a slice. */
const READ_CHUNK_BYTES = 512 * 1024;

/** How long a listing waits for metrics being read before it lists those runs with their progress. */
export const LIST_WAIT_MS = 1000;

/** Whether `experiment/id` names a run the dashboard serves: an experiment name and a run id, nothing else. */
export function isRunName(experiment: string, id: string): boolean {
  return FOLDER_NAME.test(experiment) && FOLDER_NAME.test(id);
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
  /** While the dashboard is still reading a large metrics.jsonl: bytes read and the file's size. */
  reading?: { bytes: number; of: number };
}

/** Reads runs under one root, refusing any path that leaves it. */
export class RunIndex {
  readonly root: string;
  #readers = new Map<string, MetricsReader>();
  #reading = new Map<string, Promise<MetricsReader>>();
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
   * since the last call. A long read is cut into slices of
   * {@linkcode READ_SLICE_MS}, between which the server answers other
   * requests: a run of hundreds of megabytes holds up no other run. Calls
   * while a read is under way share it. Rejects with what reading
   * metrics.jsonl throws (not a regular file, too large, no permission).
   */
  async metrics(dir: string): Promise<MetricsReader> {
    const running = this.#reading.get(dir);
    if (running) return await running;
    let reader = this.#readers.get(dir);
    if (!reader) {
      reader = new MetricsReader(0, {
        maxPointsPerKey: POINTS_KEPT_PER_METRIC,
        maxFileBytes: METRICS_FILE_BYTES,
        chunkBytes: READ_CHUNK_BYTES,
      });
      this.#readers.set(dir, reader);
    }
    const path = join(dir, "metrics.jsonl");
    if (reader.catchUpUntil(path, performance.now() + READ_SLICE_MS)) return reader;
    const read = (async () => {
      try {
        do await new Promise((next) => setTimeout(next, 0)); while (
          !reader.catchUpUntil(path, performance.now() + READ_SLICE_MS)
        );
        return reader;
      } finally {
        this.#reading.delete(dir);
      }
    })();
    this.#reading.set(dir, read);
    return await read;
  }

  /**
   * Rows appended since byte `offset` of a run's metrics (for live
   * streaming), as many as {@linkcode READ_SLICE_MS} of reading gives, and
   * the offset after the last complete line read: the rest comes with the next call.
   */
  tail(dir: string, offset: number): { rows: MetricsRow[]; offset: number } {
    const reader = new MetricsReader(offset, { maxFileBytes: METRICS_FILE_BYTES, chunkBytes: READ_CHUNK_BYTES });
    const rows = reader.update(join(dir, "metrics.jsonl"), performance.now() + READ_SLICE_MS);
    return { rows, offset: reader.offset };
  }

  /**
   * Every readable run, newest first, with config and metric reducers (see
   * {@linkcode listRuns}), and every folder where a run would be that is not
   * among them, with why (see {@linkcode skippedRunFolders}; runs whose
   * folder names the dashboard does not serve too), from one look at the
   * store. Runs whose metrics are still being read after
   * {@linkcode LIST_WAIT_MS} are listed with how far the read has come (`reading`).
   */
  async list(now = Date.now()): Promise<{ runs: RunRow[]; skipped: { folder: string; why: string }[] }> {
    const listed = listRuns(this.root, { now });
    const runs: RunListing[] = [], unnamed: { folder: string; why: string }[] = [];
    for (const run of listed) {
      const experiment = basename(dirname(run.dir)), id = basename(run.dir);
      const dir = this.runDir(experiment, id);
      if (dir) runs.push({ ...run, dir });
      else {
        unnamed.push({
          folder: `${experiment}/${id}`,
          why: isRunName(experiment, id)
            ? "its real path lies outside the store"
            : "its folder names hold characters other than letters, digits, _ . - (or start with a dot): rename it",
        });
      }
    }
    const skipped = [...skippedRunFolders(this.root, new Set(listed.map((run) => run.dir))), ...unnamed]
      .sort((a, b) => a.folder.localeCompare(b.folder));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<null>((done) => timer = setTimeout(() => done(null), LIST_WAIT_MS));
    const read = await Promise.all(runs.map((run) =>
      Promise.race([this.metrics(run.dir), waited]).then(
        (metrics) => ({ metrics, problem: null }),
        (error) => ({ metrics: null, problem: metricsProblem(error) }),
      )
    ));
    clearTimeout(timer);
    return { runs: runs.map((run, i) => this.#row(run, now, read[i])), skipped };
  }

  #row(
    run: RunListing,
    now: number,
    read: { metrics: MetricsReader | null; problem: string | null },
  ): RunRow {
    const { dir, info, status } = run;
    let config = this.#configs.get(dir);
    if (!config) {
      config = readConfig(dir) ?? {};
      this.#configs.set(dir, config);
    }
    const problems = [run.problem, read.problem].filter((p): p is string => !!p);
    // Still being read: the reducers so far, and how far the read has come.
    const reading = !read.metrics && !read.problem ? this.#readers.get(dir) : undefined;
    const metrics = read.metrics ?? reading ?? null;
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
      ...(reading ? { reading: readProgress(dir, reading) } : {}),
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

/** How far a read of a run's metrics has come. */
function readProgress(dir: string, reader: MetricsReader): { bytes: number; of: number } {
  let size = reader.offset;
  try {
    size = Deno.statSync(join(dir, "metrics.jsonl")).size;
  } catch {
    // gone since: the bytes read are all there is
  }
  return { bytes: reader.offset, of: size };
}

/** Why a run's metrics.jsonl could not be read, from what reading it threw. */
export function metricsProblem(error: unknown): string {
  return `metrics.jsonl cannot be read: ${error instanceof Error ? error.message : String(error)}`;
}
