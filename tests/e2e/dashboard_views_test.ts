/**
 * The runs page's views in headless Chromium: metric columns chosen among
 * final scores and logged metrics, grouping by a config key (charts and
 * export), chart sections and the metric filter, the HTML legend, tooltips,
 * the dark scheme and zoom by dragging; a run's page with its metric charts
 * and published values.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { browserTest } from "./browser.ts";
import { chartData } from "./chart_probe.ts";

/** Three completed runs: two of method pcl, one of slowflow, each logging 100 steps in two sections and a final score. */
function writeStore(root: string): string[] {
  const settings = [{ method: "pcl", lr: 0.1 }, { method: "pcl", lr: 0.01 }, { method: "slowflow", lr: 0.1 }];
  return settings.map((config, i) => {
    const run = RunWriter.create({
      root,
      experiment: "toy",
      argv: [],
      seed: 0,
      preset: "smoke",
      backend: { name: "wasm" },
      config,
      versions: {},
      gitCommit: null,
    });
    const lines = Array.from(
      { length: 100 },
      (_, s) =>
        JSON.stringify({ step: s + 1, time: s, "L1/mcc": (s + 1) / 100 - i / 10, "train/loss": 1 / (s + 1) + i }),
    );
    Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), lines.join("\n") + "\n");
    run.writeSummary({ metrics: { "mcc/L1": 0.5 + i / 10 }, targets: [], claims: [] });
    run.finish("completed");
    return `toy/${run.info.id}`;
  });
}

