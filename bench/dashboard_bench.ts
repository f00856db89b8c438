/**
 * Dashboard load check: builds a run store of 200 runs × 10,000 metric lines
 * and times `/api/runs` (first and repeated) and the metrics of 20 runs as a
 * chart requests them. With `--browser`, also the page in headless Chromium:
 * the time from selecting 20 (then 50) runs to every chart on screen drawn
 * with all of them, and the main thread's long tasks (> 50 ms) while the page
 * sits idle. Prints the timings; asserts nothing.
 *
 * usage: deno run -A bench/dashboard_bench.ts [--runs 200] [--lines 10000] [--browser]
 *
 * @module
 */
import { join } from "node:path";
import { bundleUi, createApp } from "../dashboard/server.ts";
import { parseCommandLine } from "../lib/core/cli.ts";
import { RunWriter } from "../lib/core/run_writer.ts";
import { Browser, findChromium } from "../dashboard/cdp.ts";
import { CHART_PROBE } from "../tests/e2e/chart_probe.ts";

/** The metrics every run of {@linkcode buildRunStore} logs: one chart each. */
export const STORE_METRICS = ["loss/total", "loss/kl", "mcc"];

/**
 * Writes `runs` completed runs of `lines` metric lines each under `root`
 * (4 experiments, configs varying lr and beta) and returns their keys,
 * `experiment/id`, in the order written.
 */
export function buildRunStore(root: string, runs: number, lines: number): string[] {
  const keys: string[] = [];
  for (let r = 0; r < runs; r++) {
    const run = RunWriter.create({
      root,
      experiment: `exp${r % 4}`,
      argv: [],
      seed: r,
      preset: "quick",
      backend: { name: "wasm" },
      config: { lr: 10 ** -(r % 5), beta: r % 7, seed: r },
      versions: {},
      gitCommit: null,
    });
    const text: string[] = [];
    for (let s = 1; s <= lines; s++) {
      text.push(
        JSON.stringify({ step: s, time: s / 10, "loss/total": 1 / s + r, "loss/kl": Math.sin(s), mcc: s / lines }),
      );
    }
    Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), text.join("\n") + "\n");
    run.finish("completed");
    keys.push(`exp${r % 4}/${run.dir.split("/").at(-1)}`);
  }
  return keys;
}

/** What {@linkcode measureCharting} measured in the page, in ms. */
export interface ChartingTimings {
  /**
   * Per selection size: from setting the URL hash to every chart on screen
   * drawn with all the runs (`ms`), and to the last byte of their metrics (`fetchedMs`).
   */
  charted: { runs: number; ms: number; fetchedMs: number }[];
  /** Long tasks (> 50 ms) while the charts were loading and drawing. */
  loadingTasks: number[];
  /** Long tasks while the page sat idle afterwards. */
  idleTasks: number[];
}

/**
 * Measures the runs page in `browser` (opened on a dashboard over a store
 * of {@linkcode buildRunStore}, with the chart probe): waits for the listing
 * of all `keys`, then for each count of `select` charts that many runs from
 * an empty selection, and lastly watches the main thread for `idleMs`.
 * Everything is timed in the page (performance.now, a PerformanceObserver
 * of long tasks), not over the DevTools connection.
 */
