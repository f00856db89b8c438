/**
 * dislib-study end to end: its plan, and that a study stopped between models
 * resumes without retraining finished models and ends with the same
 * analyses as an uninterrupted study.
 */
import { assert, assertAlmostEquals, assertEquals, assertRejects } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { RunInterrupted } from "../../lib/core/errors.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { loadLatestCheckpoint } from "../../lib/core/run_checkpoints.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { analyseStudy, STUDY_METRICS } from "../../lib/metrics/vae_study.ts";
import { vaeStudyPlan } from "../../lib/train/vae.ts";
import { Rng } from "../../lib/core/rng.ts";

await selectBackend("wasm");

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

Deno.test("a study interrupted between models resumes to the numbers of an uninterrupted one", async () => {
  const root = Deno.makeTempDirSync();
  const experiment = findExperiment("dislib-study")!;
  // The smoke preset, whose uninterrupted numbers are the smoke fixture's.
  const expected = JSON.parse(
    Deno.readTextFileSync(new URL("./fixtures/smoke_summaries.json", import.meta.url)),
  )["dislib-study"].metrics;
  const invocation = parseInvocation(experiment, ["--preset", "smoke", "--runs", root, "--backend", "wasm"]);
  assert(invocation !== "help");
  let watch: ReturnType<typeof setInterval> | undefined;
  const stopped = runExperiment(experiment, invocation, {
    report: () => {},
    // Stop as Ctrl-C would, once the first model's checkpoint is written: the run polls between steps.
    started: ({ dir, interrupt }) => {
      watch = setInterval(() => {
        if ((loadLatestCheckpoint(dir)?.step ?? 0) >= 1) {
          clearInterval(watch);
          interrupt("test");
        }
      }, 5);
    },
  });
  await assertRejects(() => stopped, RunInterrupted);
  clearInterval(watch);
  const dir = listRuns(root)[0].dir;
  assertEquals(readRunInfo(dir).status, "interrupted");
  const finished = loadLatestCheckpoint(dir)!.step;
  assert(finished >= 1 && finished < 8, `stopped after ${finished} of 8 models`);

  const resumed = parseInvocation(experiment, ["--resume", dir, "--backend", "wasm"]);
  assert(resumed !== "help");
  const { summary } = await runExperiment(experiment, resumed, { report: () => {} });
  assertEquals(readRunInfo(dir).status, "completed");
  assertEquals(readRunInfo(dir).resumes?.map((r) => r.step), [finished]);
  assertEquals((summary.details as { models: unknown[] }).models.length, 8);
  assertEquals(summary.metrics, expected);
});
