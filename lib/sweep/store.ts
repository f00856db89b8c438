/**
 * A sweep's files and the state of its tasks.
 *
 * ```
 * <runs>/_sweeps/<id>/
 *   sweep.json        the spec, its tasks (index, key, seed, values, args), created, git commit
 *   lock, claims/     the live launch and the process of each running task (lib/sweep/lock.ts)
 *   tasks/<key>.json  what the last launch of a task knew: status, attempts, job id, run dir, exit code, logs
 *   logs/<key>.{out,err}   a local task's output, appended per attempt
 *   slurm/            sub-<n>.{sbatch,tasks} and %A_%a.{out,err} of Slurm submissions
 * ```
 *
 * Each task has a file of its own, rewritten atomically, so that launchers on
 * several machines never append to one shared file (safe on NFS). A task's
 * state is derived from the run store first (runs carry their task's key in
 * run.json's `sweep`), then from its launch record and Slurm.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../core/errors.ts";
import { gitCommit } from "../core/experiment.ts";
import { SWEEPS_FOLDER } from "../core/run_layout.ts";
import { openRegularFile, readSmallFile, writeJsonAtomic } from "../core/run_files.ts";
import { closeSync, readSync } from "node:fs";
import { liveWriter } from "../core/run_lock.ts";
import { LINK_SKIPPED, readRun, readSummary, type RunListing } from "../core/run_reader.ts";
import { canonicalJson, checkSweepId, type SweepSpec, type SweepTask } from "./spec.ts";

/** The project root: where `main.ts` is. */
export const REPO_ROOT: string = fileURLToPath(new URL("../../", import.meta.url));

/** A task as sweep.json keeps it (its full config is in its run's config.json). */
export type StoredTask = Omit<SweepTask, "config">;

/** The contents of sweep.json. */
export interface SweepRecord {
  /** The sweep's id (its folder name). */
  id: string;
  /** The experiment's name, or the absolute path of its module (what `run` is given). */
  experiment: string;
  /** The experiment's own name: the run store folder its runs are in. */
  experiment_name: string;
  /** The preset every task starts from. */
  preset: string;
  /** The checked spec. */
  spec: SweepSpec;
  /** Keys whose values differ between tasks (the columns of a sweep's table). */
  varied: string[];
  /** Every task, in expansion order. */
  tasks: StoredTask[];
  /** When the sweep was created (ISO time). */
  created: string;
  /** When sweep.json was last written (ISO time). */
  updated: string;
  /** The git commit of the code, when known. */
  git_commit: string | null;
  /** The executor of the latest invocation. */
  executor: "local" | "slurm";
}

/** A sweep with where it lives. */
export interface Sweep extends SweepRecord {
  /** `<runs>/_sweeps/<id>`. */
  dir: string;
  /** The run store its runs go to. */
  runs_root: string;
}

/** What a launcher last wrote of a task. */
export interface TaskRecord {
  /** The task's key (see {@linkcode SweepTask}). */
  key: string;
  /** The task's index (see {@linkcode SweepTask}). */
  index: number;
  /** submitted: waiting in Slurm's queue; running: started; then how the attempt ended. */
  status: "submitted" | "running" | "completed" | "failed" | "interrupted";
  /** Who launched it. */
  executor: "local" | "slurm";
  /** Launches so far. */
  attempts: number;
  /** Slurm's `<array job id>_<index>` of the latest submission. */
  job_id: string | null;
  /** The Slurm submission (`sub-<n>`) of the latest attempt. */
  submission: string | null;
  /** The run the latest attempt wrote (or continued). */
  run_dir: string | null;
  /** The run directory the latest attempt continued with `--resume`, or null for a fresh run. */
  resumed: string | null;
  /** The exit code of the latest attempt, null until it ends. */
  exit_code: number | null;
  /** Log files of the latest attempt. */
  out: string | null;
  /** Its error log file. */
  err: string | null;
  /** The process that runs the attempt (a local sweep, or a Slurm task) and its host. */
  pid: number | null;
  /** The host of that process. */
  host: string | null;
  /** When the latest attempt started (ISO time). */
  started: string | null;
  /** When it ended (ISO time), null while it runs. */
  ended: string | null;
  /** Seconds from launch to exit of the latest attempt. */
  wall_s: number | null;
  /** When this record was last written (ISO time). */
  updated: string;
}

