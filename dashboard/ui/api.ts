/**
 * The dashboard server's JSON API as the page reads it.
 *
 * @module
 */
import type { MediaEntry, RunInfo, RunNotes, RunSummary } from "../../lib/core/run_store.ts";

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
