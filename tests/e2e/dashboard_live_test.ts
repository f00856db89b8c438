/**
 * The runs page in headless Chromium with what a person running sweeps
 * sees: seven runs training at once, a run resumed from an earlier
 * checkpoint, five seeds of 10,000 points grouped into a mean and band, the
 * export of the grouped table, and (timed, not asserted) a large store.
 * What a chart draws is read from its chart.js instance (chart_probe.ts).
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { formatValue } from "../../dashboard/ui/format.ts";
import { pointsPerLine } from "../../dashboard/ui/use_live_series.ts";
import { buildRunStore, formatTimings, measureCharting } from "../../bench/dashboard_bench.ts";
import { browserTest, sleep } from "./browser.ts";
import { chartData, type DrawnLine } from "./chart_probe.ts";
import type { Browser } from "../../dashboard/cdp.ts";

function newRun(root: string, experiment: string, seed: number, config: Record<string, unknown> = {}): RunWriter {
  return RunWriter.create({
    root,
    experiment,
    argv: [],
    seed,
    preset: "smoke",
    backend: { name: "wasm" },
    config,
    versions: {},
    gitCommit: null,
  });
}

const keyOf = (run: RunWriter) => run.dir.split("/").slice(-2).join("/");

/** The datasets of `metric`'s chart, once it has `lines` of them. */
async function drawn(browser: Browser, metric: string, lines: number): Promise<DrawnLine[]> {
  // Charts are drawn once their card nears the screen: bring it there.
  await browser.evaluate(`document.querySelector('.card[data-metric="${metric}"]')?.scrollIntoView()`);
  return await browser.waitFor<DrawnLine[]>(
    `(${chartData(metric)})?.length === ${lines} && ${chartData(metric)}`,
    `the chart of ${metric} with ${lines} lines`,
  );
}

const cardPoints = (browser: Browser, metric: string) =>
  browser.evaluate<string>(`document.querySelector('.card[data-metric="${metric}"]')?.dataset.points`).then(Number);

