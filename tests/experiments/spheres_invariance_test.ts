/**
 * The spheres-invariance experiment through its command line: the analytic
 * part alone (Example 6 and the Eq. 5 error by dimension against the Beta
 * closed form), and bad input refused before anything is written.
 */
import { assert, assertEquals } from "../assert.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { assertRefusesBadInput, projectPath, runScript, summaryOf } from "./cli.ts";
import { findExperiment } from "../../experiments/mod.ts";

const experiment = findExperiment("spheres-invariance")!;

const SCRIPT = projectPath("experiments/spheres_invariance.ts");
const run = (root: string, args: string[]) => runScript(SCRIPT, root, args);

Deno.test("spheres-invariance --parts analytic: Eq. 5 perfect, then chance after the x_d attack; its error by d", async () => {
  const root = Deno.makeTempDirSync();
  const { code, stderr } = await run(root, ["--preset", "smoke", "--parts", "analytic", "--dim", "100"]);
  assertEquals(code, 0, stderr);
  const m = summaryOf(listRuns(root)[0].dir).metrics;
  assertEquals([m["analytic/clean_acc"], m["analytic/attack_success"], m["analytic/oracle_outer"]], [1, 1, 1]);
  assertEquals(m["analytic/shifted_acc"], 0.5);
  // 2,000 points: the measured outer error within 4 standard errors of the closed form.
  for (const d of [2, 3, 5, 10]) {
    const p = m[`analytic/outer_err_closed@${d}`], se = Math.sqrt((p * (1 - p)) / 1_000);
    assert(
      Math.abs(m[`analytic/outer_err@${d}`] - p) <= 4 * se + 1e-12,
      `d ${d}: ${m[`analytic/outer_err@${d}`]} vs ${p}`,
    );
  }
  assert(m["firevnet/logit_val_acc"] === undefined);
});

Deno.test("spheres-invariance refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--dim", "1"], "dim"],
    [["--r1", "0"], "0 < r1 < r2"],
    [["--r1", "10", "--r2", "10"], "0 < r1 < r2"],
    [["--blocks", "0"], "blocks"],
    [["--hidden", "0"], "hidden"],
    [["--train", "1001"], "train must be even"],
    [["--parts", "spectra"], "spectra"],
    [["--dim", "2", "--parts", "firevnet"], "dim ≥ 3"],
  ], ["--preset", "smoke"]);
});
