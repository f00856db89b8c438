/**
 * The `sweep` command line: launch a spec's tasks on the local worker pool
 * or as Slurm job arrays (re-invoking it is the resume), and `status`,
 * `cancel`, `list` and the internal `run-task` of a Slurm array element.
 *
 * @module
 */
import { join } from "node:path";
import { checkRunsRoot, parseCommandLine } from "../core/cli.ts";
import { coerceValue, integer } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { type AnyExperiment, defaultRunsRoot, USAGE_EXIT_CODE } from "../core/experiment.ts";
import { SWEEPS_FOLDER } from "../core/run_layout.ts";
import { defaultWorkers, runLocal, runTask, type TaskLaunch } from "./local.ts";
import { acquireSweepLock } from "./lock.ts";
import { cancelJobs, runSlurm, slurmJobStates } from "./slurm.ts";
import { checkSweepId, expandSweep, loadSweepSpec, MAX_TASKS, sweepId } from "./spec.ts";
import {
  countStates,
  describeValues,
  findSweepDir,
  listSweeps,
  needsLaunch,
  planSweep,
  readSweep,
  readTaskRecord,
  runsRootOf,
  type SlurmStates,
  statesOf,
  statusLine,
  type Sweep,
  type TaskState,
  writeSweep,
} from "./store.ts";

/** What the sweep command needs of the program around it (lib/ cannot import the experiment registry). */
export interface SweepContext {
  /** The experiment a spec names: a registered name or a module path; throws UsageError. */
  resolveExperiment(ref: string): Promise<AnyExperiment>;
  /** Runs `main.ts run <args>` in this process; its exit code. */
  runInProcess(args: string[]): Promise<number>;
  /** Lines of results (default: stdout). */
  print?(line: string): void;
  /** Progress lines (default: stderr). */
  report?(line: string): void;
}

/** The usage of `sweep`, for errors and `--help`. */
export const SWEEP_USAGE =
  `usage: deno task sweep <spec.json|spec.ts> [--executor local|slurm] [--workers N] [--runs dir]
                        [--name id] [--dry-run] [--wait] [--max-failures N]
       deno task sweep status <id|dir> [--runs dir] [--json]
       deno task sweep cancel <id|dir> [--runs dir]
       deno task sweep list [--runs dir]`;

/** Seconds between two looks at the tasks of `--wait`. */
const WAIT_POLL_MS = 5_000;

