/// <reference lib="dom" />
/**
 * The dashboard page: runs table, live charts, run pages and the
 * reproduction scorecard. View state lives in the URL hash, so a view can be
 * bookmarked and shared.
 *
 * @module
 */
import { render } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Chart, registerables } from "chart.js";
import type { Reducers, RunRow } from "../run_index.ts";
import type { Series } from "../downsample.ts";

Chart.register(...registerables);

const runKey = (r: { experiment: string; id: string }) => `${r.experiment}/${r.id}`;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];

/** View state, mirrored in the hash: #/?sel=a,b&smooth=0.6&q=text&log=1&x=time&diff=1&group=1&reduce=last */
function readHash(): { page: string; params: URLSearchParams } {
  const [path, query] = location.hash.slice(1).split("?");
  return { page: path || "/", params: new URLSearchParams(query ?? "") };
}

function useHash() {
  const [hash, setHash] = useState(readHash());
  useEffect(() => {
    const listener = () => setHash(readHash());
    addEventListener("hashchange", listener);
    return () => removeEventListener("hashchange", listener);
  }, []);
  const update = (changes: Record<string, string | null>) => {
    const params = new URLSearchParams(hash.params);
    for (const [k, v] of Object.entries(changes)) v === null || v === "" ? params.delete(k) : params.set(k, v);
    location.hash = `${hash.page}?${params}`;
  };
  return { ...hash, update };
}

/** What a control bound to one URL parameter needs: the current parameters and the updater of useHash. */
interface ParamControl {
  name: string;
  label: string;
  params: URLSearchParams;
  update: (changes: Record<string, string | null>) => void;
}

/** A checkbox stored in the URL as `name=1` (absent when off). */
function ParamCheckbox({ name, label, params, update }: ParamControl) {
  return (
    <label>
      <input
        type="checkbox"
        checked={params.get(name) === "1"}
        onChange={(e) => update({ [name]: (e.target as HTMLInputElement).checked ? "1" : null })}
      />
      {label}
    </label>
  );
}

/** A select stored in the URL as `name=option`; the first option is the default. */
function ParamSelect({ name, label, options, params, update }: ParamControl & { options: string[] }) {
  return (
    <label>
      {label}{" "}
      <select
        value={params.get(name) ?? options[0]}
        onChange={(e) => update({ [name]: (e.target as HTMLSelectElement).value })}
      >
        {options.map((option) => <option key={option}>{option}</option>)}
      </select>
    </label>
  );
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return await res.json();
}

/** Debiased exponential moving average (TensorBoard's smoothing). */
export function smooth(values: number[], weight: number): number[] {
  let last = 0, count = 0;
  return values.map((v) => {
    last = last * weight + (1 - weight) * v;
    count++;
    return weight === 0 ? v : last / (1 - Math.pow(weight, count));
  });
}

function formatValue(v: unknown): string {
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toPrecision(4);
  return typeof v === "string" ? v : JSON.stringify(v);
}

