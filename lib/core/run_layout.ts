/**
 * The run store's layout: one directory per run, plain files, append-only metrics.
 *
 * ```
 * <root>/<experiment>/<YYYYMMDD-HHMMSS>-<id>/
 *   run.json  config.json  metrics.jsonl  summary.json  notes.json  media/  checkpoints/  models/
 * ```
 *
 * Only run.json and summary.json are rewritten, always atomically (temp file
 * then rename); metrics.jsonl only grows, one JSON object per line, so a
 * killed run leaves every complete line readable.
 *
 * This file holds what is pure about it: run ids, the shape of each file,
 * and how a status is read. It imports no file-system code, so that the
 * dashboard's browser pages can import it. The files are written by
 * run_writer.ts (one writer per run, see run_lock.ts) and read by
 * run_reader.ts and run_metrics.ts.
 *
 * @module
 */
import type { TargetCurve } from "./curves.ts";
import type { TargetDirection, Verdict } from "./targets.ts";

/** Lifecycle states of a run; `crashed` is derived by readers from a stale heartbeat. */
export type RunStatus = "running" | "completed" | "failed" | "interrupted" | "crashed";

/** The contents of run.json. */
export interface RunInfo {
  /** The run's id (its folder name). */
  id: string;
  /** The experiment's name. */
  experiment: string;
  /** The command-line arguments of the run. */
  argv: string[];
  /** The status its writer recorded. */
  status: RunStatus;
  /** When the run started (ISO time). */
  created: string;
  /** When it ended (ISO time), null while it runs. */
  ended: string | null;
  /** The writer's latest sign of life (ISO time), rewritten while it runs. */
  heartbeat: string;
  /** The writer's process id. */
  pid: number;
  /** The writer's host. */
  host: string;
  /** The run's seed. */
  seed: number;
  /** The preset it ran. */
  preset: string;
  /** What the backend selection reported. */
  backend: unknown;
  /** Versions of the runtime and libraries, by name. */
  versions: Record<string, string>;
  /** The git commit of the code, when known. */
  git_commit: string | null;
  /** The error that ended a failed run. */
  error?: string;
  /** Steps at which `--resume` continued this run, and the damaged checkpoints it passed over. */
  resumes?: { step: number; at: string; stopped?: string; passed_over?: string[] }[];
  /** The sweep task this run is (from `$LATENTLAB_SWEEP_TASK`), so that a sweep finds its runs in the store. */
  sweep?: SweepTag;
}

/** A run's place in a sweep: the sweep's id, the task's key and its index in the sweep's expansion. */
export interface SweepTag {
  /** The sweep's id. */
  id: string;
  /** The task's key. */
  key: string;
  /** The task's index in the sweep's expansion. */
  index: number;
}

/** The folder under a run store root that holds sweeps; `listRuns` (run_reader.ts) passes over it. */
export const SWEEPS_FOLDER = "_sweeps";

/** The environment variable a sweep sets on each task's process: `<id>:<key>:<index>`. */
export const SWEEP_TASK_ENV = "LATENTLAB_SWEEP_TASK";

/**
 * The sweep tag of `$LATENTLAB_SWEEP_TASK` (`<id>:<key>:<index>`), or
 * undefined when it is unset or malformed (a run outside a sweep).
 */
export function sweepTagFromEnv(): SweepTag | undefined {
  let value: string | undefined;
  try {
    value = Deno.env.get(SWEEP_TASK_ENV);
  } catch {
    return undefined; // no env permission: not started by a sweep
  }
  const m = value ? /^([A-Za-z0-9][A-Za-z0-9_.-]*):([0-9a-f]{12}):(\d+)$/.exec(value) : null;
  return m ? { id: m[1], key: m[2], index: Number(m[3]) } : undefined;
}

/** A run id: its creation time (UTC, to the second), then six random hex digits. */
const RUN_ID = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-[0-9a-f]{6}$/;

