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
    const sources: EventSource[] = [];
    let cancelled = false;
    for (const run of runs.filter((r) => selected.has(runKey(r)))) {
      const key = runKey(run);
      getJson<{ series: RunSeries }>(`/api/runs/${key}/metrics?max_points=${MAX_POINTS}`).then((body) => {
        if (cancelled) return;
        setData((d) => ({ ...d, [key]: body.series }));
        if (run.status !== "running") return;
        const events = new EventSource(`/api/runs/${key}/events`);
        events.addEventListener("metrics", (event) => {
          const rows = JSON.parse((event as MessageEvent).data) as MetricsRow[];
          setData((d) => ({ ...d, [key]: appendRows(d[key] ?? {}, rows) }));
        });
        sources.push(events);
      });
    }
    return () => {
      cancelled = true;
      sources.forEach((s) => s.close());
    };
  }, [[...selected].sort().join(","), runs.map((r) => `${runKey(r)}:${r.status}`).join(",")]);
  return data;
}
