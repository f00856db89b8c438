/**
 * The mnist-invariance experiment: its claims read the run's keys, and bad
 * input is refused before anything is written.
 */
import { assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { assertRefusesBadInput, projectPath } from "./cli.ts";

const experiment = findExperiment("mnist-invariance")!;

const SCRIPT = projectPath("experiments/mnist_invariance.ts");

Deno.test("mnist-invariance's claims read Table 2's keys: on par logits, CE's nuisance as good, iCE's worse", () => {
  const claims = findExperiment("mnist-invariance")!.claims;
  const metrics = {
    "mnist/ce/logit_test_err": 0.02,
    "mnist/ice/logit_test_err": 0.03,
    "mnist/ce/nuisance_test_err": 0.04,
    "mnist/ice/nuisance_test_err": 0.3,
    "mnist/ce/flip_rate": 0.6,
    "mnist/ice/flip_rate": 0.2,
    "shift-background/ce/shifted_test_err": 0.5,
    "shift-background/ice/shifted_test_err": 0.3,
  };
  assertEquals(claims.map((c) => c.holds(metrics, {})), [true, true, true, true, true]);
  assertEquals(claims.map((c) => c.holds({}, {})), [undefined, undefined, undefined, undefined, undefined]);
  assertEquals(claims[2].holds({ ...metrics, "mnist/ice/nuisance_test_err": 0.95 }, {}), false);
});

Deno.test("mnist-invariance refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--train_digits", "60001"], "train_digits must be an integer ≥ 20 and ≤ 60_000"],
    [["--test_digits", "10001"], "test_digits must be an integer ≥ 10 and ≤ 10_000"],
    [["--lambda_n", "-1"], "lambda_n"],
    [["--lambda_m", "-0.5"], "lambda_m"],
    [["--blocks", "0"], "blocks"],
    [["--hidden", "0"], "hidden"],
    [["--datasets", "shift-color"], "shift-color"],
    [["--objectives", "nll"], "nll"],
    [["--ice_variant", "flipped"], "flipped"],
    [["--pool", "3"], "pool"],
  ], ["--preset", "smoke"]);
});