browserTest("seven runs train at once: every line grows, and the runs table still updates", async (root, browser) => {
  // Run k logs loss = 1000 k + step and acc = k + step / 10^4: a drawn point tells its run and step.
  const writers = Array.from({ length: 7 }, (_, k) => newRun(root, "live", k, { lr: 0.01 }));
  const steps = writers.map(() => 0);
  const tick = () =>
    writers.forEach((w, k) => {
      steps[k]++;
      w.log(steps[k], { loss: 1000 * k + steps[k], acc: k + steps[k] / 1e4 });
    });
  for (let i = 0; i < 20; i++) tick();
  const timer = setInterval(tick, 100);
  try {
    const keys = writers.map(keyOf);
    await browser.waitFor(`document.querySelectorAll('#runs tbody tr').length === 7`, "the seven runs");
    await browser.evaluate(`location.hash = '#/?sel=${keys.join(",")}&smooth=0'`);
    const look = async () => {
      const charts: Record<string, DrawnLine[]> = {}, points: Record<string, number> = {};
      for (const metric of ["acc", "loss"]) {
        charts[metric] = await drawn(browser, metric, 7);
        points[metric] = await cardPoints(browser, metric);
      }
      // Every line is its run's steps 1, 2, 3, … with nothing lost between the fetch and the stream, none twice.
      for (const [metric, lines] of Object.entries(charts)) {
        for (const line of lines) {
          const k = Number(/seed (\d)$/.exec(line.label)?.[1]);
          assert(k >= 0 && k < 7, line.label);
          assertEquals(line.x, line.x.map((_, i) => i + 1), `${metric} ${line.label}: steps`);
          const value = (s: number) => metric === "loss" ? 1000 * k + s : k + s / 1e4;
          assertEquals(line.y, line.x.map(value), `${metric} ${line.label}: values`);
        }
      }
      return { charts, points };
    };
    const grows = (before: Awaited<ReturnType<typeof look>>, after: Awaited<ReturnType<typeof look>>) => {
      for (const metric of ["acc", "loss"]) {
        assert(
          after.points[metric] > before.points[metric],
          `${metric}: ${before.points[metric]} → ${after.points[metric]}`,
        );
        for (const line of before.charts[metric]) {
          const later = after.charts[metric].find((l) => l.label === line.label)!;
          assert(
            later.x.length > line.x.length,
            `${metric} ${line.label}: ${line.x.length} → ${later.x.length} points`,
          );
        }
      }
    };
    /**
     * Waits until every line of both charts, and each chart card's count of points, has grown past `before`: the
     * card's count is written after its chart is drawn, so a look taken as soon as the lines grew may find it behind.
     */
    const grown = (before: Awaited<ReturnType<typeof look>>) => {
      const lengths = Object.fromEntries(
        Object.entries(before.charts).map(([metric, lines]) => [metric, lines.map((l) => [l.label, l.x.length])]),
      );
      return browser.waitFor(
        `Object.entries(${JSON.stringify(lengths)}).every(([metric, lines]) => {
          const now = window.__chartData(metric);
          const card = Number(document.querySelector('.card[data-metric="' + metric + '"]')?.dataset.points);
          return now && card > ${JSON.stringify(before.points)}[metric] &&
            lines.every(([label, n]) => now.find((l) => l.label === label)?.x.length > n);
        })`,
        "every line and chart card to grow",
      );
    };
    const first = await look();
    await grown(first);
    const second = await look();
    grows(first, second);

    // The runs table is polled beside the stream: a run started now shows up.
    const late = newRun(root, "late", 0);
    late.log(1, { loss: 1 });
    late.finish("completed");
    await browser.waitFor(`document.querySelector('#runs tbody tr[data-run="${keyOf(late)}"]')`, "the new run");
    await grown(second);
    grows(second, await look());
  } finally {
    clearInterval(timer);
    writers.forEach((w) => w.finish("completed"));
  }
});

browserTest(
  "a run resumed from an earlier checkpoint: its chart neither draws back nor holds a step twice",
  async (root, browser) => {
    // The first attempt logs loss = step up to step 60 and stops; resumed from its checkpoint at step 40, the
    // second logs loss = 1000 + step from step 41 on.
    const first = newRun(root, "resumed", 0);
    for (let s = 1; s <= 60; s++) first.log(s, { loss: s });
    const key = keyOf(first);
    await browser.evaluate(`location.hash = '#/?sel=${key}&smooth=0'`);
    const start = await drawn(browser, "loss", 1);
    assertEquals(start[0].x.length, 60);
    // Looks at every drawing of the chart for a step that is not above the one before it.
    await browser.evaluate(`(() => {
    window.__looks = 0;
    window.__wrong = [];
    window.__watch = () => {
      const lines = ${chartData("loss")};
      if (!lines) return;
      window.__looks++;
      const x = lines[0].x;
      for (let i = 1; i < x.length; i++) {
        if (!(x[i] > x[i - 1])) window.__wrong.push(x.slice(Math.max(0, i - 3), i + 3));
      }
    };
    document.addEventListener("latentlab:drawn", window.__watch);
  })()`);
    first.finish("interrupted");
    await browser.waitFor(
      `document.querySelector('#runs tbody tr[data-run="${key}"]')?.innerText.includes('interrupted')`,
      "the interrupted status",
    );
    const second = RunWriter.reopen(first.dir, 40, { name: "wasm" });
    assertEquals(readRunInfo(first.dir).resumes?.map((r) => r.step), [40]);
    for (let s = 41; s <= 100; s++) {
      second.log(s, { loss: 1000 + s });
      await sleep(50);
    }
    second.finish("completed");
    const last = await browser.waitFor<DrawnLine[]>(
      `(${chartData("loss")})?.[0].x.at(-1) === 100 && ${chartData("loss")}`,
      "the resumed attempt's last step",
    );
    const steps = Array.from({ length: 100 }, (_, i) => i + 1);
    assertEquals(last[0].x, steps);
    assertEquals(last[0].y, steps.map((s) => s <= 40 ? s : 1000 + s));
    assertEquals(await cardPoints(browser, "loss"), 100);
    const watched = await browser.evaluate<{ looks: number; wrong: number[][] }>(
      `(() => {
        document.removeEventListener("latentlab:drawn", window.__watch);
        return { looks: window.__looks, wrong: window.__wrong.slice(0, 5) };
      })()`,
    );
    assertEquals(watched.wrong, [], "a step at or below the one before it");
    // The drawing of the last step, at least, was looked at.
    assert(watched.looks >= 1, `${watched.looks} looks at the chart`);
  },
);