export async function measureCharting(
  browser: Browser,
  keys: string[],
  options: { select?: number[]; idleMs?: number; listingTimeoutMs?: number } = {},
): Promise<ChartingTimings> {
  const { select = [20, 50], idleMs = 5000, listingTimeoutMs = 300_000 } = options;
  await browser.waitFor(
    `document.querySelector('header')?.innerText.includes('${keys.length} runs')`,
    "the listing of every run",
    listingTimeoutMs,
  );
  await browser.evaluate(`(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: "longtask" });
  })()`);
  const charted: ChartingTimings["charted"] = [];
  for (const count of select) {
    // From nothing: the page holds no series, as on opening a bookmarked view.
    await browser.evaluate(`location.hash = '#/'`);
    await browser.waitFor(`document.querySelectorAll('.card[data-metric]').length === 0`, "no charts");
    // The view as it opens: smoothing on, so each run is drawn twice (raw, faintly, and smoothed).
    const hash = `#/?sel=${keys.slice(0, count).join(",")}`;
    const [ms, fetchedMs] = await browser.evaluate<[number, number]>(`(async () => {
      const start = performance.now();
      location.hash = ${JSON.stringify(hash)};
      let scrolled = false;
      while (performance.now() - start < 120000) {
        await new Promise((resolve) => requestAnimationFrame(resolve));
        const cards = [...document.querySelectorAll(".card[data-metric]")];
        if (cards.length < ${STORE_METRICS.length}) continue;
        // As a person scrolls down to the charts, below the table.
        if (!scrolled) {
          cards[0].scrollIntoView({ block: "start" });
          scrolled = true;
          continue;
        }
        const onScreen = cards.filter((c) => {
          const r = c.getBoundingClientRect();
          return r.bottom > 0 && r.top < innerHeight;
        });
        const drawn = (card) => {
          const chart = window.__chartOf(card);
          const lines = chart ? chart.data.datasets.filter((d) => !/ (raw|lo|hi)$/.test(d.label)) : [];
          return lines.length === ${count} && chart.data.datasets.every((d) => d.data.length > 0);
        };
        if (onScreen.length > 0 && onScreen.every(drawn)) {
          const fetched = performance.getEntriesByType("resource")
            .filter((e) => e.name.includes("/api/metrics?") && e.startTime >= start);
          return [performance.now() - start, Math.max(...fetched.map((e) => e.responseEnd)) - start];
        }
      }
      return [-1, -1];
    })()`);
    if (ms < 0) throw new Error(`the charts of ${count} runs were not drawn within 120 s`);
    charted.push({ runs: count, ms, fetchedMs });
  }
  const idleStart = await browser.evaluate<number>(`performance.now()`);
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const tasks = await browser.evaluate<{ start: number; ms: number }[]>(`window.__longTasks`);
  return {
    charted,
    loadingTasks: tasks.filter((t) => t.start < idleStart).map((t) => t.ms),
    idleTasks: tasks.filter((t) => t.start >= idleStart).map((t) => t.ms),
  };
}

/** The timings of {@linkcode measureCharting} as lines to print. */
export function formatTimings(t: ChartingTimings, idleMs: number): string[] {
  const longest = (ms: number[]) => ms.length ? `${Math.max(...ms).toFixed(0)} ms` : "none";
  return [
    ...t.charted.map((c) =>
      `browser: ${c.runs} runs charted in ${c.ms.toFixed(0)} ms (their metrics fetched after ${
        c.fetchedMs.toFixed(0)
      } ms)`
    ),
    `browser: long tasks while charting: ${t.loadingTasks.length}, longest ${longest(t.loadingTasks)}`,
    `browser: long tasks in ${idleMs / 1000} s idle: ${t.idleTasks.length}, longest ${longest(t.idleTasks)}`,
  ];
}

async function main(): Promise<void> {
  const { flags } = parseCommandLine(Deno.args);
  const runCount = Number(flags.get("runs") ?? 200), lineCount = Number(flags.get("lines") ?? 10_000);
  const root = Deno.makeTempDirSync();
  const keys = buildRunStore(root, runCount, lineCount);
  let app = createApp(root);
  const time = async (what: string, f: () => Promise<unknown>) => {
    const start = performance.now();
    await f();
    console.log(`${what}: ${(performance.now() - start).toFixed(0)} ms`);
  };
  await time(`GET /api/runs, first (${runCount} runs × ${lineCount} lines read)`, async () => {
    await (await app.request("/api/runs")).json();
  });
  await time("GET /api/runs, again (appended bytes only)", async () => {
    await (await app.request("/api/runs")).json();
  });
  await time("server start with warm-up (what deno task serve does)", () => {
    app = createApp(root, { warm: true });
    return Promise.resolve();
  });
  await time("GET /api/runs after that start", async () => {
    await (await app.request("/api/runs")).json();
  });
  const { runs } = await (await app.request("/api/runs")).json();
  const names = runs.slice(0, 20).map((r: { experiment: string; id: string }) => `${r.experiment}/${r.id}`);
  await time("chart of 20 runs, one request each (3 metrics each, max_points 2000)", async () => {
    await Promise.all(
      names.map(async (name: string) => (await app.request(`/api/runs/${name}/metrics?max_points=2000`)).json()),
    );
  });
  await time("chart of 20 runs, one request (GET /api/metrics)", async () => {
    await (await app.request(`/api/metrics?runs=${names.join(",")}&max_points=2000`)).json();
  });
  if (flags.has("browser")) {
    const chromium = findChromium();
    if (!chromium) throw new Error("--browser needs Chromium (apt-get install chromium)");
    const server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen: () => {} },
      createApp(root, { script: await bundleUi(), warm: true }).fetch,
    );
    const browser = await Browser.launch(chromium, `http://127.0.0.1:${server.addr.port}/`, {
      initScript: CHART_PROBE,
    });
    try {
      const idleMs = 5000;
      for (const line of formatTimings(await measureCharting(browser, keys, { idleMs }), idleMs)) console.log(line);
    } finally {
      await browser.close();
      await server.shutdown();
    }
  }
  Deno.removeSync(root, { recursive: true });
}

if (import.meta.main) await main();
