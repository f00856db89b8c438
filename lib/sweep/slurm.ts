/**
 * The Slurm executor: a sweep's tasks as job arrays (`sbatch --parsable`),
 * and their states read without accounting (`squeue`, then `scontrol`,
 * since a plain install has no `sacct`).
 *
 * ```
 * <sweep dir>/slurm/sub-<n>.sbatch   the script of submission n
 * <sweep dir>/slurm/sub-<n>.tasks    one task key per line; line i = array index i
 * <sweep dir>/slurm/<array>_<i>.{out,err}
 * ```
 *
 * @module
 */
import { basename, join, resolve } from "node:path";
import type { SlurmSpec, SweepTask } from "./spec.ts";
import { SLURM_DEFAULTS } from "./spec.ts";
import { readTaskRecord, REPO_ROOT, type SlurmJobState, writeTaskState } from "./store.ts";
import { shellWord } from "../core/shell.ts";

/** Options of one submission's script. */
export interface SbatchOptions {
  /** The sweep id (`--job-name=ll-<id>`). */
  id: string;
  /** The sweep's folder. */
  sweepDir: string;
  /** `sub-<n>`: the script reads `slurm/<submission>.tasks`. */
  submission: string;
  /** Array elements: indices 0 … count−1. */
  count: number;
  /** The Slurm settings. */
  slurm: SlurmSpec;
  /** The project root the script runs `main.ts` from. */
  repoRoot: string;
  /** The run store the tasks write to. */
  runsRoot: string;
  /** The deno executable the script runs. */
  denoPath: string;
}

/** `--mem`: whole gigabytes as `<m>G`, a fraction as whole megabytes (sbatch takes no decimals). */
function memFlag(gb: number): string {
  return Number.isInteger(gb) ? `${gb}G` : `${Math.ceil(gb * 1024)}M`;
}

/** One `#SBATCH` line of an optional setting as submitit writes it: `_` → `-`, `true` bare, `false` left out. */
function optionLine(key: string, value: string | number | boolean): string | null {
  const flag = key.replaceAll("_", "-");
  if (value === false) return null;
  if (value === true) return `#SBATCH --${flag}`;
  return `#SBATCH --${flag}=${shellWord(String(value))}`;
}

/**
 * The batch script of one submission: the fixed header, then partition,
 * qos, account and `additional_parameters` sorted by name (left out when
 * unset), then the `setup` lines, then `sweep run-task` of the element.
 */
export function sbatchScript(o: SbatchOptions): string {
  if (!Number.isInteger(o.count) || o.count < 1) throw new Error(`sbatchScript: count must be ≥ 1, not ${o.count}`);
  const slurm: SlurmSpec = { ...SLURM_DEFAULTS, ...o.slurm };
  const dir = o.sweepDir.replace(/\/$/, "");
  const repo = o.repoRoot.replace(/\/$/, "");
  const parallel = Math.min(o.count, slurm.array_parallelism);
  const lines = [
    "#!/bin/bash",
    `#SBATCH --job-name=${shellWord(`ll-${o.id}`)}`,
    `#SBATCH --array=0-${o.count - 1}%${parallel}`,
    `#SBATCH --chdir=${shellWord(repo)}`,
    `#SBATCH --cpus-per-task=${slurm.cpus_per_task}`,
    `#SBATCH --mem=${memFlag(slurm.mem_gb)}`,
    `#SBATCH --time=${slurm.timeout_min}`,
    `#SBATCH --output=${shellWord(`${dir}/slurm/%A_%a.out`)}`,
    `#SBATCH --error=${shellWord(`${dir}/slurm/%A_%a.err`)}`,
    "#SBATCH --open-mode=append",
  ];
  const optional: Record<string, string | number | boolean> = { ...slurm.additional_parameters };
  for (const key of ["partition", "qos", "account"] as const) {
    const value = slurm[key];
    if (value !== undefined && value !== null && value !== "") optional[key] = value;
  }
  for (const key of Object.keys(optional).sort()) {
    const line = optionLine(key, optional[key]);
    if (line !== null) lines.push(line);
  }
  lines.push(...(slurm.setup ?? []));
  lines.push(`export LATENTLAB_RUNS=${shellWord(o.runsRoot)}`);
  lines.push(
    `exec ${shellWord(o.denoPath)} run -A ${shellWord(`${repo}/main.ts`)} sweep run-task ` +
      `${shellWord(dir)} ${shellWord(o.submission)} "$SLURM_ARRAY_TASK_ID"`,
  );
  return lines.join("\n") + "\n";
}