/**
 * What a task is now: completed (a completed run; never run again), active
 * (a live run, or a queued or running Slurm job; left alone), interrupted or
 * crashed (resumed with `--resume`), failed or lost (run again from scratch,
 * the old run kept), pending (never launched).
 */
export type TaskStatus = "completed" | "active" | "interrupted" | "crashed" | "failed" | "lost" | "pending";

/** Every task status, in the order counts are shown. */
export const TASK_STATUSES: readonly TaskStatus[] = [
  "completed",
  "active",
  "interrupted",
  "crashed",
  "failed",
  "lost",
  "pending",
];

/** A task's state as {@linkcode taskStates} derives it. */
export interface TaskState extends StoredTask {
  /** What the task is now. */
  status: TaskStatus;
  /** The run the status comes from (the completed one, the live one, or the newest). */
  run: string | null;
  /** The run to continue (`--resume`) when the task is interrupted or crashed. */
  resume: string | null;
  /** Slurm's job id of the latest submission. */
  job_id: string | null;
  /** The exit code of the latest attempt. */
  exit_code: number | null;
  /** Why a task failed or was lost, when Slurm or the run says. */
  reason: string | null;
  /** The error log of the latest attempt. */
  log: string | null;
  /** Its last 5 lines, for failed and lost tasks. */
  tail: string[];
  /** Launches so far. */
  attempts: number;
  /** The spec's metric in the completed run's summary, when the spec names one. */
  metric: number | null;
}

/** Slurm's word on one array element (see lib/sweep/slurm.ts `slurmJobStates`). */
export interface SlurmJobState {
  /** The element's state, in the sweep's terms. */
  state: "pending" | "running" | "completed" | "failed" | "lost";
  /** Its exit code, when Slurm reports one. */
  exitCode?: number;
  /** Why it failed or was lost, when known. */
  reason?: string;
}

/** Asks Slurm about array elements (`<array>_<i>`); elements it does not know are absent or lost. */
export type SlurmStates = (jobIds: string[]) => Promise<Map<string, SlurmJobState>>;

/** The folder of sweep `id` under a run store root. */
export function sweepDirOf(runsRoot: string, id: string): string {
  return join(resolve(runsRoot), SWEEPS_FOLDER, id);
}

/** The run store root a sweep folder belongs to. */
export function runsRootOf(sweepDir: string): string {
  return dirname(dirname(resolve(sweepDir)));
}

/** The path of a task's record. */
export function taskRecordPath(sweepDir: string, key: string): string {
  return join(sweepDir, "tasks", `${key}.json`);
}

/** Local log files of a task. */
export function localLogs(sweepDir: string, key: string): { out: string; err: string } {
  return { out: join(sweepDir, "logs", `${key}.out`), err: join(sweepDir, "logs", `${key}.err`) };
}

/** The record of a task, or null when it was never launched (or its file is unreadable). */
export function readTaskRecord(sweepDir: string, key: string): TaskRecord | null {
  try {
    const raw = JSON.parse(readSmallFile(taskRecordPath(sweepDir, key)));
    return typeof raw === "object" && raw !== null && raw.key === key ? raw as TaskRecord : null;
  } catch {
    return null;
  }
}

/**
 * Updates a task's record with `patch` (fields left out keep their value)
 * and writes it atomically; returns the record written. One file per task,
 * so that launchers never share a file.
 */
export function writeTaskState(
  sweepDir: string,
  key: string,
  patch: Partial<TaskRecord> & { index?: number },
): TaskRecord {
  const before = readTaskRecord(sweepDir, key);
  const record: TaskRecord = {
    key,
    index: -1,
    status: "submitted",
    executor: "local",
    attempts: 0,
    job_id: null,
    submission: null,
    run_dir: null,
    resumed: null,
    exit_code: null,
    out: null,
    err: null,
    pid: null,
    host: null,
    started: null,
    ended: null,
    wall_s: null,
    ...before,
    ...patch,
    updated: new Date().toISOString(),
  };
  Deno.mkdirSync(join(sweepDir, "tasks"), { recursive: true });
  writeJsonAtomic(taskRecordPath(sweepDir, key), record);
  return record;
}

