/**
 * The hyperparameter view's geometry (as TensorBoard's HParams, W&B and Aim
 * draw it): one parallel-coordinates axis per config key that differs
 * between the runs, then the chosen metric; and the metric against each
 * numeric key. Positions are fractions of an axis, 0 at the bottom.
 *
 * @module
 */
import type { Reducers, RunRow } from "../run_index.ts";
import { differingKeys } from "./config_keys.ts";
import { formatValue, runKey } from "./format.ts";
import { metricValue } from "./run_rows.ts";

/** One axis: numeric (linear, or log when all values are positive and span two decades or more) or categorical. */
export interface Axis {
  key: string;
  kind: "linear" | "log" | "category";
  /** Labels at the bottom and top (numeric), or each category bottom to top. */
  ticks: { at: number; label: string }[];
  /** Where a value sits on the axis, or null when the run has none. */
  position(value: unknown): number | null;
}

/** One run across the axes. */
export interface HparamLine {
  run: string;
  /** The run's position on each axis, null where it has no value. */
  at: (number | null)[];
  /** The run's metric value, for colouring. */
  metric: number | null;
}

function numericAxis(key: string, values: number[]): Axis {
  let min = Infinity, max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const log = min > 0 && max / min >= 100;
  const f = log ? Math.log10 : (v: number) => v;
  const [a, b] = [f(min), f(max)];
  const position = (value: unknown) =>
    typeof value !== "number" || !Number.isFinite(value) || (log && value <= 0)
      ? null
      : b === a
      ? 0.5
      : (f(value) - a) / (b - a);
  const ticks = min === max
    ? [{ at: 0.5, label: formatValue(min) }]
    : [{ at: 0, label: formatValue(min) }, { at: 1, label: formatValue(max) }];
  return { key, kind: log ? "log" : "linear", ticks, position };
}

function categoryAxis(key: string, values: unknown[]): Axis {
  const labels = [...new Set(values.map((v) => formatValue(v)))].sort();
  const at = (i: number) => labels.length === 1 ? 0.5 : i / (labels.length - 1);
  return {
    key,
    kind: "category",
    ticks: labels.map((label, i) => ({ at: at(i), label })),
    position: (value) => {
      const i = value === undefined ? -1 : labels.indexOf(formatValue(value));
      return i < 0 ? null : at(i);
    },
  };
}

/** The axis of `key` over `values` (undefined values left out): numeric when every value is a number. */
export function axisOf(key: string, values: unknown[]): Axis {
  const present = values.filter((v) => v !== undefined);
  return present.length > 0 && present.every((v) => typeof v === "number" && Number.isFinite(v))
    ? numericAxis(key, present as number[])
    : categoryAxis(key, present);
}

/**
 * Axes of the config keys that differ between `runs` (the seed among them
 * when seeds differ), then of `metric` (the reducer's value), and each run's
 * line across them.
 */
export function parallelCoordinates(
  runs: RunRow[],
  metric: string,
  reducer: keyof Reducers,
): { axes: Axis[]; lines: HparamLine[] } {
  const configs: Record<string, unknown>[] = runs.map((r) => ({ ...r.config, seed: r.seed }));
  const keys = differingKeys(configs);
  const metricOf = (r: RunRow) => metricValue(r, metric, reducer) ?? null;
  const axes = [
    ...keys.map((k) => axisOf(k, configs.map((c) => c[k]))),
    axisOf(metric, runs.map((r) => metricOf(r) ?? undefined)),
  ];
  const lines = runs.map((r, i) => ({
    run: runKey(r),
    at: axes.map((axis, j) => axis.position(j < keys.length ? configs[i][keys[j]] : metricOf(r) ?? undefined)),
    metric: metricOf(r),
  }));
  return { axes, lines };
}

/** Metric against one numeric config key: the points of the runs that have both. */
export function scatterPoints(
  runs: RunRow[],
  key: string,
  metric: string,
  reducer: keyof Reducers,
): { run: string; x: number; y: number }[] {
  return runs.flatMap((r) => {
    const x = key === "seed" ? r.seed : r.config[key];
    const y = metricValue(r, metric, reducer);
    return typeof x === "number" && Number.isFinite(x) && typeof y === "number" && Number.isFinite(y)
      ? [{ run: runKey(r), x, y }]
      : [];
  });
}
