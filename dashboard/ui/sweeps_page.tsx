/// <reference lib="dom" />
/**
 * Sweeps: every sweep of the run store with its progress (`#/sweeps`), and
 * one sweep's tasks (`#/sweep/<id>`) sortable by the spec's metric and the
 * keys that vary, with links to their runs. Both poll while tasks are active.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api.ts";
import { formatMeasured, formatValue, runPath } from "./format.ts";
import { type SkippedFolder, SkippedFolders } from "./skipped_folders.tsx";
import {
  progressSegments,
  sortedTasks,
  type SweepDetail,
  type SweepSortKey,
  type SweepSummary,
  type SweepTaskStatus,
} from "./sweep_rows.ts";

/** How often a sweep page asks again while some task is active or pending. */
const POLL_MS = 3000;

function Progress(props: { counts: Record<SweepTaskStatus, number>; total: number }) {
  return (
    <div
      class="progress"
      title={progressSegments(props.counts, props.total).map((s) => `${s.count} ${s.status}`).join(", ")}
    >
      {progressSegments(props.counts, props.total).map((s) => (
        <span key={s.status} class={`progress-${s.status}`} style={{ width: `${s.percent}%` }}>{s.count}</span>
      ))}
    </div>
  );
}

/** Polls `url` every few seconds while `busy(body)` says tasks are still moving. */
function usePolled<T>(url: string, busy: (body: T) => boolean): { body: T | null; error: string } {
  const [body, setBody] = useState<T | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setBody(null);
    setError("");
    let timer = 0;
    let stopped = false;
    const load = () =>
      getJson<T>(url).then((b) => {
        if (stopped) return;
        setBody(b);
        if (busy(b)) timer = setTimeout(load, POLL_MS) as unknown as number;
      }).catch((e) => !stopped && setError(String(e)));
    load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [url]);
  return { body, error };
}

const moving = (counts: Record<SweepTaskStatus, number>) => counts.active > 0;

/** The page `#/sweeps` (`#sweeps`). */
export function SweepsPage() {
  const { body, error } = usePolled<{ sweeps: SweepSummary[]; skipped: SkippedFolder[] }>(
    "/api/sweeps",
    (b) => b.sweeps.some((s) => moving(s.counts)),
  );
  if (error) return <p>{error}</p>;
  if (!body) return <p>loading…</p>;
  const skipped = <SkippedFolders id="skipped-sweeps" what="sweep" skipped={body.skipped ?? []} />;
  if (!body.sweeps.length) {
    return (
      <>
        {skipped}
        <p>
          No sweeps yet: <code>deno task sweep sweeps/ica_toy_smoke.json</code>
        </p>
      </>
    );
  }
  return (
    <>
      {skipped}
      <table id="sweeps">
        <thead>
          <tr>
            <th>sweep</th>
            <th>experiment</th>
            <th>preset</th>
            <th>executor</th>
            <th>created</th>
            <th>tasks</th>
            <th>progress</th>
          </tr>
        </thead>
        <tbody>
          {body.sweeps.map((s) => (
            <tr key={s.id}>
              <td>
                <a href={`#/sweep/${s.id}`}>{s.id}</a>
              </td>
              <td>{s.experiment}</td>
              <td>{s.preset}</td>
              <td>{s.executor}</td>
              <td>{s.created}</td>
              <td>{s.total}</td>
              <td>
                <Progress counts={s.counts} total={s.total} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The page `#/sweep/<id>` (`#sweep-page`). */
export function SweepPage(props: { id: string }) {
  const { body, error } = usePolled<SweepDetail>(`/api/sweeps/${props.id}`, (b) => moving(b.counts));
  const [sort, setSort] = useState<{ key: SweepSortKey; descending: boolean } | null>(null);
  if (error) return <p>{error}</p>;
  if (!body) return <p>loading…</p>;
  // By default the best first, as the spec's goal says.
  const order = sort ?? (body.metric ? { key: "metric" as const, descending: body.metric.goal === "maximize" } : {
    key: "index" as const,
    descending: false,
  });
  const header = (key: SweepSortKey, label: string) => (
    <th>
      <button
        type="button"
        onClick={() => setSort({ key, descending: order.key === key ? !order.descending : false })}
      >
        {label}
        {order.key === key ? (order.descending ? " ▼" : " ▲") : ""}
      </button>
    </th>
  );
  return (
    <div id="sweep-page">
      <h2>
        sweep {body.id} <small>{body.experiment} · {body.preset} · {body.executor}</small>
      </h2>
      <Progress counts={body.counts} total={body.total} />
      <table>
        <thead>
          <tr>
            {header("index", "#")}
            {body.varied.map((k) => header(`value:${k}`, k))}
            {header("seed", "seed")}
            <th>status</th>
            {body.metric && header("metric", `${body.metric.name} (${body.metric.goal})`)}
            <th>run</th>
          </tr>
        </thead>
        <tbody>
          {sortedTasks(body.tasks, order.key, order.descending).map((t) => (
            <tr key={t.key}>
              <td>{t.index}</td>
              {body.varied.map((k) => <td key={k}>{formatValue(t.values[k])}</td>)}
              <td>{t.seed}</td>
              <td class={`status-${t.status}`}>
                {t.status}
                {t.exit_code !== null && t.status !== "completed" ? ` (exit ${t.exit_code})` : ""}
                {t.attempts > 1 ? ` · ${t.attempts} attempts` : ""}
              </td>
              {body.metric && <td>{formatMeasured(t.metric)}</td>}
              <td>{t.run ? <a href={`#/run/${runPath(t.run)}`}>{t.run.id}</a> : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
