/**
 * The writer of one run's directory (see run_layout.ts): run.json with its
 * heartbeat, config.json, append-only metrics.jsonl, media, checkpoints,
 * saved models and summary.json, under the run's lock.
 *
 * @module
 */
import { join } from "node:path";
import { encodePng, type Image } from "./png.ts";
import type { NpyData } from "./npy.ts";
import { type MediaEntry, newRunId, type RunInfo, type RunStatus, sweepTagFromEnv } from "./run_layout.ts";
import { readJsonFile, readRunInfo, removeIfPresent, writeJsonAtomic } from "./run_files.ts";
import { acquireRunLock, lastBeat, releaseRunLock } from "./run_lock.ts";
import { checkpointName, checkpointNames, safeModelName, writeArrayFolder } from "./run_checkpoints.ts";

/** How often a live writer rewrites run.json's heartbeat. */
const HEARTBEAT_INTERVAL_MS = 15 * 1000;
/** Checkpoints a run keeps on disk: the newest ones. */
const CHECKPOINTS_KEPT = 2;

/** Options for creating a run directory. */
export interface NewRunOptions {
  /** Run store root; the run goes to `<root>/<experiment>/<run id>`. */
  root: string;
  /** The experiment's registered name. */
  experiment: string;
  /** The command line, recorded in run.json. */
  argv: string[];
  /** The run's seed. */
  seed: number;
  /** The preset the config started from. */
  preset: string;
  /** What the run records about its backend (a `BackendInfo`), as JSON. */
  backend: unknown;
  /** The resolved config, written to config.json. */
  config: Record<string, unknown>;
  /** Package → version (deno, tfjs, …), recorded in run.json. */
  versions: Record<string, string>;
  /** The project's commit, null outside a git checkout. */
  gitCommit: string | null;
}

/** Writes one run's files. */
export class RunWriter {
  /** The run directory. */
  readonly dir: string;
  #info: RunInfo;
  #metrics: Deno.FsFile;
  #heartbeat: number;
  #createdMs: number;
  /** The resolved config, whose hash each checkpoint and saved model records. */
  #config: Record<string, unknown> | undefined;

  private constructor(dir: string, info: RunInfo, config: Record<string, unknown> | undefined) {
    this.dir = dir;
    this.#info = info;
    this.#config = config;
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
    // Until run.json is written the folder is not a run: one that cannot be made whole (a full disk) is removed.
    try {
      Deno.mkdirSync(join(dir, "media"), { recursive: true });
      Deno.mkdirSync(join(dir, "checkpoints"), { recursive: true });
      acquireRunLock(dir);
      writeJsonAtomic(join(dir, "config.json"), options.config);
      return RunWriter.#created(dir, id, now, options);
    } catch (error) {
      removeIfPresent(dir);
      throw error;
    }
  }

  static #created(dir: string, id: string, now: Date, options: NewRunOptions): RunWriter {
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
    }, options.config);
  }

  /**
   * Reopens an existing run directory to continue it (`--resume`); `config`
   * is the run's resolved config (default: config.json as it is), whose hash
   * the new checkpoints record.
   */
  static reopen(
    dir: string,
    resumeStep: number,
    backend: unknown,
    passedOver: string[] = [],
    config?: Record<string, unknown>,
  ): RunWriter {
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
    }, config ?? (readJsonFile(join(dir, "config.json")) as Record<string, unknown> | undefined));
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
   * folder, then renamed, so a checkpoint is either whole or absent; its
   * manifest records each file's hash and the config's) and keeps the newest
   * {@linkcode CHECKPOINTS_KEPT}.
   */
  saveCheckpoint(step: number, arrays: Record<string, { data: NpyData; shape: number[] }>, state: unknown): void {
    const root = join(this.dir, "checkpoints");
    writeArrayFolder(join(root, checkpointName(step)), arrays, { step, state }, {
      config: this.#config,
    });
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
    writeArrayFolder(join(this.dir, "models", safe), arrays, { info }, { config: this.#config });
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
