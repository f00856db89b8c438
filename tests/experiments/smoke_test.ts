/** Every registered experiment's smoke preset completes through `deno task run` and writes its summary. */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { listRuns, readMetrics } from "../../lib/core/run_store.ts";
import { projectPath, scriptCommand } from "./cli.ts";

const MAIN = projectPath("main.ts");

for (const experiment of EXPERIMENTS) {
  Deno.test(`${experiment.name} --preset smoke completes and writes a full summary`, async () => {
    const root = Deno.makeTempDirSync();
    const out = await scriptCommand(MAIN, root, ["run", experiment.name, "--preset", "smoke"]).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    const [run] = listRuns(root);
    assertEquals(run.status, "completed");
    assert(readMetrics(run.dir).rows.length > 0, "metrics were logged");
    const summary = JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json")));
    assertEquals(summary.targets.length, experiment.targets.length);
    for (const value of Object.values(summary.metrics)) assert(Number.isFinite(value), JSON.stringify(summary.metrics));
    assert(summary.source.length > 0 && summary.targets.every((t: { source: string }) => t.source));
  });
}