/** sweep.json of a sweep folder; throws UsageError when it is not one. */
export function readSweep(sweepDir: string): Sweep {
  let raw: unknown;
  try {
    raw = JSON.parse(readSmallFile(join(sweepDir, "sweep.json")));
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound ? "no sweep.json" : (error as Error).message;
    throw new UsageError(`${sweepDir}: not a sweep folder (${why})`);
  }
  const record = raw as SweepRecord;
  if (typeof raw !== "object" || raw === null || !Array.isArray(record.tasks) || typeof record.id !== "string") {
    throw new UsageError(`${sweepDir}: sweep.json lacks its id or tasks`);
  }
  return { ...record, dir: resolve(sweepDir), runs_root: runsRootOf(sweepDir) };
}

/** Ids of the sweeps under a run store root, sorted. */
export function sweepIds(runsRoot: string): string[] {
  try {
    return [...Deno.readDirSync(join(runsRoot, SWEEPS_FOLDER))]
      .filter((e) => e.isDirectory)
      .map((e) => e.name)
      .filter((name) => {
        try {
          return Deno.statSync(join(runsRoot, SWEEPS_FOLDER, name, "sweep.json")).isFile;
        } catch {
          return false;
        }
      })
      .sort();
  } catch {
    return [];
  }
}

/**
 * Folders under the store's sweeps folder that {@linkcode listSweeps} passes
 * over, with why: a symbolic link, no sweep.json (a sweep that broke while
 * it was being planned), or one that cannot be read or lacks its tasks.
 */
export function skippedSweeps(runsRoot: string): { folder: string; why: string }[] {
  let found: Deno.DirEntry[];
  try {
    found = [...Deno.readDirSync(join(runsRoot, SWEEPS_FOLDER))];
  } catch {
    return [];
  }
  const skipped: { folder: string; why: string }[] = [];
  for (const entry of found) {
    if (entry.isSymlink) {
      skipped.push({ folder: entry.name, why: LINK_SKIPPED });
    }
    if (!entry.isDirectory) continue;
    try {
      readSweep(join(runsRoot, SWEEPS_FOLDER, entry.name));
    } catch (error) {
      // readSweep names the folder; the page names it already.
      const why = (error as Error).message.replace(/^.*: not a sweep folder \((.*)\)$/, "$1");
      skipped.push({ folder: entry.name, why: why.replace(`${join(runsRoot, SWEEPS_FOLDER, entry.name)}: `, "") });
    }
  }
  return skipped.sort((a, b) => a.folder.localeCompare(b.folder));
}

/**
 * The folder of a sweep given by id (under `runsRoot`) or by path; throws
 * UsageError naming the closest id when there is none.
 */
export function findSweepDir(idOrDir: string, runsRoot: string): string {
  const asDir = resolve(idOrDir);
  try {
    if (Deno.statSync(join(asDir, "sweep.json")).isFile) return asDir;
  } catch {
    // not a sweep folder path: an id
  }
  const dir = sweepDirOf(runsRoot, idOrDir);
  try {
    if (Deno.statSync(join(dir, "sweep.json")).isFile) return dir;
  } catch {
    // reported below
  }
  const ids = sweepIds(runsRoot);
  const hint = ids.length ? `; sweeps there: ${ids.join(", ")}` : "; it holds no sweeps";
  throw new UsageError(`no sweep ${JSON.stringify(idOrDir)} under ${join(resolve(runsRoot), SWEEPS_FOLDER)}${hint}`);
}

/** Keys whose values differ between tasks, in the order they first appear. */
export function variedKeys(tasks: readonly Pick<SweepTask, "values">[]): string[] {
  const keys: string[] = [];
  for (const task of tasks) for (const key of Object.keys(task.values)) if (!keys.includes(key)) keys.push(key);
  return keys.filter((key) => {
    const first = canonicalJson(tasks[0]?.values[key]);
    return tasks.some((t) => canonicalJson(t.values[key]) !== first);
  });
}

/**
 * The sweep a spec makes under `runsRoot`, checked but not written: a
 * sweep of this id that exists must be of the same experiment and preset
 * (else UsageError: `--name` of another sweep); it keeps its creation time.
 */
