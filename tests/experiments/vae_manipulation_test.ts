/**
 * The vae-manipulation experiment through its command line: the synth
 * variants' scores and learning curves, a killed run that --resume finishes
 * with the numbers of an uninterrupted one, and bad input refused before
 * anything is written.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { assertRefusesBadInput, killResumeAndStraight, projectPath, runScript, summaryOf } from "./cli.ts";

const experiment = findExperiment("vae-manipulation")!;

const SCRIPT = projectPath("experiments/vae_manipulation.ts");
const run = (root: string, args: string[]) => runScript(SCRIPT, root, args);

Deno.test("vae-manipulation --datasets synth: corr-gap, MIG-binned per variant, the wiggle's preference flip", async () => {
  const root = Deno.makeTempDirSync();
  const { code, stderr } = await run(root, ["--preset", "smoke", "--datasets", "synth", "--seed", "1"]);
  assertEquals(code, 0, stderr);
  const [info] = listRuns(root);
  assertEquals(readRunInfo(info.dir).status, "completed");
  const m = summaryOf(info.dir).metrics;
  for (const variant of ["orig", "mod", "noise"]) {
    for (const score of ["corr_gap", "mig_binned", "dto"]) {
      assert(Number.isFinite(m[`synth/${score}/${variant}`]), `${score} ${variant}`);
    }
  }
  assert(Number.isFinite(m["synth/wiggle_fit_r2/mod"]) && m["synth/wiggle_fit_r2/orig"] === undefined);
  // S(0°) − S(45°) at r 1.5: −0.080 on the original data, +0.147 with the wiggle ε 0.1, ω 20
  // (tests/data/synth_test.ts), the noise leaves S unchanged; on the smoke preset's 2,000 points.
  assert(m["synth/preference_gap/orig"] < -0.07 && m["synth/preference_gap/mod"] > 0.13, JSON.stringify(m));
  assertEquals(m["synth/preference_gap/noise"], m["synth/preference_gap/orig"]);
  const { rows } = parseMetrics(Deno.readTextFileSync(join(info.dir, "metrics.jsonl")));
  assertEquals(rows.filter((r) => typeof r["synth/corr_gap/mod"] === "number").map((r) => r.step), [20, 40]);
  // Images not run: their targets are left out.
  assertEquals(summaryOf(info.dir).targets.length, 0);
});

Deno.test("a killed vae-manipulation run resumes from its checkpoint to the numbers of an uninterrupted run", async () => {
  const args = [
    ...["--preset", "smoke", "--datasets", "synth", "--synth_steps", "60"],
    ...["--checkpoint_every", "5", "--eval_every", "20", "--seed", "4"],
  ];
  // Killed after the first evaluation (step 20), with two still to come after the resume.
  const { resumed, straight, killedAt } = await killResumeAndStraight(SCRIPT, args, 25);
  assertEquals(killedAt, 25);
  assertEquals(summaryOf(resumed).metrics, summaryOf(straight).metrics);
});

Deno.test("vae-manipulation refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--eps", "0"], "eps must be in (0, 0.5]"],
    [["--eps", "0.6"], "eps"],
    [["--eps_shapes3d", "0.7"], "eps_shapes3d"],
    [["--omega", "0"], "omega must be > 0"],
    [["--ratio", "0.5"], "ratio"],
    [["--beta", "-0.1"], "beta"],
    [["--synth_latents", "65"], "synth_latents"],
    [["--datasets", "mnist"], "mnist"],
    [["--datasets", ""], "datasets"],
    [["--dto_points", "500"], "dto_points 500 exceeds the test split (200)"],
    [["--references", "2", "--restarts", "3"], "need ≥ 4 restarts"],
  ], ["--preset", "smoke"]);
});

Deno.test("vae-manipulation's synth claim reads the run's keys: it holds, fails, or is undefined below a 0.5 wiggle fit", () => {
  const [claim] = findExperiment("vae-manipulation")!.claims;
  const metrics = (mod: number, noise: number, fit: number) => ({
    "synth/corr_gap/orig": 0.95,
    "synth/corr_gap/mod": mod,
    "synth/corr_gap/noise": noise,
    "synth/wiggle_fit_r2/mod": fit,
  });
  assertEquals(claim.holds(metrics(0.7, 0.9, 0.9), {}), true);
  assertEquals(claim.holds(metrics(0.8, 0.9, 0.9), {}), false);
  assertEquals(claim.holds(metrics(0.7, 0.8, 0.9), {}), false);
  assertEquals(claim.holds(metrics(0.7, 0.9, 0.4), {}), undefined);
});