function RunsTable(props: {
  runs: RunRow[];
  selected: Set<string>;
  toggle: (key: string) => void;
  query: string;
  onlyDiff: boolean;
  reducer: keyof Reducers;
}) {
  const [sort, setSort] = useState<{ column: string; descending: boolean }>({ column: "created", descending: true });
  const configKeys = useMemo(() => {
    const keys = [...new Set(props.runs.flatMap((r) => Object.keys(r.config)))].sort();
    if (!props.onlyDiff) return keys;
    return keys.filter((k) => new Set(props.runs.map((r) => JSON.stringify(r.config[k]))).size > 1);
  }, [props.runs, props.onlyDiff]);
  const metricKeys = useMemo(
    () =>
      [...new Set(props.runs.flatMap((r) => Object.keys(r.metrics)))].filter((k) => !k.includes("/")).concat(
        [...new Set(props.runs.flatMap((r) => Object.keys(r.metrics)))].filter((k) => k.includes("/")),
      ).slice(0, 12),
    [props.runs],
  );
  const cell = (r: RunRow, column: string): unknown => {
    if (column.startsWith("config:")) return r.config[column.slice(7)];
    if (column.startsWith("metric:")) return r.metrics[column.slice(7)]?.[props.reducer];
    return (r as unknown as Record<string, unknown>)[column];
  };
  const needle = props.query.toLowerCase();
  const rows = props.runs
    .filter((r) => !needle || JSON.stringify([r.experiment, r.status, r.config, r.tags]).toLowerCase().includes(needle))
    .sort((a, b) => {
      const x = cell(a, sort.column), y = cell(b, sort.column);
      const order = typeof x === "number" && typeof y === "number"
        ? x - y
        : String(x ?? "").localeCompare(String(y ?? ""));
      return sort.descending ? -order : order;
    });
  const header = (column: string, label: string) => (
    <th onClick={() => setSort({ column, descending: sort.column === column ? !sort.descending : true })}>
      {label}
      {sort.column === column ? (sort.descending ? " ▼" : " ▲") : ""}
    </th>
  );
  return (
    <div class="scroll">
      <table id="runs">
        <thead>
          <tr>
            <th></th>
            {header("experiment", "experiment")}
            {header("status", "status")}
            {header("created", "created")}
            {header("duration_s", "duration")}
            {header("backend", "backend")}
            {configKeys.map((k) => header(`config:${k}`, k))}
            {metricKeys.map((k) => header(`metric:${k}`, `${k} (${props.reducer})`))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={runKey(r)} class={props.selected.has(runKey(r)) ? "selected" : ""} data-run={runKey(r)}>
              <td>
                <input
                  type="checkbox"
                  checked={props.selected.has(runKey(r))}
                  onChange={() =>
                    props.toggle(runKey(r))}
                />
              </td>
              <td>
                <a href={`#/run/${runKey(r)}`}>{r.experiment}</a> <small>{r.id}</small>
              </td>
              <td class={`status-${r.status}`}>{r.status}</td>
              <td>{new Date(r.created).toLocaleString()}</td>
              <td>{r.duration_s.toFixed(1)} s</td>
              <td>{r.backend}</td>
              {configKeys.map((k) => <td key={k}>{formatValue(r.config[k])}</td>)}
              {metricKeys.map((k) => <td key={k}>{formatValue(r.metrics[k]?.[props.reducer])}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface Line {
  label: string;
  color: string;
  series: Series;
  band?: { lo: number[]; hi: number[] };
}

function MetricChart(props: { metric: string; lines: Line[]; smoothing: number; logY: boolean; xAxis: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  useEffect(() => {
    const datasets = props.lines.flatMap((line) => {
      const xs = props.xAxis === "time" ? line.series.t : line.series.x;
      const points = (ys: number[]) => ys.map((y, i) => ({ x: xs[i], y }));
      const sets: Record<string, unknown>[] = [];
      if (line.band) {
        sets.push({ data: points(line.band.lo), borderWidth: 0, pointRadius: 0, label: `${line.label} lo` });
        sets.push({
          data: points(line.band.hi),
          borderWidth: 0,
          pointRadius: 0,
          fill: "-1",
          backgroundColor: `${line.color}33`,
          label: `${line.label} hi`,
        });
      }
      if (props.smoothing > 0) {
        sets.push({
          data: points(line.series.y),
          borderColor: `${line.color}40`,
          borderWidth: 1,
          pointRadius: 0,
          label: `${line.label} raw`,
        });
      }
      sets.push({
        data: points(smooth(line.series.y, props.smoothing)),
        borderColor: line.color,
        backgroundColor: line.color,
        borderWidth: 1.5,
        // A metric logged once (a final score) is a single point: draw it.
        pointRadius: line.series.x.length < 2 ? 4 : 0,
        label: line.label,
      });
      return sets;
    });
    const config = {
      type: "line" as const,
      data: { datasets },
      options: {
        animation: false as const,
        parsing: false as const,
        scales: {
          x: { type: "linear" as const, title: { display: true, text: props.xAxis === "time" ? "seconds" : "step" } },
          y: { type: props.logY ? "logarithmic" as const : "linear" as const },
        },
        plugins: { legend: { labels: { filter: (item: { text: string }) => !/ (raw|lo|hi)$/.test(item.text) } } },
      },
    };
    if (!chart.current) chart.current = new Chart(canvas.current!, config as never);
    else {
      chart.current.data = config.data as never;
      chart.current.options = config.options as never;
      chart.current.update();
    }
  }, [props.lines, props.smoothing, props.logY, props.xAxis]);
  useEffect(() => () => chart.current?.destroy(), []);
  const points = props.lines.reduce((n, l) => n + l.series.x.length, 0);
  const download = () => {
    const a = document.createElement("a");
    a.href = canvas.current!.toDataURL("image/png");
    a.download = `${props.metric.replaceAll("/", "_")}.png`;
    a.click();
  };
  return (
    <div class="card" data-metric={props.metric} data-points={points}>
      <h3>
        <span>{props.metric}</span>
        <button type="button" onClick={download}>PNG</button>
      </h3>
      <canvas ref={canvas}></canvas>
    </div>
  );
}

/** Mean ± one standard deviation over runs, aligned on step. */
function meanBand(series: Series[]): { series: Series; band: { lo: number[]; hi: number[] } } {
  const byStep = new Map<number, { t: number; values: number[] }>();
  for (const s of series) {
    s.x.forEach((x, i) => {
      const entry = byStep.get(x) ?? { t: s.t[i], values: [] };
      entry.values.push(s.y[i]);
      byStep.set(x, entry);
    });
  }
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const mean: number[] = [], lo: number[] = [], hi: number[] = [], t: number[] = [];
  for (const step of steps) {
    const { values, t: time } = byStep.get(step)!;
    const m = values.reduce((a, b) => a + b, 0) / values.length;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / values.length);
    mean.push(m);
    lo.push(m - sd);
    hi.push(m + sd);
    t.push(time);
  }
  return { series: { x: steps, t, y: mean }, band: { lo, hi } };
}

function finalTable(runs: RunRow[], format: "markdown" | "latex"): string {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))].sort();
  const rows = runs.map((r) => [runKey(r), ...keys.map((k) => formatValue(r.metrics[k]?.last ?? ""))]);
  if (format === "markdown") {
    return [
      `| run | ${keys.join(" | ")} |`,
      `|---|${keys.map(() => "---|").join("")}`,
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ]
      .join("\n");
  }
  const escape = (s: string) => s.replaceAll("_", "\\_");
  return [`\\begin{tabular}{l${"r".repeat(keys.length)}}`, `run & ${keys.map(escape).join(" & ")} \\\\ \\hline`]
    .concat(rows.map((r) => `${r.map(escape).join(" & ")} \\\\`), ["\\end{tabular}"]).join("\n");
}

function RunsPage(props: { hash: ReturnType<typeof useHash>; runs: RunRow[] }) {
  const { params, update } = props.hash;
  const selected = new Set((params.get("sel") ?? "").split(",").filter((k) => k));
  const smoothing = Number(params.get("smooth") ?? "0.6");
  const [data, setData] = useState<Record<string, Record<string, Series>>>({});
  const [exportText, setExportText] = useState("");
  const selectedRuns = props.runs.filter((r) => selected.has(runKey(r)));

  useEffect(() => {
    const sources: EventSource[] = [];
    let cancelled = false;
    for (const run of selectedRuns) {
      const key = runKey(run);
      getJson<{ series: Record<string, Series> }>(`/api/runs/${key}/metrics?max_points=2000`).then((body) => {
        if (cancelled) return;
        setData((d) => ({ ...d, [key]: body.series }));
        if (run.status !== "running") return;
        const events = new EventSource(`/api/runs/${key}/events`);
        events.addEventListener("metrics", (event) => {
          const rows = JSON.parse((event as MessageEvent).data) as Record<string, number>[];
          setData((d) => {
            const next: Record<string, Series> = { ...(d[key] ?? {}) };
            for (const row of rows) {
              for (const [metric, value] of Object.entries(row)) {
                if (metric === "step" || metric === "time") continue;
                const s = next[metric] ?? { x: [], t: [], y: [] };
                next[metric] = { x: [...s.x, row.step], t: [...s.t, row.time], y: [...s.y, value] };
              }
            }
            return { ...d, [key]: next };
          });
        });
        sources.push(events);
      });
    }
    return () => {
      cancelled = true;
      sources.forEach((s) => s.close());
    };
  }, [[...selected].sort().join(","), props.runs.map((r) => `${runKey(r)}:${r.status}`).join(",")]);

  const metricNames = [...new Set(selectedRuns.flatMap((r) => Object.keys(data[runKey(r)] ?? {})))].sort();
  const group = params.get("group") === "1";
  const linesFor = (metric: string): Line[] => {
    const present = selectedRuns.filter((r) => data[runKey(r)]?.[metric]);
    if (!group) {
      return present.map((r, i) => ({
        label: runKey(r),
        color: COLORS[i % COLORS.length],
        series: data[runKey(r)][metric],
      }));
    }
    const groups = new Map<string, RunRow[]>();
    for (const r of present) {
      const id = `${r.experiment} ${JSON.stringify(r.config)}`;
      groups.set(id, [...(groups.get(id) ?? []), r]);
    }
    return [...groups.values()].map((runs, i) => ({
      label: `${runs[0].experiment} (${runs.length} seed${runs.length > 1 ? "s" : ""})`,
      color: COLORS[i % COLORS.length],
      ...meanBand(runs.map((r) => data[runKey(r)][metric])),
    }));
  };

  return (
    <div>
      <div class="controls">
        <input
          placeholder="filter config, status, tags"
          value={params.get("q") ?? ""}
          onInput={(e) => update({ q: (e.target as HTMLInputElement).value })}
        />
        <ParamCheckbox name="diff" label="only keys that differ" params={params} update={update} />
        <ParamSelect name="reduce" label="reducer" options={["last", "min", "max"]} params={params} update={update} />
        <label>
          smoothing{" "}
          <input
            type="range"
            min="0"
            max="0.99"
            step="0.01"
            value={smoothing}
            onInput={(e) => update({ smooth: (e.target as HTMLInputElement).value })}
          />
          {smoothing.toFixed(2)}
        </label>
        <ParamCheckbox name="log" label="log y" params={params} update={update} />
        <ParamSelect name="x" label="x" options={["step", "time"]} params={params} update={update} />
        <ParamCheckbox name="group" label="group seeds (mean ± sd)" params={params} update={update} />
        <button
          type="button"
          disabled={!selectedRuns.length}
          onClick={() => setExportText(finalTable(selectedRuns, "markdown"))}
        >
          Markdown table
        </button>
        <button
          type="button"
          disabled={!selectedRuns.length}
          onClick={() => setExportText(finalTable(selectedRuns, "latex"))}
        >
          LaTeX table
        </button>
      </div>
      {exportText && <textarea readOnly value={exportText}></textarea>}
      <RunsTable
        runs={props.runs}
        selected={selected}
        query={params.get("q") ?? ""}
        onlyDiff={params.get("diff") === "1"}
        reducer={(params.get("reduce") ?? "last") as keyof Reducers}
        toggle={(key) => {
          const next = new Set(selected);
          next.has(key) ? next.delete(key) : next.add(key);
          update({ sel: [...next].join(",") });
        }}
      />
      {!selectedRuns.length && <p>Select runs to chart their metrics.</p>}
      <div class="charts">
        {metricNames.map((metric) => (
          <MetricChart
            key={metric}
            metric={metric}
            lines={linesFor(metric)}
            smoothing={smoothing}
            logY={params.get("log") === "1"}
            xAxis={params.get("x") ?? "step"}
          />
        ))}
      </div>
    </div>
  );
}

interface RunDetail {
  run: Record<string, unknown> & { status: string; experiment: string; id: string };
  config: Record<string, unknown> | null;
  summary: {
    metrics: Record<string, number>;
    wall_time_s: number;
    source: string;
    targets: {
      metric: string;
      paper: number;
      ours: number | null;
      tolerance: number;
      source: string;
      verdict: string;
    }[];
    claims: { text: string; source: string; verdict: string }[];
  } | null;
  media: { name: string; step: number; path: string }[];
}

function verdictClass(verdict: string) {
  return verdict === "reproduced" ? "verdict-reproduced" : verdict === "not reproduced" ? "verdict-not" : "";
}

function MediaViewer(props: { base: string; items: { name: string; step: number; path: string }[] }) {
  const [index, setIndex] = useState(props.items.length - 1);
  const item = props.items[Math.min(index, props.items.length - 1)];
  return (
    <div class="card media">
      <h3>
        <span>{item.name}</span>
        <span>step {item.step}</span>
      </h3>
      {props.items.length > 1 && (
        <input
          type="range"
          min="0"
          max={props.items.length - 1}
          value={index}
          onInput={(e) => setIndex(Number((e.target as HTMLInputElement).value))}
        />
      )}
      <img src={`${props.base}/media/${item.path}`} alt={item.name} />
    </div>
  );
}

function RunPage(props: { experiment: string; id: string; runs: RunRow[] }) {
  const base = `/api/runs/${props.experiment}/${props.id}`;
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState("");
  const [other, setOther] = useState("");
  const [otherConfig, setOtherConfig] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    getJson<RunDetail>(base).then(setDetail).catch((e) => setError(String(e)));
  }, [base, props.runs.find((r) => r.id === props.id)?.status]);
  useEffect(() => {
    if (other) getJson<RunDetail>(`/api/runs/${other}`).then((d) => setOtherConfig(d.config));
  }, [other]);
  if (error) return <p>{error}</p>;
  if (!detail) return <p>loading…</p>;
  const mediaByName = new Map<string, RunDetail["media"]>();
  for (const m of detail.media) mediaByName.set(m.name, [...(mediaByName.get(m.name) ?? []), m]);
  const config = detail.config ?? {};
  const diffKeys = otherConfig
    ? [...new Set([...Object.keys(config), ...Object.keys(otherConfig)])].filter((k) =>
      JSON.stringify(config[k]) !== JSON.stringify(otherConfig[k])
    )
    : [];
  return (
    <div id="run-page">
      <h2>
        {props.experiment} <small>{props.id}</small>{" "}
        <span class={`status-${detail.run.status}`}>{detail.run.status}</span>
      </h2>
      <p>
        <a href={`${base}/metrics?format=csv`}>metrics CSV</a> · <a href={`${base}/metrics`}>metrics JSON</a> ·{" "}
        <a href={`#/?sel=${props.experiment}/${props.id}`}>chart this run</a>
      </p>
      {detail.summary && (
        <div class="card">
          <h3>
            <span>published targets ({detail.summary.source})</span>
            <span>{detail.summary.wall_time_s} s</span>
          </h3>
          <table id="targets">
            <thead>
              <tr>
                <th>metric or finding</th>
                <th>source</th>
                <th>published</th>
                <th>ours</th>
                <th>tolerance</th>
                <th>verdict</th>
              </tr>
            </thead>
            <tbody>
              {detail.summary.targets.map((t) => (
                <tr>
                  <td>{t.metric}</td>
                  <td>{t.source}</td>
                  <td>{formatValue(t.paper)}</td>
                  <td>{t.ours === null ? "—" : formatValue(t.ours)}</td>
                  <td>±{t.tolerance}</td>
                  <td class={verdictClass(t.verdict)}>{t.verdict}</td>
                </tr>
              ))}
              {detail.summary.claims.map((c) => (
                <tr>
                  <td>{c.text}</td>
                  <td>{c.source}</td>
                  <td>holds</td>
                  <td></td>
                  <td></td>
                  <td class={verdictClass(c.verdict)}>{c.verdict}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
        <div class="card">
          <h3>config diff</h3>
          <select value={other} onChange={(e) => setOther((e.target as HTMLSelectElement).value)}>
            <option value="">compare with…</option>
            {props.runs.filter((r) => r.id !== props.id).map((r) => (
              <option key={runKey(r)} value={runKey(r)}>{runKey(r)}</option>
            ))}
          </select>
          <table>
            {diffKeys.map((k) => (
              <tr>
                <td>{k}</td>
                <td>{formatValue(config[k])}</td>
                <td>{formatValue(otherConfig?.[k])}</td>
              </tr>
            ))}
          </table>
        </div>
        <div class="card">
          <h3>run.json</h3>
          <pre>{JSON.stringify(detail.run, null, 2)}</pre>
        </div>
      </div>
    </div>
  );
}

interface ScorecardSummary {
  experiment: string;
  preset: string;
  seed: number;
  run_id: string;
  targets: { metric: string; paper: number; ours: number | null; source: string; verdict: string }[];
  claims: { text: string; source: string; verdict: string }[];
}

function ScorecardPage() {
  const [summaries, setSummaries] = useState<ScorecardSummary[] | null>(null);
  useEffect(() => {
    getJson<{ summaries: ScorecardSummary[] }>("/api/scorecard").then((b) => setSummaries(b.summaries));
  }, []);
  if (!summaries) return <p>loading…</p>;
  if (!summaries.length) return <p>No completed runs yet.</p>;
  return (
    <table id="scorecard">
      <thead>
        <tr>
          <th>experiment</th>
          <th>preset</th>
          <th>source</th>
          <th>metric or finding</th>
          <th>published</th>
          <th>ours</th>
          <th>verdict</th>
        </tr>
      </thead>
      <tbody>
        {summaries.flatMap((s) => [
          ...s.targets.map((t) => (
            <tr>
              <td>
                <a href={`#/run/${s.experiment}/${s.run_id}`}>{s.experiment}</a>
              </td>
              <td>{s.preset}</td>
              <td>{t.source}</td>
              <td>{t.metric}</td>
              <td>{formatValue(t.paper)}</td>
              <td>{t.ours === null ? "—" : formatValue(t.ours)}</td>
              <td class={verdictClass(t.verdict)}>{t.verdict}</td>
            </tr>
          )),
          ...s.claims.map((c) => (
            <tr>
              <td>{s.experiment}</td>
              <td>{s.preset}</td>
              <td>{c.source}</td>
              <td>{c.text}</td>
              <td>holds</td>
              <td></td>
              <td class={verdictClass(c.verdict)}>{c.verdict}</td>
            </tr>
          )),
        ])}
      </tbody>
    </table>
  );
}

function App() {
  const hash = useHash();
  const [runs, setRuns] = useState<RunRow[]>([]);
  useEffect(() => {
    const load = () => getJson<{ runs: RunRow[] }>("/api/runs").then((b) => setRuns(b.runs)).catch(() => {});
    load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, []);
  const runMatch = /^\/run\/([^/]+)\/([^/]+)$/.exec(hash.page);
  return (
    <div>
      <header>
        <strong>latentlab</strong>
        <a href="#/">runs</a>
        <a href="#/scorecard">scorecard</a>
        <span>{runs.length} runs</span>
      </header>
      <main>
        {runMatch
          ? <RunPage experiment={runMatch[1]} id={runMatch[2]} runs={runs} />
          : hash.page === "/scorecard"
          ? <ScorecardPage />
          : <RunsPage hash={hash} runs={runs} />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