export function planSweep(options: {
  id: string;
  spec: SweepSpec;
  tasks: readonly SweepTask[];
  experimentName: string;
  runsRoot: string;
  executor: "local" | "slurm";
}): { sweep: Sweep; existing: boolean } {
  const id = checkSweepId(options.id);
  const dir = sweepDirOf(options.runsRoot, id);
  let before: Sweep | null = null;
  try {
    Deno.statSync(join(dir, "sweep.json"));
    before = readSweep(dir);
  } catch (error) {
    if (error instanceof UsageError) {
      throw new UsageError(`sweep ${id}: ${dir} exists but is not a readable sweep (${error.message})`);
    }
  }
  if (before && (before.experiment !== options.spec.experiment || before.preset !== options.spec.preset)) {
    throw new UsageError(
      `sweep ${id} exists with experiment ${before.experiment} and preset ${before.preset}; this spec runs ` +
        `${options.spec.experiment} with preset ${options.spec.preset}: give it another --name`,
    );
  }
  const now = new Date().toISOString();
  const tasks = options.tasks.map(({ config: _config, ...task }) => task);
  return {
    existing: before !== null,
    sweep: {
      id,
      experiment: options.spec.experiment,
      experiment_name: options.experimentName,
      preset: options.spec.preset,
      spec: options.spec,
      varied: variedKeys(tasks),
      tasks,
      created: before?.created ?? now,
      updated: now,
      git_commit: null,
      executor: options.executor,
      dir,
      runs_root: resolve(options.runsRoot),
    },
  };
}

/** Writes a planned sweep's folder: sweep.json (with the git commit), tasks/ and logs/. */
export async function writeSweep(sweep: Sweep): Promise<void> {
  for (const folder of ["tasks", "logs"]) Deno.mkdirSync(join(sweep.dir, folder), { recursive: true });
  sweep.git_commit = await gitCommit();
  const { dir: _dir, runs_root: _root, ...record } = sweep;
  writeJsonAtomic(join(sweep.dir, "sweep.json"), record);
}