// Five seeds of one setting: loss = e^(−step/5000) + 0.1 seed + noise, |noise| ≤ NOISE; score peaks at a seed's own step.
const SEEDS = 5, STEPS = 10_000, NOISE = 0.005;

/** A seeded uniform generator on [0, 1) (mulberry32), so that each seed's noise differs and the test repeats. */
function uniform(seed: number): () => number {
  let a = seed + 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writeSeeds(root: string): void {
  for (let seed = 0; seed < SEEDS; seed++) {
    const run = newRun(root, "grp", seed, { lr: 0.01, width: 64 });
    const u = uniform(seed);
    const lines = [];
    for (let s = 1; s <= STEPS; s++) {
      const loss = Math.exp(-s / 5000) + 0.1 * seed + NOISE * (2 * u() - 1);
      const score = 1 - Math.abs(s - 2000 * (seed + 1)) / STEPS + 0.01 * u();
      lines.push(JSON.stringify({ step: s, time: s / 100, loss, score }));
    }
    Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), lines.join("\n") + "\n");
    run.finish("completed");
  }
}

/** Each run's metrics.jsonl parsed here, line by line: run key → metric → value by step. */
function rawMetrics(root: string): Map<string, Record<string, Map<number, number>>> {
  const runs = new Map<string, Record<string, Map<number, number>>>();
  for (const id of [...Deno.readDirSync(join(root, "grp"))].map((e) => e.name)) {
    const metrics: Record<string, Map<number, number>> = {};
    for (const line of Deno.readTextFileSync(join(root, "grp", id, "metrics.jsonl")).trim().split("\n")) {
      const { step, time: _, ...values } = JSON.parse(line);
      for (const [k, v] of Object.entries(values)) (metrics[k] ??= new Map()).set(step, v as number);
    }
    runs.set(`grp/${id}`, metrics);
  }
  return runs;
}

/** Mean and sample standard deviation (n − 1). */
function meanAndSd(values: number[]): { mean: number; sd: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1));
  return { mean, sd };
}

