/**
 * Dashboard load check: builds a run store of 200 runs × 10,000 metric lines
 * and times `/api/runs` (first and repeated) and the metrics of 20 runs as a
 * chart requests them. Prints the timings; asserts nothing.
 *
 * usage: deno run -A bench/dashboard_bench.ts [--runs 200] [--lines 10000]
 *
 * @module
 */
import { join } from "node:path";
import { createApp } from "../dashboard/server.ts";
import { parseCommandLine } from "../lib/core/cli.ts";
import { RunWriter } from "../lib/core/run_store.ts";

const { flags } = parseCommandLine(Deno.args);
const runCount = Number(flags.get("runs") ?? 200), lineCount = Number(flags.get("lines") ?? 10_000);
const root = Deno.makeTempDirSync();
for (let r = 0; r < runCount; r++) {
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
  const lines: string[] = [];
  for (let s = 1; s <= lineCount; s++) {
    lines.push(
      JSON.stringify({ step: s, time: s / 10, "loss/total": 1 / s + r, "loss/kl": Math.sin(s), mcc: s / lineCount }),
    );
  }
  Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), lines.join("\n") + "\n");
  run.finish("completed");
}
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
await time("chart of 20 runs (3 metrics each, max_points 2000)", async () => {
  await Promise.all(
    runs.slice(0, 20).map(async (r: { experiment: string; id: string }) =>
      (await app.request(`/api/runs/${r.experiment}/${r.id}/metrics?max_points=2000`)).json()
    ),
  );
});
Deno.removeSync(root, { recursive: true });
