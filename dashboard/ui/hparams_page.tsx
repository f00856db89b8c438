/// <reference lib="dom" />
/**
 * The hyperparameter view (`#/hparams`): parallel coordinates over the
 * config keys that differ between the runs the filter keeps and a chosen
 * final metric, and that metric against each numeric key.
 *
 * @module
 */
import type { Reducers, RunRow } from "../run_index.ts";
import { lineColor } from "./chart_lines.ts";
import { formatValue } from "./format.ts";
import { type Axis, parallelCoordinates, scatterPoints } from "./hparams.ts";
import { DEFAULT_SORT, metricKeys, visibleRows } from "./run_rows.ts";
import type { HashControl } from "./use_hash.ts";

const [W, H, PAD] = [760, 280, 40];

function Axes(props: { axes: Axis[] }) {
  const x = (i: number) => PAD + (i * (W - 2 * PAD)) / Math.max(1, props.axes.length - 1);
  const y = (at: number) => H - PAD - at * (H - 2 * PAD);
  return (
    <>
      {props.axes.map((axis, i) => (
        <g key={axis.key}>
          <line x1={x(i)} x2={x(i)} y1={y(0)} y2={y(1)} stroke="#888" />
          {/* The outer axes' names align inwards, so that long metric names stay inside the view. */}
          <text
            x={x(i)}
            y={PAD - 16}
            text-anchor={i === 0 && props.axes.length > 1
              ? "start"
              : i === props.axes.length - 1 && i > 0
              ? "end"
              : "middle"}
            font-weight="600"
          >
            {axis.key}
          </text>
          {axis.ticks.map((t) => <text key={t.label} x={x(i) + 4} y={y(t.at) + 4} font-size="10">{t.label}</text>)}
        </g>
      ))}
    </>
  );
}

/** The page `#/hparams?metric=…&q=…&reduce=…` (`#hparams`). */
export function HparamsPage(props: { hash: HashControl; runs: RunRow[] }) {
  const { params, update } = props.hash;
  const reducer = (params.get("reduce") ?? "last") as keyof Reducers;
  const runs = visibleRows(props.runs, params.get("q") ?? "", DEFAULT_SORT, reducer);
  const metrics = metricKeys(runs);
  const metric = params.get("metric") ?? metrics[0] ?? "";
  if (!runs.length || !metric) return <p>No runs with metrics to compare: run an experiment or a sweep first.</p>;
  const { axes, lines } = parallelCoordinates(runs, metric, reducer);
  const x = (i: number) => PAD + (i * (W - 2 * PAD)) / Math.max(1, axes.length - 1);
  const y = (at: number) => H - PAD - at * (H - 2 * PAD);
  const numericKeys = axes.slice(0, -1).filter((a) => a.kind !== "category").map((a) => a.key);
  return (
    <div id="hparams">
      <p>
        <label>
          metric{" "}
          <select value={metric} onChange={(e) => update({ metric: (e.target as HTMLSelectElement).value })}>
            {metrics.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>{" "}
        <label>
          filter{" "}
          <input
            value={params.get("q") ?? ""}
            placeholder="lr<0.01 status:completed"
            onInput={(e) => update({ q: (e.target as HTMLInputElement).value })}
          />
        </label>{" "}
        {runs.length} runs · {reducer}{" "}
        value of logged metrics, final scores as they are · axes: the config keys that differ
      </p>
      <svg id="parallel-coordinates" width={W} height={H} role="img" aria-label={`${metric} by config`}>
        <Axes axes={axes} />
        {lines.map((line) => {
          // A run without a value on an axis breaks its line there.
          const parts: string[] = [];
          let open = false;
          line.at.forEach((at, i) => {
            if (at === null) open = false;
            else {
              parts.push(`${open ? "L" : "M"}${x(i)},${y(at)}`);
              open = true;
            }
          });
          return (
            <path key={line.run} d={parts.join(" ")} fill="none" stroke={lineColor(line.run)} stroke-opacity="0.8">
              <title>{`${line.run}: ${metric} ${line.metric === null ? "—" : formatValue(line.metric)}`}</title>
            </path>
          );
        })}
      </svg>
      <div class="charts">
        {numericKeys.map((key) => {
          const points = scatterPoints(runs, key, metric, reducer);
          const xAxis = axes.find((a) => a.key === key)!, yAxis = axes[axes.length - 1];
          const [w, h, p] = [260, 200, 30];
          return (
            <div class="card" key={key}>
              <h3>{metric} vs {key}</h3>
              <svg class="scatter" width={w} height={h}>
                <line x1={p} x2={w - p / 2} y1={h - p} y2={h - p} stroke="#888" />
                <line x1={p} x2={p} y1={p / 2} y2={h - p} stroke="#888" />
                {points.map((pt) => (
                  <circle
                    key={pt.run}
                    cx={p + (xAxis.position(pt.x) ?? 0) * (w - 1.5 * p)}
                    cy={h - p - (yAxis.position(pt.y) ?? 0) * (h - 1.5 * p)}
                    r="4"
                    fill={lineColor(pt.run)}
                  >
                    <title>{`${pt.run}: ${key} ${formatValue(pt.x)}, ${metric} ${formatValue(pt.y)}`}</title>
                  </circle>
                ))}
              </svg>
            </div>
          );
        })}
      </div>
    </div>
  );
}
