/**
 * What every registered experiment's smoke preset must do, registered as tests by the smoke_*_test.ts files (each
 * takes a group of experiments, so that the groups run in parallel). One run per experiment, the hardest way it can
 * be run: interrupted at its first checkpoint and continued with `--resume`, with `--workers 2` where its phases can
 * run in workers (data-parallel workers change the float32 summation order, which tests/train/data_parallel_test.ts
 * bounds). That run must
 *
 * - write a full summary with every target measured and leave no tensors behind;
 * - give the metrics and learning curves of fixtures/smoke_summaries.json, which hold those of the same seed's run
 *   left alone, in one process, on the wasm backend: to the bit. So a refactor that changes a number shows here, and
 *   so does a resume or a worker that does not continue exactly where the run left off (a failure here that a
 *   straight `deno task run <name> --preset smoke --backend wasm --seed 0` does not show is the resume's or the
 *   workers'). A fixture entry is rewritten only when a change of numbers is intended, by
 *   `deno run -A tests/experiments/fixtures/write_smoke_summary.ts <name>`, and the commit says why;
 * - keep models that, read back, score what the run reported.
 *
 * Smoke presets are tiny shapes, seconds each: they prove that the pipeline is wired, not that it learns.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { runStoppedAtCheckpoint } from "./cli.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { safeModelName, savedModels } from "../../lib/core/run_checkpoints.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { readMetrics } from "../../lib/core/run_metrics.ts";
import { scoreVae } from "../../lib/metrics/score.ts";
import { WORKERS_CONFIG } from "../../lib/train/parallel_phases.ts";

/** Per experiment: the metrics and target curves (curve metric → [step, value] points) of its smoke run. */
const BEFORE: Record<
  string,
  { backend: string; seed: number; metrics: Record<string, number>; curves: Record<string, [number, number | null][]> }
> = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/smoke_summaries.json", import.meta.url)),
);

/** Keys the refactor removed on purpose, with the reason. */
const REMOVED: Record<string, Record<string, string>> = {
  "vae-dsprites": { beta: "the config's β was reported as a metric for a claim; claims now read the config" },
};

await selectBackend("wasm");

/** Metrics without the wall times (`…/seconds`, `…/seconds_sd`), which no seed fixes. */
export function withoutWallTime(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([key]) => !/(^|\/)seconds(_sd)?$/.test(key)));
}

/** Flags that select the code path a fixture was written with, where a later default changed it. */
const AS_BEFORE: Record<string, string[]> = {
  // The reference-code data generator became the default; the fixture holds the first generator's numbers.
  "ica-toy": ["--generator", "legacy"],
};

/**
 * Keys that compare settings with each other (selection by UDR across settings): the smoke presets of the pair
 * studies gained settings so that they produce every target, which changes these and nothing else.
 */
const ACROSS_SETTINGS: Record<string, RegExp> = {
  "slowvae-dsprites": /^selection\//,
  "slowvae-kitti": /^selection\//,
};

/**
 * Keys whose value changed on purpose, with the reason and the largest relative change allowed. The variance of
 * the posterior means became the sample variance (n − 1) with every other s.d. of the toolkit: at the smoke
 * preset's 200 evaluation samples that moves σ_rel by less than 1/100 of its value.
 */
