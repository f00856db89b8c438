/**
 * The study behind the bn-adapt experiment (Schneider2023 Ch. 2, App. A): its phases (each test or
 * dev corruption at every severity, a mixed and a clean control), the evaluation of one (corruption, severity)
 * under every adaptation mode, the run in this process or in workers, and the tables it prints.
 *
 * @module
 */
import type { RunContext, RunResult } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { fullStats } from "../adapt/bn_adapt.ts";
import {
  type Cell,
  devMetrics,
  gridCellKey,
  gridKey,
  type GridOptions,
  gridPriors,
  groupedAccuracy,
  type PartialOptions,
  relativeMceOf,
  TEST_MODES,
  testMetrics,
  type TestMode,
} from "../adapt/bn_adapt_study.ts";
import { loadSourceModel } from "../train/source_training.ts";
import {
  type LoadedSourceModel,
  SOURCE_ARCHS,
  type SourceArch,
  type SourceClassifier,
  type SourceTraining,
} from "../adapt/source_model.ts";
import { corrupt, CORRUPTION_NOTES, type CorruptionName, defaultTable, type Severity } from "../data/corruptions.ts";
import { loadMnist, MNIST_SIDE } from "../data/mnist.ts";
import { w2, w2Normalized } from "../metrics/robustness.ts";
import { type NormStats, sourceStats } from "../models/bn_cnn.ts";
import { runPhasesOn, type WorkerPhase, workerPhaseOptions } from "../train/parallel_phases.ts";
import type { PhaseOutcome } from "../train/phases.ts";

const PIXELS = MNIST_SIDE * MNIST_SIDE;
const IMAGE_SHAPE: [number, number, number] = [MNIST_SIDE, MNIST_SIDE, 1];

/** The experiment's config as the study reads it (each key is documented where the experiment declares it). */
export type BnAdaptConfig =
  & PartialOptions
  & GridOptions
  & { corruptions: CorruptionName[]; dev_corruptions: CorruptionName[]; severities: number[]; clean: boolean }
  & Record<
    "train_digits" | "test_digits" | "digits" | "epochs" | "lr" | "batch" | "adhoc_n" | "adhoc_N" | "mixed_digits",
    number
  >
  & { workers: number };
type Cfg = BnAdaptConfig;

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * A phase of the run: one test or dev corruption at every severity, or a control. `step` is the run's step before
 * its first cell (the cells of the plan are numbered 1, 2, … in order, the controls after them).
 */
type Unit =
  | { kind: "test" | "dev"; corruption: CorruptionName; step: number }
  | { kind: "mixed" | "clean"; step: number };

/** What a phase gives back: its cells, or a control's numbers. */
interface UnitResult {
  cells: Cell[];
  controls: Record<string, number>;
}

/** The run's phases in order: test corruptions, dev corruptions, the mixed and the clean control. */
function planOf(cfg: Cfg): Unit[] {
  const units: Unit[] = [];
  let step = 0;
  for (const [kind, names] of [["test", cfg.corruptions], ["dev", cfg.dev_corruptions]] as const) {
    for (const corruption of names) {
      units.push({ kind, corruption: corruption as CorruptionName, step });
      step += cfg.severities.length;
    }
  }
  if (cfg.mixed_digits > 0) units.push({ kind: "mixed", step: step++ });
  if (cfg.clean) units.push({ kind: "clean", step: step++ });
  return units;
}

/** W₂² and W̃₂² between two sets of BN statistics, each averaged over the layers. */
function distances(source: NormStats, target: NormStats): { w2: number; w2_normalized: number } {
  const layers = source.mean.length;
  let plain = 0, normalized = 0;
  for (let l = 0; l < layers; l++) {
    const args = [source.mean[l], source.variance[l], target.mean[l], target.variance[l]] as const;
    plain += w2(...args);
    normalized += w2Normalized(...args);
  }
  return { w2: plain / layers, w2_normalized: normalized / layers };
}

