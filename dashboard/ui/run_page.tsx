/// <reference lib="dom" />
/**
 * One run's page: status, downloads, published targets, a chart of every
 * logged metric, media, config and its diff against another run, and run.json.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunRow } from "../run_index.ts";
import type { MediaEntry } from "../../lib/core/run_layout.ts";
import { getJson, type RunDetail } from "./api.ts";
import { ConfigDiff } from "./config_diff.tsx";
import { formatValue, resumeCommand, runKey, runPath } from "./format.ts";
import { MediaViewer } from "./media_viewer.tsx";
import { NotesCard } from "./notes_card.tsx";
import { RunCharts } from "./run_charts.tsx";
import { TargetCurves } from "./target_curves.tsx";
import { TargetsTable } from "./targets_table.tsx";

/** Props of {@linkcode RunPage}. */
export interface RunPageProps {
  experiment: string;
  id: string;
  /** The runs listing, polled by the app: the page reloads the run when its status there changes. */
  runs: RunRow[];
}

/** The page `#/run/<experiment>/<id>` (`#run-page`). */
export function RunPage(props: RunPageProps) {
  const base = `/api/runs/${runPath(props)}`;
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    getJson<RunDetail>(base).then(setDetail).catch((e) => setError(String(e)));
  }, [base, props.runs.find((r) => r.id === props.id)?.status]);
  if (error) return <p>{error}</p>;
  if (!detail) return <p>loading…</p>;
  const mediaByName = new Map<string, MediaEntry[]>();
  for (const m of detail.media) mediaByName.set(m.name, [...(mediaByName.get(m.name) ?? []), m]);
  const config = detail.config ?? {};
  const resume = resumeCommand(props.experiment, detail.dir, detail.run.status);
  const row = props.runs.find((r) => r.experiment === props.experiment && r.id === props.id);
  return (
    <div id="run-page">
      <h2>
        {props.experiment} <small>{props.id}</small>{" "}
        <span class={`status-${detail.run.status}`}>{detail.run.status}</span>
      </h2>
      <p>
        <a href={`${base}/metrics?format=csv`}>metrics CSV</a> · <a href={`${base}/metrics`}>metrics JSON</a> ·{" "}
        <a href={`#/?sel=${encodeURIComponent(runKey(props))}`}>chart this run</a>
        {detail.run.sweep && (
          <>
            {" "}· task {detail.run.sweep.index} of sweep{" "}
            <a href={`#/sweep/${detail.run.sweep.id}`}>{detail.run.sweep.id}</a>
          </>
        )}
      </p>
      {row?.problem && (
        <p class="problem" id="run-problem">
          ⚠ {row.problem}
        </p>
      )}
      {detail.run.error && (
        <div class="card error-panel">
          <h3>error</h3>
          <pre>{detail.run.error}</pre>
        </div>
      )}
      {resume && (
        <p>
          {detail.run.status === "failed" ? "After fixing the cause, continue" : "Continue"}{" "}
          it from its last checkpoint: <code>{resume}</code>
        </p>
      )}
      {detail.summary && <TargetsTable summary={detail.summary} />}
      {detail.summary && <TargetCurves summary={detail.summary} />}
      {row && <RunCharts run={row} summary={detail.summary} />}
      <div class="charts">
        {[...mediaByName].map(([name, items]) => <MediaViewer key={name} base={base} items={items} />)}
      </div>
      <div class="charts">
        <div class="card">
          <h3>config</h3>
          <table>
            {Object.entries(config).map(([k, v]) => (
              <tr>
                <td>{k}</td>
                <td>{formatValue(v)}</td>
              </tr>
            ))}
          </table>
        </div>
        <NotesCard base={base} notes={detail.notes ?? { note: "", tags: [], archived: false }} />
        <ConfigDiff config={config} id={props.id} runs={props.runs} />
        <div class="card">
          <h3>run.json</h3>
          <pre>{JSON.stringify({ ...detail.run, error: detail.run.error ? "(above)" : undefined }, null, 2)}</pre>
        </div>
      </div>
    </div>
  );
}
