/**
 * dislib-study end to end: its plan, and that a study stopped between models
 * resumes without retraining finished models and ends with the same
 * analyses as an uninterrupted study.
 */
import { join } from "node:path";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { listRuns, loadLatestCheckpoint, readRunInfo } from "../../lib/core/run_store.ts";
import { analyseStudy, STUDY_METRICS } from "../../lib/metrics/vae_study.ts";
import { vaeStudyPlan } from "../../lib/train/vae.ts";
import { Rng } from "../../lib/core/rng.ts";
import { projectPath, scriptCommand } from "./cli.ts";

const SCRIPT = projectPath("experiments/dislib_study.ts");

const command = (root: string, args: string[]) => scriptCommand(SCRIPT, root, args);

const summaryOf = (dir: string) => JSON.parse(Deno.readTextFileSync(join(dir, "summary.json")));

Deno.test("studyPlan orders models by method, then Table 3 value, then seed", () => {
  const plan = vaeStudyPlan({ methods: ["dip_vae_i", "beta_vae"], grid: [0, 4], seeds: 2 }, 7);
  assertEquals(plan.map((m) => `${m.method}@${m.value}/${m.seed}`), [
    "dip_vae_i@1/7",
    "dip_vae_i@1/8",
    "dip_vae_i@20/7",
    "dip_vae_i@20/8",
    "beta_vae@1/7",
    "beta_vae@1/8",
    "beta_vae@8/7",
    "beta_vae@8/8",
  ]);
});

Deno.test("analyseStudy ranks unsupervised scores against metrics (Fig. 9) and reads TC trends per method", () => {
  const rng = new Rng(3);
  const models = vaeStudyPlan({ methods: ["beta_vae", "dip_vae_i"], grid: [0, 4], seeds: 3 }, 0).map((m, i) => {
    const metrics: Record<string, number> = Object.fromEntries(STUDY_METRICS.map((k) => [k, rng.uniform()]));
    // Reconstruction falls exactly as MIG rises; TC of β-VAE's mean rises and its sampled TC falls with β.
    Object.assign(metrics, {
      reconstruction: 100 - metrics.mig,
      kl: rng.uniform(),
      elbo: -rng.uniform(),
      tc_sampled: m.value === 1 ? 2 + rng.uniform() : rng.uniform(),
      tc_mean: m.value === 1 ? rng.uniform() : 2 + rng.uniform() + i,
    });
    return { ...m, metrics };
  });
  const { metrics, tables } = analyseStudy(models, 200, 0);
  assertAlmostEquals(metrics["unsupervised/reconstruction~mig"], -1, 1e-12);
  assertEquals(tables.unsupervised.matrix.length, 4);
  assert(metrics["tc_trend/beta_vae/mean"] > 0 && metrics["tc_trend/beta_vae/sampled"] < 0);
  assertEquals(metrics.tc_mean_above_sampled, 0.5);
});

Deno.test("a study interrupted between models resumes to the same analyses as an uninterrupted one", async () => {
  const args = ["--preset", "smoke", "--steps", "30", "--log_every", "10"];
  const fullRoot = Deno.makeTempDirSync();
  const full = await command(fullRoot, args).output();
  assertEquals(full.code, 0, new TextDecoder().decode(full.stderr));
  const expected = summaryOf(listRuns(fullRoot)[0].dir);
  assertEquals(expected.details.models.length, 8);

  const root = Deno.makeTempDirSync();
  const child = command(root, args).spawn();
  const started = Date.now();
  const finishedModels = () => (listRuns(root)[0] ? loadLatestCheckpoint(listRuns(root)[0].dir)?.step ?? 0 : 0);
  while (finishedModels() === 0) {
    if (Date.now() - started > 60_000) throw new Error("no model finished within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill("SIGINT");
  assertEquals((await child.output()).code, 130);
  const dir = listRuns(root)[0].dir;
  const finished = loadLatestCheckpoint(dir)!.step;
  assert(finished >= 1 && finished < 8, `stopped after ${finished} of 8 models`);

  const resumed = await command(root, ["--resume", dir]).output();
  assertEquals(resumed.code, 0, new TextDecoder().decode(resumed.stderr));
  assertEquals(readRunInfo(dir).status, "completed");
  const summary = summaryOf(dir);
  assertEquals(summary.details.models.length, 8);
  // Wall-clock seconds differ between runs; every score must not.
  const scores = (s: typeof summary) =>
    s.details.models.map(({ metrics: { seconds: _, ...rest } }: { metrics: Record<string, number> }) => rest);
  assertEquals(scores(summary), scores(expected));
  assertEquals(summary.metrics, expected.metrics);
});
