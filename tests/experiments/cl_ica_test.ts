/**
 * The cl-ica experiment through its command line: a complete smoke run with
 * its learning curves, a killed run that --resume finishes with the numbers
 * of an uninterrupted one, and bad input refused before anything is written.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { assertRefusesBadInput, killResumeAndStraight, projectPath, runScript, summaryOf } from "./cli.ts";
import { findExperiment } from "../../experiments/mod.ts";

const experiment = findExperiment("cl-ica")!;

const SCRIPT = projectPath("experiments/cl_ica.ts");
const run = (root: string, args: string[]) => runScript(SCRIPT, root, args);

Deno.test("cl-ica --preset smoke: every setting's R² and MCC, the identity baseline, curves, verdicts", async () => {
  const root = Deno.makeTempDirSync();
  const { code, stderr } = await run(root, ["--preset", "smoke", "--seed", "1"]);
  assertEquals(code, 0, stderr);
  const [info] = listRuns(root);
  assertEquals([info.status, readRunInfo(info.dir).experiment], ["completed", "cl-ica"]);
  const summary = summaryOf(info.dir);
  const m = summary.metrics;
  for (const name of ["box_laplace_box", "box_normal_unbounded", "sphere_vmf10", "sphere_vmf1", "supervised"]) {
    for (const score of ["r2", "mcc"]) {
      const value = m[`clica/${name}/${score}`];
      assert(value >= 0 && value <= 1, `${name} ${score} ${value}`);
    }
  }
  for (const key of ["identity_box/r2", "identity_box/mcc", "identity_sphere/r2", "identity/r2", "identity/mcc"]) {
    assert(m[`clica/${key}`] > 0 && m[`clica/${key}`] <= 1, key);
  }
  assertEquals(m["clica/identity/r2"], m["clica/identity_sphere/r2"]);
  assertEquals(m["clica/identity/mcc"], m["clica/identity_box/mcc"]);
  // The smoke preset runs every setting, so every target is compared.
  const metrics = summary.targets.map((t: { metric: string }) => t.metric);
  assert(metrics.includes("clica/sphere_vmf1/r2") && metrics.includes("clica/box_laplace_box/mcc"));
  assertEquals(summary.claims.length, 3);
  // The learning curve: R² and MCC logged at every eval_every (25) and at the end (50).
  const { rows } = parseMetrics(Deno.readTextFileSync(join(info.dir, "metrics.jsonl")));
  const steps = rows.filter((r) => typeof r["clica/box_laplace_box/mcc"] === "number").map((r) => r.step);
  assertEquals(steps, [25, 50]);
  assert(rows.some((r) => r.step === 0 && typeof r["clica/identity/mcc"] === "number"));
});

Deno.test("a killed cl-ica run resumes from its checkpoint to the numbers of an uninterrupted run", async () => {
  const args = [
    ...["--preset", "smoke", "--cases", "box_normal_unbounded,supervised", "--steps", "30"],
    ...["--supervised_steps", "12", "--checkpoint_every", "4", "--eval_every", "10", "--seed", "4"],
  ];
  // Inside the first setting, before its first evaluation; the second setting starts after the resume.
  const { resumed, straight, killedAt } = await killResumeAndStraight(SCRIPT, args, 8);
  assertEquals(killedAt, 8);
  assertEquals(summaryOf(resumed).metrics, summaryOf(straight).metrics);
  // Only the settings run are compared: the sphere targets are left out.
  const compared = summaryOf(resumed).targets.map((t: { metric: string }) => t.metric);
  assert(!compared.includes("clica/sphere_vmf1/r2") && compared.includes("clica/box_normal_unbounded/r2"));
});

Deno.test("cl-ica refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--cases", "box_laplace_cube"], "box_laplace_box"],
    [["--n", "1"], "n"],
    [["--lr", "0"], "lr must be > 0"],
    [["--batch", "1"], "batch"],
  ], ["--preset", "smoke"]);
});