/** What a Slurm command printed. */
interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

async function slurmCommand(command: string, args: string[]): Promise<Output> {
  let result: Deno.CommandOutput;
  try {
    result = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped", stdin: "null" }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${command} is not on PATH: is this a Slurm login node?`);
    }
    throw error;
  }
  const decoder = new TextDecoder();
  return { code: result.code, stdout: decoder.decode(result.stdout), stderr: decoder.decode(result.stderr) };
}

/** Array size MaxArraySize allows when `scontrol` says nothing: Slurm's default. */
export const DEFAULT_MAX_ARRAY_SIZE = 1001;

/** `MaxArraySize = <n>` of `scontrol show config`, or null. */
export function parseMaxArraySize(config: string): number | null {
  const match = /^\s*MaxArraySize\s*=\s*(\d+)/m.exec(config);
  return match ? Number(match[1]) : null;
}

/** The most elements one array may have (indices 0 … MaxArraySize−1); 1001 when `scontrol` cannot tell. */
export async function maxArraySize(): Promise<number> {
  try {
    const out = await slurmCommand("scontrol", ["show", "config"]);
    const size = out.code === 0 ? parseMaxArraySize(out.stdout) : null;
    return size !== null && size > 0 ? size : DEFAULT_MAX_ARRAY_SIZE;
  } catch {
    return DEFAULT_MAX_ARRAY_SIZE;
  }
}

/** What a submission needs besides its tasks. */
export interface SubmitOptions {
  /** The sweep id. */
  id: string;
  /** The sweep's folder. */
  sweepDir: string;
  /** The Slurm settings. */
  slurm: SlurmSpec;
  /** The run store the tasks write to. */
  runsRoot: string;
  /** The project root; defaults to this checkout's. */
  repoRoot?: string;
  /** The deno executable; defaults to the running one. */
  denoPath?: string;
}

/** A submitted array. */
export interface Submission {
  /** `sub-<n>`. */
  submission: string;
  /** The array's job id (`sbatch --parsable` without its cluster). */
  arrayId: string;
  /** Task keys in array order. */
  keys: string[];
}

/**
 * Claims the next free `sub-<n>` (the `.tasks` file is created exclusively,
 * so two invocations never share a number), writes its key list and
 * script, and submits it. When sbatch fails both files are removed and the
 * Error carries sbatch's stderr: nothing counts as submitted.
 */