/** Images and labels reordered by `order`. */
function reorder(images: Float32Array, labels: Int32Array, order: ArrayLike<number>) {
  const outImages = new Float32Array(order.length * PIXELS), outLabels = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    outImages.set(images.subarray(order[i] * PIXELS, (order[i] + 1) * PIXELS), i * PIXELS);
    outLabels[i] = labels[order[i]];
  }
  return { images: outImages, labels: outLabels };
}

/**
 * Digits `indices` (ascending) of `digits` under a corruption, each exactly as in the whole set's corruption
 * (image i draws from its own generator, `firstIndex` keeps its index): consecutive indices go in one call.
 */
function corruptDigits(
  digits: Float32Array,
  indices: readonly number[],
  name: CorruptionName,
  severity: number,
  seed: number,
): Float32Array {
  const out = new Float32Array(indices.length * PIXELS);
  for (let start = 0; start < indices.length;) {
    let end = start + 1;
    while (end < indices.length && indices[end] === indices[end - 1] + 1) end++;
    const first = indices[start], n = end - start;
    const run = { values: digits.subarray(first * PIXELS, (first + n) * PIXELS), n, shape: IMAGE_SHAPE };
    out.set(corrupt(run, name, severity as Severity, { seed, firstIndex: first }).values, start * PIXELS);
    start = end;
    stopPoint();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

/** The four models of a run and the BN model's source statistics. */
interface Models {
  bn: SourceClassifier;
  gn: SourceClassifier;
  mlp: SourceClassifier;
  source: NormStats;
}

/** The source training of a config and run seed. */
function trainingOf(seed: number, cfg: Cfg): SourceTraining {
  return { trainDigits: cfg.train_digits, seed, epochs: cfg.epochs, lr: cfg.lr, batch: cfg.batch };
}

/** Trains (or loads from the cache) the BN model, the GN twin and the MLP; `log` receives training losses. */
async function loadModels(
  seed: number,
  cfg: Cfg,
  options: { signal?: AbortSignal; log?: (step: number, values: Record<string, number>) => void } = {},
): Promise<{ models: Models; loaded: LoadedSourceModel[] }> {
  const loaded: LoadedSourceModel[] = [];
  try {
    for (const arch of SOURCE_ARCHS) {
      const model = await loadSourceModel(arch, trainingOf(seed, cfg), {
        signal: options.signal,
        onEpoch: (epoch, loss) => options.log?.(epoch + 1, { [`source/${arch}/loss`]: loss }),
      });
      loaded.push(model);
      if (options.log) {
        console.error(
          `source ${arch}: ${model.key} ${
            model.fromCache ? "from the cache" : `trained in ${model.trainSeconds.toFixed(1)} s`
          }, clean train accuracy ${model.cleanTrainAccuracy.toFixed(4)}`,
        );
      }
    }
    const [bn, gn, mlp] = loaded.map((l) => l.model);
    return { models: { bn, gn, mlp, source: await sourceStats(bn.net!) }, loaded };
  } catch (error) {
    for (const model of loaded) model.model.dispose();
    throw error;
  }
}

/** A worker's models, loaded from the cache the run's process filled, kept for the worker's later phases. */
let workerModels: { key: string; models: Promise<Models> } | null = null;

/** Digits of a run: the first `digits` of the test part, images and labels. */
interface Digits {
  images: Float32Array;
  labels: Int32Array;
}

let digitsCache: { key: string; digits: Digits } | null = null;

/** The run's test digits (once per process): the first `digits` of the seeded, shuffled test part. */
function testDigitsOf(seed: number, cfg: Cfg): Digits {
  const key = JSON.stringify([seed, cfg.train_digits, cfg.test_digits, cfg.digits]);
  if (digitsCache?.key !== key) {
    const { test } = loadMnist({ seed, train: cfg.train_digits, test: cfg.test_digits });
    const digits = { images: test.images.slice(0, cfg.digits * PIXELS), labels: test.labels.slice(0, cfg.digits) };
    digitsCache = { key, digits };
  }
  return digitsCache.digits;
}

/** Evaluates one (corruption, severity) of the test or the dev corruptions. */
async function evaluateCell(
  ctx: RunContext,
  cfg: Cfg,
  models: Models,
  digits: Digits,
  split: "test" | "dev",
  corruption: CorruptionName,
  severity: number,
  cellStep: number,
): Promise<Cell> {
  const count = digits.labels.length;
  const corrupted = corrupt(
    { values: digits.images, n: count, shape: IMAGE_SHAPE },
    corruption,
    severity as Severity,
    { seed: ctx.seed },
  ).values;
  // The prior's groups are drawn from shuffled images (App. A: marginalised over classes).
  const order = Rng.derive(ctx.seed, "bn-adapt/order", corruption, severity).permutation(count);
  const { images, labels } = reorder(corrupted, digits.labels, order);
  const { bn, mlp } = models;
  const acc: Record<string, number> = {};
  const step = () => ctx.stopRequested.throwIfAborted();
  acc.none = await groupedAccuracy(bn, images, labels);
  acc.mlp = await groupedAccuracy(mlp, images, labels);
  step();
  const stats = await fullStats(bn.net!, images, count);
  acc.full = await groupedAccuracy(bn, images, labels, { kind: "fixed", stats });
  step();
  if (split === "test") {
    acc.partial = await groupedAccuracy(bn, images, labels, { kind: "prior", N: cfg.partial_N, n: cfg.partial_n });
    step();
    acc.adhoc = await groupedAccuracy(bn, images, labels, { kind: "prior", N: cfg.adhoc_N, n: cfg.adhoc_n });
    step();
    acc.gn = await groupedAccuracy(models.gn, images, labels);
  } else {
    for (const n of cfg.grid_n) {
      for (const N of gridPriors(cfg)) {
        step();
        // N = ∞ is the source statistics: the unadapted model's numbers.
        acc[gridCellKey(n, N)] = N === Infinity
          ? acc.none
          : await groupedAccuracy(bn, images, labels, { kind: "prior", N, n });
      }
    }
  }
  return { split, corruption, severity, step: cellStep, accuracy: acc, ...distances(models.source, stats) };
}

/**
 * The mixed control: `mixed_digits` (test corruption, severity, digit) triples drawn without replacement, each image
 * as its cell has it, in the draw's order; errors without adaptation and with full statistics of the whole set.
 */
async function mixedControl(
  ctx: RunContext,
  cfg: Cfg,
  models: Models,
  digits: Digits,
): Promise<Record<string, number>> {
  const corruptions = cfg.corruptions as CorruptionName[];
  const perCorruption = cfg.severities.length * cfg.digits;
  const total = corruptions.length * perCorruption;
  const drawn = Rng.derive(ctx.seed, "bn-adapt/mixed").permutation(total).subarray(0, cfg.mixed_digits);
  // Per (corruption, severity): the drawn digits in ascending order and where each goes in the mixed set.
  const wanted = new Map<number, { digit: number; slot: number }[]>();
  drawn.forEach((triple, slot) => {
    const cell = Math.floor(triple / cfg.digits);
    (wanted.get(cell) ?? wanted.set(cell, []).get(cell)!).push({ digit: triple % cfg.digits, slot });
  });
  const images = new Float32Array(drawn.length * PIXELS), labels = new Int32Array(drawn.length);
  for (const [cell, picks] of [...wanted].sort((a, b) => a[0] - b[0])) {
    ctx.stopRequested.throwIfAborted();
    picks.sort((a, b) => a.digit - b.digit);
    const corruption = corruptions[Math.floor(cell / cfg.severities.length)];
    const severity = cfg.severities[cell % cfg.severities.length];
    const values = corruptDigits(digits.images, picks.map((p) => p.digit), corruption, severity, ctx.seed);
    picks.forEach(({ digit, slot }, i) => {
      images.set(values.subarray(i * PIXELS, (i + 1) * PIXELS), slot * PIXELS);
      labels[slot] = digits.labels[digit];
    });
  }
  const none = await groupedAccuracy(models.bn, images, labels);
  ctx.stopRequested.throwIfAborted();
  const stats = await fullStats(models.bn.net!, images, drawn.length);
  const full = await groupedAccuracy(models.bn, images, labels, { kind: "fixed", stats });
  return {
    "bn/mixed/err_none": 1 - none,
    "bn/mixed/err_full": 1 - full,
    "bn/mixed/gain": full - none,
    "bn/mixed/w2": distances(models.source, stats).w2,
  };
}

/** The clean control: the clean test digits (shuffled) under each mode of the test corruptions. */
async function cleanControl(
  ctx: RunContext,
  cfg: Cfg,
  models: Models,
  digits: Digits,
): Promise<Record<string, number>> {
  const order = Rng.derive(ctx.seed, "bn-adapt/order", "clean").permutation(digits.labels.length);
  const { images, labels } = reorder(digits.images, digits.labels, order);
  const stats = await fullStats(models.bn.net!, images, labels.length);
  ctx.stopRequested.throwIfAborted();
  const out: Record<string, number> = {
    "clean/bn_err_none": 1 - await groupedAccuracy(models.bn, images, labels),
    "clean/bn_err_full": 1 - await groupedAccuracy(models.bn, images, labels, { kind: "fixed", stats }),
    "clean/bn_err_partial": 1 -
      await groupedAccuracy(models.bn, images, labels, { kind: "prior", N: cfg.partial_N, n: cfg.partial_n }),
    "clean/bn_err_adhoc": 1 -
      await groupedAccuracy(models.bn, images, labels, { kind: "prior", N: cfg.adhoc_N, n: cfg.adhoc_n }),
    "clean/gn_err": 1 - await groupedAccuracy(models.gn, images, labels),
    "clean/mlp_err": 1 - await groupedAccuracy(models.mlp, images, labels),
    "clean/w2": distances(models.source, stats).w2,
  };
  return out;
}

/** The numbers of a cell logged as it finishes (the running mCE and gains are logged at the end, in plan order). */
function cellValues(cell: Cell): Record<string, number> {
  const values: Record<string, number> = {};
  for (const [mode, acc] of Object.entries(cell.accuracy)) {
    if (!mode.includes("/")) values[`${cell.split}_cell/err_${mode}`] = 1 - acc;
  }
  values[`${cell.split}_cell/w2`] = cell.w2;
  return values;
}

/** Runs one phase: a corruption at every severity, or a control. */
async function runUnit(ctx: RunContext, cfg: Cfg, unit: Unit, models: Models): Promise<UnitResult> {
  const digits = testDigitsOf(ctx.seed, cfg);
  if (!("corruption" in unit)) {
    const controls = unit.kind === "mixed"
      ? await mixedControl(ctx, cfg, models, digits)
      : await cleanControl(ctx, cfg, models, digits);
    ctx.log(unit.step + 1, controls);
    return { cells: [], controls };
  }
  const cells: Cell[] = [];
  const progress = ctx.progress(`${unit.kind} ${unit.corruption}`, cfg.severities.length);
  for (const [i, severity] of cfg.severities.entries()) {
    ctx.stopRequested.throwIfAborted();
    const cell = await evaluateCell(ctx, cfg, models, digits, unit.kind, unit.corruption, severity, unit.step + i + 1);
    ctx.log(cell.step, cellValues(cell));
    cells.push(cell);
    progress.update(i + 1);
  }
  return { cells, controls: {} };
}

/** A phase as a worker runs it (lib/train/parallel_phases.ts): the models come from the cache. */
export const workerPhase: WorkerPhase<Cfg, Unit, UnitResult> = async (
  ctx,
  cfg,
  unit,
): Promise<PhaseOutcome<UnitResult>> => {
  const key = JSON.stringify([ctx.seed, trainingOf(ctx.seed, cfg)]);
  if (workerModels?.key !== key) {
    workerModels = { key, models: loadModels(ctx.seed, cfg).then((loaded) => loaded.models) };
  }
  return { result: await runUnit(ctx, cfg, unit, await workerModels.models) };
};

/** A phase's relative cost (forward passes over its images), so the costliest start first. */
function unitCost(cfg: Cfg, unit: Unit): number {
  switch (unit.kind) {
    case "test":
      return 7 * cfg.severities.length;
    case "dev":
      return (4 + cfg.grid_n.length * cfg.grid_N.length) * cfg.severities.length;
    case "mixed":
      return 4 * cfg.mixed_digits / cfg.digits;
    case "clean":
      return 8;
  }
}

// ---------------------------------------------------------------------------------------------
// Tables

const fixed = (v: number | undefined, digits = 3) => v === undefined ? "—" : v.toFixed(digits);

function modeLabel(mode: TestMode, cfg: Cfg): string {
  switch (mode) {
    case "none":
      return "BN, source statistics";
    case "partial":
      return `BN, n ${cfg.partial_n} N ${cfg.partial_N}`;
    case "full":
      return "BN, full statistics";
    case "adhoc":
      return `BN, n ${cfg.adhoc_n} N ${cfg.adhoc_N}`;
    case "gn":
      return "GN twin";
    case "mlp":
      return "MLP (reference)";
  }
}

/** Per mode: relative mCE, mean error and mean error per severity over the test corruptions. */
function modeRows(cells: readonly Cell[], cfg: Cfg) {
  return TEST_MODES.map((mode) => ({
    mode: modeLabel(mode, cfg),
    relative_mce: relativeMceOf(cells, mode).mce,
    error: 1 - mean(cells.map((c) => c.accuracy[mode])),
    error_by_severity: Object.fromEntries(
      cfg.severities.map((s) => [s, 1 - mean(cells.filter((c) => c.severity === s).map((c) => c.accuracy[mode]))]),
    ),
  }));
}

function printTables(test: readonly Cell[], dev: readonly Cell[], m: Record<string, number>, cfg: Cfg): void {
  const lines: string[] = [];
  if (test.length) {
    lines.push("test corruptions: relative mCE (MLP = 1) and top-1 error");
    lines.push(
      `${"mode".padEnd(24)} ${"rel.mCE".padStart(7)} ${"error".padStart(6)} ` +
        cfg.severities.map((s) => `sev ${s}`.padStart(6)).join(" "),
    );
    for (const row of modeRows(test, cfg)) {
      lines.push(
        `${row.mode.padEnd(24)} ${fixed(row.relative_mce).padStart(7)} ${fixed(row.error).padStart(6)} ` +
          cfg.severities.map((s) => fixed(row.error_by_severity[s]).padStart(6)).join(" "),
      );
    }
    lines.push("", "per corruption: CE relative to the MLP");
    lines.push(
      `${"corruption".padEnd(18)} ${TEST_MODES.filter((x) => x !== "mlp").map((x) => x.padStart(7)).join(" ")}`,
    );
    const ce = Object.fromEntries(TEST_MODES.map((mode) => [mode, relativeMceOf(test, mode).ce]));
    for (const c of cfg.corruptions) {
      if (!test.some((cell) => cell.corruption === c)) continue;
      lines.push(
        `${c.padEnd(18)} ${TEST_MODES.filter((x) => x !== "mlp").map((x) => fixed(ce[x][c]).padStart(7)).join(" ")}`,
      );
    }
  }
  if (dev.length) {
    lines.push("", `dev corruptions (${cfg.dev_corruptions.join(", ")}): relative mCE, rows n, columns N`);
    const priors = gridPriors(cfg);
    lines.push(`${"n \\ N".padEnd(6)} ${priors.map((N) => String(N === Infinity ? "∞" : N).padStart(7)).join(" ")}`);
    for (const n of cfg.grid_n) {
      lines.push(`${String(n).padEnd(6)} ${priors.map((N) => fixed(m[gridKey(n, N)]).padStart(7)).join(" ")}`);
    }
    lines.push(`full statistics: ${fixed(m["bn/dev_mce_full"])}; best finite N ≥ 1 at n = 1: ${m["bn/best_N_n1"]}`);
  }
  if (m["bn/mixed/gain"] !== undefined) {
    lines.push(
      "",
      `mixed control: error ${fixed(m["bn/mixed/err_none"])} → ${fixed(m["bn/mixed/err_full"])} (gain ${
        fixed(m["bn/mixed/gain"])
      }); per corruption: gain ${fixed(m["bn/per_corruption_gain"])}`,
    );
  }
  if (m["clean/bn_err_none"] !== undefined) {
    lines.push(
      `clean control: BN error ${fixed(m["clean/bn_err_none"])} → full ${fixed(m["clean/bn_err_full"])}, partial ${
        fixed(m["clean/bn_err_partial"])
      }; GN ${fixed(m["clean/gn_err"])}; MLP ${fixed(m["clean/mlp_err"])}`,
    );
  }
  if (m["bn/r_w2_error"] !== undefined) {
    lines.push(
      `Pearson r of W₂ (mean over BN layers) with the unadapted error over the test cells: ${
        fixed(m["bn/r_w2_error"])
      } (W̃₂: ${fixed(m["bn/r_w2n_error"])})`,
    );
  }
  console.log(lines.join("\n"));
}

/**
 * The study's run: the source models (trained or read from the cache), every phase in this process or
 * `cfg.workers` at a time in workers, the running and final metrics, the printed tables and the summary's details.
 */
export async function runBnAdapt(ctx: RunContext, cfg: Cfg): Promise<RunResult> {
  const units = planOf(cfg);
  // Trained here (or read from the cache) before any phase, so that workers only read the cache.
  const { models, loaded } = await loadModels(ctx.seed, cfg, { signal: ctx.stopRequested, log: ctx.log });
  let results: UnitResult[];
  try {
    ({ results } = await runPhasesOn<Cfg, Unit, UnitResult>(
      ctx,
      units,
      async (unit) => ({ result: await runUnit(ctx, cfg, unit, models) }),
      {
        parallel: workerPhaseOptions(import.meta.url, cfg, (unit: Unit) => unitCost(cfg, unit)),
      },
    ));
  } finally {
    for (const model of loaded) model.model.dispose();
  }
  const cells = results.flatMap((r) => r.cells);
  const cellsOf = (split: "test" | "dev") => cells.filter((c) => c.split === split);
  // The running numbers after each cell, in plan order: the targets' curves, the same with any number of workers.
  for (const split of ["test", "dev"] as const) {
    const done = cellsOf(split);
    done.forEach((cell, i) => {
      const soFar = done.slice(0, i + 1);
      ctx.log(cell.step, split === "test" ? testMetrics(soFar, cfg) : devMetrics(soFar, cfg));
    });
  }
  const controls: Record<string, number> = Object.assign({}, ...results.map((r) => r.controls));
  const test = cellsOf("test"), dev = cellsOf("dev");
  const metrics: Record<string, number> = {
    ...testMetrics(test, cfg),
    ...devMetrics(dev, cfg),
    ...controls,
  };
  if (metrics["bn/mixed/gain"] !== undefined && metrics["bn/per_corruption_gain"] !== undefined) {
    metrics["bn/mixed_over_per_corruption_gain"] = metrics["bn/mixed/gain"] / metrics["bn/per_corruption_gain"];
  }
  for (const l of loaded) metrics[`source/${l.model.arch}/clean_train_accuracy`] = l.cleanTrainAccuracy;
  for (const mode of TEST_MODES) {
    if (!test.length) break;
    for (const [c, ce] of Object.entries(relativeMceOf(test, mode).ce)) metrics[`ce/${mode}/${c}`] = ce;
  }
  printTables(test, dev, metrics, cfg);
  const archKey = (arch: SourceArch) => loaded.find((l) => l.model.arch === arch)!;
  return {
    metrics,
    details: {
      table: test.length ? modeRows(test, cfg) : [],
      dev_grid: {
        n: cfg.grid_n,
        N: gridPriors(cfg).map((N) => N === Infinity ? "inf" : N),
        relative_mce: cfg.grid_n.map((n) => gridPriors(cfg).map((N) => metrics[gridKey(n, N)] ?? null)),
      },
      cells: cells.map((c) => ({
        split: c.split,
        corruption: c.corruption,
        severity: c.severity,
        error: Object.fromEntries(Object.entries(c.accuracy).map(([k, a]) => [k, 1 - a])),
        w2: c.w2,
        w2_normalized: c.w2_normalized,
      })),
      source_models: Object.fromEntries(SOURCE_ARCHS.map((arch) => [arch, archKey(arch).key])),
      protocol: [
        `test digits: the first ${cfg.digits} of the seeded, shuffled test part of ` +
        `loadMnist({ seed, train: ${cfg.train_digits}, test: ${cfg.test_digits} }) (official MNIST test file; the ` +
        "source models train on the training file); the same digits for every (corruption, severity), as ImageNet-C",
        `corruptions: corrupt() with its default table for 28-px images, "${defaultTable(MNIST_SIDE, MNIST_SIDE)}" ` +
        "(hendrycks make_cifar_c.py constants), seed = run seed, each image from its own generator",
        "prior modes: each (corruption, severity) shuffled by its own seeded permutation, then consecutive " +
        "groups of n; the last count mod n images form a short group with the same λ = N/(N+n)",
        "full statistics: lib/adapt/bn_adapt.ts fullStats over all images of the (corruption, severity), stage " +
        "by stage, unbiased variance",
        "relative mCE: CE_c = Σ_s err / Σ_s err_MLP over the run's severities, mean over corruptions " +
        "(relativeCorruptionError); rel_gain_x = 1 − mCE_x/mCE_none",
        "log2_best_N_n1: log₂ of the finite N ≥ 1 of grid_N with the lowest dev relative mCE at n = 1 (ties: the " +
        "smaller N); N = 0 has no log₂ (Table A.7 starts at N = 1) and N = ∞ is the unadapted model " +
        "(dev_mce_none; best_N_n1_beats_none says whether the best finite N beats it)",
        "mixed control: mixed_digits (test corruption, severity, digit) triples drawn without replacement, each " +
        "image as its cell has it; gain = error without adaptation − error with full statistics of the mixed " +
        "set, against per_corruption_gain = the same difference averaged over the test cells",
        "W₂: lib/metrics/robustness.ts w2 (W₂², eq. A.1) and w2Normalized (W̃₂², eq. A.3) between the source " +
        "statistics and the full target statistics of each cell, averaged over the two BN layers; Pearson r " +
        "over the test cells against the unadapted top-1 error",
        "dev corruptions: speckle noise, Gaussian blur, spatter; saturate is left out: on grey digits it keeps " +
        "the red channel of a grey pixel, the identity",
      ],
      corruption_notes: Object.fromEntries(
        [...cfg.corruptions, ...cfg.dev_corruptions].filter((c) => c in CORRUPTION_NOTES).map((c) => [
          c,
          CORRUPTION_NOTES[c as CorruptionName],
        ]),
      ),
    },
  };
}
