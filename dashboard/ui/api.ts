/**
 * The dashboard server's JSON API as the page reads it.
 *
 * @module
 */
import type { MediaEntry, MetricsRow, RunInfo, RunNotes, RunSummary, Series } from "../../lib/core/run_layout.ts";

/** GET /api/runs/:experiment/:id: a run's run.json (status made effective), config, summary and media. */
export interface RunDetail {
  /** The run's folder on the server's machine (for the `--resume` command). */
  dir: string;
  run: RunInfo;
  config: Record<string, unknown> | null;
  /** A person's notes, tags and archived flag (notes.json). */
  notes: RunNotes;
  summary: RunSummary | null;
  media: MediaEntry[];
}

/** GET /api/metrics?runs=<experiment>/<id>,…: the metrics of many runs in one answer, by run key. */
export interface MetricsBatch {
  /** Each readable run's series by metric name. */
  series: Record<string, Record<string, Series>>;
  /** Where in each readable run's metrics.jsonl its series end: a live stream goes on from there. */
  offsets: Record<string, number>;
  /** Runs named that do not exist (deleted since they were listed). */
  missing: string[];
  /** Why a run's metrics cannot be read, by run key. */
  problems: Record<string, string>;
}

/** An event `metrics` of GET /api/events: rows appended to one run, and the offset after them. */
export interface MetricsEvent {
  run: string;
  rows: MetricsRow[];
  offset: number;
}

/** The JSON body of a GET request; rejects on a non-2xx status, naming the URL. */
export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return await res.json();
}

/** Writes a run's notes (PUT, JSON); rejects with the server's reason when it refuses them. */
export async function putNotes(base: string, notes: RunNotes): Promise<RunNotes> {
  const res = await fetch(`${base}/notes`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(notes),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
}