export async function submit(keys: readonly string[], o: SubmitOptions): Promise<Submission> {
  if (keys.length === 0) throw new Error("submit: no tasks");
  // Jobs start in the repository (--chdir): every path in the script is absolute.
  const sweepDir = resolve(o.sweepDir);
  const dir = join(sweepDir, "slurm");
  Deno.mkdirSync(dir, { recursive: true });
  let n = 0;
  for (const entry of Deno.readDirSync(dir)) {
    const match = /^sub-(\d+)\.tasks$/.exec(entry.name);
    if (match) n = Math.max(n, Number(match[1]) + 1);
  }
  let submission: string;
  let tasksPath: string;
  for (;; n++) {
    submission = `sub-${n}`;
    tasksPath = join(dir, `${submission}.tasks`);
    try {
      Deno.writeTextFileSync(tasksPath, keys.join("\n") + "\n", { createNew: true });
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
  }
  const scriptPath = join(dir, `${submission}.sbatch`);
  const forget = () => {
    for (const path of [scriptPath, tasksPath]) {
      try {
        Deno.removeSync(path);
      } catch { /* already gone */ }
    }
  };
  let out: Output;
  try {
    Deno.writeTextFileSync(
      scriptPath,
      sbatchScript({
        id: o.id,
        sweepDir,
        submission,
        count: keys.length,
        slurm: o.slurm,
        repoRoot: o.repoRoot ?? REPO_ROOT,
        runsRoot: resolve(o.runsRoot),
        denoPath: o.denoPath ?? Deno.execPath(),
      }),
    );
    out = await slurmCommand("sbatch", ["--parsable", scriptPath]);
  } catch (error) {
    forget();
    throw error;
  }
  // --parsable prints "<job id>" or "<job id>;<cluster>".
  const arrayId = out.stdout.trim().split(";")[0];
  if (out.code !== 0 || !/^\d+$/.test(arrayId)) {
    forget();
    const said = out.stderr.trim() || out.stdout.trim() || `exit code ${out.code}`;
    throw new Error(`sbatch refused ${submission} of sweep ${o.id}:\n${said}`);
  }
  return { submission, arrayId, keys: [...keys] };
}

/** `slurm/<array>_<i>.out` and `.err` of an element: the script's `%A_%a`, resolved. */
export function slurmLogPaths(sweepDir: string, jobId: string): { out: string; err: string } {
  return { out: join(sweepDir, "slurm", `${jobId}.out`), err: join(sweepDir, "slurm", `${jobId}.err`) };
}

/** What {@linkcode runSlurm} needs of a sweep: its Slurm settings (its own or its spec's), and its id. */
export interface SlurmSweep {
  /** Defaults to the sweep folder's name. */
  id?: string;
  /** The sweep's own Slurm settings. */
  slurm?: SlurmSpec;
  /** Its spec, whose Slurm settings apply when it has none of its own. */
  spec?: { slurm?: SlurmSpec };
}

/**
 * Submits `tasks` (the ones the caller found to need a launch) as arrays of
 * at most MaxArraySize elements, and records each as submitted with its
 * element's job id and logs. A failed sbatch throws after the submissions
 * before it are recorded; its own tasks stay unsubmitted.
 */
export async function runSlurm(
  sweep: SlurmSweep,
  tasks: readonly Pick<SweepTask, "key" | "index">[],
  options: { sweepDir: string; runsRoot: string; repoRoot?: string; denoPath?: string },
): Promise<{ launched: number; submissions: Submission[] }> {
  const submissions: Submission[] = [];
  if (tasks.length === 0) return { launched: 0, submissions };
  const slurm: SlurmSpec = { ...SLURM_DEFAULTS, ...(sweep.slurm ?? sweep.spec?.slurm) };
  const id = sweep.id ?? basename(resolve(options.sweepDir));
  const size = await maxArraySize();
  for (let start = 0; start < tasks.length; start += size) {
    const chunk = tasks.slice(start, start + size);
    const sub = await submit(chunk.map((t) => t.key), { id, slurm, ...options });
    submissions.push(sub);
    chunk.forEach((task, i) => {
      const jobId = `${sub.arrayId}_${i}`;
      const logs = slurmLogPaths(resolve(options.sweepDir), jobId);
      writeTaskState(options.sweepDir, task.key, {
        index: task.index,
        status: "submitted",
        executor: "slurm",
        attempts: (readTaskRecord(options.sweepDir, task.key)?.attempts ?? 0) + 1,
        job_id: jobId,
        submission: sub.submission,
        run_dir: null,
        resumed: null,
        exit_code: null,
        out: logs.out,
        err: logs.err,
        pid: null,
        host: null,
        started: null,
        ended: null,
        wall_s: null,
      });
    });
  }
  return { launched: tasks.length, submissions };
}

/** One line of `squeue -o "%i|%T|%r"`. */
export interface SqueueEntry {
  /** `%T`: the job state. */
  state: string;
  /** `%r`: the reason for that state. */
  reason: string;
}

/** `13_[2-5%2]` → 13_2 … 13_5 (the `%` throttle dropped); `13_[1,4-5]` → 13_1, 13_4, 13_5; else the id itself. */
export function expandJobId(id: string): string[] {
  const match = /^(\d+)_\[([^\]]*)\]$/.exec(id);
  if (!match) return [id];
  const ids: string[] = [];
  for (const part of match[2].split("%")[0].split(",")) {
    const range = /^(\d+)(?:-(\d+))?(?::(\d+))?$/.exec(part.trim());
    if (!range) continue;
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    const step = range[3] === undefined ? 1 : Math.max(1, Number(range[3]));
    for (let i = from; i <= to; i += step) ids.push(`${match[1]}_${i}`);
  }
  return ids;
}

