/**
 * Running sweep tasks as processes: a pool of local workers, and the one
 * task of a Slurm array element (`sweep run-task`).
 *
 * Each task is `deno run -A main.ts run <args> --runs <root>` with
 * `$LATENTLAB_SWEEP_TASK` set, so that its run is tagged with the task's key
 * and the run store says what became of it.
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "../core/errors.ts";
import { SWEEP_TASK_ENV } from "../core/run_layout.ts";
import { liveWriter } from "../core/run_lock.ts";
import { claimPath, claimTask, liveHolder, passClaim, releaseClaim, SWEEP_HEARTBEAT_MS, touch } from "./lock.ts";
import {
  describeValues,
  launchArgs,
  localLogs,
  readSweep,
  readTaskRecord,
  REPO_ROOT,
  runsRootOf,
  statesOf,
  type StoredTask,
  type Sweep,
  sweepRuns,
  sweepTaskTag,
  writeTaskState,
} from "./store.ts";

/** The command line every task runs. */
export const MAIN_PATH: string = join(REPO_ROOT, "main.ts");

/** Memory one task is given when the worker count is chosen (a smoke task's RSS is about 300 MB). */
export const TASK_MEMORY_BYTES = 400 * 1024 * 1024;

/** A task to launch: afresh, or continuing an interrupted or crashed run. */
export interface TaskLaunch extends StoredTask {
  /** The run directory to continue with `--resume`, or null for a fresh run. */
  resume: string | null;
}

