/**
 * Safe reads and writes of a run's small files: JSON written through a temp
 * file and a rename, reads that refuse links, FIFOs and oversized files, and
 * the type checks of parsed JSON the readers share.
 *
 * @module
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from "node:fs";
import { basename, join } from "node:path";
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

/** What a file that is not a regular file is, in words, from the mode bits of its lstat. */
function kindOfFile(mode: number): string {
  switch (mode & 0o170000) {
    case 0o010000:
      return "a FIFO (named pipe)";
    case 0o020000:
      return "a character device";
    case 0o060000:
      return "a block device";
    case 0o140000:
      return "a socket";
    case 0o040000:
      return "a folder";
    default:
      return "not a regular file";
  }
}

/** Why a run store's file was refused: it is not a regular file, or it is too large. */
export class StoreFileError extends Error {
  /** The name stack traces and messages show. */
  override name = "StoreFileError";
}

/** An open regular file of the run store: its descriptor and size; close it with `closeSync(fd)` of node:fs. */
export interface StoreFile {
  /** The file descriptor, opened read-only. */
  fd: number;
  /** The file's size in bytes when it was opened. */
  size: number;
}

/**
 * Opens a file of the run store for reading only when it is a regular file:
 * a symbolic link (which may point out of the store), a FIFO (whose opening
 * and reading block until a writer comes), a device or a socket is refused
 * with a {@linkcode StoreFileError} naming it. The file is opened without
 * following a link and without blocking, and then checked, so that it cannot
 * be swapped between the check and the read (the folders above it are
 * checked by whoever names it: the dashboard takes only run folders whose
 * real path lies inside the store). A missing file throws
 * `Deno.errors.NotFound`.
 */
export function openRegularFile(path: string, options: { maxBytes?: number } = {}): StoreFile {
  const name = basename(path);
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") throw new Deno.errors.NotFound(`${name} does not exist`);
    if (code === "ELOOP") throw new StoreFileError(`${name} is a symbolic link; only regular files are read`);
    throw new StoreFileError(`${name} cannot be opened: ${(error as Error).message}`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new StoreFileError(`${name} is ${kindOfFile(info.mode)}; only regular files are read`);
    if (options.maxBytes !== undefined && info.size > options.maxBytes) {
      throw new StoreFileError(
        `${name} is ${megabytes(info.size)}, more than the ${megabytes(options.maxBytes)} read of such a file`,
      );
    }
    return { fd, size: info.size };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** A size in bytes as megabytes, as people read file sizes. */
function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toPrecision(3)} MB`;
}

/**
 * The text of a run's own small file, read only when it is a regular file
 * of at most {@linkcode SMALL_FILE_BYTES} (see {@linkcode openRegularFile}). Throws otherwise.
 */
export function readSmallFile(path: string): string {
  const { fd, size } = openRegularFile(path, { maxBytes: SMALL_FILE_BYTES });
  try {
    const bytes = new Uint8Array(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return new TextDecoder().decode(bytes.subarray(0, read));
  } finally {
    closeSync(fd);
  }
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
