/**
 * The vae-pca experiment through its command line: a smoke run's parts and
 * learning curves, a killed run that --resume finishes with the numbers of an
 * uninterrupted one, and bad input refused before anything is written.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { assertRefusesBadInput, killResumeAndStraight, projectPath, runScript, summaryOf } from "./cli.ts";
import { findExperiment } from "../../experiments/mod.ts";

const experiment = findExperiment("vae-pca")!;

const SCRIPT = projectPath("experiments/vae_pca.ts");
const run = (root: string, args: string[]) => runScript(SCRIPT, root, args);

Deno.test("vae-pca --preset smoke --parts ablation,degeneracy: Table 3.3/3.4 keys, curves every eval_every", async () => {
  const root = Deno.makeTempDirSync();
  const { code, stderr } = await run(root, ["--preset", "smoke", "--parts", "ablation,degeneracy", "--seed", "1"]);
  assertEquals(code, 0, stderr);
  const [info] = listRuns(root);
  assertEquals([info.status, readRunInfo(info.dir).experiment], ["completed", "vae-pca"]);
  const m = summaryOf(info.dir).metrics;
  for (const model of ["beta_vae", "ae", "beta_vae_sigma"]) {
    assert(m[`ablation/dto/${model}`] >= 0 && m[`ablation/dto/${model}`] <= Math.sqrt(4 - 2 * Math.SQRT2) + 1e-9);
    assert(Number.isFinite(m[`ablation/ds/${model}`]), model);
  }
  for (const ratio of ["1", "1.2", "1.5"]) assert(Number.isFinite(m[`degeneracy/dto@${ratio}`]), ratio);
  // Parts not run leave their targets out.
  const compared = summaryOf(info.dir).targets.map((t: { metric: string }) => t.metric);
  assert(compared.includes("degeneracy/dto@1.2") && !compared.includes("nonlin/dto/beta_vae"));
  const { rows } = parseMetrics(Deno.readTextFileSync(join(info.dir, "metrics.jsonl")));
  const steps = rows.filter((r) => typeof r["degeneracy/dto@1.2"] === "number").map((r) => r.step);
  assertEquals(steps, [10, 20]);
});

Deno.test("a killed vae-pca run resumes from its checkpoint to the numbers of an uninterrupted run", async () => {
  const args = [
    ...["--preset", "smoke", "--parts", "pca,nonlin", "--steps", "40", "--steps_nonlin", "30"],
    ...["--checkpoint_every", "5", "--eval_every", "10", "--seed", "4"],
  ];
  // Checkpoints are numbered setting · 40 + step: 55 is step 15 of the second setting (nonlin/beta_vae), after its
  // first evaluation; the first setting's results come from the checkpoint.
  const { resumed, straight, killedAt } = await killResumeAndStraight(SCRIPT, args, 55);
  assertEquals(killedAt, 55);
  const { seconds: _a, ...ours } = summaryOf(resumed).metrics;
  const { seconds: _b, ...theirs } = summaryOf(straight).metrics;
  assertEquals(ours, theirs);
});

Deno.test("vae-pca refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--ratios", "1,0.5"], "ratios"],
    [["--ratio", "11"], "ratio"],
    [["--beta", "-1"], "beta"],
    [["--latents", "1"], "latents"],
    [["--latents_polarized", "65"], "latents_polarized"],
    [["--dto_points", "300"], "dto_points 300 exceeds the test split (50 of 500 samples)"],
    [["--parts", "ablation,spectra"], "spectra"],
    [["--parts", ""], "parts"],
  ], ["--preset", "smoke"]);
});