/** MemAvailable of /proc/meminfo in bytes, or null where there is none. */
export function availableMemory(): number | null {
  try {
    const m = /^MemAvailable:\s+(\d+)\s+kB/m.exec(Deno.readTextFileSync("/proc/meminfo"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Workers by default: one per core, at most one per {@linkcode TASK_MEMORY_BYTES} of free memory, at least 1. */
export function defaultWorkers(): number {
  const cores = navigator.hardwareConcurrency || 1;
  const memory = availableMemory();
  const byMemory = memory === null ? cores : Math.floor(memory / TASK_MEMORY_BYTES);
  return Math.max(1, Math.min(cores, byMemory));
}

/** How a local sweep ended. */
export interface LocalResult {
  /** Tasks launched. */
  launched: number;
  /** Tasks whose run completed (launched, or watched to their end). */
  completed: number;
  /** Tasks that failed. */
  failed: number;
  /** Tasks that were interrupted. */
  interrupted: number;
  /** Tasks found running without this process (an earlier driver's, or a Slurm element's), watched to their end. */
  adopted: number;
  /** The signal that stopped the sweep (its tasks were interrupted), or null. */
  signal: Deno.Signal | null;
  /** Whether launching stopped because `maxFailures` tasks failed. */
  stoppedByFailures: boolean;
}

/** Options of {@linkcode runLocal}. */
export interface LocalOptions {
  /** Tasks at once. */
  workers: number;
  /** Failed tasks after which no more are launched (those running finish); default: no limit. */
  maxFailures?: number;
  /** Progress lines (default: stderr). */
  report?: (line: string) => void;
  /**
   * Tasks running without this process (a live run, or the live process of
   * an earlier driver's launch): watched to their end, and launched again
   * (from their checkpoint) only when they die without completing.
   */
  adopted?: readonly StoredTask[];
}

/** How often a watched task is looked at. */
const WATCH_POLL_MS = 250;

/** The newest run of `key` created at or after `since` (a run id starts with its UTC creation second). */
function runOfTask(runsRoot: string, experimentName: string, key: string, since: Date): string | null {
  const stamp = since.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const runs = sweepRuns(runsRoot, experimentName).get(key) ?? [];
  return runs.find((r) => r.dir.split("/").at(-1)! >= stamp)?.dir ?? runs[0]?.dir ?? null;
}

/** Whether an exit was a stop by SIGINT/SIGTERM (the run is interrupted, not failed). */
function wasInterrupted(status: Deno.CommandStatus): boolean {
  return status.code === 130 || status.code === 143 || status.signal === "SIGINT" || status.signal === "SIGTERM";
}

/**
 * Appends a command's stdout and stderr to two files: `sh` opens them and
 * execs the command, whose pid is then the child's. A task writes to files,
 * never to a pipe to its driver, so a driver that is killed takes no task's
 * output with it.
 */
const APPEND_OUTPUT = 'out="$1"; err="$2"; shift 2; exec "$@" >>"$out" 2>>"$err"';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs tasks `workers` at a time, each as its own process in a session of
 * its own, with its output appended to `logs/<key>.{out,err}` and its
 * record in `tasks/<key>.json`: a driver killed (SIGKILL, SIGHUP of a
 * closed terminal) leaves its tasks running to their end. Each task is
 * claimed first (see {@linkcode claimTask}); one that another process
 * holds, or that the run store then shows running, is watched instead, as
 * are `options.adopted`. A failure stops nothing until `maxFailures` tasks
 * have failed; then no more are launched. SIGINT/SIGTERM are passed on to
 * the running tasks (their runs are marked interrupted) and nothing more
 * is launched; the result names the signal.
 */
export async function runLocal(
  sweep: Sweep,
  tasks: readonly TaskLaunch[],
  options: LocalOptions,
): Promise<LocalResult> {
  const report = options.report ?? ((line: string) => console.error(line));
  const maxFailures = options.maxFailures ?? Infinity;
  const adopted = options.adopted ?? [];
  const result: LocalResult = {
    launched: 0,
    completed: 0,
    failed: 0,
    interrupted: 0,
    adopted: 0,
    signal: null,
    stoppedByFailures: false,
  };
  const total = tasks.length + adopted.length;
  const queue = [...tasks];
  const children = new Map<Deno.ChildProcess, string>();
  // Runs of watched tasks: a signal to this driver reaches their writers too.
  const watchedRuns = new Map<string, string | null>();
  const watchers: Promise<void>[] = [];
  const storeOf = { sweepDir: sweep.dir, runsRoot: sweep.runs_root, experimentName: sweep.experiment_name };
  // Workers with an empty queue wait here for a watched task to end (it may be queued again) or a signal.
  let wake = () => {};
  let event = new Promise<void>((resolve) => wake = resolve);
  const announce = () => {
    const waiting = wake;
    event = new Promise<void>((resolve) => wake = resolve);
    waiting();
  };
  const listeners: [Deno.Signal, () => void][] = [];
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const listener = () => {
      result.signal = signal;
      for (const child of children.keys()) {
        try {
          child.kill(signal);
        } catch {
          // it has exited
        }
      }
      for (const run of watchedRuns.values()) {
        const writer = run ? liveWriter(run) : null;
        if (writer?.host !== Deno.hostname()) continue;
        try {
          Deno.kill(writer.pid, signal);
        } catch {
          // it has exited
        }
      }
      announce();
    };
    Deno.addSignalListener(signal, listener);
    listeners.push([signal, listener]);
  }
  // A claim's heartbeat, for readers on other hosts (here its pid is enough).
  const heartbeat = setInterval(() => {
    for (const key of children.values()) touch(claimPath(sweep.dir, key));
  }, SWEEP_HEARTBEAT_MS);
  let done = 0;
  const finished = (task: StoredTask, what: string, wall: number | null, run: string | null) => {
    done++;
    report(
      `[${done}/${total}] task ${task.index} ${task.key} ${describeValues(task, sweep.varied)}: ${what}` +
        `${wall === null ? "" : ` in ${wall.toFixed(1)} s`}${run ? `, run ${run}` : ""}`,
    );
  };
  const relaunched = new Set<string>();
  /** Follows a task another process runs to its end; one that died without completing is queued once. */
  const watch = (task: StoredTask, why: string) => {
    watchedRuns.set(task.key, null);
    report(`task ${task.index} ${task.key}: ${why}; watching it`);
    watchers.push((async () => {
      try {
        let [state] = await statesOf([task], storeOf);
        while (result.signal === null) {
          watchedRuns.set(task.key, state.run);
          // A live claim without a live run: its holder is starting the task.
          const claimed = liveHolder(claimPath(sweep.dir, task.key)) !== null;
          if (state.status === "completed" || (state.status !== "active" && !claimed)) break;
          await sleep(WATCH_POLL_MS);
          // While its writer lives, the run store need not be read again.
          if (state.status === "active" && state.run && liveWriter(state.run)) continue;
          [state] = await statesOf([task], storeOf);
        }
        if (result.signal !== null) return;
        // Its launcher is gone or elsewhere: the record says how the attempt ended.
        if (state.status === "completed" || state.status === "failed") {
          writeTaskState(sweep.dir, task.key, {
            status: state.status,
            run_dir: state.run,
            ended: new Date().toISOString(),
          });
        }
        if (state.status === "completed") {
          result.completed++;
          result.adopted++;
          finished(task, "completed (run by another process)", null, state.run);
        } else if (state.status === "failed" || relaunched.has(task.key)) {
          result.failed++;
          finished(task, `${state.status} (run by another process)`, null, state.run);
        } else {
          // It died (crashed, lost, or never made a run): launched again, from its checkpoint when it has one.
          relaunched.add(task.key);
          report(`task ${task.index} ${task.key}: ${state.status} without its process; launching it again`);
          queue.push({ ...task, resume: state.resume });
        }
      } finally {
        watchedRuns.delete(task.key);
        announce();
      }
    })());
  };
  for (const task of adopted) watch(task, "running without this driver");

  const launch = async (task: TaskLaunch, resume: string | null) => {
    const logs = localLogs(sweep.dir, task.key);
    const started = new Date();
    const args = [...launchArgs(task, resume), "--runs", sweep.runs_root];
    const header = `--- ${started.toISOString()} task ${task.index} ${resume ? "resumed" : "started"}: ` +
      `main.ts run ${args.join(" ")}\n`;
    Deno.mkdirSync(join(sweep.dir, "logs"), { recursive: true });
    for (const path of [logs.out, logs.err]) Deno.writeTextFileSync(path, header, { append: true });
    const child = new Deno.Command("/bin/sh", {
      args: ["-c", APPEND_OUTPUT, "sweep-task", logs.out, logs.err, Deno.execPath(), "run", "-A", MAIN_PATH, "run"]
        .concat(args),
      cwd: REPO_ROOT,
      env: { [SWEEP_TASK_ENV]: sweepTaskTag(sweep.id, task) },
      stdin: "null",
      stdout: "null",
      stderr: "null",
      // A session of its own: the terminal's SIGHUP, or a Ctrl-C meant for the driver, does not reach it.
      detached: true,
    }).spawn();
    // The task's own process holds its claim from now on: it outlives this driver.
    passClaim(sweep.dir, task.key, child.pid);
    children.set(child, task.key);
    result.launched++;
    const attempts = readTaskRecord(sweep.dir, task.key)?.attempts ?? 0;
    writeTaskState(sweep.dir, task.key, {
      index: task.index,
      status: "running",
      executor: "local",
      attempts: attempts + 1,
      job_id: null,
      submission: null,
      run_dir: resume,
      resumed: resume,
      exit_code: null,
      out: logs.out,
      err: logs.err,
      pid: child.pid,
      host: Deno.hostname(),
      started: started.toISOString(),
      ended: null,
      wall_s: null,
    });
    // A signal that came while this task was being started reaches it too.
    if (result.signal) child.kill(result.signal);
    const status = await child.status;
    children.delete(child);
    const wall = (Date.now() - started.getTime()) / 1000;
    const run = resume ?? runOfTask(sweep.runs_root, sweep.experiment_name, task.key, started);
    const outcome = status.success ? "completed" : wasInterrupted(status) ? "interrupted" : "failed";
    if (outcome === "completed") result.completed++;
    else if (outcome === "interrupted") result.interrupted++;
    else result.failed++;
    writeTaskState(sweep.dir, task.key, {
      status: outcome,
      exit_code: status.code,
      run_dir: run,
      ended: new Date().toISOString(),
      wall_s: Number(wall.toFixed(3)),
    });
    releaseClaim(sweep.dir, task.key, child.pid);
    finished(task, outcome === "failed" ? `failed (exit code ${status.code}; log ${logs.err})` : outcome, wall, run);
  };

  const runOne = async (task: TaskLaunch) => {
    const holder = claimTask(sweep.dir, task.key);
    if (holder) {
      watch(task, `claimed by process ${holder.pid} on ${holder.host} since ${holder.since}`);
      return;
    }
    try {
      // The store as of the claim: another process may have completed or started the task since it was planned.
      const [state] = await statesOf([task], storeOf);
      if (state.status === "completed") {
        result.completed++;
        finished(task, "completed (by another process)", null, state.run);
      } else if (state.status === "active") {
        watch(task, "running without its claim");
      } else {
        await launch(task, state.resume);
        return;
      }
    } catch (error) {
      releaseClaim(sweep.dir, task.key);
      throw error;
    }
    releaseClaim(sweep.dir, task.key);
  };
  const worker = async () => {
    while (result.signal === null) {
      if (queue.length === 0) {
        if (watchedRuns.size === 0) return;
        await event;
        continue;
      }
      if (result.failed >= maxFailures) {
        result.stoppedByFailures = true;
        return;
      }
      await runOne(queue.shift()!);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.workers, total)) }, worker));
    await Promise.all(watchers);
  } finally {
    clearInterval(heartbeat);
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  }
  if (result.failed >= maxFailures && queue.length > 0) result.stoppedByFailures = true;
  return result;
}