/** A new run id, `YYYYMMDD-HHMMSS-xxxxxx`, from the creation time `date` (UTC) and six random hex digits. */
export function newRunId(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const bytes = crypto.getRandomValues(new Uint8Array(3));
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}-` +
    Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether `name` has the form of a run id made by {@linkcode newRunId}. */
export function isRunId(name: string): boolean {
  return RUN_ID.test(name);
}

/** The creation time a run id encodes, or null when `id` is not a run id. */
export function runIdDate(id: string): Date | null {
  const m = RUN_ID.exec(id);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

/** A heartbeat older than this marks a `running` run as crashed. */
export const STALE_HEARTBEAT_MS = 2 * 60 * 1000;

/**
 * The status a reader should show: a `running` run whose heartbeat is older
 * than {@linkcode STALE_HEARTBEAT_MS} at `now`, or unreadable, has crashed.
 */
export function effectiveStatus(info: RunInfo, now = Date.now(), beat = Date.parse(info.heartbeat)): RunStatus {
  if (info.status === "running" && !(now - beat <= STALE_HEARTBEAT_MS)) {
    return "crashed";
  }
  return info.status;
}

/** One target of summary.json: the published number beside ours. */
export interface SummaryTarget {
  /** Key in the run's final metrics. */
  metric: string;
  /** The published value. */
  paper: number;
  /** Where it is published: document and table. */
  source: string;
  /** Allowed distance from `paper` for "reproduced". */
  tolerance: number;
  /** Match within tolerance, or at least as good in this direction. */
  direction: TargetDirection;
  /** The run's final value, null when not measured. */
  ours: number | null;
  /** The verdict the run got when it ended. */
  verdict: Verdict;
  /** "like-for-like" or "analogue" (absent in summaries written before targets had a class). */
  kind?: "like-for-like" | "analogue";
  /** What trivial models score here, as the target stated when the run ended. */
  nulls?: { value: number; model: string }[];
  /** Where the tolerance comes from, as the target stated it when the run ended. */
  tolerance_source?: string;
  /** The metric's learning curve during training, when the run logged it. */
  curve?: TargetCurve | null;
}

/** One claim of summary.json. */
export interface SummaryClaim {
  /** The finding, in words. */
  text: string;
  /** Where it is published. */
  source: string;
  /** Whether it held on the run's final metrics. */
  verdict: Verdict;
}

/** The contents of summary.json, written once when a run completes. */
export interface RunSummary {
  /** The experiment's registered name. */
  experiment: string;
  /** The experiment's one-line description. */
  description: string;
  /** Bibliography key and the document's section or table the experiment comes from. */
  source: string;
  /** The run's id (its directory name). */
  run_id: string;
  /** The preset the run started from. */
  preset: string;
  /** The run's seed. */
  seed: number;
  /** The TF.js backend the run ran on (its last invocation's, when resumed). */
  backend: string;
  /** Seconds from the run's creation to its end (time between resumes included). */
  wall_time_s: number;
  /** Final scalar metrics by key. */
  metrics: Record<string, number>;
  /** Each published target beside the run's value. */
  targets: SummaryTarget[];
  /** Each claim with its verdict. */
  claims: SummaryClaim[];
  /** The run's structured results (`RunResult.details`), as it returned them. */
  details: unknown;
  /** What the run's preset cannot show, and why (the experiment's `presetLimits`). */
  preset_limits?: string | null;
}

/** A summary as readers show it: summary.json with missing parts filled, and what was missing. */
export type SummaryView = RunSummary & {
  /** What is wrong with summary.json, when something is. */
  problem?: string;
  /** The git commit the run was made at (from run.json), null when unknown. */
  git_commit?: string | null;
  /** Config keys the command line set beyond its preset (`--layers 1`), from run.json's argv. */
  overrides?: string[];
};

/** A person's notes on a run (notes.json beside run.json, never in it): text, tags, and whether it is archived (hidden). */
export interface RunNotes {
  /** Free text. */
  note: string;
  /** Labels for filtering runs, distinct. */
  tags: string[];
  /** Whether the run is hidden from listings by default. */
  archived: boolean;
}

/** The most a note may hold, and the most tags and tag length: notes are words, not data. */
export const NOTE_LIMITS = { noteChars: 20_000, tags: 50, tagChars: 64 };

/** One entry of media/media.jsonl: an image of `name` at `step`, at `path` under media/. */
export interface MediaEntry {
  /** The image's name (also its file name stem). */
  name: string;
  /** The training step it shows. */
  step: number;
  /** Path of the PNG file under media/. */
  path: string;
  /** Image width in pixels. */
  width: number;
  /** Image height in pixels. */
  height: number;
}

/** One metrics line as read: its step, seconds since the run was created, and its metric values. */
export type MetricsRow = { step: number; time: number } & Record<string, number>;

/** One metric of a run in step order, as parallel arrays: x (step), t (seconds since creation), y (value). */
export interface Series {
  /** Steps, ascending. */
  x: number[];
  /** Seconds since the run was created, at each step. */
  t: number[];
  /** The metric's value at each step. */
  y: number[];
}

/** Value at the highest step, minimum and maximum of one metric. */
export interface Reducers {
  /** The value at the highest step. */
  last: number;
  /** The smallest value. */
  min: number;
  /** The largest value. */
  max: number;
}