/** Whether an executable called `name` is on PATH. */
export function onPath(name: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const info = Deno.statSync(join(dir, name));
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** Flags of a sub-command, each checked against `valid`; bare flags (`--json`) give back a swallowed positional. */
function parseFlags(args: string[], command: string, valid: readonly string[], bare: readonly string[] = []) {
  const { positionals, flags } = parseCommandLine(args);
  for (const key of flags.keys()) {
    if (!valid.includes(key)) {
      throw new UsageError(`unknown option --${key} for ${command}; valid: ${valid.map((k) => `--${k}`).join(", ")}`);
    }
  }
  const on = new Set<string>();
  for (const key of bare) {
    const value = flags.get(key);
    if (value === undefined || value === "false") continue;
    // `--dry-run spec.json` reads the spec as the flag's value; it is a positional.
    if (value !== true && value !== "true") positionals.push(value);
    on.add(key);
  }
  const text = (key: string, what: string): string | undefined => {
    const value = flags.get(key);
    if (value === true) throw new UsageError(`--${key} needs ${what}`);
    return value;
  };
  return { positionals, flags, on, text };
}

function runsRootFrom(value: string | undefined, write: boolean): string {
  if (value !== undefined) {
    checkRunsRoot(value, { write });
    return value;
  }
  const root = defaultRunsRoot();
  checkRunsRoot(root, {
    what: Deno.env.get("LATENTLAB_RUNS") !== undefined ? "$LATENTLAB_RUNS" : "the run store",
    write,
  });
  return root;
}

/** Slurm's word on a sweep's jobs when any task was submitted and Slurm can be asked; else files only. */
function slurmIfSubmitted(sweep: Sweep, report: (line: string) => void): SlurmStates | undefined {
  const submitted = sweep.tasks.some((t) => readTaskRecord(sweep.dir, t.key)?.job_id);
  if (!submitted) return undefined;
  if (!onPath("squeue")) {
    report("squeue is not on PATH: the states of submitted tasks come from files only");
    return undefined;
  }
  return async (ids) => {
    try {
      return await slurmJobStates(ids);
    } catch (error) {
      report(`Slurm does not answer (${(error as Error).message}); states come from files only`);
      return new Map();
    }
  };
}

/** Lines that list the tasks that did not complete: index, key, varied values, status, exit code, run, log. */
export function problemLines(states: readonly TaskState[], varied: readonly string[]): string[] {
  const lines: string[] = [];
  for (const s of states) {
    if (!["failed", "lost", "interrupted", "crashed"].includes(s.status)) continue;
    const parts = [
      s.status,
      ...(s.exit_code !== null && s.status !== "interrupted" ? [`exit code ${s.exit_code}`] : []),
      ...(s.reason ? [s.reason] : []),
      ...(s.run ? [`run ${s.run}`] : []),
      ...(s.log ? [`log ${s.log}`] : []),
      ...(s.job_id ? [`job ${s.job_id}`] : []),
    ];
    lines.push(`  task ${s.index} ${s.key} ${describeValues(s, varied)}: ${parts.join(", ")}`);
    for (const line of s.tail) lines.push(`      ${line}`);
  }
  return lines;
}

/**
 * Runs `sweep <args>`; returns the exit code (0 done, 1 a task failed or
 * was not completed, 130 stopped by a signal). Throws UsageError for a bad
 * command line or spec before anything is written.
 */
export async function sweepCommand(args: string[], context: SweepContext): Promise<number> {
  const print = context.print ?? ((line: string) => console.log(line));
  const report = context.report ?? ((line: string) => console.error(line));
  const [first, ...rest] = args;
  if (first === undefined || first === "help" || args.includes("--help") || args.includes("-h")) {
    print(SWEEP_USAGE);
    return 0;
  }
  switch (first) {
    case "status":
      return await status(rest, print, report);
    case "cancel":
      return await cancel(rest, print, report);
    case "list":
      return await list(rest, print);
    case "run-task": {
      const { positionals } = parseFlags(rest, "sweep run-task", []);
      if (positionals.length !== 3) throw new UsageError("sweep run-task needs <sweep dir> <submission> <array index>");
      const [dir, submission, index] = positionals;
      return await runTask(dir, submission, index, {
        report,
        execute: async (runArgs, env) => {
          for (const [key, value] of Object.entries(env)) Deno.env.set(key, value);
          return await context.runInProcess(runArgs);
        },
      });
    }
    default:
      return await launch(args, context, print, report);
  }
}

async function launch(
  args: string[],
  context: SweepContext,
  print: (line: string) => void,
  report: (line: string) => void,
): Promise<number> {
  const valid = ["executor", "workers", "runs", "name", "dry-run", "wait", "max-failures"];
  const { positionals, flags, on, text } = parseFlags(args, "sweep", valid, ["dry-run", "wait"]);
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? `sweep needs a spec file (e.g. sweeps/ica_toy_smoke.json)\n${SWEEP_USAGE}`
        : `sweep takes one spec file; unexpected "${positionals[1]}"`,
    );
  }
  const executor = text("executor", "local or slurm") ?? "local";
  if (executor !== "local" && executor !== "slurm") {
    throw new UsageError(`--executor ${executor}: not allowed; executor must be one of local, slurm`);
  }
  const rawWorkers = flags.get("workers");
  const workers = rawWorkers === undefined
    ? undefined
    : coerceValue("workers", integer(1, "", { min: 1, max: 1024 }), rawWorkers) as number;
  if (workers !== undefined && executor === "slurm") {
    throw new UsageError("--workers is for the local executor; Slurm runs array_parallelism tasks at once");
  }
  const rawFailures = flags.get("max-failures");
  const maxFailures = rawFailures === undefined
    ? undefined
    : coerceValue("max-failures", integer(1, "", { min: 1, max: MAX_TASKS }), rawFailures) as number;
  const name = text("name", "a sweep name");
  if (name !== undefined) checkSweepId(name, "--name");
  const runsRoot = runsRootFrom(text("runs", "a folder"), true);
  const dryRun = on.has("dry-run");

  const spec = await loadSweepSpec(positionals[0]);
  if (name !== undefined) spec.name = name;
  const experiment = await context.resolveExperiment(spec.experiment);
  const tasks = expandSweep(spec, experiment);
  const id = sweepId(spec, experiment.name, tasks);
  const { sweep, existing } = planSweep({ id, spec, tasks, experimentName: experiment.name, runsRoot, executor });
  if (executor === "slurm" && !dryRun && !onPath("sbatch")) {
    throw new UsageError("--executor slurm: sbatch is not on PATH (run on a Slurm login node, or --executor local)");
  }

  if (dryRun) {
    const lines = [`sweep ${id}: ${tasks.length} tasks (dry run: nothing written or launched) in ${sweep.dir}`];
    if (existing) {
      const states = await statesOf(sweep.tasks, { sweepDir: sweep.dir, runsRoot, experimentName: experiment.name });
      lines.push(`${statusLine(id, states, states.filter(needsLaunch).length)} (would be; Slurm not asked)`);
    }
    for (const task of tasks) {
      lines.push(`  ${task.index} ${task.key} ${describeValues(task, sweep.varied)}: run ${task.args.join(" ")}`);
    }
    print(lines.join("\n"));
    return 0;
  }

  // One driver per sweep: a second launch while the first lives would plan the same tasks again.
  const statusHint = `deno task sweep status ${id}${text("runs", "") ? ` --runs ${runsRoot}` : ""}`;
  let releaseLock: () => void;
  try {
    releaseLock = acquireSweepLock(sweep.dir, id, statusHint);
  } catch (error) {
    // Not a mistake in the command line: the one line says who drives the sweep, without the usage.
    if (!(error instanceof UsageError)) throw error;
    report(`error: ${error.message}`);
    return USAGE_EXIT_CODE;
  }
  try {
    return await drive(sweep, { executor, workers, maxFailures, wait: on.has("wait"), statusHint }, print, report);
  } finally {
    releaseLock();
  }
}