/** Runs `main.ts run <args>` with `env` added and returns its exit code (the default: a child process). */
export type TaskExecutor = (args: string[], env: Record<string, string>) => Promise<number>;

/**
 * Runs `main.ts run <args>` as a child process with this process's output,
 * passing SIGINT and SIGTERM on (Slurm's signal at the time limit marks
 * the run interrupted); returns its exit code (128 + n for a signal n).
 */
export const childExecutor: TaskExecutor = async (args: string[], env: Record<string, string>): Promise<number> => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "run", ...args],
    cwd: REPO_ROOT,
    env,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const listeners: [Deno.Signal, () => void][] = (["SIGINT", "SIGTERM"] as const).map((signal) => {
    const listener = () => {
      try {
        child.kill(signal);
      } catch {
        // it has exited
      }
    };
    Deno.addSignalListener(signal, listener);
    return [signal, listener];
  });
  try {
    const status = await child.status;
    return status.signal
      ? 128 + ({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[status.signal] || 1
      : status.code;
  } finally {
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  }
};

/**
 * `sweep run-task <sweep dir> <submission> <array index>`: the task on line
 * `arrayIndex` of `slurm/<submission>.tasks`. A task another process has
 * claimed (see {@linkcode claimTask}), or the run store shows completed or
 * being run, is left as it is (exit code 0); an interrupted
 * or crashed run is continued with `--resume`; otherwise the task runs
 * afresh. Returns the run's exit code. Throws UsageError for arguments that
 * name no task.
 */
export async function runTask(
  sweepDir: string,
  submission: string,
  arrayIndex: string | number,
  options: { execute?: TaskExecutor; report?: (line: string) => void } = {},
): Promise<number> {
  const report = options.report ?? ((line: string) => console.error(line));
  if (!/^sub-\d+$/.test(submission)) throw new UsageError(`run-task: submission ${submission}: expected sub-<n>`);
  const index = typeof arrayIndex === "number" ? arrayIndex : Number(arrayIndex);
  if (!Number.isSafeInteger(index) || index < 0 || String(arrayIndex).trim() === "") {
    throw new UsageError(`run-task: array index ${arrayIndex}: expected an integer ≥ 0`);
  }
  const sweep = readSweep(sweepDir);
  const listPath = join(sweep.dir, "slurm", `${submission}.tasks`);
  let keys: string[];
  try {
    keys = Deno.readTextFileSync(listPath).split("\n").map((l) => l.trim()).filter((l) => l !== "");
  } catch {
    throw new UsageError(`run-task: ${listPath} cannot be read`);
  }
  const key = keys[index];
  if (key === undefined) throw new UsageError(`run-task: ${listPath} has ${keys.length} tasks, no index ${index}`);
  const task = sweep.tasks.find((t) => t.key === key);
  if (!task) throw new UsageError(`run-task: task ${key} of ${listPath} is not in ${join(sweep.dir, "sweep.json")}`);
  // Of two array elements, or an element and a local worker, one runs the task.
  const holder = claimTask(sweep.dir, key);
  if (holder) {
    report(`task ${task.index} ${key}: being run by process ${holder.pid} on ${holder.host} since ${holder.since}`);
    return 0;
  }
  const heartbeat = setInterval(() => touch(claimPath(sweep.dir, key)), SWEEP_HEARTBEAT_MS);
  try {
    return await runClaimedTask(sweep, task, submission, options.execute ?? childExecutor, report);
  } finally {
    clearInterval(heartbeat);
    releaseClaim(sweep.dir, key);
  }
}

/** The rest of {@linkcode runTask}, once the task is claimed. */
async function runClaimedTask(
  sweep: Sweep,
  task: StoredTask,
  submission: string,
  execute: TaskExecutor,
  report: (line: string) => void,
): Promise<number> {
  const key = task.key;
  const runsRoot = runsRootOf(sweep.dir);
  // The run store, not the queue, says what is left: a task may have completed since it was submitted.
  const [state] = await statesOf([task], { sweepDir: null, runsRoot, experimentName: sweep.experiment_name });
  if (state.status === "completed" || state.status === "active") {
    report(
      `task ${task.index} ${key}: ${state.status === "completed" ? "already completed" : "being run"} (${state.run})`,
    );
    return 0;
  }
  const env = Deno.env.toObject();
  const jobId = env.SLURM_ARRAY_JOB_ID && env.SLURM_ARRAY_TASK_ID !== undefined
    ? `${env.SLURM_ARRAY_JOB_ID}_${env.SLURM_ARRAY_TASK_ID}`
    : null;
  const logs = jobId
    ? { out: join(sweep.dir, "slurm", `${jobId}.out`), err: join(sweep.dir, "slurm", `${jobId}.err`) }
    : { out: null, err: null };
  const started = new Date();
  const before = readTaskRecord(sweep.dir, key);
  writeTaskState(sweep.dir, key, {
    index: task.index,
    status: "running",
    executor: before?.executor ?? "slurm",
    attempts: (before?.attempts ?? 0) + (before?.status === "submitted" ? 0 : 1),
    ...(jobId ? { job_id: jobId } : {}),
    submission,
    run_dir: state.resume,
    resumed: state.resume,
    exit_code: null,
    ...(logs.err ? logs : {}),
    pid: Deno.pid,
    host: Deno.hostname(),
    started: started.toISOString(),
    ended: null,
    wall_s: null,
  });
  const args = [...launchArgs(task, state.resume), "--runs", runsRoot];
  report(`task ${task.index} ${key}: ${state.resume ? `resuming ${state.resume}` : "starting"}`);
  const code = await execute(args, { [SWEEP_TASK_ENV]: sweepTaskTag(sweep.id, task) });
  const interrupted = code === 130 || code === 143;
  writeTaskState(sweep.dir, key, {
    status: code === 0 ? "completed" : interrupted ? "interrupted" : "failed",
    exit_code: code,
    run_dir: state.resume ?? runOfTask(runsRoot, sweep.experiment_name, key, started),
    ended: new Date().toISOString(),
    wall_s: Number(((Date.now() - started.getTime()) / 1000).toFixed(3)),
  });
  return code;
}
