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
  /** Tasks whose run completed. */
  completed: number;
  /** Tasks that failed. */
  failed: number;
  /** Tasks that were interrupted. */
  interrupted: number;
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
}

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
 * Runs tasks `workers` at a time, each as its own process with its output
 * in `logs/<key>.{out,err}` (appended per attempt) and its record in
 * `tasks/<key>.json`. A failure stops nothing until `maxFailures` tasks
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
  const result: LocalResult = {
    launched: 0,
    completed: 0,
    failed: 0,
    interrupted: 0,
    signal: null,
    stoppedByFailures: false,
  };
  const queue = [...tasks];
  const children = new Set<Deno.ChildProcess>();
  const listeners: [Deno.Signal, () => void][] = [];
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    const listener = () => {
      result.signal = signal;
      for (const child of children) {
        try {
          child.kill(signal);
        } catch {
          // it has exited
        }
      }
    };
    Deno.addSignalListener(signal, listener);
    listeners.push([signal, listener]);
  }
  let done = 0;
  const runOne = async (task: TaskLaunch) => {
    const logs = localLogs(sweep.dir, task.key);
    const started = new Date();
    const args = [...launchArgs(task, task.resume), "--runs", sweep.runs_root];
    const header = `--- ${started.toISOString()} task ${task.index} ${task.resume ? "resumed" : "started"}: ` +
      `main.ts run ${args.join(" ")}\n`;
    Deno.mkdirSync(join(sweep.dir, "logs"), { recursive: true });
    const out = Deno.openSync(logs.out, { append: true, create: true });
    const err = Deno.openSync(logs.err, { append: true, create: true });
    const encoder = new TextEncoder();
    out.writeSync(encoder.encode(header));
    err.writeSync(encoder.encode(header));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN_PATH, "run", ...args],
      cwd: REPO_ROOT,
      env: { [SWEEP_TASK_ENV]: sweepTaskTag(sweep.id, task) },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    children.add(child);
    result.launched++;
    const attempts = readTaskRecord(sweep.dir, task.key)?.attempts ?? 0;
    writeTaskState(sweep.dir, task.key, {
      index: task.index,
      status: "running",
      executor: "local",
      attempts: attempts + 1,
      job_id: null,
      submission: null,
      run_dir: task.resume,
      resumed: task.resume,
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
    const [status] = await Promise.all([
      child.status,
      child.stdout.pipeTo(out.writable),
      child.stderr.pipeTo(err.writable),
    ]);
    children.delete(child);
    const wall = (Date.now() - started.getTime()) / 1000;
    const run = task.resume ?? runOfTask(sweep.runs_root, sweep.experiment_name, task.key, started);
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
    done++;
    const what = outcome === "failed" ? `failed (exit code ${status.code}; log ${logs.err})` : outcome;
    report(
      `[${done}/${tasks.length}] task ${task.index} ${task.key} ${describeValues(task, sweep.varied)}: ${what} ` +
        `in ${wall.toFixed(1)} s${run ? `, run ${run}` : ""}`,
    );
  };
  const worker = async () => {
    while (queue.length > 0 && result.signal === null) {
      if (result.failed >= maxFailures) {
        result.stoppedByFailures = true;
        return;
      }
      await runOne(queue.shift()!);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.workers, tasks.length)) }, worker));
  } finally {
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
 * `arrayIndex` of `slurm/<submission>.tasks`. A task the run store shows
 * completed (or being run) is left as it is (exit code 0); an interrupted
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
  const code = await (options.execute ?? childExecutor)(args, { [SWEEP_TASK_ENV]: sweepTaskTag(sweep.id, task) });
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