/** Launches a planned sweep's tasks that need it, as the driver that holds its lock; the exit code. */
async function drive(
  sweep: Sweep,
  options: {
    executor: "local" | "slurm";
    workers: number | undefined;
    maxFailures: number | undefined;
    wait: boolean;
    statusHint: string;
  },
  print: (line: string) => void,
  report: (line: string) => void,
): Promise<number> {
  const { executor, workers, maxFailures } = options;
  const { id, runs_root: runsRoot } = sweep;
  const experimentName = sweep.experiment_name;
  await writeSweep(sweep);
  const slurm = executor === "slurm" ? slurmJobStates : slurmIfSubmitted(sweep, report);
  const states = await statesOf(sweep.tasks, { sweepDir: sweep.dir, runsRoot, experimentName, slurm });
  const launches: TaskLaunch[] = states.filter(needsLaunch).map((s) => ({
    ...sweep.tasks[s.index],
    resume: s.resume,
  }));

  if (executor === "slurm") {
    let launched: number;
    try {
      ({ launched } = await runSlurm(sweep, launches, { sweepDir: sweep.dir, runsRoot: sweep.runs_root }));
    } catch (error) {
      report(`error: ${(error as Error).message}`);
      return 1;
    }
    print(statusLine(id, states, launched));
    if (!options.wait) {
      report(`follow it: ${options.statusHint}`);
      return 0;
    }
    let last = "";
    for (;;) {
      const now = await statesOf(sweep.tasks, {
        sweepDir: sweep.dir,
        runsRoot,
        experimentName,
        slurm: slurmJobStates,
      });
      const line = statusLine(id, now);
      if (countStates(now).active === 0) {
        print(line);
        for (const l of problemLines(now, sweep.varied)) print(l);
        return now.every((s) => s.status === "completed") ? 0 : 1;
      }
      if (line !== last) report(line);
      last = line;
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    }
  }

  const poolSize = workers ?? defaultWorkers();
  // Running without a driver (an earlier one was killed): watched to their end, not launched again.
  const adopted = states.filter((s) => s.status === "active" && s.job_id === null).map((s) => sweep.tasks[s.index]);
  print(statusLine(id, states, launches.length));
  if (launches.length > 0) {
    report(
      `${launches.length} tasks on ${Math.min(poolSize, launches.length)} workers; logs in ${join(sweep.dir, "logs")}`,
    );
  }
  const result = await runLocal(sweep, launches, { workers: poolSize, maxFailures, report, adopted });
  const after = await statesOf(sweep.tasks, { sweepDir: sweep.dir, runsRoot, experimentName });
  print(statusLine(id, after));
  for (const line of problemLines(after, sweep.varied)) print(line);
  if (result.stoppedByFailures) report(`stopped launching after ${result.failed} failed tasks (--max-failures)`);
  if (result.signal) {
    report(`${result.signal}: the running tasks were interrupted; run the same command again to resume them`);
    return 130;
  }
  return after.every((s) => s.status === "completed" || s.status === "active") && result.failed === 0 ? 0 : 1;
}

