/**
 * vae-dsprites: 20 steps on dSprites raise the ELBO for every method, and a
 * trained run exports its codes and is re-scored by `eval --run` to the same metrics.
 */
import * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { main } from "../../main.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { resolveConfig } from "../../lib/core/config.ts";
import { readNpy } from "../../lib/core/npy.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { loadDataset } from "../../lib/data/registry.ts";
import { VAE_METHODS } from "../../lib/train/vae_objectives.ts";
import { trainVae, VAE_CONFIG } from "../../lib/train/vae.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { fakeContext } from "../train/fake_context.ts";
import { projectPath, runInProcess, scriptCommand } from "./cli.ts";

await selectBackend("wasm");

Deno.test("20 steps on dSprites raise the ELBO and leave no tensors, for every VAE-family method", async () => {
  const dataset = loadDataset("dsprites", { size: 32 });
  for (const method of VAE_METHODS) {
    const flags = new Map<string, string>([
      ["method", method],
      ["value", method === "annealed_vae" ? "5" : "2"],
      ["steps", "20"],
      ["batch", "8"],
      ["lr", "2e-3"],
      ["anneal_steps", "20"],
      ["discriminator_hidden", "64"],
      ["discriminator_layers", "2"],
      ["log_every", "2"],
      ["media_every", "20"],
      ["curve_every", "0"],
    ]);
    // The smoke preset's data-parallel `workers` is the experiment's key, not one of VAE_CONFIG's.
    const { workers: _workers, ...smoke } = findExperiment("vae-dsprites")!.presets.smoke as Record<string, unknown>;
    const cfg = resolveConfig(VAE_CONFIG, smoke, flags);
    const logged: { step: number; values: Record<string, number> }[] = [];
    const before = tf.memory().numTensors;
    const training = { label: method, seed: 1, resumed: null, checkpoints: false, mediaPrefix: "", saveAs: method };
    const { dispose } = await trainVae(fakeContext(logged), cfg, dataset, training);
    dispose();
    assertEquals(tf.memory().numTensors, before, method);
    const elbo = logged.map((row) => -(row.values[`${method}/reconstruction`] + row.values[`${method}/kl`]));
    assertEquals(elbo.length, 10);
    // Mean of the first two vs the last two logged batches (steps 2 and 4 vs 18 and 20): single batches are noisy.
    // Every method gained 394–520 nats here; 50 leaves room for other seeds and backends.
    const [first, last] = [(elbo[0] + elbo[1]) / 2, (elbo[8] + elbo[9]) / 2];
    assert(last > first + 50, `${method}: ELBO ${first.toFixed(1)} → ${last.toFixed(1)}`);
  }
});

const MAIN = projectPath("main.ts");

async function cli(args: string[], root: string) {
  const out = await scriptCommand(MAIN, root, args).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout), stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("export-codes and eval --run read a finished vae-dsprites run", async () => {
  const root = Deno.makeTempDirSync();
  // A small discriminator and no learning curve: half the run's time, and nothing export-codes or eval reads.
  const small = ["--discriminator_hidden", "64", "--discriminator_layers", "2", "--curve_every", "0"];
  await runInProcess("vae-dsprites", root, ["--preset", "smoke", "--method", "factor_vae", ...small]);
  const [run] = listRuns(root);

  const exported = await cli(["export-codes", run.dir, "--samples", "40"], root);
  assertEquals(exported.code, 0, exported.stderr);
  const mean = await readNpy(join(run.dir, "exports", "codes_mean.npy"));
  const factors = await readNpy(join(run.dir, "exports", "factors.npy"));
  assertEquals([mean.shape, mean.dtype, factors.shape, factors.dtype], [[40, 10], "f4", [40, 5], "i4"]);

  // In process from here: the command line's wiring is what export-codes above went through.
  const before = JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json")));
  await main(["eval", "--run", run.dir]);
  const after = JSON.parse(Deno.readTextFileSync(join(run.dir, "summary.json")));
  assertEquals(after.evaluation.metrics, before.metrics, "the same seed-derived samples give the same scores");

  await assertRejects(() => main(["export-codes", join(root, "nowhere")]), UsageError, "not a run directory");
});
