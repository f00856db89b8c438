/**
 * The dashboard's view of the run store: validated paths, and per-run
 * metrics read incrementally (each request reads only the bytes appended
 * since the last one) into per-key series with last/min/max reducers.
 *
 * @module
 */
import { join, resolve, sep } from "node:path";
import { effectiveStatus, type RunInfo, type RunStatus } from "../lib/core/run_store.ts";
import type { Series } from "./downsample.ts";

const EXPERIMENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const RUN_ID = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$/;

/** Last, minimum and maximum of one metric. */
export interface Reducers {
  last: number;
  min: number;
  max: number;
}

/** Parsed metrics of one run, kept up to date by {@linkcode RunIndex.metrics}. */
export interface RunMetrics {
  series: Map<string, Series>;
  reducers: Map<string, Reducers>;
  /** Complete lines read so far. */
  lines: number;
  /** Lines that did not parse. */
  skipped: number;
  /** Bytes of metrics.jsonl consumed (up to the last newline). */
  offset: number;
  /** Bytes after the last newline: a line being written, or torn by a crash. */
  pending: number;
}

/** One metrics line as parsed. */
export type MetricsLine = Record<string, number>;

/** Appends a parsed line to per-key series; a step at or before a series' last step rewinds it (a resumed run). */
export function appendLine(metrics: RunMetrics, row: MetricsLine): void {
  const step = row.step, time = row.time;
  for (const key in row) {
    const value = row[key];
    if (key === "step" || key === "time" || typeof value !== "number") continue;
    let series = metrics.series.get(key);
    if (!series) metrics.series.set(key, series = { x: [], t: [], y: [] });
    const reducers = metrics.reducers.get(key);
    const length = series.x.length;
    if (length > 0 && series.x[length - 1] >= step) {
      let keep = length;
      while (keep > 0 && series.x[keep - 1] >= step) keep--;
      series.x.length = series.t.length = series.y.length = keep;
      series.x.push(step);
      series.t.push(time);
      series.y.push(value);
      metrics.reducers.set(key, { last: value, min: Math.min(...series.y), max: Math.max(...series.y) });
      continue;
    }
    series.x.push(step);
    series.t.push(time);
    series.y.push(value);
    if (!reducers) metrics.reducers.set(key, { last: value, min: value, max: value });
    else {
      reducers.last = value;
      if (value < reducers.min) reducers.min = value;
      if (value > reducers.max) reducers.max = value;
    }
  }
}

/** Splits new bytes into complete lines and parses them; advances `offset` past the last newline. */
export function consumeLines(metrics: RunMetrics, bytes: Uint8Array): MetricsLine[] {
  const end = bytes.lastIndexOf(0x0a);
  metrics.pending = bytes.length - (end + 1);
  if (end < 0) return [];
  const text = new TextDecoder().decode(bytes.subarray(0, end));
  let parsed: unknown[];
  try {
    // One parse for the whole chunk is faster than one per line; a bad or blank line sends us line by line.
    parsed = JSON.parse(`[${text.replaceAll("\n", ",")}]`);
    if (parsed.length !== text.split("\n").length) throw new Error("a line held more than one value");
  } catch {
    parsed = text.split("\n").filter((line) => line.trim() !== "").map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    });
  }
  const rows: MetricsLine[] = [];
  for (const row of parsed) {
    metrics.lines++;
    if (typeof row !== "object" || row === null || typeof (row as MetricsLine).step !== "number") {
      metrics.skipped++;
      continue;
    }
    appendLine(metrics, row as MetricsLine);
    rows.push(row as MetricsLine);
  }
  metrics.offset += end + 1;
  return rows;
}

/** A run as the dashboard lists it. */
export interface RunRow {
  experiment: string;
  id: string;
  status: RunStatus;
  created: string;
  ended: string | null;
  duration_s: number;
  backend: string | null;
  seed: number;
  preset: string;
  tags: string[];
  config: Record<string, unknown>;
  metrics: Record<string, Reducers>;
  skipped: number;
}

/** A JSON file's value, or null when it is missing, half-written or deleted. */
export function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch {
    return null;
  }
}

/** Reads runs under one root, refusing any path that leaves it. */
export class RunIndex {
  readonly root: string;
  #metrics = new Map<string, RunMetrics>();
  #configs = new Map<string, Record<string, unknown>>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  /**
   * The directory of run `experiment/id`, or null when the names are not
   * valid run names or the directory (after resolving links) is not inside the root.
   */
  runDir(experiment: string, id: string): string | null {
    if (!EXPERIMENT.test(experiment) || !RUN_ID.test(id)) return null;
    try {
      const real = Deno.realPathSync(join(this.root, experiment, id));
      const realRoot = Deno.realPathSync(this.root);
      return real.startsWith(realRoot + sep) && Deno.statSync(real).isDirectory ? real : null;
    } catch {
      return null;
    }
  }

