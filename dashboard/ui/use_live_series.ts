/// <reference lib="dom" />
/**
 * The selected runs' metric series: fetched in one request, and, for runs
 * still training, grown by one server-sent event stream.
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { MetricsRow } from "../../lib/core/run_layout.ts";
import type { RunRow } from "../run_index.ts";
import { getJson, type MetricsBatch, type MetricsEvent } from "./api.ts";
import { runKey } from "./format.ts";
import { appendRows, type RunSeries, seriesOf } from "./metric_series.ts";

const MAX_POINTS = 2000, MIN_POINTS = 500, POINTS_PER_CHART = 50_000;

/**
 * Points per line the server sends at most: more than a chart is pixels
 * wide (it keeps each bucket's lowest and highest value, so spikes stay),
 * and, with many runs charted, fewer, so that a chart's points stay within
 * {@linkcode POINTS_PER_CHART} (chart.js's work, and the page's wait, grow with them).
 */
export function pointsPerLine(runs: number): number {
  return Math.max(MIN_POINTS, Math.min(MAX_POINTS, Math.floor(POINTS_PER_CHART / Math.max(1, runs))));
}

/** How long rows from the stream wait for the rows of the other runs, so that they change the page once. */
const FLUSH_MS = 50;

/** What the page holds of a run: its lines up to byte `offset` of its metrics.jsonl, read while it was `status`. */
interface Held {
  offset: number;
  status: string;
}

/**
 * Series by run key for the runs of `runs` whose keys are in `selected`.
 * Runs new to the selection are fetched, all in one request; a run that
 * stopped running is fetched again (its last lines may have come after the
 * stream's last look). The runs still running share one stream, opened again
 * from where each run's series end when the selection or a status changes,
 * so that no line is lost or sent twice, and a resumed run goes on from its
 * lines as the page holds them.
 */
export function useLiveSeries(runs: RunRow[], selected: Set<string>): Record<string, RunSeries> {
  const [data, setData] = useState<Record<string, RunSeries>>({});
  const held = useRef(new Map<string, Held>());
  const chosen = runs.filter((r) => selected.has(runKey(r)));
  // Only the selected runs count: another run starting or ending elsewhere in the list changes nothing here.
  const state = chosen.map((r) => `${runKey(r)}:${r.status}`).sort().join(",");
  useEffect(() => {
    let cancelled = false;
    let events: EventSource | null = null;
    const pending = new Map<string, MetricsRow[]>();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      const batch = [...pending];
      pending.clear();
      setData((d) => ({
        ...d,
        ...Object.fromEntries(batch.map(([run, rows]) => [run, appendRows(d[run] ?? new Map(), rows)])),
      }));
    };
    const names = new Set(chosen.map(runKey));
    for (const name of held.current.keys()) if (!names.has(name)) held.current.delete(name);
    setData((d) => Object.keys(d).every((k) => names.has(k)) ? d : pick(d, names));
    const stale = chosen.filter((r) => {
      const h = held.current.get(runKey(r));
      return !h || (h.status === "running" && r.status !== "running");
    });
    for (const r of chosen) {
      const h = held.current.get(runKey(r));
      if (h && !stale.includes(r)) h.status = r.status;
    }
    const fetched = stale.length === 0 ? Promise.resolve() : getJson<MetricsBatch>(
      `/api/metrics?runs=${stale.map((r) => encodeURIComponent(runKey(r))).join(",")}&max_points=${
        pointsPerLine(chosen.length)
      }`,
    ).then((body) => {
      if (cancelled) return;
      for (const r of stale) {
        const key = runKey(r);
        if (key in body.offsets) held.current.set(key, { offset: body.offsets[key], status: r.status });
      }
      setData((d) => ({
        ...d,
        ...Object.fromEntries(Object.entries(body.series).map(([run, series]) => [run, seriesOf(series)])),
      }));
    });
    fetched.catch(() => {}).then(() => {
      const live = chosen.filter((r) => r.status === "running").map(runKey);
      if (cancelled || !live.length) return;
      // A run the page holds nothing of (its metrics could not be read) is streamed from the server's "now".
      const offsets = live.map((key) => held.current.get(key)?.offset ?? "").join(",");
      // One stream for every running run: a browser opens at most 6 connections to a host.
      events = new EventSource(`/api/events?runs=${live.map(encodeURIComponent).join(",")}&offsets=${offsets}`);
      events.addEventListener("metrics", (event) => {
        const { run, rows, offset } = JSON.parse((event as MessageEvent).data) as MetricsEvent;
        const h = held.current.get(run);
        if (h) h.offset = offset;
        pending.set(run, [...(pending.get(run) ?? []), ...rows]);
        // The server sends each run's rows as an event of its own, all at once: one update of the page for them all.
        timer ??= setTimeout(flush, FLUSH_MS);
      });
    });
    return () => {
      cancelled = true;
      events?.close();
      // Rows received are kept: the offsets held already count them.
      if (timer !== null) {
        clearTimeout(timer);
        flush();
      }
    };
  }, [state]);
  return data;
}

/** The entries of `record` whose keys are in `keys`. */
function pick<T>(record: Record<string, T>, keys: Set<string>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([k]) => keys.has(k)));
}
