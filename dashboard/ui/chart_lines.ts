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
import { lineColors } from "./line_colors.ts";
import { chartTheme } from "./chart_theme.ts";
import { TOOLTIP_MAX_LINES, tooltipLine } from "./chart_tooltip.ts";
import type { Reference } from "./published_lines.ts";

/** A run's (or seed group's) colour: assigned in the order first seen, the same all over the page. */
export { lineColor } from "./line_colors.ts";

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
  // Colours go to every selected run (or group) in table order, whichever chart is built first.
  if (!grouping) lineColors.assign(runs.map(runKey));
  else lineColors.assign(runGroups(runs, grouping).map((g) => g.id));
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
      color: lineColors.colorOf(runKey(r)),
      series: data[runKey(r)].get(metric)!,
    }));
  }
  return runGroups(present, grouping).map(({ label, id, runs }) => ({
    label,
    color: lineColors.colorOf(id),
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
  /** Axes, grid and tooltip in the dark scheme's colours. */
  dark?: boolean;
  /** Labels of the lines (and published values) the legend hid: drawn hidden, so a live update keeps them so. */
  hidden?: ReadonlySet<string>;
}

/** Labels of the helper datasets end in these words; the legend and the tooltip leave them out. */
const HELPER_LABEL = / (raw|lo|hi|bar)$/;

/** The x range the lines span on the axis drawn, null without points. */
function xExtent(lines: Line[], view: ChartView): { min: number; max: number } | null {
  let min = Infinity, max = -Infinity;
  for (const line of lines) {
    const xs = view.xAxis === "time" ? line.series.t : line.series.x;
    if (!xs.length) continue;
    min = Math.min(min, xs[0]);
    max = Math.max(max, xs[xs.length - 1]);
  }
  if (min > max) return null;
  // A score logged once is a point: its published value still gets a line, from the origin.
  return min === max ? { min: Math.min(0, min), max } : { min, max };
}

/**
 * The datasets of published values across the lines' x range: per value,
 * its band's edges (the upper filled down to the lower) when it has a
 * width, and its dashed line.
 */
function referenceDatasets(references: Reference[], lines: Line[], view: ChartView): Record<string, unknown>[] {
  const extent = xExtent(lines, view);
  if (!extent) return [];
  const theme = chartTheme(view.dark ?? false);
  const across = (y: number) => [{ x: extent.min, y }, { x: extent.max, y }];
  return references.flatMap((ref) => {
    const sets: Record<string, unknown>[] = [];
    if (ref.hi > ref.lo) {
      sets.push({ data: across(ref.lo), borderWidth: 0, pointRadius: 0, label: `${ref.label} lo` });
      sets.push({
        data: across(ref.hi),
        borderWidth: 0,
        pointRadius: 0,
        fill: "-1",
        backgroundColor: theme.referenceBand,
        label: `${ref.label} hi`,
      });
    }
    sets.push({
      data: across(ref.paper),
      borderColor: theme.reference,
      backgroundColor: theme.reference,
      borderDash: [6, 4],
      borderWidth: 1.2,
      pointRadius: 0,
      label: ref.label,
    });
    return sets;
  });
}

/** Whether dataset `label` is drawn for a line (or published value) whose label is in `hidden`. */
function isHidden(label: string, hidden: ReadonlySet<string> | undefined): boolean {
  if (!hidden?.size) return false;
  return hidden.has(label) || (HELPER_LABEL.test(label) && hidden.has(label.replace(HELPER_LABEL, "")));
}

/**
 * The chart.js datasets of the lines: per line, its band's lower and upper
 * edges (the upper filled down to the lower), its raw values faintly when
 * smoothing is on, and its smoothed values; then the published values'.
 */
export function chartDatasets(
  lines: Line[],
  view: ChartView,
  references: Reference[] = [],
): Record<string, unknown>[] {
  const sets = lines.flatMap((line) => {
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
  }).concat(referenceDatasets(references, lines, view));
  // Only hidden datasets carry the flag: the datasets of a chart with nothing hidden stay as they were.
  for (const set of sets) if (isHidden(set.label as string, view.hidden)) set.hidden = true;
  return sets;
}

/** What a tooltip callback is handed of one point (the part of chart.js's TooltipItem it reads). */
interface TooltipItem {
  dataIndex: number;
  dataset: { label?: string };
  parsed: { y: number };
}

/**
 * chart.js tooltip options: a line per point naming the line, its value,
 * step and time (see chart_tooltip.ts), at most {@linkcode TOOLTIP_MAX_LINES}
 * of them and a footer counting the rest, the helper datasets left out.
 */
export function tooltipOptions(lines: Line[], references: Reference[], view: ChartView) {
  const theme = chartTheme(view.dark ?? false);
  const byLabel = new Map(lines.map((l) => [l.label, l]));
  // chart.js filters the items of one hover one by one: the lines among them are ranked once per hover.
  let ranked: TooltipItem[] | null = null, rank = new Map<TooltipItem, number>();
  const rankOf = (item: TooltipItem, items: TooltipItem[]) => {
    if (items !== ranked) {
      ranked = items;
      rank = new Map(items.filter((i) => !HELPER_LABEL.test(i.dataset.label ?? "")).map((i, at) => [i, at]));
    }
    return rank.get(item) ?? -1;
  };
  return {
    backgroundColor: theme.tooltipBackground,
    titleColor: theme.tooltipText,
    bodyColor: theme.tooltipText,
    footerColor: theme.tooltipText,
    borderColor: theme.tooltipBorder,
    borderWidth: 1,
    filter: (item: TooltipItem, _index: number, items: TooltipItem[]) => {
      const at = rankOf(item, items);
      return at >= 0 && at < TOOLTIP_MAX_LINES;
    },
    callbacks: {
      // Each line names its own step and time (seed groups and runs differ in them): no title.
      title: () => "",
      label: (item: TooltipItem) => {
        const label = item.dataset.label ?? "";
        const line = byLabel.get(label);
        if (!line) {
          const ref = references.find((r) => r.label === label);
          return ref ? `${label}: ${ref.paper}` : label;
        }
        const i = item.dataIndex, series = line.series;
        return tooltipLine({
          label,
          value: item.parsed.y,
          raw: view.smoothing > 0 ? series.y[i] : undefined,
          step: series.x[i],
          seconds: series.t[i],
        });
      },
      footer: (items: TooltipItem[]) => rank.size > items.length ? `… and ${rank.size - items.length} more` : "",
    },
  };
}

/**
 * The whole chart.js line-chart config of the lines and the published
 * values. Points are given as {x, y} and not parsed, and nothing animates,
 * so live updates stay cheap. The canvas legend is off: the card lists the
 * lines in HTML (chart.js's legend shows a few and cuts the rest); a PNG
 * export turns it on.
 */
export function chartConfig(lines: Line[], view: ChartView, references: Reference[] = []) {
  const theme = chartTheme(view.dark ?? false);
  const axis = { ticks: { color: theme.text }, grid: { color: theme.grid }, border: { color: theme.grid } };
  return {
    type: "line" as const,
    data: { datasets: chartDatasets(lines, view, references) },
    options: {
      animation: false as const,
      parsing: false as const,
      // Points come sorted by x with one value per x: chart.js can skip checking that, and searching for gaps.
      normalized: true as const,
      spanGaps: true as const,
      color: theme.text,
      scales: {
        x: {
          type: "linear" as const,
          title: { display: true, text: view.xAxis === "time" ? "seconds" : "step", color: theme.text },
          ...axis,
          ...(view.xRange ? { min: view.xRange.min, max: view.xRange.max } : {}),
        },
        y: { type: view.logY ? "logarithmic" as const : "linear" as const, ...axis },
      },
      // The tooltip lists every line at the hovered step, not one point.
      interaction: { mode: "nearest" as const, axis: "x" as const, intersect: false },
      plugins: {
        legend: {
          display: false,
          labels: {
            filter: (item: { text: string }) => !HELPER_LABEL.test(item.text),
            boxWidth: 10,
            font: { size: 10 },
            color: theme.text,
          },
          onClick: (_event: unknown, item: { text: string }, legend: { chart: ToggleableChart }) =>
            toggleLine(legend.chart, item.text),
        },
        title: { color: theme.text },
        tooltip: tooltipOptions(lines, references, view),
      },
    },
    plugins: [referenceLabels(references, theme.reference)],
  };
}

/** What {@linkcode referenceLabels} draws with of a chart.js chart. */
interface LabelledChart {
  ctx: CanvasRenderingContext2D;
  chartArea: { left: number; right: number; top: number; bottom: number };
  scales: { y: { getPixelForValue(value: number): number } };
  data: { datasets: { label?: string }[] };
  isDatasetVisible(index: number): boolean;
}

/** A chart.js plugin writing each published value's label by its dashed line, at the right. */
function referenceLabels(references: Reference[], color: string) {
  return {
    id: "referenceLabels",
    afterDatasetsDraw(chart: LabelledChart) {
      const { ctx, chartArea } = chart;
      for (const ref of references) {
        const index = chart.data.datasets.findIndex((d) => d.label === ref.label);
        if (index < 0 || !chart.isDatasetVisible(index)) continue;
        const y = chart.scales.y.getPixelForValue(ref.paper);
        if (!(y >= chartArea.top && y <= chartArea.bottom)) continue;
        ctx.save();
        ctx.fillStyle = color;
        ctx.font = "10px system-ui, sans-serif";
        ctx.textAlign = "right";
        // Above its line, or below it where the line runs along the top of the plot.
        const below = y - 12 < chartArea.top;
        ctx.textBaseline = below ? "top" : "bottom";
        ctx.fillText(ref.label, chartArea.right - 4, below ? y + 3 : y - 2);
        ctx.restore();
      }
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

/**
 * Shows exactly the lines whose labels are not in `hidden`, with everything
 * drawn for each, in one update of the chart (hiding 199 of 200 lines one by
 * one would redraw it 199 times).
 */
export function applyHidden(chart: ToggleableChart, hidden: ReadonlySet<string>): void {
  chart.data.datasets.forEach((d, i) => chart.setDatasetVisibility(i, !isHidden(d.label ?? "", hidden)));
  chart.update();
}

/**
 * The hidden labels after an alt-click on `label`: every other line hidden,
 * or, when it is already the only line shown, every line shown again.
 *
 * @example
 * ```ts
 * isolated(["a", "b", "c"], new Set(), "b"); // Set {"a", "c"}
 * isolated(["a", "b", "c"], new Set(["a", "c"]), "b"); // Set {}
 * ```
 */
export function isolated(labels: string[], hidden: ReadonlySet<string>, label: string): Set<string> {
  const alone = labels.every((l) => l === label ? !hidden.has(l) : hidden.has(l));
  return alone ? new Set() : new Set(labels.filter((l) => l !== label));
}

/** How many points the lines hold, the band and smoothing aside. */
export function pointCount(lines: Line[]): number {
  return lines.reduce((n, l) => n + l.series.x.length, 0);
}
