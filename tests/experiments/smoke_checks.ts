/**
 * What every registered experiment's smoke preset must do, registered as tests by the smoke_*_test.ts files (each
 * takes a group of experiments, so that the groups run in parallel):
 *
 * - run in process, write a full summary with every target measured, leave no tensors behind, and give the metrics
 *   of fixtures/smoke_summaries.json (same seed, same numbers, to the bit, on the wasm backend): a refactor that
 *   changes a number shows here. A fixture entry is rewritten only when a change of numbers is intended, from
 *   `deno task run <name> --preset smoke --backend wasm --seed 0`, and the commit says why;
 * - interrupted at its first checkpoint and continued with `--resume`, end with exactly the numbers, curves, details
 *   and kept models of the same run left alone (where the experiment's own test does not already resume it at a
 *   harder point); where its phases can run in workers, this run uses `--workers 2`, so that it also shows that
 *   phase workers give the numbers of one (data-parallel workers change the float32 summation order, which
 *   tests/train/data_parallel_test.ts bounds).
 *
 * The run left alone is run once per experiment and shared by both checks. Smoke presets are tiny shapes,
 * seconds each: they prove that the pipeline is wired, not that it learns.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { RunInterrupted } from "../../lib/core/errors.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { safeModelName, savedModels } from "../../lib/core/run_checkpoints.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { readMetrics } from "../../lib/core/run_metrics.ts";
import { scoreVae } from "../../lib/metrics/score.ts";
import { WORKERS_CONFIG } from "../../lib/train/parallel_phases.ts";

const BEFORE: Record<string, { backend: string; seed: number; metrics: Record<string, number> }> = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/smoke_summaries.json", import.meta.url)),
);

/** Keys the refactor removed on purpose, with the reason. */
const REMOVED: Record<string, Record<string, string>> = {
  "vae-dsprites": { beta: "the config's β was reported as a metric for a claim; claims now read the config" },
};

await selectBackend("wasm");

/** Metrics without the wall times (`…/seconds`, `…/seconds_sd`), which no seed fixes. */
function withoutWallTime(metrics: Record<string, number>): Record<string, number> {
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

/** The flags of the run left alone: the fixture's backend and seed, and the code path it was written with. */
function straightArgs(experiment: Experiment, root: string): string[] {
  const before = BEFORE[experiment.name];
  assert(before, `no smoke fixture for ${experiment.name}: add it to fixtures/smoke_summaries.json`);
  const args = ["--preset", "smoke", "--runs", root, "--backend", before.backend, "--seed", String(before.seed)];
  return [...args, ...(AS_BEFORE[experiment.name] ?? [])];
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

const straightRuns = new Map<string, Promise<Outcome & { root: string }>>();

/** The run left alone, run once per experiment in this process and shared by every check (each may run alone). */
function straightRun(experiment: Experiment): Promise<Outcome & { root: string }> {
  let run = straightRuns.get(experiment.name);
  if (run === undefined) {
    const root = Deno.makeTempDirSync();
    run = runChecked(experiment, straightArgs(experiment, root)).then((outcome) => ({ ...outcome, root }));
    straightRuns.set(experiment.name, run);
  }
  return run;
}

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

/**
 * Experiments without phase workers whose own test stops a run at a harder point and resumes it to every metric of
 * an uninterrupted run: the interrupted-and-resumed check here would repeat it. (Experiments with phase workers take
 * the check with `--workers 2`, which proves what their own test does not.)
 */
const RESUMED_IN_OWN_TEST: Record<string, string> = {
  "pose-ood": "pose_ood_test.ts: killed inside the pretrained net's training",
};

/** Registers the smoke checks of the experiments named in `names`. */
export function smokeChecks(names: readonly string[]): void {
  for (const name of names) {
    const experiment = EXPERIMENTS.find((e) => e.name === name);
    if (experiment === undefined) throw new Error(`no experiment ${name}`);
    straightCheck(experiment);
    if (experiment.config.workers === WORKERS_CONFIG.workers) resumeCheck(experiment, ["--workers", "2"]);
    else if (!WITHOUT_CHECKPOINTS.has(experiment.name) && !(experiment.name in RESUMED_IN_OWN_TEST)) {
      resumeCheck(experiment, []);
    }
  }
}

function straightCheck(experiment: Experiment): void {
  Deno.test(`${experiment.name} --preset smoke: full summary, no tensors left, the numbers of before, kept models re-score the same`, async () => {
    const before = BEFORE[experiment.name];
    const { dir, summary, root } = await straightRun(experiment);

    const [run] = listRuns(root);
    assertEquals([run.dir, run.status], [dir, "completed"]);
    assert(readMetrics(dir).rows.length > 0, "metrics were logged");
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

    if (experiment.load) await rescoreKeptModel(experiment, dir, summary.metrics, summary.details);
  });
}

/**
 * Interrupted at its first checkpoint and continued with `--resume`, a run ends with the numbers, curves, details and
 * kept models of the run left alone. With `--workers 2` the same run also shows that phases in workers give the
 * numbers of one worker (one run proves both: each check costs a whole smoke run).
 */
function resumeCheck(experiment: Experiment, extraArgs: string[]): void {
  const flags = extraArgs.length > 0 ? ` ${extraArgs.join(" ")}` : "";
  Deno.test(`${experiment.name} --preset smoke${flags}: interrupted at its first checkpoint and resumed, the numbers and kept models of the run left alone`, async () => {
    const straight = await straightRun(experiment);
    const first = parseInvocation(experiment, [...straightArgs(experiment, Deno.makeTempDirSync()), ...extraArgs]);
    assert(first !== "help");
    const tensors = tf.memory().numTensors;
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

    const resume = parseInvocation(experiment, ["--resume", dir, "--backend", BEFORE[experiment.name].backend]);
    assert(resume !== "help");
    const resumed = await runExperiment(experiment, resume, { report: () => {} });
    assertEquals(readRunInfo(dir).resumes?.map((r) => r.step), checkpoints);
    assertEquals(reproducible(resumed.summary), reproducible(straight.summary));
    assertEquals(tf.memory().numTensors, tensors, "tensors left after the interrupted and the resumed run");
    await sameKeptModels(experiment, resumed, straight);
  });
}

/** The kept models of `ours` are those of `straight`, and read back they score what `ours` reported. */
async function sameKeptModels(experiment: Experiment, ours: Outcome, straight: Outcome): Promise<void> {
  assertEquals(savedModels(ours.dir), savedModels(straight.dir));
  if (experiment.load && savedModels(straight.dir).length > 0) {
    await rescoreKeptModel(experiment, ours.dir, ours.summary.metrics, ours.summary.details);
  }
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
  ["abs-mnist", "bn-adapt", "ccc-mini", "two-point", "collapse-toy"],
  ["cebra-synthetic", "cebra-place-cells", "regcl-attribution", "cl-ica", "ica-toy", "pose-ood"],
  ["noise-train-mnist", "self-learning", "vae-pca", "vae-manipulation", "spheres-invariance", "mnist-invariance"],
];