/**
 * Job states from `squeue -h [-r] -j <ids> -o "%i|%T|%r"`, by job id
 * (`<array>_<i>`); a pending range (`13_[2-5%2]`, printed without `-r`)
 * gives one entry per element.
 */
export function parseSqueue(text: string): Map<string, SqueueEntry> {
  const states = new Map<string, SqueueEntry>();
  for (const line of text.split("\n")) {
    const fields = line.trim().split("|");
    if (fields.length < 3 || fields[0] === "") continue;
    const entry = { state: fields[1].trim(), reason: fields.slice(2).join("|").trim() };
    for (const id of expandJobId(fields[0].trim())) states.set(id, entry);
  }
  return states;
}

/** The fields of one `scontrol show job` record that say how a job ended. */
export interface ScontrolJob {
  /** `<ArrayJobId>_<ArrayTaskId>`, or `JobId` of a job outside an array. */
  jobId: string;
  /** `JobState`. */
  jobState: string;
  /** `Reason`. */
  reason: string;
  /** The script's exit status (`ExitCode=7:0` → 7). */
  exitCode: number | null;
  /** The signal that ended it (`ExitCode=0:15` → 15), 0 when none. */
  signal: number;
  /** `StdErr`: the error log's path. */
  stdErr?: string;
  /** `StdOut`: the output log's path. */
  stdOut?: string;
}

function scontrolFields(record: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const match of record.matchAll(/(?:^|\s)([A-Za-z][A-Za-z0-9/:_]*)=(\S*)/g)) {
    if (!fields.has(match[1])) fields.set(match[1], match[2]);
  }
  return fields;
}

function scontrolRecord(record: string): ScontrolJob | null {
  const fields = scontrolFields(record);
  const jobState = fields.get("JobState");
  if (jobState === undefined) return null;
  const array = fields.get("ArrayJobId");
  const task = fields.get("ArrayTaskId");
  const exit = /^(\d+):(\d+)$/.exec(fields.get("ExitCode") ?? "");
  const job: ScontrolJob = {
    jobId: array && task ? `${array}_${task}` : fields.get("JobId") ?? "",
    jobState,
    reason: fields.get("Reason") ?? "",
    exitCode: exit ? Number(exit[1]) : null,
    signal: exit ? Number(exit[2]) : 0,
  };
  const err = fields.get("StdErr");
  const out = fields.get("StdOut");
  if (err) job.stdErr = err;
  if (out) job.stdOut = out;
  return job;
}

/** Every record of `scontrol show job` output (records are separated by blank lines). */
export function parseScontrolJobs(text: string): ScontrolJob[] {
  return text.split(/\n\s*\n/).map(scontrolRecord).filter((job): job is ScontrolJob => job !== null);
}

/**
 * The first record of `scontrol show job <array>_<i>`:
 * `JobState=FAILED Reason=NonZeroExitCode … ExitCode=7:0` → `{ jobState: "FAILED", reason: "NonZeroExitCode", exitCode: 7 }`.
 * Throws when the text holds no job.
 */
export function parseScontrolJob(text: string): ScontrolJob {
  const job = parseScontrolJobs(text)[0];
  if (!job) throw new Error(`no JobState in scontrol output: ${text.trim().slice(0, 200)}`);
  return job;
}

export type { SlurmJobState };

const PENDING = new Set(["PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"]);
const RUNNING = new Set([
  "RUNNING",
  "COMPLETING",
  "SUSPENDED",
  "STOPPED",
  "SIGNALING",
  "STAGE_OUT",
  "RESIZING",
  "POWER_UP_NODE",
  "UPDATE_DB",
]);

/** Ended states where Slurm took the job away (a user, a node, a preemption): no verdict on the task itself. */
const TAKEN = new Set(["CANCELLED", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "DEADLINE", "REVOKED"]);

/**
 * A Slurm job state (`%T`, `JobState`) as a sweep counts it: COMPLETED
 * completed; FAILED, TIMEOUT, OUT_OF_MEMORY and the like failed; a job
 * cancelled or lost with its node lost (a pending element cancelled is
 * reported CANCELLED when it was the array's last pending one, and not at
 * all otherwise: both mean the task never ran).
 */
