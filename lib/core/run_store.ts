/**
 * The run store: one directory per run, plain files, append-only metrics.
 *
 * ```
 * <root>/<experiment>/<YYYYMMDD-HHMMSS>-<id>/
 *   run.json  config.json  metrics.jsonl  summary.json  media/  checkpoints/
 * ```
 *
 * Only run.json and summary.json are rewritten, always atomically (temp file
 * then rename); metrics.jsonl only grows, one JSON object per line, so a
 * killed run leaves every complete line readable.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { extremes, type TargetCurve } from "./curves.ts";
import { encodePng, type Image } from "./png.ts";
import { formatNpy, type NpyArray, type NpyData, parseNpy } from "./npy.ts";
import { UsageError } from "./errors.ts";
import { type TargetDirection, type Verdict, VERDICTS } from "./targets.ts";

/** Lifecycle states of a run; `crashed` is derived by readers from a stale heartbeat. */
export type RunStatus = "running" | "completed" | "failed" | "interrupted" | "crashed";

/** The contents of run.json. */
export interface RunInfo {
  id: string;
  experiment: string;
  argv: string[];
  status: RunStatus;
  created: string;
  ended: string | null;
  heartbeat: string;
  pid: number;
  host: string;
  seed: number;
  preset: string;
  backend: unknown;
  versions: Record<string, string>;
  git_commit: string | null;
  error?: string;
  /** Steps at which `--resume` continued this run, and the damaged checkpoints it passed over. */
  resumes?: { step: number; at: string; stopped?: string; passed_over?: string[] }[];
  /** The sweep task this run is (from `$LATENTLAB_SWEEP_TASK`), so that a sweep finds its runs in the store. */
  sweep?: SweepTag;
}

/** A run's place in a sweep: the sweep's id, the task's key and its index in the sweep's expansion. */
export interface SweepTag {
  id: string;
  key: string;
  index: number;
}

/** The folder under a run store root that holds sweeps; {@linkcode listRuns} passes over it. */
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

// Verdicts are defined with the targets they judge; summary.json stores them.
export { type TargetDirection, type Verdict, VERDICTS } from "./targets.ts";

/** One target of summary.json: the published number beside ours. */
export interface SummaryTarget {
  metric: string;
  paper: number;
  source: string;
  tolerance: number;
  direction: TargetDirection;
  ours: number | null;
  verdict: Verdict;
  /** "like-for-like" or "analogue" (absent in summaries written before targets had a class). */
  kind?: "like-for-like" | "analogue";
  /** What trivial models score here, as the target stated when the run ended. */
  nulls?: { value: number; model: string }[];
  tolerance_source?: string;
  /** The metric's learning curve during training, when the run logged it. */
  curve?: TargetCurve | null;
}

/** One claim of summary.json. */
export interface SummaryClaim {
  text: string;
  source: string;
  verdict: Verdict;
}

/** The contents of summary.json, written once when a run completes. */
export interface RunSummary {
  experiment: string;
  description: string;
  source: string;
  run_id: string;
  preset: string;
  seed: number;
  backend: string;
  wall_time_s: number;
  metrics: Record<string, number>;
  targets: SummaryTarget[];
  claims: SummaryClaim[];
  details: unknown;
  /** What the run's preset cannot show, and why (the experiment's `presetLimits`). */
  preset_limits?: string | null;
}

/** A heartbeat older than this marks a `running` run as crashed. */
export const STALE_HEARTBEAT_MS = 2 * 60 * 1000;
const HEARTBEAT_INTERVAL_MS = 15 * 1000;
const CHECKPOINTS_KEPT = 2;

/** Writes JSON to `path` through a temp file and a rename, so readers never see half a file. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const temp = `${path}.tmp-${Deno.pid}`;
  try {
    Deno.writeTextFileSync(temp, JSON.stringify(value, null, 2) + "\n");
    Deno.renameSync(temp, path);
  } catch (error) {
    // A full disk leaves the old file whole; the partial temp file goes too.
    removeIfPresent(temp);
    throw error;
  }
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
function runIdDate(id: string): Date | null {
  const m = RUN_ID.exec(id);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

/** A checkpoint as loaded back: its step, arrays and JSON state. */
export interface LoadedCheckpoint {
  step: number;
  arrays: Record<string, NpyArray>;
  state: unknown;
}

/** Options for creating a run directory. */
export interface NewRunOptions {
  root: string;
  experiment: string;
  argv: string[];
  seed: number;
  preset: string;
  backend: unknown;
  config: Record<string, unknown>;
  versions: Record<string, string>;
  gitCommit: string | null;
}

/** Writes one run's files. */
export class RunWriter {
  readonly dir: string;
  #info: RunInfo;
  #metrics: Deno.FsFile;
  #heartbeat: number;
  #createdMs: number;