browserTest("metric columns, grouping by a key, chart sections and drag-to-zoom", async (root, browser) => {
  const keys = writeStore(root);
  await browser.waitFor(`document.querySelectorAll('#runs tbody tr').length === 3`, "the runs");
  await browser.evaluate(`location.hash = '#/?sel=${keys.join(",")}&smooth=0'`);
  await browser.waitFor(`document.querySelectorAll('#runs tbody tr.selected').length === 3`, "the selection");

  // The final score of summary.json is a column of its own, marked final; the reducer applies to logged metrics only.
  const headers = () =>
    browser.evaluate<string[]>(`[...document.querySelectorAll('#runs th')].map((th) => th.innerText)`);
  assertEquals((await headers()).slice(-3), ["mcc/L1 (final)", "L1/mcc (last)", "train/loss (last)"]);
  const finals = await browser.evaluate<string[]>(
    `[...document.querySelectorAll('#runs tbody tr')].map((tr) => tr.children[tr.children.length - 3].innerText)`,
  );
  assertEquals(finals.sort(), ["0.5", "0.6", "0.7"]);
  // Unticking a column in the chooser keeps the others, in order, in the URL.
  await browser.evaluate(`document.querySelector('#columns').open = true`);
  await browser.evaluate(
    `[...document.querySelectorAll('#columns label')].find((l) => l.innerText.startsWith('L1/mcc')).querySelector('input').click()`,
  );
  await browser.waitFor(`location.hash.includes('cols=mcc%2FL1%2Ctrain%2Floss')`, "the chosen columns in the URL");
  await browser.waitFor(
    `!document.querySelector('#runs thead').innerText.includes('L1/mcc (last)')`,
    "the column gone",
  );

  // Charts come in one section per name prefix, each chart lazily drawn.
  const sections = await browser.waitFor<string[]>(
    `document.querySelectorAll('.metric-section').length === 2 &&
       [...document.querySelectorAll('.metric-section > summary')].map((s) => s.innerText)`,
    "the chart sections",
  );
  assertEquals(sections, ["L1 (1 chart)", "train (1 chart)"]);
  await browser.evaluate(`location.hash = location.hash + '&metrics=train'`);
  await browser.waitFor(
    `[...document.querySelectorAll('.card[data-metric]')].map((c) => c.dataset.metric).join() === 'train/loss'`,
    "only the charts the metric filter names",
  );

  // Grouped by method: the two pcl runs are one line, and the export writes what the table shows.
  await browser.evaluate(`location.hash = '#/?sel=${keys.join(",")}&smooth=0&by=method&reduce=max'`);
  await browser.waitFor(
    `document.querySelector('.card[data-metric="L1/mcc"]')?.dataset.points === '200'`,
    "two group lines of 100 points",
  );
  await browser.evaluate(
    `[...document.querySelectorAll('.controls button')].find((b) => b.innerText.includes('Markdown')).click()`,
  );
  const table = await browser.waitFor<string>(`document.querySelector('textarea')?.value`, "the export");
  // L1/mcc max is 1 − i/10 for run i; mcc/L1 final 0.5 + i/10; train/loss max 1 + i. numpy, ddof=1:
  // np.mean([1, 0.9]) = 0.95, np.std([1, 0.9], ddof=1) = 0.07071; np.mean([0.5, 0.6]) = 0.55, same s.d.; [1, 2] → 1.5 ± 0.7071.
  const [header, rule, ...rows] = table.split("\n");
  assertEquals([header, rule, ...rows.sort()], [
    "| setting | mcc/L1 | L1/mcc | train/loss |",
    "|---|---|---|---|",
    "| toy method=pcl (2 runs) | 0.55 ± 0.07071 | 0.95 ± 0.07071 | 1.5 ± 0.7071 |",
    "| toy method=slowflow (1 run) | 0.7 | 0.8 | 3 |",
  ]);

  // The legend under the chart lists both group lines in distinct colours; a click hides a line, another shows it.
  const legend = await browser.waitFor<{ label: string; color: string }[]>(
    `(() => { const items = [...document.querySelectorAll('.card[data-metric="L1/mcc"] .chart-legend button')];
       return items.length === 2 && items.map((b) => ({ label: b.innerText, color: b.firstChild.style.background })); })()`,
    "the legend",
  );
  assertEquals(legend.map((e) => e.label).sort(), ["toy method=pcl (2 runs)", "toy method=slowflow (1 run)"]);
  assert(legend[0].color !== legend[1].color, JSON.stringify(legend));
  const shownOf = (label: string) =>
    `(() => { const chart = window.__chartOf(document.querySelector('.card[data-metric="L1/mcc"]'));
       const i = chart.data.datasets.findIndex((d) => d.label === ${JSON.stringify(label)});
       return chart.isDatasetVisible(i); })()`;
  const clickEntry = (label: string) =>
    browser.evaluate(
      `[...document.querySelectorAll('.card[data-metric="L1/mcc"] .chart-legend button')]
         .find((b) => b.innerText === ${JSON.stringify(label)}).click()`,
    );
  await clickEntry(legend[0].label);
  await browser.waitFor(
    `!${shownOf(legend[0].label)} && ${shownOf(legend[1].label)} &&
       document.querySelector('.card[data-metric="L1/mcc"] .legend-hidden')?.innerText === ${
      JSON.stringify(legend[0].label)
    }`,
    "the line hidden and struck through",
  );
  await clickEntry(legend[0].label);
  await browser.waitFor(`${shownOf(legend[0].label)}`, "the line shown again");
  // An alt-click shows that line alone; another shows every line again.
  const altClick = (label: string) =>
    browser.evaluate(
      `[...document.querySelectorAll('.card[data-metric="L1/mcc"] .chart-legend button')]
         .find((b) => b.innerText === ${JSON.stringify(label)})
         .dispatchEvent(new MouseEvent('click', { bubbles: true, altKey: true }))`,
    );
  await altClick(legend[1].label);
  await browser.waitFor(`!${shownOf(legend[0].label)} && ${shownOf(legend[1].label)}`, "one line alone");
  await altClick(legend[1].label);
  await browser.waitFor(`${shownOf(legend[0].label)} && ${shownOf(legend[1].label)}`, "every line again");

  // The dark scheme recolours the chart's ticks (chart.js draws them) as the page's scheme changes.
  const tickColor =
    `window.__chartOf(document.querySelector('.card[data-metric="L1/mcc"]')).options.scales.x.ticks.color`;
  const lightTicks = await browser.evaluate<string>(tickColor);
  await browser.send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: "dark" }] });
  await browser.waitFor(`${tickColor} !== ${JSON.stringify(lightTicks)}`, "dark ticks");
  await browser.send("Emulation.setEmulatedMedia", { features: [] });
  await browser.waitFor(`${tickColor} === ${JSON.stringify(lightTicks)}`, "light ticks again");

  // Dragging across the middle of a chart zooms into those steps; a double click shows them all again.
  const box = await browser.waitFor<{ x: number; y: number; w: number; h: number }>(
    `(() => { const card = document.querySelector('.card[data-metric="L1/mcc"]');
       if (!window.__chartOf(card)) return null;
       const c = card.querySelector('canvas');
       c.scrollIntoView({ block: "center" });
       const r = c?.getBoundingClientRect(); return r && r.width > 0 && { x: r.x, y: r.y, w: r.width, h: r.height }; })()`,
    "the chart drawn",
  );
  const at = (f: number) => ({ x: box.x + f * box.w, y: box.y + box.h / 2 });
  const mouse = (type: string, p: { x: number; y: number }, extra: Record<string, unknown> = {}) =>
    browser.send("Input.dispatchMouseEvent", { type, x: p.x, y: p.y, button: "left", ...extra });
  // A point's tooltip names its line, value, step and the seconds since the start (step s + 1 was logged at s s).
  await mouse("mouseMoved", at(0.5));
  const tips = await browser.waitFor<string[]>(
    `(() => { const t = window.__chartOf(document.querySelector('.card[data-metric="L1/mcc"]')).tooltip;
       return t.opacity > 0 && t.body.flatMap((b) => b.lines); })()`,
    "the tooltip",
  );
  assert(tips.length > 0, JSON.stringify(tips));
  for (const tip of tips) {
    const [, step, seconds] = tip.match(/^toy method=\S+ \(\d runs?\): -?[\d.]+ · step (\d+) · (\d+) s$/) ?? [];
    assert(step && Number(seconds) === Number(step) - 1, tip);
  }
  await mouse("mousePressed", at(0.4), { clickCount: 1 });
  await mouse("mouseMoved", at(0.55), { buttons: 1 });
  await mouse("mouseMoved", at(0.7), { buttons: 1 });
  await mouse("mouseReleased", at(0.7), { clickCount: 1 });
  const range = await browser.waitFor<string>(
    `document.querySelector('.card[data-metric="L1/mcc"]').dataset.xRange`,
    "the zoomed range",
  );
  const [min, max] = range.split(",").map(Number);
  assert(min > 1 && max < 100 && min < max, `zoomed to ${range}`);
  await mouse("mousePressed", at(0.5), { clickCount: 2 });
  await mouse("mouseReleased", at(0.5), { clickCount: 2 });
  await browser.waitFor(`document.querySelector('.card[data-metric="L1/mcc"]').dataset.xRange === ''`, "the reset");
});

