/**
 * What one metric's chart draws: a line per run (or per seed group, with its
 * band), each as chart.js datasets with its raw and smoothed values.
 *
 * @module
 */
import type { Series } from "../../lib/core/run_layout.ts";
import type { RunRow } from "../run_index.ts";
import { runKey } from "./format.ts";
import type { RunSeries } from "./metric_series.ts";
import { type BandKind, meanBand, runGroups } from "./seed_bands.ts";
import { differingKeys, settingLabel } from "./config_keys.ts";
import { smooth } from "./smoothing.ts";

/**
 * The colour of a run (or seed group) named `key`: a hue from the key's
 * hash, so that a run keeps its colour when other runs are selected or
 * created (a palette indexed by position recoloured them, and repeated after 9).
 */
export function lineColor(key: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  // Golden-angle steps of the hash spread neighbouring hashes around the wheel.
  const hue = (hash * 137.508) % 360, light = [0.38, 0.48][hash % 2], sat = 0.7;
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const value = light - sat * Math.min(light, 1 - light) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(value * 255).toString(16).padStart(2, "0");
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

/** One line of a chart, with the band around it when it stands for a group of seeds. */
export interface Line {
  label: string;
  /** `#rrggbb`, so that an alpha byte can be appended for the raw line and the band. */
  color: string;
  series: Series;
  band?: { lo: number[]; hi: number[] };
}

/**
 * The lines of `metric`: one per run that logged it, or, with `grouping`,
 * one mean ± band line per group of {@linkcode runGroups} (`[]`: runs that
 * differ only in seed; config keys: runs sharing their values).
 *
 * @param runs the selected runs, in table order
 * @param data each run's series, by run key
 * @param grouping null draws every run
 */
export function chartLines(
  metric: string,
  runs: RunRow[],
  data: Record<string, RunSeries>,
  grouping: string[] | null,
  band: BandKind = "sd",
): Line[] {
  const present = runs.filter((r) => data[runKey(r)]?.has(metric));
  // Lines are named by what tells them apart: the config keys that differ, then the seed.
  const differing = differingKeys(present.map((r) => r.config));
  if (!grouping) {
    const seeds = new Set(present.map((r) => r.seed)).size > 1;
    const named = present.map((r) =>
      [settingLabel(r.experiment, r.config, differing), ...(seeds ? [`seed ${r.seed}`] : [])].join(" ")
    );
    // Runs of equal settings and seed keep their ids apart.
    const unique = named.map((name, i) => named.indexOf(name) === named.lastIndexOf(name) ? name : runKey(present[i]));
    return present.map((r, i) => ({
      label: unique[i],
      color: lineColor(runKey(r)),
      series: data[runKey(r)].get(metric)!,
    }));
  }
  return runGroups(present, grouping).map(({ label, id, runs }) => ({
    label,
    color: lineColor(id),
    ...meanBand(runs.map((r) => data[runKey(r)].get(metric)!), band),
  }));
}

/** How a chart draws its lines. */
export interface ChartView {
  smoothing: number;
  logY: boolean;
  /** "time" plots against seconds since the start; anything else against steps. */
  xAxis: string;
  /** The x range zoomed or panned to; absent or null, the lines' whole range. */
  xRange?: { min: number; max: number } | null;
}

/** Legend entries of the helper datasets end in these words; the legend hides them. */
const HELPER_LABEL = / (raw|lo|hi|bar)$/;

/**
 * The chart.js datasets of the lines: per line, its band's lower and upper
 * edges (the upper filled down to the lower), its raw values faintly when
 * smoothing is on, and its smoothed values.
 */
export function chartDatasets(lines: Line[], view: ChartView): Record<string, unknown>[] {
  return lines.flatMap((line) => {
    const xs = view.xAxis === "time" ? line.series.t : line.series.x;
    const points = (ys: number[]) => ys.map((y, i) => ({ x: xs[i], y }));
    const sets: Record<string, unknown>[] = [];
    if (line.band && xs.length === 1) {
      // A score logged once (a final score) has no band to fill: an error bar from its low to its high value.
      sets.push({
        data: [{ x: xs[0], y: line.band.lo[0] }, { x: xs[0], y: line.band.hi[0] }],
        borderColor: line.color,
        borderWidth: 1.5,
        pointStyle: "line",
        pointRadius: 6,
        pointBorderColor: line.color,
        label: `${line.label} bar`,
      });
    } else if (line.band) {
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
    if (view.smoothing > 0) {
      sets.push({
        data: points(line.series.y),
        borderColor: `${line.color}40`,
        borderWidth: 1,
        pointRadius: 0,
        label: `${line.label} raw`,
      });
    }
    sets.push({
      data: points(smooth(line.series.y, view.smoothing)),
      borderColor: line.color,
      backgroundColor: line.color,
      borderWidth: 1.5,
      // A metric logged once (a final score) is a single point: draw it.
      pointRadius: line.series.x.length < 2 ? 4 : 0,
      label: line.label,
    });
    return sets;
  });
}

/**
 * The whole chart.js line-chart config of the lines. Points are given as
 * {x, y} and not parsed, and nothing animates, so live updates stay cheap.
 */
export function chartConfig(lines: Line[], view: ChartView) {
  return {
    type: "line" as const,
    data: { datasets: chartDatasets(lines, view) },
    options: {
      animation: false as const,
      parsing: false as const,
      // Points come sorted by x with one value per x: chart.js can skip checking that, and searching for gaps.
      normalized: true as const,
      spanGaps: true as const,
      scales: {
        x: {
          type: "linear" as const,
          title: { display: true, text: view.xAxis === "time" ? "seconds" : "step" },
          ...(view.xRange ? { min: view.xRange.min, max: view.xRange.max } : {}),
        },
        y: { type: view.logY ? "logarithmic" as const : "linear" as const },
      },
      // The tooltip lists every line at the hovered step, not one point.
      interaction: { mode: "nearest" as const, axis: "x" as const, intersect: false },
      plugins: {
        legend: {
          labels: {
            filter: (item: { text: string }) => !HELPER_LABEL.test(item.text),
            boxWidth: 10,
            font: { size: 10 },
          },
          onClick: (_event: unknown, item: { text: string }, legend: { chart: ToggleableChart }) =>
            toggleLine(legend.chart, item.text),
        },
      },
    },
  };
}

/** What {@linkcode toggleLine} needs of a chart.js chart. */
export interface ToggleableChart {
  data: { datasets: { label?: string }[] };
  isDatasetVisible(index: number): boolean;
  setDatasetVisibility(index: number, visible: boolean): void;
  update(): void;
}

/**
 * Shows or hides a line with everything drawn for it: its smoothed values,
 * its faint raw values and its band (the legend lists only the first).
 */
export function toggleLine(chart: ToggleableChart, label: string): void {
  const own = chart.data.datasets.map((d, i) => ({ label: d.label ?? "", i }))
    .filter((d) => d.label === label || (d.label.startsWith(`${label} `) && HELPER_LABEL.test(d.label)));
  const visible = own.some((d) => d.label === label && chart.isDatasetVisible(d.i));
  for (const d of own) chart.setDatasetVisibility(d.i, !visible);
  chart.update();
}

/** How many points the lines hold, the band and smoothing aside. */
export function pointCount(lines: Line[]): number {
  return lines.reduce((n, l) => n + l.series.x.length, 0);
}