  private constructor(dir: string, info: RunInfo) {
    this.dir = dir;
    this.#info = info;
    this.#createdMs = Date.parse(info.created);
    this.#metrics = Deno.openSync(join(dir, "metrics.jsonl"), { read: true, append: true, create: true });
    this.#endTornLine();
    this.#writeInfo();
    // Node's typings (pulled in by npm packages) widen the timer id; Deno's is a number.
    this.#heartbeat = setInterval(() => this.#writeInfo(), HEARTBEAT_INTERVAL_MS) as unknown as number;
    Deno.unrefTimer(this.#heartbeat);
  }

  /** Creates a fresh run directory with run.json (status running) and config.json. */
  static create(options: NewRunOptions): RunWriter {
    const now = new Date();
    const id = newRunId(now);
    const dir = join(options.root, options.experiment, id);
    Deno.mkdirSync(join(dir, "media"), { recursive: true });
    Deno.mkdirSync(join(dir, "checkpoints"), { recursive: true });
    acquireRunLock(dir);
    writeJsonAtomic(join(dir, "config.json"), options.config);
    const sweep = sweepTagFromEnv();
    return new RunWriter(dir, {
      id,
      experiment: options.experiment,
      argv: options.argv,
      status: "running",
      created: now.toISOString(),
      ended: null,
      heartbeat: now.toISOString(),
      pid: Deno.pid,
      host: Deno.hostname(),
      seed: options.seed,
      preset: options.preset,
      backend: options.backend,
      versions: options.versions,
      git_commit: options.gitCommit,
      ...(sweep ? { sweep } : {}),
    });
  }

  /** Reopens an existing run directory to continue it (`--resume`). */
  static reopen(dir: string, resumeStep: number, backend: unknown, passedOver: string[] = []): RunWriter {
    // Before anything is written: a second writer of a live run is refused.
    acquireRunLock(dir);
    const info = readRunInfo(dir);
    const now = new Date().toISOString();
    return new RunWriter(dir, {
      ...info,
      status: "running",
      ended: null,
      error: undefined,
      pid: Deno.pid,
      heartbeat: now,
      backend,
      resumes: [
        ...(info.resumes ?? []),
        {
          step: resumeStep,
          at: now,
          // When the attempt before stopped: the idle gap until `at` is not the run's duration.
          stopped: info.ended ?? new Date(lastBeat(dir, info)).toISOString(),
          ...(passedOver.length ? { passed_over: passedOver } : {}),
        },
      ],
    });
  }

  /**
   * Ends a line torn by a crash mid-write, so that a resumed run's first line
   * starts a line of its own instead of being glued to the fragment.
   */
  #endTornLine(): void {
    const size = this.#metrics.statSync().size;
    if (size === 0) return;
    const last = new Uint8Array(1);
    this.#metrics.seekSync(size - 1, Deno.SeekMode.Start);
    this.#metrics.readSync(last);
    if (last[0] !== 0x0a) this.#metrics.writeSync(Uint8Array.of(0x0a));
  }

  /** The current run.json contents. */
  get info(): Readonly<RunInfo> {
    return this.#info;
  }

  /** Seconds since the run was created. */
  elapsedSeconds(): number {
    return (Date.now() - this.#createdMs) / 1000;
  }

  #writeInfo(): void {
    this.#info.heartbeat = new Date().toISOString();
    writeJsonAtomic(join(this.dir, "run.json"), this.#info);
  }

  /** Appends one metrics line `{step, time, ...values}`; one write call per line. */
  log(step: number, values: Record<string, number>): void {
    const line = JSON.stringify({ step, time: Number(this.elapsedSeconds().toFixed(3)), ...values }) + "\n";
    const bytes = new TextEncoder().encode(line);
    let written = 0;
    while (written < bytes.length) written += this.#metrics.writeSync(bytes.subarray(written));
  }

  /** Writes a PNG under media/<name>/ and indexes it in media/media.jsonl. */
  image(name: string, step: number, image: Image): string {
    const safe = name.replace(/[^A-Za-z0-9_.-]+/g, "_");
    const folder = join(this.dir, "media", safe);
    Deno.mkdirSync(folder, { recursive: true });
    const file = `${String(step).padStart(8, "0")}.png`;
    Deno.writeFileSync(join(folder, file), encodePng(image));
    const entry: MediaEntry = { name, step, path: `${safe}/${file}`, width: image.width, height: image.height };
    Deno.writeTextFileSync(join(this.dir, "media", "media.jsonl"), JSON.stringify(entry) + "\n", {
      append: true,
    });
    return join(folder, file);
  }

  /**
   * Saves arrays and JSON state as checkpoints/step-<n>/ (written to a temp
   * folder, then renamed, so a checkpoint is either whole or absent) and
   * keeps the newest {@linkcode CHECKPOINTS_KEPT}.
   */
  saveCheckpoint(step: number, arrays: Record<string, { data: NpyData; shape: number[] }>, state: unknown): void {
    const root = join(this.dir, "checkpoints");
    writeArrayFolder(join(root, `step-${String(step).padStart(9, "0")}`), arrays, { step, state });
    for (const old of checkpointNames(this.dir).slice(0, -CHECKPOINTS_KEPT)) {
      removeIfPresent(join(root, old));
    }
  }

  /**
   * Saves a trained model's arrays and what rebuilds it (`info`, JSON) as
   * models/<name>/, for `eval --run` and `export-codes`; `name` is reduced to
   * letters, digits and `_ . @ = -`. Returns the name used.
   */
  saveModel(name: string, arrays: Record<string, { data: NpyData; shape: number[] }>, info: unknown): string {
    const safe = safeModelName(name);
    writeArrayFolder(join(this.dir, "models", safe), arrays, { info });
    return safe;
  }

  /** Writes summary.json atomically. */
  writeSummary(summary: unknown): void {
    writeJsonAtomic(join(this.dir, "summary.json"), summary);
  }

  /**
   * Ends the run with a final status; stops the heartbeat. The lock is kept
   * with `keepLock` (a run marked interrupted by a signal still finishes its
   * step): {@linkcode RunWriter.releaseLock} gives it up once nothing more is written.
   */
  finish(status: Exclude<RunStatus, "running" | "crashed">, error?: string, { keepLock = false } = {}): void {
    clearInterval(this.#heartbeat);
    this.#info.status = status;
    this.#info.ended = new Date().toISOString();
    if (error) this.#info.error = error;
    this.#writeInfo();
    try {
      this.#metrics.close();
    } catch {
      // already closed by an earlier finish
    }
    if (!keepLock) this.releaseLock();
  }

  /** Gives up the run's lock: this process writes nothing more to it. */
  releaseLock(): void {
    releaseRunLock(this.dir);
  }
}

/** Who writes a run: the holder of its `lock` file (the file's mtime is the writer's heartbeat too). */
export interface RunLock {
  pid: number;
  host: string;
  since: string;
}

const LOCK_FILE = "lock";

/** The lock file of a run directory. */
export function runLockPath(dir: string): string {
  return join(dir, LOCK_FILE);
}

/**
 * Whether process `pid` of this host is alive and a Deno process, or null
 * where /proc cannot tell (not Linux). A pid reused by another program is not a writer.
 */
function denoProcessAlive(pid: number): boolean | null {
  if (pid === Deno.pid) return true;
  try {
    return new TextDecoder().decode(Deno.readFileSync(`/proc/${pid}/cmdline`)).includes("deno");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return null;
    try {
      Deno.statSync("/proc/self");
      return false;
    } catch {
      return null;
    }
  }
}

/** The newest sign of life of a run's writer: run.json's heartbeat or the lock file's mtime, in ms. */
export function lastBeat(dir: string, info: Pick<RunInfo, "heartbeat">): number {
  const written = Date.parse(info.heartbeat);
  let touched = NaN;
  try {
    touched = Deno.statSync(runLockPath(dir)).mtime?.getTime() ?? NaN;
  } catch {
    // no lock: the run ended, or was written before runs had one
  }
  return Math.max(Number.isNaN(written) ? -Infinity : written, Number.isNaN(touched) ? -Infinity : touched);
}

/**
 * The live writer of a run, or null when none: the lock's process is alive
 * (on this host), or its heartbeat is fresh (another host sharing the
 * folder, or no /proc). A running run without a lock file (written before
 * runs had one) counts as live while its heartbeat is fresh.
 */
export function liveWriter(dir: string, now = Date.now()): RunLock | null {
  let lock: RunLock | null = null;
  try {
    const raw = JSON.parse(Deno.readTextFileSync(runLockPath(dir)));
    lock = { pid: Number(raw.pid), host: String(raw.host), since: String(raw.since) };
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) lock = { pid: NaN, host: "", since: "" };
  }
  let info: RunInfo | null = null;
  try {
    info = readRunInfo(dir);
  } catch {
    // a run without a readable run.json has no heartbeat to go by
  }
  const fresh = info !== null && now - lastBeat(dir, info) <= STALE_HEARTBEAT_MS;
  if (lock === null) {
    return info?.status === "running" && fresh ? { pid: info.pid, host: info.host, since: info.heartbeat } : null;
  }
  const alive = lock.host === Deno.hostname() ? denoProcessAlive(lock.pid) : null;
  return (alive ?? fresh) ? lock : null;
}

function lockRefusal(dir: string, holder: RunLock): UsageError {
  return new UsageError(
    `${dir} is being written by process ${holder.pid} on ${holder.host || "an unknown host"}` +
      `${holder.since ? ` (since ${holder.since})` : ""}; a run has one writer: stop that process, or wait ` +
      `for it to end, before --resume`,
  );
}

/**
 * Takes the run's lock for this process, or throws UsageError naming the
 * live writer. A lock left by a dead process (killed, crashed) is taken over.
 */
export function acquireRunLock(dir: string): void {
  const lock: RunLock = { pid: Deno.pid, host: Deno.hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // createNew is atomic: of two writers racing for a free run, one wins.
      Deno.writeTextFileSync(runLockPath(dir), JSON.stringify(lock) + "\n", { createNew: true });
      return;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const holder = liveWriter(dir);
      if (holder) throw lockRefusal(dir, holder);
      removeIfPresent(runLockPath(dir));
    }
  }
  throw lockRefusal(dir, liveWriter(dir) ?? { pid: NaN, host: "", since: "" });
}

