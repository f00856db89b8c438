/**
 * Experiments run on `--backend webgpu` against the same seed's run on wasm, registered as tests by the
 * smoke_webgpu_<n>_test.ts files (two groups, run in parallel by `deno task test-webgpu`). Both runs happen in this
 * process, one after the other; agreement.ts says what must agree and how closely.
 *
 * Without a GPU, Deno's WebGPU runs on Mesa's software Vulkan adapter (lavapipe), about ten times slower than wasm
 * on this project's small models: the smoke presets of all experiments take 17 minutes there, one after another.
 * So CI runs {@linkcode CI_GROUPS} (15 experiments, two of them lighter than their smoke preset: their flags are in
 * agreement.ts) and leaves out {@linkcode LEFT_OUT_OF_CI}, the slowest, whose code paths the groups run in other
 * experiments; `LATENTLAB_WEBGPU_ALL=1` adds those, split between the two files.
 *
 * No adapter fails every test with that message, unless `LATENTLAB_WEBGPU_SKIP=1` says to skip them (then it says
 * so once).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { webgpuTest } from "./adapter.ts";
import { agreementOf, compareRuns } from "./agreement.ts";

/**
 * Experiments run only with LATENTLAB_WEBGPU_ALL=1: seconds of their smoke preset alone on lavapipe, and what the CI
 * groups run of the same code.
 */
export const LEFT_OUT_OF_CI: Record<string, { seconds: number; coveredBy: string }> = {
  "abs-mnist": { seconds: 216, coveredBy: "class VAEs and CNNs: vae-dsprites, bn-adapt" },
  "noise-train-mnist": { seconds: 125, coveredBy: "a small CNN on MNIST digits: bn-adapt, ccc-mini" },
  "pose-ood": { seconds: 50, coveredBy: "conv nets with BN and its adaptation: bn-adapt, ccc-mini" },
  "cebra-place-cells": { seconds: 45, coveredBy: "the CEBRA estimator: cebra-synthetic" },
  "vae-manipulation": { seconds: 34, coveredBy: "β-VAEs on dSprites and synthetic data: vae-dsprites, vae-pca" },
  "self-learning": { seconds: 38, coveredBy: "BN-affine test-time adaptation: bn-adapt, ccc-mini" },
  "regcl-attribution": { seconds: 19, coveredBy: "contrastive encoders and their Jacobians: cl-ica, cebra-synthetic" },
  "mnist-invariance": { seconds: 16, coveredBy: "the dense fiRevNet: spheres-invariance" },
};

/**
 * The experiments of each test file. Both files together take about 4 minutes of two shared cores (measured: each
 * experiment's webgpu run takes 1.2–2.5 times as long beside the other file's as alone).
 */
export const CI_GROUPS: readonly (readonly string[])[] = [
  [
    "gen-benchmark",
    "vae-pca",
    "cebra-synthetic",
    "slowvae-dsprites",
    "vae-collapse-toy",
    "spheres-invariance",
    "two-point",
  ],
  ["bn-adapt", "dislib-study", "ica-toy", "cl-ica", "slowvae-kitti", "ccc-mini", "vae-dsprites", "collapse-toy"],
];

const runAll = Deno.env.get("LATENTLAB_WEBGPU_ALL") === "1";

/** Registers the webgpu-vs-wasm test of each experiment of group `index` (and, under LATENTLAB_WEBGPU_ALL, the rest). */
export function webgpuChecks(index: number): void {
  const names = [...CI_GROUPS[index], ...(runAll ? Object.keys(LEFT_OUT_OF_CI).filter((_, i) => i % 2 === index) : [])];
  for (const name of names) webgpuCheck(name);
}

function webgpuCheck(name: string): void {
  const experiment = EXPERIMENTS.find((e) => e.name === name);
  if (experiment === undefined) throw new Error(`no experiment ${name}`);
  const agreement = agreementOf(name);
  const flags = ["--preset", "smoke", ...(agreement.flags ?? [])];
  webgpuTest(`${[name, ...flags].join(" ")}: webgpu agrees with wasm (seed 0)`, async () => {
    const root = Deno.makeTempDirSync();
    try {
      const run = async (backend: string): Promise<RunSummary> => {
        const invocation = parseInvocation(experiment, [
          ...flags,
          "--seed",
          "0",
          "--runs",
          root,
          "--backend",
          backend,
        ]);
        assert(invocation !== "help");
        const tensors = tf.memory().numTensors;
        const { summary } = await runExperiment(experiment, invocation, { report: () => {} });
        assertEquals(tf.memory().numTensors, tensors, `tensors left after the ${backend} run`);
        assertEquals(summary.backend, backend);
        return summary;
      };
      const wasm = await run("wasm");
      const webgpu = await run("webgpu");
      const { failures, largest } = compareRuns(wasm, webgpu, agreement);
      console.log(
        `${name}: wasm ${wasm.wall_time_s} s, webgpu ${webgpu.wall_time_s} s; ${
          Object.keys(wasm.metrics).length
        } metrics, largest difference ${largest?.difference.toExponential(2)} (${largest?.metric})`,
      );
      assertEquals(failures, [], `${name}: webgpu and wasm disagree`);
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  });
}
