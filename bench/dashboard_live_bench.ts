/**
 * Dashboard under a fast writer: one running run appends `--rate` metric
 * lines a second (2,000 by default, three metrics a line) for `--seconds`
 * while its chart is open in headless Chromium. Every 5 s it prints the
 * page's JavaScript heap, the points the run's chart holds, the main
 * thread's longest task since the last sample, and how long the page takes
 * to answer (an evaluation that waits for the next animation frame).
 * Asserts nothing.
 *
 * usage: deno run -A bench/dashboard_live_bench.ts [--rate 2000] [--seconds 60]
 *
 * @module
 */
import { bundleUi, createApp } from "../dashboard/server.ts";
import { Browser, findChromium } from "../dashboard/cdp.ts";
import { parseCommandLine } from "../lib/core/cli.ts";
import { RunWriter } from "../lib/core/run_writer.ts";
import { CHART_PROBE } from "../tests/e2e/chart_probe.ts";

const { flags } = parseCommandLine(Deno.args);
const rate = Number(flags.get("rate") ?? 2000), seconds = Number(flags.get("seconds") ?? 60);
const chromium = findChromium();
if (!chromium) throw new Error("the live bench needs Chromium (apt-get install chromium)");

const root = Deno.makeTempDirSync();
const run = RunWriter.create({
  root,
  experiment: "toy",
  argv: [],
  seed: 0,
  preset: "bench",
  backend: { name: "wasm" },
  config: {},
  versions: {},
  gitCommit: null,
});
let step = 0;
const write = (lines: number) => {
  for (let i = 0; i < lines; i++, step++) {
    run.log(step, { loss: Math.exp(-step / 1e5) + 0.01 * Math.sin(step), acc: step % 1000 / 1000, lr: 1e-3 });
  }
};
write(1000);
const server = Deno.serve(
  { port: 0, hostname: "127.0.0.1", onListen: () => {} },
  createApp(root, { script: await bundleUi(), pollMs: 500 }).fetch,
);
const browser = await Browser.launch(chromium, `http://127.0.0.1:${server.addr.port}/`, { initScript: CHART_PROBE });
const key = `toy/${run.info.id}`;
try {
  await browser.evaluate(`(() => {
    window.__longest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: "longtask" });
  })()`);
  await browser.evaluate(`location.hash = ${JSON.stringify(`#/?sel=${key}&metrics=loss`)}`);
  await browser.waitFor(`window.__chartData("loss") !== null`, "the chart");
  console.log(`writer: ${rate} lines/s for ${seconds} s; uptime ${Deno.loadavg().map((l) => l.toFixed(2)).join(", ")}`);
  console.log("| s | lines written | page heap MB | points charted | longest task ms | answer ms |");
  console.log("|---|---|---|---|---|---|");
  const tick = 50;
  const writer = setInterval(() => write(Math.round((rate * tick) / 1000)), tick);
  const started = performance.now();
  try {
    for (let at = 5; at <= seconds; at += 5) {
      await new Promise((done) => setTimeout(done, started + at * 1000 - performance.now()));
      const asked = performance.now();
      const [points, longest] = await browser.evaluate<[number, number]>(`new Promise((done) =>
        requestAnimationFrame(() => {
          const d = window.__chartData("loss") ?? [];
          const longest = window.__longest;
          window.__longest = 0;
          done([Math.max(0, ...d.map((l) => l.x.length)), longest]);
        }))`);
      const answered = performance.now() - asked;
      const heap = await browser.send("Runtime.getHeapUsage") as { usedSize: number };
      console.log(
        `| ${at} | ${step} | ${(heap.usedSize / 1e6).toFixed(1)} | ${points} | ${longest.toFixed(0)} | ${
          answered.toFixed(0)
        } |`,
      );
    }
  } finally {
    clearInterval(writer);
  }
  console.log(`load average at the end: ${Deno.loadavg().map((l) => l.toFixed(2)).join(", ")}`);
} finally {
  run.finish("completed");
  await browser.close();
  await server.shutdown();
  Deno.removeSync(root, { recursive: true });
}