browserTest(
  "a run's targets card and the scorecard show targets and claims in the same columns",
  async (root, browser) => {
    const newRun = (experiment: string) =>
      RunWriter.create({
        root,
        experiment,
        argv: [],
        seed: 0,
        preset: "smoke",
        backend: { name: "wasm" },
        config: {},
        versions: {},
        gitCommit: null,
      });
    const run = newRun("ica-toy");
    run.writeSummary({
      experiment: "ica-toy",
      source: "Klindt2021",
      run_id: run.info.id,
      preset: "smoke",
      seed: 0,
      wall_time_s: 1,
      metrics: { "mcc/slowflow/L1": 0.5 },
      targets: [{
        metric: "mcc/slowflow/L1",
        paper: 0.997,
        source: "Table 5",
        tolerance: 0.03,
        direction: "match",
        ours: 0.5,
        verdict: "not reproduced",
      }],
      claims: [{ text: "SlowFlow beats PCL", source: "Table 5", verdict: "reproduced" }],
    });
    // The run logged the curve of its target mcc/slowflow/L1 under the name ica-toy logs it.
    Deno.writeTextFileSync(
      join(run.dir, "metrics.jsonl"),
      [1, 2, 3].map((s) => JSON.stringify({ step: s * 10, time: s, "L1/slowflow/mcc": s / 10 })).join("\n") + "\n",
    );
    run.finish("completed");
    const unknown = newRun("toy");
    unknown.writeSummary({
      experiment: "toy",
      run_id: unknown.info.id,
      preset: "smoke",
      seed: 0,
      targets: [],
      claims: [],
    });
    unknown.finish("completed");
    const cells = (table: string) =>
      `[...document.querySelectorAll('${table} tr')].map((tr) => [...tr.children].map((c) => c.innerText))`;

    await browser.evaluate(`location.hash = '#/run/ica-toy/${run.info.id}'`);
    const rows = await browser.waitFor<string[][]>(
      `document.querySelectorAll('#targets tbody tr').length === 2 && ${cells("#targets")}`,
      "the targets card",
    );
    assertEquals(rows, [
      ["metric or finding", "source", "published", "ours", "reproduced when", "verdict"],
      ["mcc/slowflow/L1", "Table 5", "0.997", "0.5", "0.997 ± 0.03", "not reproduced"],
      ["SlowFlow beats PCL", "Table 5", "holds", "", "", "reproduced"],
    ]);
    // Its page charts the metric it logged, with the published value as a dashed line over the run's steps.
    // Waits for the published line too: the chart can be drawn from the run's curve before the targets arrive.
    const drawn = await browser.waitFor<{ label: string; x: number[]; y: number[] }[]>(
      `(() => { const card = document.querySelector('#run-charts .card[data-metric="L1/slowflow/mcc"]');
         card?.scrollIntoView(); const data = ${chartData("L1/slowflow/mcc")};
         return data?.some((d) => d.label.startsWith("published (")) ? data : null; })()`,
      "the run's chart with its published value",
    );
    const published = drawn.find((d) => d.label.startsWith("published (Klindt2021") && !/ (lo|hi)$/.test(d.label));
    assertEquals([published?.x, published?.y], [[10, 30], [0.997, 0.997]]);
    assertEquals(drawn.find((d) => d.label === "ica-toy")?.y, [0.1, 0.2, 0.3]);
    const entries = await browser.evaluate<number>(
      `document.querySelectorAll('#run-charts .card[data-metric="L1/slowflow/mcc"] .chart-legend li').length`,
    );
    assertEquals(entries, 2);
    // Its PNG is drawn off screen with the published value too, and handed to the browser as a download.
    const png = await browser.evaluate<string[]>(`(() => {
      let saved = [];
      const click = HTMLAnchorElement.prototype.click;
      HTMLAnchorElement.prototype.click = function () { saved = [this.download, this.href.slice(0, 22)]; };
      document.querySelector('#run-charts .card[data-metric="L1/slowflow/mcc"] h3 button:last-child').click();
      HTMLAnchorElement.prototype.click = click;
      return saved; })()`);
    assertEquals(png, ["L1_slowflow_mcc.png", "data:image/png;base64,"]);
    const classes = await browser.evaluate<string[]>(
      `[...document.querySelectorAll('#targets tbody tr td:last-child')].map((td) => td.className)`,
    );
    assertEquals(classes, ["verdict-not", "verdict-reproduced"]);

    // The scorecard judges with today's targets of ica-toy; toy is no experiment, and its row says so.
    // At 1280 px wide the page (scatter and table) fits without scrolling sideways.
    await browser.send("Emulation.setDeviceMetricsOverride", {
      width: 1280,
      height: 900,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await browser.evaluate(`location.hash = '#/scorecard'`);
    const card = await browser.waitFor<string[][]>(
      `document.querySelectorAll('#scorecard tbody tr').length > 2 && ${cells("#scorecard")}`,
      "the scorecard",
    );
    assertEquals(card[0], [
      "experiment",
      "class",
      "source",
      "metric or finding",
      "published",
      "ours (95% interval with ≥ 3 seeds)",
      "reproduced when",
      "curve",
      "verdict",
    ]);
    assert(card.every((row) => row.length === 9), JSON.stringify(card));
    const target = card.find((row) => row[3] === "mcc/slowflow/L1")!;
    assert(target[0].startsWith("ica-toy") && target[5] === "0.5", JSON.stringify(target));
    const claims = card.filter((row) => row[1] === "claim");
    assert(
      claims.length > 0 && claims.every((row) => row[4] === "holds" && row[0] === "ica-toy"),
      JSON.stringify(claims),
    );
    // One point per measured target of the store's scorecard, with its verdict, linking to the run it came from.
    const measured = await browser.evaluate<string[]>(
      `fetch('/api/scorecard').then((r) => r.json()).then((card) =>
         card.groups.flatMap((g) => g.targets.filter((t) => t.ours !== null).map((t) => t.metric + ' ' + t.verdict)))`,
    );
    assertEquals(measured, ["mcc/slowflow/L1 not reproduced"]);
    const points = await browser.waitFor<{ verdict: string; metric: string; href: string }[]>(
      `document.querySelectorAll('#scorecard-scatter .scorecard-point').length > 0 &&
         [...document.querySelectorAll('#scorecard-scatter .scorecard-point')].map((p) =>
           ({ metric: p.dataset.metric, verdict: p.dataset.verdict, href: p.getAttribute('href') }))`,
      "the scatter's points",
    );
    assertEquals(points.map((p) => `${p.metric} ${p.verdict}`), measured);
    assertEquals(points[0].href, `#/run/ica-toy/${run.info.id}`);
    // ica-toy's other targets were not measured: listed under the plot, not drawn.
    const unmeasured = await browser.evaluate<string>(`document.querySelector('#scorecard-unmeasured').innerText`);
    assert(unmeasured.includes("ica-toy mcc/pcl/L1") && !unmeasured.includes("slowflow/L1;"), unmeasured);
    const width = await browser.evaluate<{ scroll: number; viewport: number }>(
      `({ scroll: document.documentElement.scrollWidth, viewport: innerWidth })`,
    );
    assert(width.viewport === 1280 && width.scroll <= width.viewport, JSON.stringify(width));
    assertEquals(card.find((row) => row[0] === "toy"), [
      "toy",
      "",
      "",
      "no experiment toy today",
      "",
      "",
      "",
      "",
      "not measured",
    ]);
  },
);
