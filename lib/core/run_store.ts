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
import { join } from "node:path";
import { encodePng, type Image } from "./png.ts";
import { formatNpy, type NpyArray, type NpyData, parseNpy } from "./npy.ts";

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
  /** Steps at which `--resume` continued this run. */
  resumes?: { step: number; at: string }[];
}

/** How a published number is compared: within tolerance, or at least as good in a stated direction. */
export type TargetDirection = "match" | "higher" | "lower";

/** Verdict of a target or claim in summary.json. */
export type Verdict = "reproduced" | "not reproduced" | "not measured";

/** One target of summary.json: the published number beside ours. */
export interface SummaryTarget {
  metric: string;
  paper: number;
  source: string;
  tolerance: number;
  direction: TargetDirection;
  ours: number | null;
  verdict: Verdict;
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
}

/** A heartbeat older than this marks a `running` run as crashed. */
export const STALE_HEARTBEAT_MS = 2 * 60 * 1000;
const HEARTBEAT_INTERVAL_MS = 15 * 1000;
const CHECKPOINTS_KEPT = 2;

/** Writes JSON to `path` through a temp file and a rename, so readers never see half a file. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const temp = `${path}.tmp-${Deno.pid}`;
  Deno.writeTextFileSync(temp, JSON.stringify(value, null, 2) + "\n");
  Deno.renameSync(temp, path);
}

function timestampId(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

function shortId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(3));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
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
    this.#metrics = Deno.openSync(join(dir, "metrics.jsonl"), { append: true, create: true });
    this.#writeInfo();
    // Node's typings (pulled in by npm packages) widen the timer id; Deno's is a number.
    this.#heartbeat = setInterval(() => this.#writeInfo(), HEARTBEAT_INTERVAL_MS) as unknown as number;
    Deno.unrefTimer(this.#heartbeat);
  }

  /** Creates a fresh run directory with run.json (status running) and config.json. */
  static create(options: NewRunOptions): RunWriter {
    const now = new Date();
    const id = `${timestampId(now)}-${shortId()}`;
    const dir = join(options.root, options.experiment, id);
    Deno.mkdirSync(join(dir, "media"), { recursive: true });
    Deno.mkdirSync(join(dir, "checkpoints"), { recursive: true });
    writeJsonAtomic(join(dir, "config.json"), options.config);
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
    });
  }

  /** Reopens an existing run directory to continue it (`--resume`). */
  static reopen(dir: string, resumeStep: number, backend: unknown): RunWriter {
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
      resumes: [...(info.resumes ?? []), { step: resumeStep, at: now }],
    });
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
    const entry = { name, step, path: `${safe}/${file}`, width: image.width, height: image.height };
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
    const name = `step-${String(step).padStart(9, "0")}`;
    const temp = join(root, `.${name}.tmp-${Deno.pid}`);
    Deno.mkdirSync(temp, { recursive: true });
    const names = Object.keys(arrays);
    names.forEach((key, i) => {
      Deno.writeFileSync(join(temp, `${i}.npy`), formatNpy(arrays[key].data, arrays[key].shape));
    });
    Deno.writeTextFileSync(join(temp, "state.json"), JSON.stringify({ step, names, state }));
    removeIfPresent(join(root, name));
    Deno.renameSync(temp, join(root, name));
    for (const old of checkpointNames(this.dir).slice(0, -CHECKPOINTS_KEPT)) {
      removeIfPresent(join(root, old));
    }
  }

  /** Writes summary.json atomically. */
  writeSummary(summary: unknown): void {
    writeJsonAtomic(join(this.dir, "summary.json"), summary);
  }

  /** Ends the run with a final status; stops the heartbeat. */
  finish(status: Exclude<RunStatus, "running" | "crashed">, error?: string): void {
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
      .sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** Loads the newest complete checkpoint of a run, or null when it has none. */
export function loadLatestCheckpoint(dir: string): LoadedCheckpoint | null {
  const name = checkpointNames(dir).at(-1);
  if (!name) return null;
  const folder = join(dir, "checkpoints", name);
  const { step, names, state } = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
  const arrays: Record<string, NpyArray> = {};
  (names as string[]).forEach((key, i) => {
    arrays[key] = parseNpy(Deno.readFileSync(join(folder, `${i}.npy`)), `${name}/${key}`);
  });
  return { step, arrays, state };
}

/** Reads run.json as written, without deriving `crashed`. */
export function readRunInfo(dir: string): RunInfo {
  return JSON.parse(Deno.readTextFileSync(join(dir, "run.json")));
}

/**
 * The status a reader should show: a `running` run whose heartbeat is older
 * than {@linkcode STALE_HEARTBEAT_MS} at `now` has crashed.
 */
export function effectiveStatus(info: RunInfo, now = Date.now()): RunStatus {
  if (info.status === "running" && now - Date.parse(info.heartbeat) > STALE_HEARTBEAT_MS) {
    return "crashed";
  }
  return info.status;
}

/** A run as listed by {@linkcode listRuns}. */
export interface RunListing {
  dir: string;
  info: RunInfo;
  status: RunStatus;
}

/**
 * Lists every run under `root` (all experiments), newest first. Directories
 * without a readable run.json (being created, or damaged) are skipped.
 */
export function listRuns(root: string, options: { now?: number } = {}): RunListing[] {
  const runs: RunListing[] = [];
  let experiments: Deno.DirEntry[];
  try {
    experiments = [...Deno.readDirSync(root)].filter((e) => e.isDirectory);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  for (const experiment of experiments) {
    for (const entry of Deno.readDirSync(join(root, experiment.name))) {
      if (!entry.isDirectory) continue;
      const dir = join(root, experiment.name, entry.name);
      try {
        const info = readRunInfo(dir);
        runs.push({ dir, info, status: effectiveStatus(info, options.now) });
      } catch {
        continue;
      }
    }
  }
  return runs.sort((a, b) => b.info.created.localeCompare(a.info.created));
}

/** One parsed metrics line. */
export type MetricsRow = { step: number; time: number } & Record<string, number>;

/**
 * Parses metrics.jsonl text. A line that does not parse (a torn last line
 * after a kill, or damage) is skipped and counted. When a resumed run
 * re-logs a step, the later line wins.
 */
export function parseMetrics(text: string): { rows: MetricsRow[]; skipped: number } {
  const byStep = new Map<number, MetricsRow>();
  const unstepped: MetricsRow[] = [];
  let skipped = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const row = JSON.parse(line);
      if (typeof row !== "object" || row === null || Array.isArray(row)) throw new Error("not an object");
      if (typeof row.step === "number") byStep.set(row.step, { ...byStep.get(row.step), ...row });
      else unstepped.push(row);
    } catch {
      skipped++;
    }
  }
  const rows = [...byStep.values()].sort((a, b) => a.step - b.step);
  return { rows: [...rows, ...unstepped], skipped };
}

/** Reads and parses a run's metrics.jsonl (see {@linkcode parseMetrics}). */
export function readMetrics(dir: string): { rows: MetricsRow[]; skipped: number } {
  try {
    return parseMetrics(Deno.readTextFileSync(join(dir, "metrics.jsonl")));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { rows: [], skipped: 0 };
    throw error;
  }
}
