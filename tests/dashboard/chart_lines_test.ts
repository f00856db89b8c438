import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { seriesOf } from "../../dashboard/ui/metric_series.ts";
import { runRow } from "./fixtures.ts";
import {
  chartConfig,
  chartDatasets,
  chartLines,
  lineColor,
  pointCount,
  toggleLine,
} from "../../dashboard/ui/chart_lines.ts";

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
  assertEquals(chartConfig([], { smoothing: 0, logY: false, xAxis: "step" }).options.scales, {
    x: { type: "linear", title: { display: true, text: "step" } },
    y: { type: "linear" },
  });
  const filter = config.options.plugins.legend.labels.filter;
  assert(filter({ text: "vae/1" }) && filter({ text: "vae (2 seeds)" }));
  assert(!filter({ text: "vae/1 raw" }) && !filter({ text: "g lo" }) && !filter({ text: "g hi" }));
});

Deno.test("lineColor: #rrggbb, the same for the same key, 200 run keys spread over at least 150 colours", () => {
  const keys = Array.from({ length: 200 }, (_, i) => `ica-toy/20240101-1200${String(i).padStart(2, "0")}-abcdef`);
  const colors = keys.map(lineColor);
  assert(colors.every((c) => /^#[0-9a-f]{6}$/.test(c)), colors.join(" "));
  assertEquals(keys.map(lineColor), colors);
  assert(new Set(colors).size >= 150, `${new Set(colors).size} distinct colours`);
});

Deno.test("toggleLine hides and shows a line with its raw values and band, and nothing of other lines", () => {
  const labels = ["g lo", "g hi", "g raw", "g", "g2 raw", "g2", "g extra"];
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
  toggleLine(chart, "g");
  assertEquals(visible, [false, false, false, false, true, true, true]);
  toggleLine(chart, "g");
  assertEquals(visible, [true, true, true, true, true, true, true]);
  assertEquals(updates, 2);
});
