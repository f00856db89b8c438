/**
 * Readers of a run store: the run list, one run's run.json, config, notes,
 * summary and media index. They never throw on a damaged run: what is
 * missing is filled in and named.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { TargetCurve } from "./curves.ts";
import { type Verdict, VERDICTS } from "./targets.ts";
import {
  effectiveStatus,
  type MediaEntry,
  NOTE_LIMITS,
  runIdDate,
  type RunInfo,
  type RunNotes,
  type RunStatus,
  type RunSummary,
  type SummaryClaim,
  type SummaryTarget,
  type SummaryView,
  SWEEPS_FOLDER,
} from "./run_layout.ts";
import { isDate, isNumber, isObject, isString, readJsonFile, readSmallFile, writeJsonAtomic } from "./run_files.ts";
import { lastBeat } from "./run_lock.ts";

/** A run as readers show it ({@linkcode readRun}, {@linkcode listRuns}). */
export interface RunListing {
  /** The run's directory. */
  dir: string;
  /** run.json with missing or mistyped fields filled in (see {@linkcode readRun}). */
  info: RunInfo;
  /** The run's status as readers judge it (a stale running run reads as crashed). */
  status: RunStatus;
  /** What is wrong with run.json, when something is; such a run is still listed. */
  problem?: string;
}

/** The statuses a writer records in run.json (`crashed` is only derived). */
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

/** Subdirectories of `path` by name (links to folders are not among them). */
function subdirectories(path: string): string[] {
  return entries(path).filter((e) => e.isDirectory).map((e) => e.name);
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

/** Entries of a folder; none when it is missing or was deleted while listing. */
function entries(path: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(path)];
  } catch {
    return [];
  }
}

/** Why a store entry that is a symbolic link is passed over. */
export const LINK_SKIPPED = "a symbolic link; only folders inside the store are read";

/**
 * Folders under `root` where a run would be that {@linkcode listRuns} passes
 * over, as `experiment/name` (or `experiment` for an experiment's folder)
 * with why: a symbolic link, no run.json (a run being created, or not a
 * run), one that is not a regular file, or one that does not parse.
 * Folders in `listed` (the directories of a {@linkcode listRuns} just made)
 * are known to hold a run and are not read again.
 */
export function skippedRunFolders(
  root: string,
  listed: ReadonlySet<string> = new Set(),
): { folder: string; why: string }[] {
  const skipped: { folder: string; why: string }[] = [];
  for (const experiment of entries(root)) {
    if (experiment.name === SWEEPS_FOLDER) continue;
    if (experiment.isSymlink) skipped.push({ folder: experiment.name, why: LINK_SKIPPED });
    if (!experiment.isDirectory) continue;
    for (const entry of entries(join(root, experiment.name))) {
      const folder = `${experiment.name}/${entry.name}`;
      if (entry.isSymlink) skipped.push({ folder, why: LINK_SKIPPED });
      if (!entry.isDirectory || listed.has(join(root, folder))) continue;
      let why: string | null = null;
      try {
        if (!isObject(JSON.parse(readSmallFile(join(root, folder, "run.json"))))) why = "run.json is not a JSON object";
      } catch (error) {
        why = error instanceof Deno.errors.NotFound
          ? "no run.json"
          : error instanceof SyntaxError
          ? "run.json does not parse"
          : (error as Error).message;
      }
      if (why) skipped.push({ folder, why });
    }
  }
  return skipped.sort((a, b) => a.folder.localeCompare(b.folder));
}

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