async function status(args: string[], print: (line: string) => void, report: (line: string) => void) {
  const { positionals, on, text } = parseFlags(args, "sweep status", ["runs", "json"], ["json"]);
  if (positionals.length !== 1) throw new UsageError("sweep status needs one sweep id or folder");
  const dir = findSweepDir(positionals[0], runsRootFrom(text("runs", "a folder"), false));
  const sweep = readSweep(dir);
  const states = await statesOf(sweep.tasks, {
    sweepDir: dir,
    runsRoot: runsRootOf(dir),
    experimentName: sweep.experiment_name,
    metric: sweep.spec?.metric?.name,
    slurm: slurmIfSubmitted(sweep, report),
  });
  if (on.has("json")) {
    print(JSON.stringify(
      {
        id: sweep.id,
        dir,
        experiment: sweep.experiment,
        preset: sweep.preset,
        created: sweep.created,
        executor: sweep.executor,
        metric: sweep.spec?.metric ?? null,
        varied: sweep.varied,
        total: states.length,
        counts: countStates(states),
        tasks: states,
      },
      null,
      2,
    ));
    return 0;
  }
  print(statusLine(sweep.id, states));
  for (const line of problemLines(states, sweep.varied)) print(line);
  return 0;
}

async function cancel(args: string[], print: (line: string) => void, report: (line: string) => void) {
  const { positionals, text } = parseFlags(args, "sweep cancel", ["runs"]);
  if (positionals.length !== 1) throw new UsageError("sweep cancel needs one sweep id or folder");
  const dir = findSweepDir(positionals[0], runsRootFrom(text("runs", "a folder"), false));
  const sweep = readSweep(dir);
  const slurm = slurmIfSubmitted(sweep, report);
  const states = await statesOf(sweep.tasks, {
    sweepDir: dir,
    runsRoot: runsRootOf(dir),
    experimentName: sweep.experiment_name,
    slurm,
  });
  const jobs = states.filter((s) => s.status === "active" && s.job_id).map((s) => s.job_id!);
  if (!slurm || jobs.length === 0) {
    print(
      `sweep ${sweep.id}: nothing to cancel: no queued or running Slurm job (a local sweep stops with Ctrl-C ` +
        "in its terminal, or SIGTERM to its process)",
    );
    return 0;
  }
  try {
    await cancelJobs(jobs);
  } catch (error) {
    report(`error: ${(error as Error).message}`);
    return 1;
  }
  print(`sweep ${sweep.id}: cancelled ${jobs.length} Slurm jobs (${jobs.join(" ")}); the next invocation resumes them`);
  return 0;
}

async function list(args: string[], print: (line: string) => void) {
  const { positionals, text } = parseFlags(args, "sweep list", ["runs"]);
  if (positionals.length > 0) throw new UsageError(`sweep list takes no argument; unexpected "${positionals[0]}"`);
  const root = runsRootFrom(text("runs", "a folder"), false);
  const sweeps = await listSweeps(root);
  if (sweeps.length === 0) {
    print(`no sweeps under ${join(root, SWEEPS_FOLDER)}`);
    return 0;
  }
  for (const s of sweeps) {
    const counts = Object.entries(s.counts).filter(([k, n]) => n > 0 || k === "completed").map(([k, n]) => `${n} ${k}`);
    print(
      `${s.id}  ${s.experiment} (${s.preset})  ${s.created}  ${s.executor}  ${s.total} tasks: ${counts.join(", ")}`,
    );
  }
  return 0;
}
