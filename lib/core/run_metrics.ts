/**
 * The one reader of a run's metrics.jsonl ({@linkcode MetricsReader}),
 * shared by the CLI and the dashboard: incremental, tolerant of torn and
 * re-logged lines, optionally thinning old points with exact reducers.
 *
 * @module
 */
import { join } from "node:path";
import { extremes } from "./curves.ts";
import type { MetricsRow, Reducers, Series } from "./run_layout.ts";
import { closeSync, readSync } from "node:fs";
import { isNumber, isObject, openRegularFile, type StoreFile } from "./run_files.ts";

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
  /** A file larger than this is refused (see {@linkcode openRegularFile}); no limit by default. */
  maxFileBytes?: number;
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

/** Sets `row[key]`, defining it where assigning would not: a metric named `__proto__` is a value like any other. */
function setOwn(row: MetricsRow, key: string, value: number): void {
  if (key === "__proto__") {
    Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
  } else row[key] = value;
}

/** How every line `RunWriter.log` (run_writer.ts) writes begins, so a line glued to a torn one can be found. */
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
  #maxFileBytes: number | undefined;
  #offset: number;
  #pending = 0;
  #lines = 0;
  #skipped = 0;

  /** A reader whose first byte is at `offset` of the file (a live stream starts where the file ends). */
  constructor(offset = 0, options: MetricsReaderOptions = {}) {
    this.#offset = offset;
    this.#chunkBytes = options.chunkBytes ?? METRICS_CHUNK_BYTES;
    this.#maxPointsPerKey = options.maxPointsPerKey ?? Infinity;
    this.#maxFileBytes = options.maxFileBytes;
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
   * shorter than what was consumed was replaced, and is read again from the
   * start. With a `deadline` (of `performance.now()`), reading stops after
   * the chunk that passes it; the rest comes with the next call.
   */
  update(path: string, deadline = Infinity): MetricsRow[] {
    const rows: MetricsRow[] = [];
    this.#readAppended(path, rows, deadline);
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

  /**
   * {@linkcode MetricsReader.catchUp} until `performance.now()` passes
   * `deadline`, checked between chunks: true once the reader is at the end
   * of the file, false when time ran out first (call again to go on).
   */
  catchUpUntil(path: string, deadline: number): boolean {
    return this.#readAppended(path, null, deadline);
  }

  #readAppended(path: string, rows: MetricsRow[] | null, deadline = Infinity): boolean {
    let file: StoreFile;
    try {
      file = openRegularFile(path, { maxBytes: this.#maxFileBytes });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      if (this.#offset > 0) this.#reset();
      return true;
    }
    try {
      const { fd, size } = file;
      if (size < this.#offset) this.#reset();
      let unread = size - this.#offset;
      if (unread === 0) return true;
      const start = this.#offset;
      let position = start;
      const chunk = new Uint8Array(Math.min(this.#chunkBytes, unread));
      // The start of a line that crosses a chunk boundary, read again with the next chunk.
      let carried = new Uint8Array(0);
      // Bytes so far of a line longer than a chunk: counted, not held.
      let overlong = 0;
      while (unread > 0) {
        // Out of time after a chunk at least: what is consumed stays, the carried start of a line is read again.
        if (overlong === 0 && position > start && performance.now() > deadline) {
          this.#pending = 0;
          return false;
        }
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, unread), position);
        if (n === 0) break;
        unread -= n;
        position += n;
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
      return true;
    } finally {
      closeSync(file.fd);
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
      setOwn(clean, key, value);
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
        setOwn(row, key, series.y[i]);
      });
    }
    return [...byStep.values()].sort((a, b) => a.step - b.step);
  }
}

/** Rows per step and the count of skipped lines, a torn last line included (see {@linkcode MetricsReader}). */
export interface MetricsRead {
  /** One row per step, in step order. */
  rows: MetricsRow[];
  /** Lines that could not be parsed. */
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
