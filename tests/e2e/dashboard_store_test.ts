/**
 * The dashboard in Chromium over a damaged and hostile run store: a FIFO and
 * a link out of the store in place of metrics.jsonl, a 200 MB metrics file,
 * runs under capitals and accents, a folder no link can name, a linked run
 * folder, and a run whose writer appends 2,000 lines a second while it is charted.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { POINTS_HELD_PER_SERIES } from "../../dashboard/ui/metric_series.ts";
import type { RunWriter } from "../../lib/core/run_writer.ts";
import { newRun } from "../dashboard/fixtures.ts";
import { browserTest, sleep } from "./browser.ts";
import { chartData, type DrawnLine } from "./chart_probe.ts";

const SECRET = 987654321;
const BIG_LINES = 2000, BIG_PAD = 100_000;

/** A run's key as the page names it. */
const keyOf = (run: RunWriter) => run.dir.split("/").slice(-2).join("/");

let good: string[] = [], fifo = "", linked = "", big = "", live: RunWriter;
let outside = "";

browserTest(
  "a damaged store: good runs chart, damaged ones say why, a fast writer's chart stays bounded, nothing outside is served",
  async (_root, browser) => {
    try {
      await browser.evaluate(`location.hash = '#/'`);
      await browser.waitFor(`document.querySelectorAll('#runs tbody tr').length === 7`, "the seven listed runs");
      const problemOf = (key: string) =>
        browser.evaluate<string>(
          `document.querySelector('#runs tr[data-run=${JSON.stringify(key)}] .problem')?.textContent ?? ""`,
        );
      assert((await problemOf(fifo)).includes("metrics.jsonl is a FIFO (named pipe)"), await problemOf(fifo));
      assert((await problemOf(linked)).includes("metrics.jsonl is a symbolic link"), await problemOf(linked));
      const skipped = await browser.evaluate<string>(`document.querySelector('#skipped-folders').textContent`);
      assert(skipped.includes("2 run folders skipped"), skipped);
      assert(skipped.includes("toy/my run") && skipped.includes("rename it"), skipped);
      assert(skipped.includes("toy/linked-run") && skipped.includes("symbolic link"), skipped);

      // A damaged run's own page says what is wrong with it.
      await browser.evaluate(`location.hash = ${JSON.stringify(`#/run/${fifo}`)}`);
      const said = await browser.waitFor<string>(`document.querySelector('#run-problem')?.textContent`, "the problem");
      assert(said.includes("FIFO"), said);

      // Every good run charts: the accented and capitalised ones, the 200 MB one and the live one among them.
      const charted = [...good, big, keyOf(live)];
      await browser.evaluate(`location.hash = ${JSON.stringify(`#/?sel=${charted.join(",")}&metrics=loss`)}`);
      const lines = await browser.waitFor<DrawnLine[]>(
        `(() => { const d = ${chartData("loss")}?.filter((l) => !l.label.endsWith(" raw"));
          return d && d.length === ${charted.length} ? d : null; })()`,
        "a line per good run",
      );
      assertEquals(lines.length, charted.length);

      // The writer appends 2,000 lines a second; the page's line grows, holds at most its cap, memory stays bounded.
      let step = 1000;
      const writer = setInterval(() => {
        for (let i = 0; i < 100; i++, step++) live.log(step, { loss: Math.sin(step) });
      }, 50);
      try {
        // Two runs of "toy" are told apart by their keys.
        const liveLabel = keyOf(live);
        assert(lines.some((l) => l.label === liveLabel), lines.map((l) => l.label).join(", "));
        const lastStep = (target: number) =>
          `(() => { const d = ${chartData("loss")}; const l = d && d.find((l) => l.label === ${
            JSON.stringify(liveLabel)
          }); return l && l.x.at(-1) >= ${target} ? l.x.length : null; })()`;
        await browser.waitFor(lastStep(5000), "the live line past step 5,000");
        await sleep(1500);
        const held = await browser.waitFor<number>(lastStep(step - 2000), "the live line keeping up");
        assert(held <= POINTS_HELD_PER_SERIES, `${held} points held`);
      } finally {
        clearInterval(writer);
      }
      const heap = await browser.send("Runtime.getHeapUsage") as { usedSize: number };
      assert(heap.usedSize < 200e6, `the page's heap holds ${(heap.usedSize / 1e6).toFixed(0)} MB`);

      // No byte of the file outside the store reaches the page, by any route.
      const served = await browser.evaluate<string>(`(async () => [
        document.body.innerText,
        await (await fetch('/api/runs')).text(),
        await (await fetch('/api/metrics?runs=' + encodeURIComponent(${JSON.stringify(linked)}))).text(),
        await (await fetch('/api/runs/' + ${JSON.stringify(linked)} + '/metrics?format=csv')).text(),
      ].join(' '))()`);
      assert(!served.includes(String(SECRET)), "an outside value was served");
    } finally {
      live?.finish("completed");
      Deno.removeSync(outside, { recursive: true });
    }
  },
  {
    setup: (root) => {
      outside = Deno.makeTempDirSync();
      Deno.writeTextFileSync(join(outside, "metrics.jsonl"), `{"step":1,"time":0,"loss":${SECRET}}\n`);
      const runs = [newRun(root, "ica-toy"), newRun(root, "Ica-Toy"), newRun(root, "résumé")];
      runs.forEach((run, i) => {
        for (let s = 0; s < 20; s++) run.log(s, { loss: i + 1 / (s + 1) });
        run.finish("completed");
      });
      // A run copied in under a name of its own.
      Deno.renameSync(runs[1].dir, join(root, "Ica-Toy", "Baseline-Run"));
      good = [keyOf(runs[0]), "Ica-Toy/Baseline-Run", keyOf(runs[2])];
      const pipe = newRun(root), link = newRun(root), large = newRun(root);
      for (const run of [pipe, link, large]) run.finish("completed");
      Deno.removeSync(join(pipe.dir, "metrics.jsonl"));
      new Deno.Command("mkfifo", { args: [join(pipe.dir, "metrics.jsonl")] }).outputSync();
      Deno.removeSync(join(link.dir, "metrics.jsonl"));
      Deno.symlinkSync(join(outside, "metrics.jsonl"), join(link.dir, "metrics.jsonl"));
      // 200 MB in lines of 100 kB: as large as a long run's file, few lines to parse.
      const file = Deno.openSync(join(large.dir, "metrics.jsonl"), { write: true, create: true, truncate: true });
      const pad = "x".repeat(BIG_PAD), encoder = new TextEncoder();
      for (let s = 1; s <= BIG_LINES; s++) {
        file.writeSync(encoder.encode(`{"step":${s},"time":${s},"loss":${1 / s},"note":"${pad}"}\n`));
      }
      file.close();
      [fifo, linked, big] = [keyOf(pipe), keyOf(link), keyOf(large)];
      const spaced = newRun(root);
      spaced.finish("completed");
      Deno.renameSync(spaced.dir, join(root, "toy", "my run"));
      const elsewhere = newRun(outside, "toy");
      elsewhere.finish("completed");
      Deno.symlinkSync(elsewhere.dir, join(root, "toy", "linked-run"));
      live = newRun(root, "toy");
      for (let s = 0; s < 1000; s++) live.log(s, { loss: Math.sin(s) });
    },
  },
);
