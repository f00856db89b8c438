/** A trained vae-dsprites run exports its codes and is re-scored by `eval --run` to the same metrics. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { readNpy } from "../../lib/core/npy.ts";
import { listRuns } from "../../lib/core/run_store.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

async function cli(args: string[], root: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    env: { LATENTLAB_RUNS: root },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout), stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("export-codes and eval --run read a finished vae-dsprites run", async () => {
  const root = Deno.makeTempDirSync();
  assertEquals((await cli(["run", "vae-dsprites", "--preset", "smoke", "--method", "factor_vae"], root)).code, 0);
  const [run] = listRuns(root);

  const exported = await cli(["export-codes", run.dir, "--samples", "40"], root);
  assertEquals(exported.code, 0, exported.stderr);
  const mean = await readNpy(join(run.dir, "exports", "codes_mean.npy"));
  const factors = await readNpy(join(run.dir, "exports", "factors.npy"));
  assertEquals([mean.shape, mean.dtype, factors.shape, factors.dtype], [[40, 10], "f4", [40, 5], "i4"]);

  const before = JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json")));
  const scored = await cli(["eval", "--run", run.dir], root);
  assertEquals(scored.code, 0, scored.stderr);
  const after = JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json")));
  assertEquals(after.evaluation.metrics, before.metrics, "the same seed-derived samples give the same scores");
  assertEquals(JSON.parse(scored.stdout), before.metrics);

  const refused = await cli(["export-codes", join(root, "nowhere")], root);
  assertEquals(refused.code, 2);
  assert(refused.stderr.includes("not a run directory"));
});
