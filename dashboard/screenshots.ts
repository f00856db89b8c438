/**
 * README screenshots of the dashboard, taken in headless Chromium over a run
 * store: the runs page with the seeds of each setting grouped (mean and
 * band), the hyperparameter view, a run page and the scorecard, and the
 * runs and run pages again in the dark scheme.
 *
 * usage: deno task screenshots [--runs data/runs] [--out docs/images] [--metric mcc/slowflow/L1]
 *        [--charts L1/slowflow] [--preset smoke] [--run experiment/id]
 *
 * The runs page charts every completed run (of `--preset`, when given) of
 * the experiment with the most such runs, only the charts whose names
 * contain `--charts`; the run page shows `--run`, else the first of them.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCommandLine } from "../lib/core/cli.ts";
import { UsageError } from "../lib/core/errors.ts";
import { Browser, findChromium } from "./cdp.ts";
import type { RunRow } from "./run_index.ts";
import { bundleUi, createApp } from "./server.ts";
import { RESULTS_FOLDER } from "../lib/core/reference_results.ts";

const PROJECT = fileURLToPath(new URL("../", import.meta.url));

const { flags } = parseCommandLine(Deno.args);
const text = (key: string, fallback: string) => {
  const value = flags.get(key);
  if (value === true) throw new UsageError(`--${key} needs a value`);
  return value ?? fallback;
};
const root = resolve(text("runs", join(PROJECT, "data", "runs")));
const out = resolve(text("out", join(PROJECT, "docs", "images")));
const chromium = findChromium();
if (!chromium) throw new UsageError("the screenshots need Chromium: apt-get install chromium");

// The scorecard shows the kept reference results beside the store's runs, as `deno task serve` does.
const app = createApp(root, {
  script: await bundleUi(),
  results: fileURLToPath(new URL(`../${RESULTS_FOLDER}`, import.meta.url)),
});
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, app.fetch);
const browser = await Browser.launch(chromium, `http://127.0.0.1:${server.addr.port}/`);
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
try {
  const { runs } = await (await app.request("/api/runs")).json() as { runs: RunRow[] };
  const preset = text("preset", "");
  const completed = runs.filter((r) => r.status === "completed" && (!preset || r.preset === preset));
  if (!completed.length) throw new UsageError(`${root} holds no completed run to show`);
  const counts = new Map<string, number>();
  for (const r of completed) counts.set(r.experiment, (counts.get(r.experiment) ?? 0) + 1);
  const experiment = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const shown = completed.filter((r) => r.experiment === experiment);
  const keys = shown.map((r) => `${r.experiment}/${r.id}`);
  const metric = text("metric", Object.keys(shown[0].final)[0] ?? Object.keys(shown[0].metrics)[0]);
  Deno.mkdirSync(out, { recursive: true });
  const shoot = async (hash: string, ready: string, file: string) => {
    await browser.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await browser.waitFor(ready, file);
    // Charts are made one per task after their cards appear.
    await pause(2000);
    Deno.writeFileSync(join(out, file), await browser.screenshot());
    console.log(join(out, file));
  };
  await browser.waitFor(`document.querySelector('#runs tbody tr') !== null`, "the runs table");
  await shoot(
    `#/?sel=${keys.join(",")}&group=1&diff=1&cols=${encodeURIComponent(metric)}&metrics=${
      encodeURIComponent(text("charts", ""))
    }`,
    `document.querySelectorAll('.card[data-metric] canvas').length > 0`,
    "dashboard-runs-grouped.png",
  );
  await shoot(
    `#/hparams?metric=${encodeURIComponent(metric)}&q=${
      encodeURIComponent(`${experiment}${preset ? ` preset:${preset}` : ""}`)
    }`,
    `document.querySelector('#parallel-coordinates path') !== null`,
    "dashboard-hparams.png",
  );
  const runPage = `#/run/${text("run", keys[0])}`;
  await shoot(runPage, `document.querySelector('#run-page') !== null`, "dashboard-run.png");
  await shoot(
    "#/scorecard",
    `document.querySelector('#scorecard-scatter .scorecard-point') !== null`,
    "dashboard-scorecard.png",
  );
  // The same pages in the dark scheme, which the page follows from the system's preference.
  await browser.send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: "dark" }] });
  await shoot(runPage + "?dark", `document.querySelector('#run-page') !== null`, "dashboard-run-dark.png");
  await shoot(
    `#/?sel=${keys.join(",")}&group=1&diff=1&cols=${encodeURIComponent(metric)}&metrics=${
      encodeURIComponent(text("charts", ""))
    }&dark=1`,
    `document.querySelectorAll('.card[data-metric] canvas').length > 0`,
    "dashboard-runs-grouped-dark.png",
  );
} finally {
  await browser.close();
  await server.shutdown();
}
