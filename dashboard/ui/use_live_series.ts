/// <reference lib="dom" />
/**
 * The selected runs' metric series, fetched once and, for runs still
 * training, grown by their server-sent events.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { MetricsRow } from "../../lib/core/run_store.ts";
import type { RunRow } from "../run_index.ts";
import { getJson } from "./api.ts";
import { runKey } from "./format.ts";
import { appendRows, type RunSeries } from "./metric_series.ts";

/** More points than a chart is pixels wide; the server keeps the spikes when it downsamples to this. */
const MAX_POINTS = 2000;

/**
 * Series by run key for the runs of `runs` whose keys are in `selected`.
 * Fetches again, and reopens the streams, when the selection changes or any
 * run changes status (a finished run's stream is closed, a resumed one reopened).
 */
export function useLiveSeries(runs: RunRow[], selected: Set<string>): Record<string, RunSeries> {
  const [data, setData] = useState<Record<string, RunSeries>>({});
  useEffect(() => {
    let events: EventSource | null = null;
    let cancelled = false;
    const chosen = runs.filter((r) => selected.has(runKey(r)));
    Promise.all(chosen.map(async (run) => {
      const key = runKey(run);
      const body = await getJson<{ series: RunSeries }>(`/api/runs/${key}/metrics?max_points=${MAX_POINTS}`);
      if (!cancelled) setData((d) => ({ ...d, [key]: body.series }));
    })).catch(() => {}).finally(() => {
      const live = chosen.filter((r) => r.status === "running").map(runKey);
      if (cancelled || !live.length) return;
      // One stream for every running run: a browser opens at most 6 connections to a host.
      events = new EventSource(`/api/events?runs=${live.map(encodeURIComponent).join(",")}`);
      events.addEventListener("metrics", (event) => {
        const { run, rows } = JSON.parse((event as MessageEvent).data) as { run: string; rows: MetricsRow[] };
        setData((d) => ({ ...d, [run]: appendRows(d[run] ?? {}, rows) }));
      });
    });
    return () => {
      cancelled = true;
      events?.close();
    };
  }, [[...selected].sort().join(","), runs.map((r) => `${runKey(r)}:${r.status}`).join(",")]);
  return data;
}