  /** A file inside a run directory given by a relative path, or null when it would leave the run. */
  runFile(dir: string, relative: string): string | null {
    if (relative.split("/").some((part) => part === "" || part === "." || part === "..")) return null;
    try {
      const real = Deno.realPathSync(join(dir, relative));
      return real.startsWith(dir + sep) && Deno.statSync(real).isFile ? real : null;
    } catch {
      return null;
    }
  }

  /** Brings a run's metrics up to date by reading only what was appended since the last call. */
  metrics(dir: string): RunMetrics {
    let metrics = this.#metrics.get(dir);
    const path = join(dir, "metrics.jsonl");
    let size = 0;
    try {
      size = Deno.statSync(path).size;
    } catch {
      size = 0;
    }
    if (!metrics || size < metrics.offset) {
      metrics = { series: new Map(), reducers: new Map(), lines: 0, skipped: 0, offset: 0, pending: 0 };
      this.#metrics.set(dir, metrics);
    }
    if (size > metrics.offset) this.#readFrom(path, metrics, size);
    return metrics;
  }

  /** Reads bytes [offset, size) of a metrics file and returns the complete rows in them. */
  #readFrom(path: string, metrics: RunMetrics, size: number): MetricsLine[] {
    const file = Deno.openSync(path, { read: true });
    try {
      file.seekSync(metrics.offset, Deno.SeekMode.Start);
      const bytes = new Uint8Array(size - metrics.offset);
      let read = 0;
      while (read < bytes.length) {
        const n = file.readSync(bytes.subarray(read));
        if (n === null) break;
        read += n;
      }
      return consumeLines(metrics, bytes.subarray(0, read));
    } finally {
      file.close();
    }
  }

  /** Rows appended since `offset` (for live streaming), and the new offset. */
  tail(dir: string, offset: number): { rows: MetricsLine[]; offset: number } {
    const path = join(dir, "metrics.jsonl");
    let size: number;
    try {
      size = Deno.statSync(path).size;
    } catch {
      return { rows: [], offset };
    }
    if (size <= offset) return { rows: [], offset: Math.min(offset, size) };
    const scratch: RunMetrics = { series: new Map(), reducers: new Map(), lines: 0, skipped: 0, offset, pending: 0 };
    const rows = this.#readFrom(path, scratch, size);
    return { rows, offset: scratch.offset };
  }

  /** The current size of a run's metrics file (where a live stream starts). */
  metricsSize(dir: string): number {
    try {
      return Deno.statSync(join(dir, "metrics.jsonl")).size;
    } catch {
      return 0;
    }
  }

  /** Every readable run, newest first, with config and metric reducers. Half-written runs are skipped. */
  list(now = Date.now()): RunRow[] {
    const rows: RunRow[] = [];
    let experiments: Deno.DirEntry[] = [];
    try {
      experiments = [...Deno.readDirSync(this.root)].filter((e) => e.isDirectory && EXPERIMENT.test(e.name));
    } catch {
      return rows;
    }
    for (const experiment of experiments) {
      let entries: Deno.DirEntry[] = [];
      try {
        entries = [...Deno.readDirSync(join(this.root, experiment.name))];
      } catch {
        continue; // deleted while listing
      }
      for (const entry of entries) {
        const dir = entry.isDirectory ? this.runDir(experiment.name, entry.name) : null;
        if (!dir) continue;
        const row = this.#row(dir, now);
        if (row) rows.push(row);
      }
    }
    return rows.sort((a, b) => b.created.localeCompare(a.created));
  }

  #row(dir: string, now: number): RunRow | null {
    const info = readJson<RunInfo>(join(dir, "run.json"));
    if (!info || typeof info.created !== "string") return null;
    let config = this.#configs.get(dir);
    if (!config) {
      config = readJson<Record<string, unknown>>(join(dir, "config.json")) ?? {};
      this.#configs.set(dir, config);
    }
    const metrics = this.metrics(dir);
    const status = effectiveStatus(info, now);
    const end = info.ended ? Date.parse(info.ended) : status === "running" ? now : Date.parse(info.heartbeat);
    return {
      experiment: info.experiment,
      id: info.id,
      status,
      created: info.created,
      ended: info.ended,
      duration_s: Math.max(0, (end - Date.parse(info.created)) / 1000),
      backend: (info.backend as { name?: string } | null)?.name ?? null,
      seed: info.seed,
      preset: info.preset,
      tags: [info.preset, `seed ${info.seed}`],
      config,
      metrics: Object.fromEntries(metrics.reducers),
      skipped: metrics.skipped + (status !== "running" && metrics.pending > 0 ? 1 : 0),
    };
  }
}