/** The runs of an experiment that are sweep tasks, by task key, newest first. */
export function sweepRuns(runsRoot: string, experimentName: string): Map<string, RunListing[]> {
  const byKey = new Map<string, RunListing[]>();
  const folder = join(runsRoot, experimentName);
  let names: string[];
  try {
    names = [...Deno.readDirSync(folder)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch {
    return byKey;
  }
  for (const name of names) {
    const run = readRun(join(folder, name));
    const key = (run?.info.sweep as { key?: unknown } | undefined)?.key;
    if (!run || typeof key !== "string") continue;
    const list = byKey.get(key) ?? [];
    list.push(run);
    byKey.set(key, list);
  }
  for (const list of byKey.values()) list.sort((a, b) => (a.info.created < b.info.created ? 1 : -1));
  return byKey;
}

/** The last `n` non-empty lines of a file, or none when it cannot be read. */
export function lastLines(path: string | null, n = 5): string[] {
  if (!path) return [];
  try {
    const { fd, size } = openRegularFile(path);
    try {
      // The end of the file is enough for a few lines; a log can be large.
      const length = Math.min(size, 16 * 1024);
      const bytes = new Uint8Array(length);
      let read = 0;
      while (read < length) {
        const got = readSync(fd, bytes, read, length - read, size - length + read);
        if (got === 0) break;
        read += got;
      }
      return new TextDecoder().decode(bytes.subarray(0, read)).split("\n").filter((l) => l.trim() !== "").slice(-n);
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
}

/** Whether `pid` on this host is a live Deno process (/proc; a reused pid is another program); false where unknown. */
function processAlive(pid: number | null, host: string | null): boolean {
  if (pid === null || host !== Deno.hostname()) return false;
  if (pid === Deno.pid) return true;
  try {
    return new TextDecoder().decode(Deno.readFileSync(`/proc/${pid}/cmdline`)).includes("deno");
  } catch {
    return false;
  }
}

/** The spec's metric of a completed run's summary, or null. */
function summaryMetric(run: string, metric: string | undefined): number | null {
  if (!metric) return null;
  const value = readSummary(run)?.metrics?.[metric];
  return typeof value === "number" ? value : null;
}

/**
 * The state of one task: the run store first (a completed run; a live
 * one), then the latest launch (a queued or running Slurm job, a local
 * attempt whose process lives), then the newest run (interrupted or
 * crashed: resume it; failed: run again), then what Slurm or the launcher
 * said of an attempt that left no run.
 */
function deriveState(
  task: StoredTask,
  runs: readonly RunListing[],
  record: TaskRecord | null,
  slurm: SlurmJobState | undefined,
  metricName: string | undefined,
): TaskState {
  const state: TaskState = {
    ...task,
    status: "pending",
    run: null,
    resume: null,
    job_id: record?.job_id ?? null,
    exit_code: record?.exit_code ?? null,
    reason: null,
    log: record?.err ?? null,
    tail: [],
    attempts: record?.attempts ?? 0,
    metric: null,
  };
  const completed = runs.find((r) => r.status === "completed");
  if (completed) {
    return {
      ...state,
      status: "completed",
      run: completed.dir,
      exit_code: 0,
      metric: summaryMetric(completed.dir, metricName),
    };
  }
  const newest = runs[0];
  const live = runs.find((r) => r.status === "running" && liveWriter(r.dir) !== null);
  if (live) return { ...state, status: "active", run: live.dir };
  const attemptLive = slurm
    ? slurm.state === "pending" || slurm.state === "running"
    : record !== null && (record.status === "submitted" || record.status === "running") &&
      (record.executor === "slurm" ? record.job_id !== null : processAlive(record.pid, record.host));
  if (attemptLive) return { ...state, status: "active", run: newest?.dir ?? null };
  if (newest) {
    // A run whose writer is gone reads "running" until its heartbeat goes stale; it crashed.
    const status = newest.status === "running" ? "crashed" : newest.status;
    if (status === "interrupted" || status === "crashed") {
      return { ...state, status, run: newest.dir, resume: newest.dir };
    }
    if (status === "failed") {
      const reason = newest.info.error?.split("\n")[0] ?? null;
      return { ...state, status: "failed", run: newest.dir, reason, tail: lastLines(state.log) };
    }
  }
  if (slurm?.state === "failed") {
    return {
      ...state,
      status: "failed",
      exit_code: slurm.exitCode ?? state.exit_code,
      reason: slurm.reason ?? null,
      tail: lastLines(state.log),
    };
  }
  if (slurm) {
    // Ended without a run (cancelled, node lost, or forgotten by Slurm).
    return { ...state, status: "lost", reason: slurm.reason ?? `Slurm job ${slurm.state}`, tail: lastLines(state.log) };
  }
  if (record?.status === "failed") return { ...state, status: "failed", tail: lastLines(state.log) };
  if (record && record.executor === "slurm" && record.job_id !== null && record.status !== "interrupted") {
    return { ...state, status: "lost", reason: "Slurm job ended without a run", tail: lastLines(state.log) };
  }
  return state;
}

/**
 * The state of every task of a list (in their order), from the run store
 * under `runsRoot`, the task records of `sweepDir` (null: none yet) and,
 * when `slurm` is given, Slurm's word on the latest job of each task the
 * run store does not settle (one call for all of them).
 */
export async function statesOf(
  tasks: readonly StoredTask[],
  options: {
    sweepDir: string | null;
    runsRoot: string;
    experimentName: string;
    metric?: string;
    slurm?: SlurmStates;
    runs?: Map<string, RunListing[]>;
  },
): Promise<TaskState[]> {
  const runs = options.runs ?? sweepRuns(options.runsRoot, options.experimentName);
  const records = tasks.map((t) => options.sweepDir ? readTaskRecord(options.sweepDir, t.key) : null);
  let jobs = new Map<string, SlurmJobState>();
  if (options.slurm) {
    const ask = tasks.flatMap((t, i) => {
      const settled = (runs.get(t.key) ?? []).some((r) =>
        r.status === "completed" || (r.status === "running" && liveWriter(r.dir) !== null)
      );
      const job = records[i]?.job_id;
      return !settled && job ? [job] : [];
    });
    if (ask.length) jobs = await options.slurm(ask);
  }
  return tasks.map((task, i) => {
    const record = records[i];
    const job = options.slurm && record?.job_id ? jobs.get(record.job_id) : undefined;
    return deriveState(task, runs.get(task.key) ?? [], record, job, options.metric);
  });
}

/** The state of every task of a sweep, in task order (see {@linkcode statesOf}). */
export async function taskStates(sweepDir: string, runsRoot: string, slurm?: SlurmStates): Promise<TaskState[]> {
  const sweep = readSweep(sweepDir);
  return await statesOf(sweep.tasks, {
    sweepDir,
    runsRoot,
    experimentName: sweep.experiment_name,
    metric: sweep.spec?.metric?.name,
    slurm,
  });
}

/** Tasks per status. */
export function countStates(states: readonly Pick<TaskState, "status">[]): Record<TaskStatus, number> {
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
  for (const state of states) counts[state.status]++;
  return counts;
}

/** Whether a task is to be launched: resumed (interrupted, crashed) or run afresh (failed, lost, pending). */
export function needsLaunch(state: Pick<TaskState, "status">): boolean {
  return state.status !== "completed" && state.status !== "active";
}

/**
 * `sweep <id>: N tasks, a completed, b active`, then the other statuses
 * that have tasks, then `, c launched` when `launched` is given.
 */
export function statusLine(id: string, states: readonly Pick<TaskState, "status">[], launched?: number): string {
  const counts = countStates(states);
  const parts = [`${states.length} tasks`, `${counts.completed} completed`, `${counts.active} active`];
  if (launched === undefined) {
    for (const status of TASK_STATUSES.slice(2)) if (counts[status] > 0) parts.push(`${counts[status]} ${status}`);
  } else parts.push(`${launched} launched`);
  return `sweep ${id}: ${parts.join(", ")}`;
}

/** The task's values as `key=value` words, for listings. */
export function describeValues(task: Pick<StoredTask, "values" | "seed">, keys?: readonly string[]): string {
  const shown = (keys ?? Object.keys(task.values)).filter((k) => Object.hasOwn(task.values, k));
  return [...shown.map((k) => `${k}=${JSON.stringify(task.values[k]).replaceAll('"', "")}`), `seed=${task.seed}`]
    .join(" ");
}

/**
 * The arguments after `main.ts run` of a launch: the task's own, or its
 * run continued (`--resume <run dir>`, with the task's backend).
 */
export function launchArgs(task: Pick<StoredTask, "args">, resume: string | null): string[] {
  if (resume === null) return [...task.args];
  const backend = task.args.indexOf("--backend");
  return [task.args[0], "--resume", resume, ...(backend >= 0 ? task.args.slice(backend, backend + 2) : [])];
}

/** `<id>:<key>:<index>`: the value of `$LATENTLAB_SWEEP_TASK` that tags a task's run. */
export function sweepTaskTag(id: string, task: Pick<StoredTask, "key" | "index">): string {
  return `${id}:${task.key}:${task.index}`;
}

/** One sweep as `sweep list` and the dashboard show it (files only; Slurm is not asked). */
export interface SweepListing {
  /** The sweep's id. */
  id: string;
  /** Its folder. */
  dir: string;
  /** Its experiment (name or module path). */
  experiment: string;
  /** Its preset. */
  preset: string;
  /** When it was created (ISO time). */
  created: string;
  /** The executor of its latest invocation. */
  executor: string;
  /** Number of tasks. */
  total: number;
  /** Tasks per status. */
  counts: Record<TaskStatus, number>;
}

/** Every sweep under a run store root, from files only, sorted by id. */
export async function listSweeps(runsRoot: string): Promise<SweepListing[]> {
  const runsByExperiment = new Map<string, Map<string, RunListing[]>>();
  const out: SweepListing[] = [];
  for (const id of sweepIds(runsRoot)) {
    let sweep: Sweep;
    try {
      sweep = readSweep(join(runsRoot, SWEEPS_FOLDER, id));
    } catch {
      continue;
    }
    let runs = runsByExperiment.get(sweep.experiment_name);
    if (!runs) runsByExperiment.set(sweep.experiment_name, runs = sweepRuns(runsRoot, sweep.experiment_name));
    const states = await statesOf(sweep.tasks, {
      sweepDir: sweep.dir,
      runsRoot,
      experimentName: sweep.experiment_name,
      runs,
    });
    out.push({
      id,
      dir: sweep.dir,
      experiment: sweep.experiment_name,
      preset: sweep.preset,
      created: sweep.created,
      executor: sweep.executor,
      total: states.length,
      counts: countStates(states),
    });
  }
  return out;
}