browserTest(
  "five seeds of 10,000 points: the charted mean and band, and the grouped export of their maxima",
  async (root, browser) => {
    const raw = rawMetrics(root);
    const keys = [...raw.keys()];
    assertEquals(keys.length, SEEDS);
    await browser.waitFor(`document.querySelectorAll('#runs tbody tr').length === ${SEEDS}`, "the five runs");
    await browser.evaluate(`location.hash = '#/?sel=${keys.join(",")}&smooth=0&group=1'`);
    const lines = await drawn(browser, "loss", 3);
    const mean = lines.find((l) => !/ (lo|hi)$/.test(l.label))!;
    const hi = lines.find((l) => l.label === `${mean.label} hi`)!;
    assert(mean.label.includes("(5 seeds)"), mean.label);
    assertEquals([mean.x[0], mean.x.at(-1)], [1, STEPS]);
    assertEquals(hi.x, mean.x);
    // The server sends each run as at most 2000 points: the first, the last, and the lowest and highest of each
    // of 999 buckets of 10 or 11 steps, so a run's neighbouring points are at most 21 steps apart. Between them
    // the page interpolates linearly; the true value there lies within the trend's change over 21 steps
    // (|slope| ≤ 1/5000) and 2 × NOISE of the interpolated one. Each run's error is within that bound, so is the
    // mean's, and the s.d. of five values each off by at most E is off by at most E √(5/4).
    assertEquals(pointsPerLine(SEEDS), 2000);
    const meanTolerance = 21 / 5000 + 2 * NOISE;
    const sdTolerance = meanTolerance * Math.sqrt(SEEDS / (SEEDS - 1));
    let worstMean = 0, worstSd = 0;
    mean.x.forEach((step, i) => {
      const expected = meanAndSd(keys.map((k) => raw.get(k)!.loss.get(step)!));
      worstMean = Math.max(worstMean, Math.abs(mean.y[i] - expected.mean));
      worstSd = Math.max(worstSd, Math.abs(hi.y[i] - mean.y[i] - expected.sd));
    });
    assert(worstMean <= meanTolerance, `mean off by ${worstMean} > ${meanTolerance}`);
    assert(worstSd <= sdTolerance, `s.d. off by ${worstSd} > ${sdTolerance}`);
    assert(mean.x.length >= 2000, `${mean.x.length} steps`);

    // The Markdown export with the table's reducer (max) and grouping: mean ± s.d. over seeds of each run's maximum.
    await browser.evaluate(`location.hash = '#/?sel=${keys.join(",")}&smooth=0&group=1&reduce=max'`);
    await browser.waitFor(
      `[...document.querySelectorAll('.controls label')].find((l) => l.innerText.startsWith('reducer'))
      ?.querySelector('select').value === 'max'`,
      "the max reducer",
    );
    await browser.evaluate(
      `[...document.querySelectorAll('.controls button')].find((b) => b.innerText.includes('Markdown')).click()`,
    );
    const table = await browser.waitFor<string>(`document.querySelector('textarea')?.value`, "the exported table");
    const [header, rule, row, ...rest] = table.split("\n");
    assertEquals(rest, [], table);
    assertEquals(rule.replaceAll(" ", ""), "|---|---|---|", table);
    const columns = header.split("|").slice(1, -1).map((c) => c.trim());
    const cells = row.split("|").slice(1, -1).map((c) => c.trim());
    assertEquals(columns.slice(1).sort(), ["loss", "score"], table);
    assert(cells[0].startsWith("grp") && cells[0].endsWith("(5 seeds)"), cells[0]);
    for (const metric of ["loss", "score"]) {
      const { mean, sd } = meanAndSd(keys.map((k) => Math.max(...raw.get(k)![metric].values())));
      assertEquals(cells[columns.indexOf(metric)], `${formatValue(mean)} ± ${formatValue(sd)}`, table);
    }
  },
  { setup: writeSeeds },
);

// The timings are measured on 200 runs × 10,000 lines by `deno run -A bench/dashboard_bench.ts --browser`; here
// the same measurement runs on a store small enough to take seconds, so that the bench's code keeps working.
const TIMED_RUNS = 60, TIMED_LINES = 50, TIMED_IDLE_MS = 200;
let timedKeys: string[] = [];
browserTest(
  "charting 20, then 50 runs of a store, timed in the page (printed, not asserted)",
  async (_root, browser) => {
    const timings = await measureCharting(browser, timedKeys, { idleMs: TIMED_IDLE_MS });
    assertEquals(timings.charted.map((c) => c.runs), [20, 50]);
    for (const line of formatTimings(timings, TIMED_IDLE_MS)) {
      console.log(`${line} (${TIMED_RUNS} runs × ${TIMED_LINES} lines)`);
    }
  },
  { setup: (root) => void (timedKeys = buildRunStore(root, TIMED_RUNS, TIMED_LINES)) },
);
