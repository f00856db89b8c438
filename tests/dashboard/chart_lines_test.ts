import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { seriesOf } from "../../dashboard/ui/metric_series.ts";
import { runRow } from "./fixtures.ts";
import {
  applyHidden,
  chartConfig,
  chartDatasets,
  chartLines,
  isolated,
  lineColor,
  pointCount,
  toggleLine,
  tooltipOptions,
} from "../../dashboard/ui/chart_lines.ts";
import { chartTheme } from "../../dashboard/ui/chart_theme.ts";

const row = (id: string, config: Record<string, unknown>) => runRow(id, { config });

const runs = [row("1", { beta: 4 }), row("2", { beta: 1 }), row("3", { beta: 4 })];
const data = {
  "vae/1": seriesOf({ loss: { x: [0, 10], t: [0, 1], y: [2, 4] } }),
  "vae/2": seriesOf({ loss: { x: [0, 10], t: [0, 1], y: [5, 5] }, acc: { x: [10], t: [1], y: [0.5] } }),
  "vae/3": seriesOf({ loss: { x: [0, 10], t: [0, 1], y: [4, 8] } }),
};

Deno.test("chartLines: one line per run that logged the metric, named by what differs, in its own run's colour", () => {
  const lines = chartLines("loss", runs, data, null);
  // Runs 1 and 3 share β and seed: their ids tell them apart; run 2 is named by its β.
  assertEquals(lines.map((l) => [l.label, l.color]), [
    ["vae/1", lineColor("vae/1")],
    ["vae beta=1", lineColor("vae/2")],
    [
      "vae/3",
      lineColor("vae/3"),
    ],
  ]);
  // A run keeps its colour whatever else is selected.
  assertEquals(chartLines("loss", runs.slice(2), data, null)[0].color, lineColor("vae/3"));
  assertEquals(lines[0].series, data["vae/1"].get("loss"));
  assertEquals(chartLines("acc", runs, data, null).map((l) => l.label), ["vae"]);
  assertEquals(pointCount(lines), 6);
  // Seeds that differ are named too.
  const seeded = [runRow("1", { config: { beta: 4 }, seed: 0 }), runRow("3", { config: { beta: 4 }, seed: 1 })];
  assertEquals(chartLines("loss", seeded, data, null).map((l) => l.label), ["vae seed 0", "vae seed 1"]);
});

Deno.test("chartLines grouped: one mean ± s.d. line per config", () => {
  const [four, one] = chartLines("loss", runs, data, []);
  assertEquals([four.label, four.color, one.label, one.color], [
    "vae beta=4 (2 seeds)",
    lineColor('vae [["beta",4]]'),
    "vae beta=1 (1 seed)",
    lineColor('vae [["beta",1]]'),
  ]);
  // Seeds 2 and 4 at step 0, 4 and 8 at step 10: means 3 and 6, sample s.d. √2 and 2√2.
  assertEquals(four.series, { x: [0, 10], t: [0, 1], y: [3, 6] });
  assertEquals(four.band, { lo: [3 - Math.SQRT2, 6 - 2 * Math.SQRT2], hi: [3 + Math.SQRT2, 6 + 2 * Math.SQRT2] });
  assertEquals(one.band, { lo: [5, 5], hi: [5, 5] });
});

Deno.test("chartDatasets without smoothing: one dataset of step-value points per line", () => {
  const sets = chartDatasets(chartLines("loss", runs.slice(0, 1), data, null), {
    smoothing: 0,
    logY: false,
    xAxis: "step",
  });
  assertEquals(sets, [{
    data: [{ x: 0, y: 2 }, { x: 10, y: 4 }],
    borderColor: lineColor("vae/1"),
    backgroundColor: lineColor("vae/1"),
    borderWidth: 1.5,
    pointRadius: 0,
    label: "vae",
  }]);
});

Deno.test("chartDatasets with smoothing and a band: lo, hi filled to lo, faint raw, then smoothed", () => {
  const line = {
    label: "g",
    color: "#112233",
    series: { x: [0, 10], t: [5, 7], y: [1, 2] },
    band: { lo: [0, 1], hi: [2, 3] },
  };
  const sets = chartDatasets([line], { smoothing: 0.5, logY: false, xAxis: "time" });
  assertEquals(sets.map((s) => s.label), ["g lo", "g hi", "g raw", "g"]);
  // The time axis plots seconds.
  assertEquals(sets[0].data, [{ x: 5, y: 0 }, { x: 7, y: 1 }]);
  assertEquals([sets[1].fill, sets[1].backgroundColor], ["-1", "#11223333"]);
  assertEquals([sets[2].borderColor, sets[2].data], ["#11223340", [{ x: 5, y: 1 }, { x: 7, y: 2 }]]);
  // Debiased EMA of 1, 2 at 0.5: 1 and 5/3.
  const smoothed = sets[3].data as { x: number; y: number }[];
  assertAlmostEquals(smoothed[0].y, 1, 1e-12);
  assertAlmostEquals(smoothed[1].y, 5 / 3, 1e-12);
});