/** Gives up this process's lock on a run (another process's lock is left alone). */
export function releaseRunLock(dir: string): void {
  try {
    const raw = JSON.parse(Deno.readTextFileSync(runLockPath(dir)));
    if (raw.pid === Deno.pid && raw.host === Deno.hostname()) Deno.removeSync(runLockPath(dir));
  } catch {
    // no lock, or not ours
  }
}

function removeIfPresent(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** Names of the complete checkpoints of a run, oldest first. */
function checkpointNames(dir: string): string[] {
  try {
    return [...Deno.readDirSync(join(dir, "checkpoints"))]
      .filter((e) => e.isDirectory && /^step-\d+$/.test(e.name))
      .map((e) => e.name)
      // By number: names are padded to 9 digits, and a step beyond that has more.
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/**
 * A checkpoint folder read back and checked: state.json parses, its step is
 * the folder's, every array it names parses with a shape that matches its
 * data, and no float array holds NaN or ±Inf (weights saved after training
 * diverged). Throws an Error saying what is wrong.
 */
function readCheckpoint(dir: string, name: string): LoadedCheckpoint {
  const { arrays, json } = readArrayFolder(join(dir, "checkpoints", name));
  const step = json.step;
  if (!Number.isSafeInteger(step) || `step-${String(step).padStart(9, "0")}` !== name) {
    throw new Error(`state.json says step ${JSON.stringify(step)}, the folder is ${name}`);
  }
  for (const [key, array] of Object.entries(arrays)) {
    const size = array.shape.reduce((a, b) => a * b, 1);
    if (array.data.length !== size) throw new Error(`${key}: ${array.data.length} values for shape [${array.shape}]`);
    if (array.data instanceof Float32Array || array.data instanceof Float64Array) {
      const bad = array.data.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw new Error(`${key}: value ${bad} is ${array.data[bad]}`);
    }
  }
  return { step: step as number, arrays, state: json.state };
}

/**
 * Loads the newest intact checkpoint of a run, or null when it has none.
 * A damaged newer one (truncated file, edited state.json, non-finite
 * weights) is passed over for the one before it, and named in `skipped`;
 * when every checkpoint is damaged, throws an Error listing why.
 */
export function loadLatestCheckpoint(dir: string): (LoadedCheckpoint & { skipped?: string[] }) | null {
  const names = checkpointNames(dir);
  const skipped: string[] = [];
  for (const name of names.toReversed()) {
    try {
      const checkpoint = readCheckpoint(dir, name);
      return skipped.length ? { ...checkpoint, skipped } : checkpoint;
    } catch (error) {
      skipped.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (skipped.length) throw new Error(`no intact checkpoint in ${join(dir, "checkpoints")}: ${skipped.join("; ")}`);
  return null;
}

/** A model name as saved under models/: other characters become "_". */
export function safeModelName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.@=-]/g, "_");
}

/** Names of the models a run saved with {@linkcode RunWriter.saveModel}, sorted. */
export function savedModels(dir: string): string[] {
  try {
    return [...Deno.readDirSync(join(dir, "models"))].filter((e) => e.isDirectory && !e.name.startsWith("."))
      .map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** A model saved by {@linkcode RunWriter.saveModel}: its arrays and info. */
export function loadSavedModel(dir: string, name: string): { arrays: Record<string, NpyArray>; info: unknown } {
  const { arrays, json } = readArrayFolder(join(dir, "models", name));
  return { arrays, info: (json as { info: unknown }).info };
}

/**
 * Writes arrays as 0.npy, 1.npy, … and `json` plus the array names as
 * state.json into `folder`, through a temp folder and a rename, so that a
 * reader sees the whole folder or none of it.
 */
export function writeArrayFolder(
  folder: string,
  arrays: Record<string, { data: NpyData; shape: number[] }>,
  json: Record<string, unknown>,
): void {
  const temp = join(dirname(folder), `.${basename(folder)}.tmp-${Deno.pid}`);
  try {
    Deno.mkdirSync(temp, { recursive: true });
    const names = Object.keys(arrays);
    names.forEach((key, i) =>
      Deno.writeFileSync(join(temp, `${i}.npy`), formatNpy(arrays[key].data, arrays[key].shape))
    );
    Deno.writeTextFileSync(join(temp, "state.json"), JSON.stringify({ ...json, names }));
  } catch (error) {
    // A full disk keeps the folder as it was, and no partial temp folder.
    removeIfPresent(temp);
    throw error;
  }
  removeIfPresent(folder);
  try {
    Deno.renameSync(temp, folder);
  } catch (error) {
    // Another writer's folder landed between the removal and the rename: leave no temp folder behind.
    removeIfPresent(temp);
    throw error;
  }
}

/** Reads a folder written by {@linkcode writeArrayFolder}. */
export function readArrayFolder(folder: string): { arrays: Record<string, NpyArray>; json: Record<string, unknown> } {
  const json = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
  if (!isObject(json) || !Array.isArray(json.names) || !json.names.every(isString)) {
    throw new Error(`${join(folder, "state.json")} lacks the list of array names`);
  }
  const arrays: Record<string, NpyArray> = {};
  (json.names as string[]).forEach((key, i) => {
    arrays[key] = parseNpy(Deno.readFileSync(join(folder, `${i}.npy`)), `${basename(folder)}/${key}`);
  });
  return { arrays, json };
}

/** Reads run.json as written, without deriving `crashed`; throws when it is missing or does not parse. */
export function readRunInfo(dir: string): RunInfo {
  return JSON.parse(readSmallFile(join(dir, "run.json")));
}

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

/** A run as readers show it ({@linkcode readRun}, {@linkcode listRuns}). */
export interface RunListing {
  dir: string;
  /** run.json with missing or mistyped fields filled in (see {@linkcode readRun}). */
  info: RunInfo;
  status: RunStatus;
  /** What is wrong with run.json, when something is; such a run is still listed. */
  problem?: string;
}

/** A JSON file's value, or undefined when it is missing, does not parse, or cannot be read. */
function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readSmallFile(path));
  } catch {
    return undefined;
  }
}

/** The most a reader reads of a run's JSON or index file in one synchronous call. */
const SMALL_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The text of a run's own small file, read only when it is a regular file
 * (not a link out of the store, a FIFO or a device, which would hang a
 * synchronous read) of at most {@linkcode SMALL_FILE_BYTES}. Throws otherwise.
 */
function readSmallFile(path: string): string {
  const info = Deno.lstatSync(path);
  if (!info.isFile) throw new Error(`${path} is not a regular file`);
  if (info.size > SMALL_FILE_BYTES) throw new Error(`${path} is ${info.size} bytes, more than a run file holds`);
  return Deno.readTextFileSync(path);
}

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === "string";
const isNumber = (value: unknown): value is number => typeof value === "number";
const isDate = (value: unknown): value is string => typeof value === "string" && !Number.isNaN(Date.parse(value));
const WRITTEN_STATUSES: readonly unknown[] = ["running", "completed", "failed", "interrupted"];

/**
 * A reader of fields of a parsed JSON object: an invalid field gives
 * `fallback`, and its key is noted in `bad` when readers show that field.
 */
function fieldPicker(raw: Record<string, unknown>, bad: string[]) {
  return <T>(key: string, valid: (value: unknown) => boolean, fallback: T, shown = true): T => {
    if (valid(raw[key])) return raw[key] as T;
    if (shown) bad.push(key);
    return fallback;
  };
}

/**
 * One run as readers show it, never throwing: null when run.json is missing
 * or does not parse (a run being created, or a damaged one). Missing or
 * mistyped fields are filled in, and those readers show are named in
 * `problem`: id and experiment from the directory names, `created` from the
 * run id, status `crashed` (no trustworthy record of how it ended).
 */
export function readRun(dir: string, now = Date.now()): RunListing | null {
  const raw = readJsonFile(join(dir, "run.json"));
  if (!isObject(raw)) return null;
  const bad: string[] = [];
  const pick = fieldPicker(raw, bad);
  pick("id", isString, basename(dir));
  pick("experiment", isString, basename(dirname(dir)));
  // The folder names the run: a copied folder keeps the id inside its run.json, and two rows must not share it.
  const id = basename(dir), experiment = basename(dirname(dir));
  for (const [key, named] of [["id", id], ["experiment", experiment]] as const) {
    if (isString(raw[key]) && raw[key] !== named) bad.push(`${key} (run.json says ${raw[key]}, the folder ${named})`);
  }
  const info: RunInfo = {
    ...(raw as Partial<RunInfo>),
    id,
    experiment,
    argv: pick("argv", (v) => Array.isArray(v) && v.every(isString), [], false),
    status: pick<RunStatus>("status", (v) => WRITTEN_STATUSES.includes(v), "crashed"),
    created: pick("created", isDate, runIdDate(isString(raw.id) ? raw.id : id)?.toISOString() ?? ""),
    ended: pick("ended", (v) => v === null || isDate(v), null),
    heartbeat: pick("heartbeat", isDate, ""),
    pid: pick("pid", isNumber, NaN, false),
    host: pick("host", isString, "", false),
    seed: pick("seed", isNumber, NaN),
    preset: pick("preset", isString, ""),
    backend: raw.backend ?? null,
    versions: pick("versions", isObject, {}, false),
    git_commit: pick("git_commit", (v) => v === null || isString(v), null, false),
  };
  const status = effectiveStatus(info, now, lastBeat(dir, info));
  return bad.length
    ? { dir, info, status, problem: `run.json: missing or invalid ${bad.join(", ")}` }
    : { dir, info, status };
}

/** Sorts runs newest first by `created` (those without a date last); ties by directory name, later first. */
function newestFirst(runs: RunListing[]): RunListing[] {
  const ms = (run: RunListing) => {
    const created = Date.parse(run.info.created);
    return Number.isNaN(created) ? -Infinity : created;
  };
  return runs.sort((a, b) => ms(b) - ms(a) || (a.dir < b.dir ? 1 : a.dir > b.dir ? -1 : 0));
}

/** Subdirectories of `path` by name; none when it is missing or was deleted while listing. */
function subdirectories(path: string): string[] {
  try {
    return [...Deno.readDirSync(path)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * Lists every run under `root` (all experiments), newest first. Directories
 * without a readable run.json (being created, or damaged) are skipped; a
 * run.json that lacks fields is listed with a `problem` (see {@linkcode readRun}).
 */
export function listRuns(root: string, options: { now?: number } = {}): RunListing[] {
  const runs: RunListing[] = [];
  for (const experiment of subdirectories(root)) {
    if (experiment === SWEEPS_FOLDER) continue;
    for (const name of subdirectories(join(root, experiment))) {
      const run = readRun(join(root, experiment, name), options.now);
      if (run) runs.push(run);
    }
  }
  return newestFirst(runs);
}

/**
 * Folders under `root` where a run would be that {@linkcode listRuns} passes
 * over, as `experiment/name` with why: no run.json (a run being created, or
 * not a run), one that is not a regular file, or one that does not parse.
 */
export function skippedRunFolders(root: string): { folder: string; why: string }[] {
  const skipped: { folder: string; why: string }[] = [];
  for (const experiment of subdirectories(root)) {
    if (experiment === SWEEPS_FOLDER) continue;
    for (const name of subdirectories(join(root, experiment))) {
      const path = join(root, experiment, name, "run.json");
      let why: string | null = null;
      try {
        if (!isObject(JSON.parse(readSmallFile(path)))) why = "run.json is not a JSON object";
      } catch (error) {
        why = error instanceof Deno.errors.NotFound
          ? "no run.json"
          : error instanceof SyntaxError
          ? "run.json does not parse"
          : (error as Error).message.replace(path, "run.json");
      }
      if (why) skipped.push({ folder: `${experiment}/${name}`, why });
    }
  }
  return skipped.sort((a, b) => a.folder.localeCompare(b.folder));
}

/** A person's notes on a run (notes.json beside run.json, never in it): text, tags, and whether it is archived (hidden). */
export interface RunNotes {
  note: string;
  tags: string[];
  archived: boolean;
}

/** The most a note may hold, and the most tags and tag length: notes are words, not data. */
export const NOTE_LIMITS = { noteChars: 20_000, tags: 50, tagChars: 64 };

/** A run's notes; none written yet (or unreadable) reads as empty. */
export function readRunNotes(dir: string): RunNotes {
  const raw = readJsonFile(join(dir, "notes.json"));
  const notes: RunNotes = { note: "", tags: [], archived: false };
  if (!isObject(raw)) return notes;
  if (isString(raw.note)) notes.note = raw.note;
  if (Array.isArray(raw.tags)) notes.tags = raw.tags.filter(isString);
  if (raw.archived === true) notes.archived = true;
  return notes;
}

/**
 * Checks notes sent by a client and writes them as notes.json (atomically);
 * returns what is wrong instead when they are not a note string, a list of
 * distinct tags and an archived flag within {@linkcode NOTE_LIMITS}.
 */
export function writeRunNotes(dir: string, value: unknown): string | null {
  if (!isObject(value)) return "notes must be an object { note, tags, archived }";
  const { note, tags, archived } = value;
  if (!isString(note) || note.length > NOTE_LIMITS.noteChars) {
    return `note must be text of at most ${NOTE_LIMITS.noteChars} characters`;
  }
  if (
    !Array.isArray(tags) || tags.length > NOTE_LIMITS.tags ||
    !tags.every((t) => isString(t) && t.trim() !== "" && t.length <= NOTE_LIMITS.tagChars) ||
    new Set(tags).size !== tags.length
  ) {
    return `tags must be at most ${NOTE_LIMITS.tags} distinct non-empty words of at most ${NOTE_LIMITS.tagChars} characters`;
  }
  if (typeof archived !== "boolean") return "archived must be true or false";
  writeJsonAtomic(join(dir, "notes.json"), { note, tags, archived } satisfies RunNotes);
  return null;
}

/** config.json of a run, or null when it is missing, does not parse, or is not an object. */
export function readConfig(dir: string): Record<string, unknown> | null {
  const config = readJsonFile(join(dir, "config.json"));
  return isObject(config) ? config : null;
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

/** Options of `run` that do not change what a run computes (where, how fast, which run continues). */
const NOT_OVERRIDES = new Set(["preset", "seed", "backend", "runs", "resume", "workers"]);

/** The `--key value` pairs of a run's argv that override its preset's config, as written. */
export function configOverrides(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([^=]+)(?:=(.*))?$/.exec(argv[i]);
    if (!match) continue;
    const [, key, inline] = match;
    const value = inline ?? (argv[i + 1] !== undefined && !argv[i + 1].startsWith("--") ? argv[++i] : undefined);
    if (!NOT_OVERRIDES.has(key)) out.push(value === undefined ? `--${key}` : `--${key} ${value}`);
  }
  return out;
}

const isVerdict = (v: unknown): v is Verdict => VERDICTS.includes(v as Verdict);

function isCurve(c: unknown): c is TargetCurve {
  return isObject(c) && isString(c.metric) && Array.isArray(c.points) &&
    c.points.every((p) => Array.isArray(p) && p.length === 2 && isNumber(p[0]) && isNumber(p[1])) &&
    (c.change_last_quarter === undefined || c.change_last_quarter === null || isNumber(c.change_last_quarter));
}

function isTarget(t: unknown): t is SummaryTarget {
  return isObject(t) && isString(t.metric) && isNumber(t.paper) && isString(t.source) &&
    (t.ours === null || isNumber(t.ours)) && isVerdict(t.verdict) &&
    (t.curve === undefined || t.curve === null || isCurve(t.curve));
}

function isClaim(c: unknown): c is SummaryClaim {
  return isObject(c) && isString(c.text) && isString(c.source) && isVerdict(c.verdict);
}

/**
 * summary.json of a run, never throwing: null when it is missing, does not
 * parse or is not an object. Missing or mistyped fields are filled (identity
 * from run.json or the directory names, empty targets, claims and metrics)
 * and malformed targets and claims dropped; `problem` names what was wrong
 * with the parts the scorecard shows. Fields this type does not name (a
 * later `evaluation`) are kept.
 */
export function readSummary(dir: string): SummaryView | null {
  const raw = readJsonFile(join(dir, "summary.json"));
  if (!isObject(raw)) return null;
  const run = readRun(dir)?.info;
  const bad: string[] = [], malformed: string[] = [];
  const pick = fieldPicker(raw, bad);
  const list = <T>(key: string, valid: (item: unknown) => item is T): T[] => {
    const items = pick<unknown[]>(key, Array.isArray, []);
    const kept = items.filter(valid);
    if (kept.length < items.length) malformed.push(`${items.length - kept.length} of ${items.length} ${key} malformed`);
    return kept;
  };
  const summary: SummaryView = {
    ...(raw as Partial<RunSummary>),
    experiment: pick("experiment", isString, run?.experiment ?? basename(dirname(dir))),
    description: pick("description", isString, "", false),
    source: pick("source", isString, "", false),
    run_id: pick("run_id", isString, run?.id ?? basename(dir)),
    preset: pick("preset", isString, run?.preset ?? ""),
    seed: pick("seed", isNumber, run?.seed ?? NaN),
    backend: pick("backend", isString, "", false),
    wall_time_s: pick("wall_time_s", isNumber, NaN, false),
    metrics: pick("metrics", isObject, {}, false),
    targets: list("targets", isTarget),
    claims: list("claims", isClaim),
    details: raw.details ?? null,
    git_commit: run?.git_commit ?? null,
    overrides: configOverrides(run?.argv ?? []),
  };
  const problems = [...(bad.length ? [`missing or invalid ${bad.join(", ")}`] : []), ...malformed];
  if (problems.length) summary.problem = `summary.json: ${problems.join("; ")}`;
  return summary;
}

/** One entry of media/media.jsonl: an image of `name` at `step`, at `path` under media/. */
export interface MediaEntry {
  name: string;
  step: number;
  path: string;
  width: number;
  height: number;
}

/** The media index of a run in written order; lines that are torn or malformed are skipped. */
export function readMedia(dir: string): MediaEntry[] {
  let text: string;
  try {
    text = readSmallFile(join(dir, "media", "media.jsonl"));
  } catch {
    return [];
  }
  return text.split("\n").flatMap((line) => {
    try {
      const entry = JSON.parse(line);
      return isObject(entry) && isString(entry.name) && isNumber(entry.step) && isString(entry.path)
        ? [entry as unknown as MediaEntry]
        : [];
    } catch {
      return [];
    }
  });
}

/** One metrics line as read: its step, seconds since the run was created, and its metric values. */
export type MetricsRow = { step: number; time: number } & Record<string, number>;

/** One metric of a run in step order, as parallel arrays: x (step), t (seconds since creation), y (value). */
export interface Series {
  x: number[];
  t: number[];
  y: number[];
}

/** Value at the highest step, minimum and maximum of one metric. */
export interface Reducers {
  last: number;
  min: number;
  max: number;
}

/** Bytes {@linkcode MetricsReader.update} reads at a time, so that no file is held, or decoded, whole. */
export const METRICS_CHUNK_BYTES = 8 * 1024 * 1024;

/** Options of {@linkcode MetricsReader}. */
export interface MetricsReaderOptions {
  /**
   * Bytes read at a time ({@linkcode METRICS_CHUNK_BYTES} by default). A
   * line still unfinished after more than this many bytes is skipped as
   * malformed without being held (the writer's lines take well under a kilobyte).
   */
  chunkBytes?: number;
  /**
   * Points kept per metric, at least 16; all of them by default. Past it,
   * the older points are thinned to the lowest and highest value of each of
   * `maxPointsPerKey / 8` equal step ranges (spikes stay); the newest
   * `maxPointsPerKey / 2` stay whole, and the reducers stay exact.
   */
  maxPointsPerKey?: number;
}

/** Of a thinned metric: its points at steps below `below` were thinned; `min` and `max` are their exact extremes. */
interface Thinned {
  below: number;
  min: number;
  max: number;
}

/** The first index of the ascending `steps` whose step is `step` or above (`steps.length` when none is). */
function firstIndexAtOrAbove(steps: readonly number[], step: number): number {
  let lo = 0, hi = steps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid] < step) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Indices, ascending, of the points `[0, end)` of a series that thinning
 * keeps: the first, then the lowest and highest value of each of `buckets`
 * equal step ranges. Ranges by step, not by count, so that points thinned
 * before are not thinned again and again.
 */
function extremesByStep({ x, y }: Series, end: number, buckets: number): number[] {
  const keep = [0];
  const first = x[0], span = x[end - 1] - first;
  let bucket = -1, lo = 0, hi = 0;
  const flush = () => {
    if (bucket < 0) return;
    keep.push(Math.min(lo, hi));
    if (hi !== lo) keep.push(Math.max(lo, hi));
  };
  for (let i = 1; i < end; i++) {
    const b = span > 0 ? Math.min(buckets - 1, Math.floor(((x[i] - first) / span) * buckets)) : 0;
    if (b !== bucket) {
      flush();
      bucket = b;
      lo = hi = i;
    } else {
      if (y[i] < y[lo]) lo = i;
      if (y[i] > y[hi]) hi = i;
    }
  }
  flush();
  return keep;
}

/** How every line {@linkcode RunWriter.log} writes begins, so a line glued to a torn one can be found. */
const LINE_START = '{"step":';

/** Parses one line: a row, or null when it is not an object with a numeric step. */
function parseLine(line: string): MetricsRow | null {
  try {
    const row = JSON.parse(line);
    return isObject(row) && isNumber(row.step) ? row as MetricsRow : null;
  } catch {
    return null;
  }
}

/**
 * The one reader of metrics.jsonl, shared by the CLI ({@linkcode readMetrics})
 * and the dashboard. It reads incrementally: {@linkcode MetricsReader.update}
 * reads only the bytes appended since its last call, a chunk at a time
 * ({@linkcode MetricsReaderOptions.chunkBytes}).
 *
 * - A line counts once its newline is written (the writer writes both in one
 *   call); bytes after the last newline stay {@linkcode MetricsReader.pending}.
 * - A line that does not parse, is not an object or lacks a numeric step is
 *   skipped and counted. A line glued to the torn line before it (a run
 *   resumed after a crash mid-write) is recovered, the fragment counted.
 * - Values that are not numbers (NaN and ±Infinity are written as null) are
 *   left out.
 * - When a step is logged again (a resumed run re-logs the steps after its
 *   checkpoint), the later value for that step and metric wins; points at
 *   other steps stay.
 * - With {@linkcode MetricsReaderOptions.maxPointsPerKey}, the reducers stay
 *   exact but in one case: a resume re-logs a step older than the newest
 *   `maxPointsPerKey / 2` points (checkpoints that far apart) whose old value
 *   was the extreme of the thinned points; min and max then come from the
 *   points kept.
 */
export class MetricsReader {
  /** Per-metric series in step order. */
  readonly series: Map<string, Series> = new Map();
  /** Per-metric last/min/max, kept up to date with {@linkcode MetricsReader.series}. */
  readonly reducers: Map<string, Reducers> = new Map();
  #thinned = new Map<string, Thinned>();
  #chunkBytes: number;
  #maxPointsPerKey: number;
  #offset: number;
  #pending = 0;
  #lines = 0;
  #skipped = 0;

  /** A reader whose first byte is at `offset` of the file (a live stream starts where the file ends). */
  constructor(offset = 0, options: MetricsReaderOptions = {}) {
    this.#offset = offset;
    this.#chunkBytes = options.chunkBytes ?? METRICS_CHUNK_BYTES;
    this.#maxPointsPerKey = options.maxPointsPerKey ?? Infinity;
    if (!(this.#chunkBytes >= 1)) throw new RangeError(`chunkBytes must be at least 1, not ${this.#chunkBytes}`);
    if (!(this.#maxPointsPerKey >= 16)) {
      throw new RangeError(`maxPointsPerKey must be at least 16, not ${this.#maxPointsPerKey}`);
    }
  }

  /** Bytes of the file consumed: up to and including the last newline read. */
  get offset(): number {
    return this.#offset;
  }

  /** Bytes read after the last newline: a line being written, or torn by a crash. */
  get pending(): number {
    return this.#pending;
  }

  /** Complete, non-blank lines read. */
  get lines(): number {
    return this.#lines;
  }

  /** Complete lines (or parts of lines) that were skipped as malformed. */
  get skipped(): number {
    return this.#skipped;
  }

  /**
   * Reads what was appended to the file at `path` since the last call and
   * returns its rows in written order. A missing file reads as empty; a file
   * shorter than what was consumed was replaced, and is read again from the start.
   */
  update(path: string): MetricsRow[] {
    const rows: MetricsRow[] = [];
    this.#readAppended(path, rows);
    return rows;
  }

  /**
   * Reads what was appended, as {@linkcode MetricsReader.update} does, but
   * keeps only the series and reducers: the rows of a large file would take
   * as much memory again.
   */
  catchUp(path: string): void {
    this.#readAppended(path, null);
  }

  #readAppended(path: string, rows: MetricsRow[] | null): void {
    let file: Deno.FsFile;
    try {
      file = Deno.openSync(path, { read: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      if (this.#offset > 0) this.#reset();
      return;
    }
    try {
      const size = file.statSync().size;
      if (size < this.#offset) this.#reset();
      let unread = size - this.#offset;
      if (unread === 0) return;
      file.seekSync(this.#offset, Deno.SeekMode.Start);
      const chunk = new Uint8Array(Math.min(this.#chunkBytes, unread));
      // The start of a line that crosses a chunk boundary, read again with the next chunk.
      let carried = new Uint8Array(0);
      // Bytes so far of a line longer than a chunk: counted, not held.
      let overlong = 0;
      while (unread > 0) {
        const n = file.readSync(chunk.subarray(0, Math.min(chunk.length, unread)));
        if (n === null || n === 0) break;
        unread -= n;
        let bytes = chunk.subarray(0, n);
        if (overlong > 0) {
          const end = bytes.indexOf(0x0a);
          if (end < 0) {
            overlong += n;
            continue;
          }
          this.#offset += overlong + end + 1;
          this.#lines++;
          this.#skipped++;
          overlong = 0;
          bytes = bytes.subarray(end + 1);
        } else if (carried.length > 0) {
          const joined = new Uint8Array(carried.length + n);
          joined.set(carried);
          joined.set(bytes, carried.length);
          bytes = joined;
        }
        this.#consume(bytes, rows);
        if (this.#pending > this.#chunkBytes) {
          overlong = this.#pending;
          carried = new Uint8Array(0);
        } else carried = bytes.slice(bytes.length - this.#pending);
      }
      if (overlong > 0) this.#pending = overlong;
    } finally {
      file.close();
    }
  }

  /**
   * Takes the bytes that follow {@linkcode MetricsReader.offset} (including
   * any pending ones again), parses the complete lines among them and returns
   * their rows in written order.
   */
  push(bytes: Uint8Array): MetricsRow[] {
    const rows: MetricsRow[] = [];
    this.#consume(bytes, rows);
    return rows;
  }

  /** {@linkcode MetricsReader.push}, adding the rows to `rows` unless it is null. */
  #consume(bytes: Uint8Array, rows: MetricsRow[] | null): void {
    const end = bytes.lastIndexOf(0x0a);
    this.#pending = bytes.length - (end + 1);
    if (end < 0) return;
    this.#offset += end + 1;
    const text = new TextDecoder().decode(bytes.subarray(0, end));
    for (const row of this.#parse(text)) {
      this.#lines++;
      if (!row) this.#skipped++;
      else {
        const clean = this.#add(row);
        if (rows) rows.push(clean);
      }
    }
  }

  /** Rows of complete lines, null for malformed ones; blank lines are left out. */
  #parse(text: string): (MetricsRow | null)[] {
    try {
      // One parse for the whole chunk is much faster than one per line; any bad line sends us line by line.
      const values: unknown[] = JSON.parse(`[${text.replaceAll("\n", ",")}]`);
      if (values.length === text.split("\n").length) {
        return values.map((v) => isObject(v) && isNumber(v.step) ? v as MetricsRow : null);
      }
    } catch {
      // parsed line by line below
    }
    return text.split("\n").filter((line) => line.trim() !== "").flatMap((line) => {
      const row = parseLine(line);
      const glued = line.lastIndexOf(LINE_START);
      if (row || glued <= 0) return [row];
      const recovered = parseLine(line.slice(glued));
      return recovered ? [null, recovered] : [null];
    });
  }

  /** Adds a row's numeric values to the series; returns the row as read: step, time and those values. */
  #add(row: MetricsRow): MetricsRow {
    const clean = { step: row.step, time: isNumber(row.time) ? row.time : NaN } as MetricsRow;
    for (const key in row) {
      const value = row[key];
      if (key === "step" || key === "time" || typeof value !== "number") continue;
      clean[key] = value;
      this.#set(key, row.step, clean.time, value);
    }
    return clean;
  }

  /** Sets one point of a metric: appended at a new highest step, else replacing or inserting in step order. */
  #set(key: string, step: number, time: number, value: number): void {
    let series = this.series.get(key);
    if (!series) this.series.set(key, series = { x: [], t: [], y: [] });
    const n = series.x.length;
    if (n === 0 || series.x[n - 1] < step) {
      series.x.push(step);
      series.t.push(time);
      series.y.push(value);
      const reducers = this.reducers.get(key);
      if (!reducers) this.reducers.set(key, { last: value, min: value, max: value });
      else {
        reducers.last = value;
        if (value < reducers.min) reducers.min = value;
        if (value > reducers.max) reducers.max = value;
      }
    } else {
      const at = firstIndexAtOrAbove(series.x, step);
      let replaced: number | undefined;
      if (series.x[at] === step) {
        replaced = series.y[at];
        series.t[at] = time;
        series.y[at] = value;
      } else {
        series.x.splice(at, 0, step);
        series.t.splice(at, 0, time);
        series.y.splice(at, 0, value);
      }
      // A replaced value may have been the minimum or maximum; rare (resumes), so recompute.
      this.#recomputeExtremes(key, series, step, replaced, value);
    }
    if (series.x.length > this.#maxPointsPerKey) this.#thin(key, series);
  }

  /** Min and max of a metric after `step` took `value` in place of `replaced` (undefined: a new point). */
  #recomputeExtremes(key: string, series: Series, step: number, replaced: number | undefined, value: number): void {
    const thinned = this.#thinned.get(key);
    let whole = 0, min = Infinity, max = -Infinity;
    if (thinned) {
      whole = firstIndexAtOrAbove(series.x, thinned.below);
      if (step < thinned.below) {
        if (replaced !== undefined && replaced !== value && (replaced === thinned.min || replaced === thinned.max)) {
          // The next extreme may have been thinned away; the points kept are what is left to go by.
          Object.assign(thinned, extremes(series.y, 0, whole));
        } else {
          thinned.min = Math.min(thinned.min, value);
          thinned.max = Math.max(thinned.max, value);
        }
      }
      ({ min, max } = thinned);
    }
    const kept = extremes(series.y, whole);
    this.reducers.set(key, {
      last: series.y[series.y.length - 1],
      min: Math.min(min, kept.min),
      max: Math.max(max, kept.max),
    });
  }

  /**
   * Thins all but the newest `maxPointsPerKey / 2` points of a metric (see
   * {@linkcode MetricsReaderOptions.maxPointsPerKey}), in place, keeping the
   * exact extremes of the thinned ones aside.
   */
  #thin(key: string, series: Series): void {
    const { x, t, y } = series;
    const n = x.length;
    const whole = n - Math.floor(this.#maxPointsPerKey / 2);
    const before = this.#thinned.get(key);
    const older = extremes(y, 0, whole);
    this.#thinned.set(key, {
      below: x[whole],
      min: Math.min(older.min, before?.min ?? Infinity),
      max: Math.max(older.max, before?.max ?? -Infinity),
    });
    let kept = 0;
    const keep = (i: number) => {
      x[kept] = x[i];
      t[kept] = t[i];
      y[kept] = y[i];
      kept++;
    };
    for (const i of extremesByStep(series, whole, Math.floor(this.#maxPointsPerKey / 8))) keep(i);
    for (let i = whole; i < n; i++) keep(i);
    x.length = t.length = y.length = kept;
  }

  #reset(): void {
    this.series.clear();
    this.reducers.clear();
    this.#thinned.clear();
    this.#offset = 0;
    this.#pending = this.#lines = this.#skipped = 0;
  }

  /**
   * One row per step in step order, merging every metric's value at that
   * step; `time` is that of the latest line that set one of them.
   */
  rows(): MetricsRow[] {
    const byStep = new Map<number, MetricsRow>();
    for (const [key, series] of this.series) {
      series.x.forEach((step, i) => {
        let row = byStep.get(step);
        if (!row) byStep.set(step, row = { step, time: series.t[i] } as MetricsRow);
        else if (series.t[i] > row.time || Number.isNaN(row.time)) row.time = series.t[i];
        row[key] = series.y[i];
      });
    }
    return [...byStep.values()].sort((a, b) => a.step - b.step);
  }
}

/** Rows per step and the count of skipped lines, a torn last line included (see {@linkcode MetricsReader}). */
export interface MetricsRead {
  rows: MetricsRow[];
  skipped: number;
}

function finished(reader: MetricsReader): MetricsRead {
  return { rows: reader.rows(), skipped: reader.skipped + (reader.pending > 0 ? 1 : 0) };
}

/** Parses the whole text of a metrics.jsonl with {@linkcode MetricsReader}; an unterminated last line is torn. */
export function parseMetrics(text: string): MetricsRead {
  const reader = new MetricsReader();
  reader.push(new TextEncoder().encode(text));
  return finished(reader);
}

/** Reads and parses a run's metrics.jsonl with {@linkcode MetricsReader}; a missing file has no rows. */
export function readMetrics(dir: string): MetricsRead {
  const reader = new MetricsReader();
  reader.catchUp(join(dir, "metrics.jsonl"));
  return finished(reader);
}
