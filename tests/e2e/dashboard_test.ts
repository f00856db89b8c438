/**
 * The dashboard in headless Chromium: a live run appears in the table, its
 * chart grows while it trains, and its page shows the published targets and their learning curves.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { browserTest } from "./browser.ts";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));

browserTest("the dashboard lists a live run, grows its chart and shows its targets", async (root, browser) => {
  const experiment = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(PROJECT, "experiments", "ica_toy.ts"),
      "--preset",
      "smoke",
      "--layers",
      "1",
      "--method",
      "slowflow",
      // Long enough for the chart to grow while the page watches, short enough not to wait on it.
      "--steps",
      "800",
      "--log_every",
      "10",
      "--eval_every",
      "200",
    ],
    env: { LATENTLAB_RUNS: root },
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const row = await browser.waitFor<string>(
      `document.querySelector('#runs tbody tr')?.dataset.run`,
      "the run in the table",
    );
    assert(row.startsWith("ica-toy/"));
    await browser.evaluate(`location.hash = '#/?sel=${row}&smooth=0'`);
    const metric = `'.card[data-metric="L1/slowflow/total"]'`;
    const before = Number(
      await browser.waitFor<string>(`document.querySelector(${metric})?.dataset.points`, "the chart"),
    );
    // A loaded machine logs slowly: wait for the next logged step rather than a fixed time.
    await browser.waitFor(`Number(document.querySelector(${metric})?.dataset.points) > ${before}`, "the chart growing");

    assert((await experiment.status).success, "the experiment finished");
    assert(listRuns(root)[0].status === "completed");
    await browser.evaluate(`location.hash = '#/run/${row}'`);
    const targets = await browser.waitFor<string>(
      `document.querySelector('#targets')?.innerText.includes('mcc/slowflow/L1') && document.querySelector('#targets').innerText`,
      "the targets table",
    );
    assert(targets.includes("0.997") && targets.includes("Table 5"), targets);
    // The learning curve of the measured target, beside its published value (a dashed line).
    const curve = await browser.waitFor<string>(
      `document.querySelector('#target-curves svg')?.innerHTML.includes('stroke-dasharray') &&
          document.querySelector('#target-curves svg').innerHTML`,
      "the learning curves",
    );
    assert(curve.includes("mcc/slowflow/L1") && curve.includes('<path d="M'), curve.slice(0, 500));
    // The hyperparameter view draws the run across its axes (here the metric alone: one run varies nothing).
    await browser.evaluate(`location.hash = '#/hparams?metric=L1/slowflow/mcc'`);
    const axes = await browser.waitFor<string>(
      `document.querySelector('#parallel-coordinates path') && document.querySelector('#parallel-coordinates').innerHTML`,
      "the parallel coordinates",
    );
    assert(axes.includes("L1/slowflow/mcc"), axes.slice(0, 300));
    // The view controls read their state from the URL and write it back.
    await browser.evaluate(`location.hash = '#/?sel=${row}&log=1&x=time&reduce=max'`);
    await browser.waitFor(`document.querySelectorAll('.card[data-metric]').length > 2`, "the charts");
    const controls = await browser.evaluate<string>(`JSON.stringify([
        [...document.querySelectorAll('.controls input[type=checkbox]')].map((c) => c.checked),
        [...document.querySelectorAll('.controls select')].map((s) => s.value)])`);
    // reducer, x axis, group by (none), band
    assertEquals(JSON.parse(controls), [[false, true, false], ["max", "time", "", "sd"]]);
    await browser.evaluate(`document.querySelectorAll('.controls input[type=checkbox]')[2].click()`);
    await browser.waitFor(`location.hash.includes('group=1')`, "the group toggle in the URL");
    Deno.mkdirSync(join(PROJECT, "data", "cache"), { recursive: true });
    Deno.writeFileSync(join(PROJECT, "data", "cache", "dashboard.png"), await browser.screenshot());
  } finally {
    try {
      experiment.kill("SIGKILL");
    } catch {
      // finished
    }
    await experiment.status;
  }
});

browserTest(
  "an empty store says what to run, a failed run shows its error and --resume, sweeps list, no stray loading…",
  async (root, browser) => {
    const empty = await browser.waitFor<string>(`document.querySelector('#no-runs')?.innerText`, "the empty store");
    assert(empty.includes("deno task demo"), empty);
    assert(!(await browser.evaluate<string>(`document.body.innerText`)).includes("loading…"));
    await browser.evaluate(`location.hash = '#/sweeps'`);
    const sweeps = await browser.waitFor<string>(
      `document.body.innerText.includes('No sweeps yet') && document.body.innerText`,
      "the sweeps page",
    );
    assert(sweeps.includes("deno task sweep"), sweeps);

    // A run that failed: its error in a panel of its own, and how to continue it.
    const dir = join(root, "ica-toy", "20240101-120000-abcdef");
    Deno.mkdirSync(dir, { recursive: true });
    const at = new Date().toISOString();
    Deno.writeTextFileSync(
      join(dir, "run.json"),
      JSON.stringify({
        id: "20240101-120000-abcdef",
        experiment: "ica-toy",
        argv: [],
        status: "failed",
        created: at,
        ended: at,
        heartbeat: at,
        pid: 1,
        host: "h",
        seed: 0,
        preset: "smoke",
        backend: null,
        versions: {},
        git_commit: null,
        error: "Error: L1/slowflow: the loss is NaN at step 10\n    at trainPhase (loop.ts:92:13)",
      }),
    );
    await browser.evaluate(`location.hash = '#/run/ica-toy/20240101-120000-abcdef'`);
    const page = await browser.waitFor<string>(
      `document.querySelector('.error-panel')?.innerText.includes('NaN') && document.querySelector('#run-page').innerText`,
      "the error panel",
    );
    assert(page.includes(`--resume ${dir}`), page);
    const width = await browser.evaluate<number>(`document.documentElement.scrollWidth`);
    assert(width < 2000, `the page is ${width} px wide`);

    // Notes typed on the run page land in notes.json; archived, the run leaves the runs table.
    await browser.evaluate(`(() => {
        const set = (selector, value) => {
          const el = document.querySelector(selector);
          el.value = value;
          el.dispatchEvent(new Event("input", { bubbles: true }));
        };
        set('#notes textarea', 'the loss went NaN');
        set('#notes input[aria-label=tags]', 'diverged, lr');
        document.querySelector('#notes input[type=checkbox]').click();
      })()`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await browser.evaluate(`document.querySelector('#notes button').click()`);
    await browser.waitFor(`document.querySelector('#notes')?.innerText.includes('saved')`, "the saved notes");
    assertEquals(JSON.parse(Deno.readTextFileSync(join(dir, "notes.json"))), {
      note: "the loss went NaN",
      tags: ["diverged", "lr"],
      archived: true,
    });
    await browser.evaluate(`location.hash = '#/'`);
    await browser.waitFor(
      `document.querySelector('#runs') !== null || document.querySelector('#no-runs') !== null`,
      "runs",
    );
    assertEquals(await browser.evaluate<number>(`document.querySelectorAll('#runs tbody tr').length`), 0);
    await browser.evaluate(`location.hash = '#/?q=archived:true'`);
    await browser.waitFor(
      `document.querySelectorAll('#runs tbody tr').length === 1`,
      "the archived run when asked for",
    );

    // A folder whose run.json does not parse is named on the runs page, not hidden.
    Deno.mkdirSync(join(root, "ica-toy", "20240101-000000-bad000"));
    Deno.writeTextFileSync(join(root, "ica-toy", "20240101-000000-bad000", "run.json"), "{");
    const skipped = await browser.waitFor<string>(
      `document.querySelector('#skipped-folders')?.textContent`,
      "the skipped folder",
    );
    assert(skipped.includes("1 run folder skipped") && skipped.includes("does not parse"), skipped);
  },
);