Deno.test("chartDatasets draws a metric logged once as a visible point", () => {
  const line = { label: "s", color: "#000000", series: { x: [100], t: [9], y: [0.9] } };
  assertEquals(chartDatasets([line], { smoothing: 0, logY: false, xAxis: "step" })[0].pointRadius, 4);
});

Deno.test("chartDatasets: a group's score logged once gets an error bar from its low to its high value", () => {
  const line = { label: "g", color: "#102030", series: { x: [100], t: [9], y: [0.8] }, band: { lo: [0.7], hi: [0.9] } };
  const sets = chartDatasets([line], { smoothing: 0, logY: false, xAxis: "step" });
  assertEquals(sets.map((s) => s.label), ["g bar", "g"]);
  assertEquals(sets[0].data, [{ x: 100, y: 0.7 }, { x: 100, y: 0.9 }]);
  assertEquals(sets[1].data, [{ x: 100, y: 0.8 }]);
  // The bar is part of the line: the legend hides it and toggling the line toggles it.
  assert(
    !chartConfig([line], { smoothing: 0, logY: false, xAxis: "step" }).options.plugins.legend.labels.filter({
      text: "g bar",
    }),
  );
});

Deno.test("chartConfig keeps a zoomed x range", () => {
  const config = chartConfig([], { smoothing: 0, logY: false, xAxis: "step", xRange: { min: 20, max: 40 } });
  assertEquals([config.options.scales.x.min, config.options.scales.x.max], [20, 40]);
});

Deno.test("chartConfig: axes follow the view, the legend hides the helper datasets", () => {
  const config = chartConfig([], { smoothing: 0.6, logY: true, xAxis: "time" });
  assertEquals(config.options.scales.x.title.text, "seconds");
  assertEquals(config.options.scales.y.type, "logarithmic");
  const light = chartConfig([], { smoothing: 0, logY: false, xAxis: "step" }).options.scales;
  assertEquals([light.x.type, light.x.title.text, light.y.type], ["linear", "step", "linear"]);
  assertEquals([light.x.min, light.x.max], [undefined, undefined]);
  const filter = config.options.plugins.legend.labels.filter;
  assert(filter({ text: "vae/1" }) && filter({ text: "vae (2 seeds)" }));
  assert(!filter({ text: "vae/1 raw" }) && !filter({ text: "g lo" }) && !filter({ text: "g hi" }));
});

Deno.test("toggleLine hides and shows a line with its raw values and band, and nothing of other lines", () => {
  const labels = ["g lo", "g hi", "g raw", "g", "g2 raw", "g2", "g extra"];
  const { chart, visible, updates } = fakeChart(labels);
  toggleLine(chart, "g");
  assertEquals(visible, [false, false, false, false, true, true, true]);
  toggleLine(chart, "g");
  assertEquals(visible, [true, true, true, true, true, true, true]);
  assertEquals(updates(), 2);
});

Deno.test("chartLines colours every selected run in table order, whichever metric is built first", () => {
  const ordered = [row("c1", {}), row("c2", {}), row("c3", {})];
  const series = { "vae/c3": seriesOf({ acc: { x: [1], t: [1], y: [1] } }) };
  // Only the third run logged acc, yet the first two get their colours first.
  const [third] = chartLines("acc", ordered, series, null);
  assertEquals(third.color, lineColor("vae/c3"));
  const colors = ["vae/c1", "vae/c2", "vae/c3"].map(lineColor);
  assertEquals(new Set(colors).size, 3);
});

Deno.test("chartDatasets: a published value spans the lines' steps, its band filled, hidden lines flagged", () => {
  const line = { label: "run", color: "#112233", series: { x: [10, 20, 30], t: [1, 2, 3], y: [0.1, 0.5, 0.7] } };
  const ref = { label: "published (T5)", paper: 0.9, lo: 0.85, hi: 0.9 };
  const view = { smoothing: 0, logY: false, xAxis: "step", hidden: new Set(["published (T5)"]) };
  const sets = chartDatasets([line], view, [ref]);
  assertEquals(sets.map((s) => s.label), ["run", "published (T5) lo", "published (T5) hi", "published (T5)"]);
  assertEquals(sets[1].data, [{ x: 10, y: 0.85 }, { x: 30, y: 0.85 }]);
  assertEquals([sets[2].fill, sets[2].data], ["-1", [{ x: 10, y: 0.9 }, { x: 30, y: 0.9 }]]);
  assertEquals([sets[3].data, sets[3].borderDash], [[{ x: 10, y: 0.9 }, { x: 30, y: 0.9 }], [6, 4]]);
  // The hidden published value is hidden with its band; the run's line is not.
  assertEquals(sets.map((s) => s.hidden ?? false), [false, true, true, true]);
  // On the time axis it spans the seconds; a band of no width is not drawn.
  const timed = chartDatasets([line], { smoothing: 0, logY: false, xAxis: "time" }, [{ ...ref, lo: 0.9 }]);
  assertEquals(timed.map((s) => s.label), ["run", "published (T5)"]);
  assertEquals(timed[1].data, [{ x: 1, y: 0.9 }, { x: 3, y: 0.9 }]);
  // A score logged once: the published line runs from the origin to its step.
  const once = { ...line, series: { x: [50], t: [5], y: [0.4] } };
  assertEquals(chartDatasets([once], view, [ref]).at(-1)!.data, [{ x: 0, y: 0.9 }, { x: 50, y: 0.9 }]);
  // No lines, no published line.
  assertEquals(chartDatasets([], view, [ref]), []);
});