const CHANGED: Record<string, { pattern: RegExp; relative: number }> = {
  "vae-collapse-toy": { pattern: /^sigma_minor_rel\//, relative: 1e-2 },
};

/**
 * Targets measured only at the end: the interventional scores (each encodes thousands of image batches), the
 * comparisons across a study's models, noise-train-mnist's attacks, ε* and mCE of each fine-tuned model and
 * the post-hoc nuisance classifiers, trained on a finished fiRevNet's z_n.
 */
const END_ONLY =
  /(^|\/)(beta_vae_score|factor_vae_score|l2_acc_1\.5|linf_acc_0\.1|eps_an_over_gn|relative_mce)$|^selection\/|\/nuisance_(train_err|test_err)$/;
/**
 * Experiments whose targets are all measured after training: abs-mnist's Table 1 cells are medians over the attacked
 * digits of trained models (its runs log their running values per chunk of digits, which are no learning curve).
 */
const ALL_END_ONLY = new Set(["abs-mnist"]);

type Experiment = typeof EXPERIMENTS[number];
type Outcome = { dir: string; summary: RunSummary };

/** The flags of a smoke run of experiment `name` under `root`, on the code path its fixture was written with. */
export function smokeArgs(name: string, root: string, backend = "wasm", seed = 0): string[] {
  const args = ["--preset", "smoke", "--runs", root, "--backend", backend, "--seed", String(seed)];
  return [...args, ...(AS_BEFORE[name] ?? [])];
}

/** The flags of the run the fixture holds: its backend and seed. */
function straightArgs(experiment: Experiment, root: string): string[] {
  const before = BEFORE[experiment.name];
  assert(before, `no smoke fixture for ${experiment.name}: add it to fixtures/smoke_summaries.json`);
  return smokeArgs(experiment.name, root, before.backend, before.seed);
}

/** Runs `experiment` with `args` in process and checks that it leaves no tensors behind. */
async function runChecked(experiment: Experiment, args: string[]): Promise<Outcome> {
  const invocation = parseInvocation(experiment, args);
  assert(invocation !== "help");
  const tensors = tf.memory().numTensors;
  const outcome = await runExperiment(experiment, invocation, { report: () => {} });
  assertEquals(tf.memory().numTensors, tensors, "tensors left after the run");
  return outcome;
}

/**
 * Pure-JS toys that keep no checkpoint: two-point's quick run takes about 16 s and collapse-toy's about 80 s on two
 * cores, so a stopped run is started again rather than resumed.
 */
const WITHOUT_CHECKPOINTS = new Set(["two-point", "collapse-toy"]);

/**
 * Experiments without phase workers whose own test stops a run at a harder point and resumes it to every metric of
 * an uninterrupted run: here they run left alone. (Experiments with phase workers are interrupted and resumed here
 * with `--workers 2`, which their own test does not do.)
 */
const RESUMED_IN_OWN_TEST: Record<string, string> = {
  "pose-ood": "pose_ood_test.ts: killed inside the pretrained net's training",
};

/** Registers the smoke checks of the experiments named in `names`. */
export function smokeChecks(names: readonly string[]): void {
  for (const name of names) {
    const experiment = EXPERIMENTS.find((e) => e.name === name);
    if (experiment === undefined) throw new Error(`no experiment ${name}`);
    smokeCheck(experiment);
  }
}

function smokeCheck(experiment: Experiment): void {
  const flags = experiment.config.workers === WORKERS_CONFIG.workers ? ["--workers", "2"] : [];
  const resumed = !WITHOUT_CHECKPOINTS.has(experiment.name) && !(experiment.name in RESUMED_IN_OWN_TEST);
  const how = resumed ? "interrupted at its first checkpoint and resumed" : "left alone";
  Deno.test(`${[experiment.name, "--preset smoke", ...flags].join(" ")}, ${how}: full summary, no tensors left, the numbers and curves of before, kept models re-score the same`, async () => {
    const root = Deno.makeTempDirSync();
    try {
      const args = [...straightArgs(experiment, root), ...flags];
      const { dir, summary } = resumed
        ? await interruptedAndResumed(experiment, args)
        : await runChecked(experiment, args);
      const [run] = listRuns(root);
      assertEquals([run.dir, run.status], [dir, "completed"]);
      assert(readMetrics(dir).rows.length > 0, "metrics were logged");
      checkSummary(experiment, summary);
      if (experiment.load) await rescoreKeptModel(experiment, dir, summary.metrics, summary.details);
    } finally {
      Deno.removeSync(root, { recursive: true });
    }
  });
}

/** Runs `experiment` with `args`, stops it at its first checkpoint and resumes it; leaves no tensors behind. */
async function interruptedAndResumed(experiment: Experiment, args: string[]): Promise<Outcome> {
  const tensors = tf.memory().numTensors;
  const { dir, checkpoints } = await runStoppedAtCheckpoint(experiment, args, 1);
  const resume = parseInvocation(experiment, ["--resume", dir, "--backend", BEFORE[experiment.name].backend]);
  assert(resume !== "help");
  const outcome = await runExperiment(experiment, resume, { report: () => {} });
  assertEquals(readRunInfo(dir).resumes?.map((r) => r.step), checkpoints);
  assertEquals(tf.memory().numTensors, tensors, "tensors left after the interrupted and the resumed run");
  return outcome;
}

/** Every target measured, with its curve, and the metrics and curves of the fixture. */
function checkSummary(experiment: Experiment, summary: RunSummary): void {
  const before = BEFORE[experiment.name];
  for (const value of Object.values(summary.metrics)) assert(Number.isFinite(value), JSON.stringify(summary.metrics));
  assert(summary.source.length > 0 && summary.targets.every((t) => t.source && t.direction));
  // The smoke preset measures every published number the experiment is compared with.
  assertEquals(summary.targets.map((t) => t.metric), experiment.targets.map((t) => t.metric), "targets left out");
  assertEquals(summary.targets.filter((t) => t.ours === null).map((t) => t.metric), [], "targets not measured");
  // Every target measured during training has its learning curve, ending at the last step.
  const withoutCurve = summary.targets.filter((t) =>
    !ALL_END_ONLY.has(experiment.name) && !END_ONLY.test(t.metric) && (t.curve?.points.length ?? 0) < 2
  );
  assertEquals(withoutCurve.map((t) => t.metric), [], "targets without a learning curve");

  const removed = REMOVED[experiment.name] ?? {};
  const expected = Object.fromEntries(Object.entries(before.metrics).filter(([key]) => !(key in removed)));
  const changed = CHANGED[experiment.name];
  const [ours, theirs] = [withoutWallTime(summary.metrics), withoutWallTime(expected)];
  assertEquals(Object.keys(theirs).filter((key) => !(key in ours)), [], "keys of before missing now");
  for (const [key, value] of Object.entries(theirs)) {
    if (ACROSS_SETTINGS[experiment.name]?.test(key)) continue;
    if (changed?.pattern.test(key)) {
      assert(Math.abs(ours[key] - value) <= changed.relative * Math.abs(value), `${key}: ${ours[key]} vs ${value}`);
    } else assertEquals(ours[key], value, key);
  }
  assertEquals(targetCurves(summary), before.curves, "the targets' learning curves");
}

/** The targets' learning curves as fixtures/smoke_summaries.json holds them (JSON: NaN as null). */
export function targetCurves(summary: RunSummary): Record<string, [number, number | null][]> {
  const curves = summary.targets.flatMap((t) => t.curve ? [[t.curve.metric, t.curve.points] as const] : []);
  return JSON.parse(JSON.stringify(Object.fromEntries(curves)));
}

/**
 * A kept model read back through the experiment's `load` scores exactly what
 * the run reported for it (the same seed-derived samples), and a run keeping
 * several refuses to guess which one is meant.
 */
async function rescoreKeptModel(
  experiment: Experiment,
  dir: string,
  metrics: Record<string, number>,
  details: unknown,
) {
  const names = savedModels(dir);
  assert(names.length > 0, "the run kept its models");
  let reported = metrics;
  if (names.length > 1) {
    assertThrows(() => experiment.load!(dir), UsageError, "choose one with --model");
    const models =
      (details as { models: { method: string; value: number; seed: number; metrics: Record<string, number> }[] })
        .models;
    const model = models.find((m) =>
      [`${m.method}@${m.value}-seed${m.seed}`, `${m.method}-seed${m.seed}`].map(safeModelName).includes(names[0])
    );
    assert(model, `no model of the summary is called ${names[0]}`);
    reported = model.metrics;
  }
  const tensors = tf.memory().numTensors;
  const trained = experiment.load!(dir, names.length > 1 ? names[0] : undefined);
  const { metrics: rescored } = await scoreVae(trained.encoder, trained.dataset, trained.scoring, trained.seed);
  trained.dispose();
  assertEquals(tf.memory().numTensors, tensors);
  const shared = Object.keys(rescored).filter((key) => key in reported);
  assert(shared.includes("mig") || shared.includes("mcc"), shared.join(", "));
  // As summary.json holds them: a resumed run reads its finished models' metrics back from JSON (NaN as null).
  const [ours, theirs] = [rescored, reported].map((values) => JSON.parse(JSON.stringify(values)));
  for (const key of shared) assertEquals(ours[key], theirs[key], key);
}

/**
 * The experiments of each smoke_<n>_test.ts, grouped so that the files take similar times: each file runs its
 * group's smoke checks one after another, and the files run in parallel.
 */
export const SMOKE_GROUPS: readonly (readonly string[])[] = [
  ["gen-benchmark", "vae-dsprites", "dislib-study", "slowvae-dsprites", "slowvae-kitti", "vae-collapse-toy"],
  ["abs-mnist", "ccc-mini", "two-point", "collapse-toy", "vae-pca", "mnist-invariance"],
  ["cebra-synthetic", "cebra-place-cells", "regcl-attribution", "cl-ica", "ica-toy", "pose-ood", "vae-manipulation"],
  ["noise-train-mnist", "bn-adapt", "self-learning", "spheres-invariance"],
];