export function classifyJobState(state: string): "pending" | "running" | "completed" | "failed" | "lost" {
  const base = state.split(/[\s+]/)[0].toUpperCase();
  if (PENDING.has(base)) return "pending";
  if (RUNNING.has(base)) return "running";
  if (base === "COMPLETED") return "completed";
  return TAKEN.has(base) ? "lost" : "failed";
}

/** Whether a Slurm command failed only because it knows none of the ids asked about (all purged). */
export function knowsNoJob(stderr: string): boolean {
  return /Invalid job id specified|not found/i.test(stderr);
}

/** `<array>` of `<array>_<i>`. */
function arrayOf(jobId: string): string {
  return jobId.split("_")[0];
}

/**
 * States of elements `<array>_<i>`: `squeue` for what is queued or
 * running, then `scontrol show job` (ended jobs stay MinJobAge, 300 s by
 * default) for the rest, once per array; what neither knows is lost (a
 * pending element cancelled, or an ended one forgotten). Throws when
 * Slurm does not answer, rather than calling live jobs lost.
 */
export async function slurmJobStates(jobIds: readonly string[]): Promise<Map<string, SlurmJobState>> {
  const states = new Map<string, SlurmJobState>();
  const wanted = [...new Set(jobIds.filter((id) => id !== ""))];
  if (wanted.length === 0) return states;
  const arrays = [...new Set(wanted.map(arrayOf))];
  const queued = await slurmCommand("squeue", ["-h", "-r", "-j", arrays.join(","), "-o", "%i|%T|%r"]);
  if (queued.code !== 0 && !knowsNoJob(queued.stderr)) {
    throw new Error(`squeue failed (exit ${queued.code}): ${queued.stderr.trim()}`);
  }
  const listed = queued.code === 0 ? parseSqueue(queued.stdout) : new Map<string, SqueueEntry>();
  const missing = new Set<string>();
  for (const id of wanted) {
    const entry = listed.get(id);
    if (entry) {
      const state = classifyJobState(entry.state);
      states.set(id, { state, reason: entry.reason === "None" ? undefined : entry.reason });
    } else {
      missing.add(id);
    }
  }
  for (const array of new Set([...missing].map(arrayOf))) {
    const shown = await slurmCommand("scontrol", ["show", "job", array]);
    if (shown.code !== 0 && !knowsNoJob(shown.stderr)) {
      throw new Error(`scontrol show job ${array} failed (exit ${shown.code}): ${shown.stderr.trim()}`);
    }
    const records = new Map<string, ScontrolJob>();
    if (shown.code === 0) {
      for (const job of parseScontrolJobs(shown.stdout)) {
        const [arrayId, taskIds] = job.jobId.split("_");
        // A record of a pending range names its elements `2-5%2`.
        for (const id of expandJobId(taskIds?.includes("-") ? `${arrayId}_[${taskIds}]` : job.jobId)) {
          records.set(id, job);
        }
      }
    }
    for (const id of missing) {
      if (arrayOf(id) !== array) continue;
      const job = records.get(id);
      if (!job) {
        states.set(id, { state: "lost", reason: "neither squeue nor scontrol knows the job" });
        continue;
      }
      const state = classifyJobState(job.jobState);
      const jobState = job.jobState.split(/[\s+]/)[0];
      // FAILED says why in Reason (NonZeroExitCode); other ends are named by their state (TIMEOUT, CANCELLED).
      const reason = (state === "failed" || state === "lost") && jobState !== "FAILED"
        ? jobState
        : job.reason === "None" || job.reason === ""
        ? undefined
        : job.reason;
      const result: SlurmJobState = { state, reason };
      if (job.exitCode !== null && (state === "completed" || state === "failed")) result.exitCode = job.exitCode;
      states.set(id, result);
    }
  }
  return states;
}

/** Cancels whole arrays (or single elements `<array>_<i>`); throws with scancel's stderr. */
export async function cancelJobs(arrayIds: readonly string[]): Promise<void> {
  const ids = [...new Set(arrayIds.filter((id) => id !== ""))];
  if (ids.length === 0) return;
  const out = await slurmCommand("scancel", ids);
  if (out.code !== 0) throw new Error(`scancel ${ids.join(" ")} failed: ${out.stderr.trim()}`);
}