Deno.test("chartConfig takes the dark scheme's colours for ticks, grid, titles and tooltip", () => {
  const dark = chartTheme(true), light = chartTheme(false);
  const config = chartConfig([], { smoothing: 0, logY: false, xAxis: "step", dark: true });
  const { x, y } = config.options.scales;
  assertEquals([x.ticks.color, x.grid.color, x.title.color, y.ticks.color, y.grid.color], [
    dark.text,
    dark.grid,
    dark.text,
    dark.text,
    dark.grid,
  ]);
  assertEquals(config.options.plugins.tooltip.bodyColor, dark.tooltipText);
  assertEquals(config.options.plugins.tooltip.backgroundColor, dark.tooltipBackground);
  const plain = chartConfig([], { smoothing: 0, logY: false, xAxis: "step" }).options;
  assertEquals([plain.scales.x.ticks.color, plain.color], [light.text, light.text]);
  assert(dark.text !== light.text && dark.grid !== light.grid);
  // The canvas legend is off (the card lists the lines); the PNG export turns it on.
  assertEquals(config.options.plugins.legend.display, false);
});

Deno.test("tooltipOptions: each point names its line, value, raw value, step and time; helpers left out", () => {
  const line = { label: "vae/1", color: "#000000", series: { x: [10, 20], t: [12.34, 245], y: [0.123456, 2] } };
  const ref = { label: "published (T5)", paper: 0.997, lo: 0.967, hi: 0.997 };
  const options = tooltipOptions([line], [ref], { smoothing: 0.5, logY: false, xAxis: "time" });
  const item = (label: string, dataIndex: number, y: number) => ({ dataset: { label }, dataIndex, parsed: { y } });
  assertEquals(options.callbacks.label(item("vae/1", 0, 0.1)), "vae/1: 0.1 (raw 0.1235) · step 10 · 12.3 s");
  assertEquals(options.callbacks.label(item("vae/1", 1, 2)), "vae/1: 2 · step 20 · 4 min 5 s");
  assertEquals(options.callbacks.label(item("published (T5)", 0, 0.997)), "published (T5): 0.997");
  const items = [item("vae/1 raw", 0, 0), item("vae/1", 0, 0), item("published (T5) lo", 0, 0)];
  assertEquals(items.map((i, at) => options.filter(i, at, items)), [false, true, false]);
  assertEquals(options.callbacks.footer([items[1]]), "");
});

Deno.test("tooltipOptions lists 12 lines at most and counts the rest in its footer", () => {
  const lines = Array.from({ length: 15 }, (_, i) => ({
    label: `run ${i}`,
    color: "#000000",
    series: { x: [1], t: [1], y: [i] },
  }));
  const options = tooltipOptions(lines, [], { smoothing: 0, logY: false, xAxis: "step" });
  const items = lines.map((l) => ({ dataset: { label: l.label }, dataIndex: 0, parsed: { y: 0 } }));
  const kept = items.filter((i, at) => options.filter(i, at, items));
  assertEquals(kept.length, 12);
  assertEquals(options.callbacks.footer(kept), "… and 3 more");
});

Deno.test("isolated: an alt-click shows that line alone, and, when it already is, every line again", () => {
  const labels = ["a", "b", "c"];
  assertEquals(isolated(labels, new Set(), "b"), new Set(["a", "c"]));
  assertEquals(isolated(labels, new Set(["a", "c"]), "b"), new Set());
  // A hidden line alt-clicked is shown alone.
  assertEquals(isolated(labels, new Set(["b"]), "b"), new Set(["a", "c"]));
});

Deno.test("applyHidden shows exactly the lines not hidden, their helpers with them, in one update", () => {
  const labels = ["g lo", "g hi", "g raw", "g", "h raw", "h", "published (T) lo", "published (T)"];
  const { chart, visible, updates } = fakeChart(labels);
  applyHidden(chart, new Set(["g", "published (T)"]));
  assertEquals(visible, [false, false, false, false, true, true, false, false]);
  applyHidden(chart, new Set());
  assertEquals([visible.every((v) => v), updates()], [true, 2]);
});

/** A chart with datasets of `labels`, all visible, recording visibility and counting updates. */
function fakeChart(labels: string[]) {
  const visible = labels.map(() => true);
  let updates = 0;
  const chart = {
    data: { datasets: labels.map((label) => ({ label })) },
    isDatasetVisible: (i: number) => visible[i],
    setDatasetVisibility: (i: number, v: boolean) => {
      visible[i] = v;
    },
    update: () => updates++,
  };
  return { chart, visible, updates: () => updates };
}
