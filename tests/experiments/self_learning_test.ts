/**
 * The self-learning experiment: Tent's online protocol (predictions from the forward before each step), the dev
 * sweep's reading of epoch e as the run with e epochs, mCE recomputed from the per-set errors, no tensors left, and
 * bad input refused before any work.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { projectPath, scriptCommand } from "./cli.ts";

const experiment = findExperiment("self-learning")!;

await selectBackend("wasm");

/** The smoke preset with `args`, in this process, runs under a fresh temporary store. */
async function run(args: string[]) {
  const root = Deno.makeTempDirSync();
  const invocation = parseInvocation(experiment, ["--preset", "smoke", "--runs", root, "--backend", "wasm", ...args]);
  assert(invocation !== "help");
  const tensors = tf.memory().numTensors;
  const { summary } = await runExperiment(experiment, invocation, { report: () => {} });
  assertEquals(tf.memory().numTensors, tensors, "tensors left after the run");
  return summary;
}

/** Methods the smoke preset runs besides none. */
const ADAPTED = ["bn", "ent", "rpl", "hard_pl_0", "hard_pl_0.9", "soft_pl", "ent_all", "ent_last"];

Deno.test("self-learning: with one batch per set and one epoch, every method predicts as BN adaptation does", async () => {
  // One step per set: its predictions come from the forward before the update, so no loss can change them.
  const summary = await run(["--digits", "32", "--dev_digits", "32", "--corruptions", "gaussian_noise"]);
  const m = summary.metrics;
  const error = (method: string) => m[`test/${method}/gaussian_noise/5/error`];
  for (const method of ADAPTED) {
    assertEquals(error(method), error("bn"), method);
    assertEquals(m[`test/${method}/ece`], m["test/bn/ece"], method);
  }
  assertEquals([m["sl/ent_gain_over_bn"], m["sl/rpl_gain_over_bn"]], [0, 0]);
  // One corruption at one severity: mCE is the error over the reference MLP's.
  const reference = m["test/mlp/gaussian_noise/5/error"];
  for (const method of ["none", ...ADAPTED]) assertEquals(m[`test/${method}/mce`], error(method) / reference, method);
  assert(error("none") > 0 && error("none") < 1 && reference > 0, JSON.stringify(m));
});

Deno.test("self-learning: the test set equal to the dev set gives the dev sweep's numbers at the chosen lr and epochs", async () => {
  const summary = await run([
    ...["--corruptions", "speckle_noise", "--dev_corruptions", "speckle_noise", "--lrs", "1e-2,1"],
    ...["--max_epochs", "3", "--thresholds", "0.5", "--ent_params", "affine"],
  ]);
  const m = summary.metrics;
  for (const method of ["ent", "rpl"]) {
    const lr = m[`dev/${method}/chosen_lr`], epochs = m[`dev/${method}/chosen_epochs`];
    assert([1e-2, 1].includes(lr) && epochs >= 1 && epochs <= 3, JSON.stringify(m));
    assertEquals(m[`test/${method}/mce`], m[`dev/${method}/lr${lr}/epoch${epochs}/mce`], method);
    assertEquals(m[`test/${method}/mce`], m[`dev/${method}/chosen_mce`], method);
    // BN alone on the batches of the chosen last epoch: the dev sweep's BN curve at that epoch.
    assertEquals(m[`control/bn_same_order_as_${method}/mce`], m[`dev/bn/epoch${epochs}/mce`], method);
    // The chosen setting is the lowest dev mCE of the grid.
    for (const l of [1e-2, 1]) {
      for (let e = 1; e <= 3; e++) assert(m[`dev/${method}/chosen_mce`] <= m[`dev/${method}/lr${l}/epoch${e}/mce`]);
    }
  }
  assertEquals(m["test/none/mce"], m["dev/none/mce"]);
  assertEquals(m["test/bn/mce"], m["dev/bn/mce"]);
  // lr 1 moves the BN affine parameters enough to change predictions within three epochs of two batches.
  const curve = [1, 2, 3].map((e) => m[`dev/ent/lr1/epoch${e}/mce`]);
  assert(curve.some((v) => v !== m["dev/bn/mce"]), JSON.stringify(curve));
  const gain = 1 - m["test/ent/mce"] / m["test/bn/mce"];
  assertAlmostEquals(m["sl/ent_gain_over_bn"], gain, 1e-15);
  // Forgetting: the clean error after adapting on the severity-5 set, against the source model's.
  assertAlmostEquals(
    m["forgetting/ent/rise"],
    m["forgetting/ent/clean_error"] - m["forgetting/none/clean_error"],
    1e-15,
  );
});

const BAD: [string[], string][] = [
  [["--corruptions", "gaussian_noise,fogg"], "fogg not allowed; corruptions must be a comma-separated list of"],
  [["--dev_corruptions", "speckle"], "speckle not allowed"],
  [["--q", "0"], "q must lie in (0, 1], got 0"],
  [["--q", "1.5"], "q must lie in (0, 1], got 1.5"],
  [["--lrs", "1e-3,0"], "lrs must be finite numbers > 0, got 0"],
  [["--lrs", "-1e-3"], "lrs must be finite numbers > 0, got -0.001"],
  [["--thresholds", "0,1"], "thresholds must lie in [0, 1), got 1"],
  [["--thresholds", "-0.1"], "thresholds must lie in [0, 1), got -0.1"],
  [["--tau_t", "0"], "tau_t must be a finite number > 0, got 0"],
  [["--tau_s", "-1"], "tau_s must be a finite number > 0, got -1"],
  [["--ablation_severities", "3"], "ablation_severities 3 are not among severities 5"],
  [["--digits", "300"], "digits = 300 exceeds test_digits = 256"],
];

Deno.test("self-learning refuses bad input before any work", () => {
  for (const [args, message] of BAD) {
    const root = Deno.makeTempDirSync();
    assertThrows(
      () => parseInvocation(experiment, ["--preset", "smoke", "--runs", root, ...args]),
      UsageError,
      message,
    );
    assertEquals([...Deno.readDirSync(root)], [], args.join(" "));
  }
});

Deno.test("self-learning: an unknown corruption exits with code 2, lists the names and writes nothing", async () => {
  const root = Deno.makeTempDirSync();
  const out = await scriptCommand(projectPath("experiments/self_learning.ts"), root, ["--corruptions", "fogg"])
    .output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 2, stderr);
  assert(stderr.includes("fogg not allowed") && stderr.includes("gaussian_noise, shot_noise"), stderr);
  assertEquals([...Deno.readDirSync(root)], []);
});
