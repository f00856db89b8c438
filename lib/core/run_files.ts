/**
 * Safe reads and writes of a run's small files: JSON written through a temp
 * file and a rename, reads that refuse links, FIFOs and oversized files, and
 * the type checks of parsed JSON the readers share.
 *
 * @module
 */
import { join } from "node:path";
import type { RunInfo } from "./run_layout.ts";

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

/** Removes a file or folder, recursively; one already gone is no error. */
export function removeIfPresent(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** The most a reader reads of a run's JSON or index file in one synchronous call. */
const SMALL_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The text of a run's own small file, read only when it is a regular file
 * (not a link out of the store, a FIFO or a device, which would hang a
 * synchronous read) of at most {@linkcode SMALL_FILE_BYTES}. Throws otherwise.
 */
export function readSmallFile(path: string): string {
  const info = Deno.lstatSync(path);
  if (!info.isFile) throw new Error(`${path} is not a regular file`);
  if (info.size > SMALL_FILE_BYTES) throw new Error(`${path} is ${info.size} bytes, more than a run file holds`);
  return Deno.readTextFileSync(path);
}

/** A JSON file's value, or undefined when it is missing, does not parse, or cannot be read. */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readSmallFile(path));
  } catch {
    return undefined;
  }
}

/** Reads run.json as written, without deriving `crashed`; throws when it is missing or does not parse. */
export function readRunInfo(dir: string): RunInfo {
  return JSON.parse(readSmallFile(join(dir, "run.json")));
}

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a parsed JSON value is a string. */
export const isString = (value: unknown): value is string => typeof value === "string";

/** Whether a parsed JSON value is a number. */
export const isNumber = (value: unknown): value is number => typeof value === "number";

/** Whether a parsed JSON value is a string that `Date.parse` reads. */
export const isDate = (value: unknown): value is string =>
  typeof value === "string" && !Number.isNaN(Date.parse(value));
