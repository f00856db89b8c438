/**
 * A run interrupted at its first checkpoint and continued with `--resume`
 * ends with exactly the numbers, curves and details of the same run left
 * alone: every experiment's smoke preset, in process, on the wasm backend.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { RunInterrupted } from "../../lib/core/errors.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";

await selectBackend("wasm");

/** A summary without what no seed fixes: wall times (`seconds`, `wall_time_s`, `metric_seconds`). */
function reproducible(summary: RunSummary): unknown {
  return JSON.parse(
    JSON.stringify(
      { metrics: summary.metrics, targets: summary.targets, claims: summary.claims, details: summary.details },
      (key, value) =>
        /^(seconds|seconds_sd|wall_time_s|metric_seconds)$|\/seconds(_sd)?$/.test(key) ? undefined : value,
    ),
  );
}

/**
 * Pure-JS toys that keep no checkpoint: two-point's quick run takes about 16 s and collapse-toy's about 80 s on two
 * cores, so a stopped run is started again rather than resumed.
 */
const WITHOUT_CHECKPOINTS = new Set(["two-point", "collapse-toy"]);

for (const experiment of EXPERIMENTS.filter((e) => !WITHOUT_CHECKPOINTS.has(e.name))) {
  Deno.test(`${experiment.name} --preset smoke: interrupted at its first checkpoint and resumed, the same numbers`, async () => {
    const args = (root: string) => ["--preset", "smoke", "--runs", root, "--backend", "wasm"];
    const alone = parseInvocation(experiment, args(Deno.makeTempDirSync()));
    assert(alone !== "help");
    const { summary: expected } = await runExperiment(experiment, alone, { report: () => {} });

    const tensors = tf.memory().numTensors;
    const first = parseInvocation(experiment, args(Deno.makeTempDirSync()));
    assert(first !== "help");
    let stop: ((reason: string) => void) | null = null;
    let dir = "";
    const checkpoints: number[] = [];
    const interrupted = await runExperiment(experiment, first, {
      report: () => {},
      started: (run) => {
        dir = run.dir;
        stop = run.interrupt;
      },
      checkpointed: (step) => {
        checkpoints.push(step);
        if (checkpoints.length === 1) stop!("test: interrupted at the first checkpoint");
      },
    }).then(() => null, (error) => error);
    assert(interrupted instanceof RunInterrupted, `the run was not interrupted: ${interrupted}`);
    assertEquals(readRunInfo(dir).status, "interrupted");

    const resume = parseInvocation(experiment, ["--resume", dir, "--backend", "wasm"]);
    assert(resume !== "help");
    const { summary } = await runExperiment(experiment, resume, { report: () => {} });
    assertEquals(readRunInfo(dir).resumes?.map((r) => r.step), checkpoints);
    assertEquals(reproducible(summary), reproducible(expected));
    assertEquals(tf.memory().numTensors, tensors, "tensors left after the interrupted and the resumed run");
  });
}
