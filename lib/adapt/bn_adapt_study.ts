/**
 * The bookkeeping of a BatchNorm-adaptation study (Schneider2023 Ch. 2, Tables 2.1, A.7; `deno task
 * bn-adapt`): accuracies per (corruption, severity) cell and mode, the grouped prior-mode accuracy, and the metrics
 * over cells: relative mCE per mode against the reference MLP, the gains over no adaptation, W₂ against the error,
 * the n × N grid and its best prior.
 *
 * @module
 */
import type { CorruptionName } from "../data/corruptions.ts";
import { MNIST_SIDE } from "../data/mnist.ts";
import { correlationMatrix } from "../core/matrix.ts";
import { type CorruptionErrorResult, relativeCorruptionError } from "../metrics/corruption_error.ts";
import type { NormMode } from "../models/bn_cnn.ts";
import { accuracyOf, type SourceClassifier } from "./source_model.ts";

const PIXELS = MNIST_SIDE * MNIST_SIDE;
/** Images per forward pass when scoring. */
export const EVAL_BATCH = 512;

/** The partial-adaptation setting: its gain is reported as `bn/rel_gain_partial8` only at n 8, N 0 (Table 2.1). */
export interface PartialOptions {
  /** Batch size n of the partial adaptation. */
  partial_n: number;
  /** Prior strength N of the partial adaptation. */
  partial_N: number;
}

/** The n × N grid: batch sizes n, finite priors N, and whether N = ∞ (the source statistics) is a column. */
export interface GridOptions {
  /** Batch sizes n (rows). */
  grid_n: readonly number[];
  /** Finite prior strengths N (columns). */
  grid_N: readonly number[];
  /** Whether N = ∞ (the source statistics) is a column too. */
  grid_source: boolean;
}

/** Metric key of a grid point: N = ∞ is "Ninf". */
export function gridKey(n: number, N: number): string {
  return `bn/dev_mce/n${n}/N${N === Infinity ? "inf" : N}`;
}

/** The modes of the test corruptions; "gn" and "mlp" are the twin and the reference model. */
export const TEST_MODES = ["none", "partial", "full", "adhoc", "gn", "mlp"] as const;
/** One of {@linkcode TEST_MODES}. */
export type TestMode = typeof TEST_MODES[number];

/** One (corruption, severity) evaluated: accuracies per mode, and for BN the distance of its full statistics. */
export interface Cell {
  /** Whether the cell belongs to the test or the dev corruptions. */
  split: "test" | "dev";
  /** The corruption applied. */
  corruption: CorruptionName;
  /** Its severity. */
  severity: number;
  /** The run's step of this cell: its place in the plan (test cells, then dev cells), from 1. */
  step: number;
  /** Mode (or grid key `n<n>/N<N>`) → top-1 accuracy. */
  accuracy: Record<string, number>;
  /** W₂² and W̃₂² between source and full target statistics, averaged over the two BN layers. */
  w2: number;
  /** W̃₂² (the normalised distance), averaged over the two BN layers. */
  w2_normalized: number;
}

/**
 * Top-1 accuracy of `model` under `mode`. Under the prior, the images (already shuffled) form consecutive groups
 * of n; the last count mod n images form a short group of their own with the same λ = N/(N+n), as the reference's
 * last DataLoader batch. Each forward holds whole groups and the short group gets its own: one that holds both
 * takes several times longer on wasm.
 */
export async function groupedAccuracy(
  model: SourceClassifier,
  images: Float32Array,
  labels: Int32Array,
  mode?: NormMode,
  evalBatch = EVAL_BATCH,
): Promise<number> {
  const count = labels.length;
  if (mode?.kind !== "prior") return await accuracyOf(model, images, labels, mode, evalBatch);
  const n = mode.n;
  const whole = Math.floor(count / n) * n;
  let correct = 0;
  if (whole > 0) {
    const batch = n * Math.max(1, Math.floor(evalBatch / n));
    const part = await accuracyOf(model, images.subarray(0, whole * PIXELS), labels.subarray(0, whole), mode, batch);
    correct += Math.round(part * whole);
  }
  if (whole < count) {
    const rest = count - whole;
    correct += Math.round(
      await accuracyOf(model, images.subarray(whole * PIXELS), labels.subarray(whole), mode, rest) * rest,
    );
  }
  return correct / count;
}

/** Per test corruption, the accuracies of `mode` at each severity evaluated so far. */
function byCorruption(cells: readonly Cell[], key: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const cell of cells) (out[cell.corruption] ??= []).push(cell.accuracy[key]);
  return out;
}

/** Relative mCE of `key` against the MLP over `cells` (CE_c = Σ_s err / Σ_s err_mlp; mean over corruptions). */
export function relativeMceOf(cells: readonly Cell[], key: string): CorruptionErrorResult {
  return relativeCorruptionError(byCorruption(cells, key), byCorruption(cells, "mlp"));
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** The test-corruption metrics of the cells so far: relative mCE per mode, the gains, W₂ against the error. */
export function testMetrics(cells: readonly Cell[], cfg: PartialOptions): Record<string, number> {
  const m: Record<string, number> = {};
  if (cells.length === 0) return m;
  for (const mode of TEST_MODES) {
    const prefix = mode === "gn" ? "gn" : mode === "mlp" ? "mlp" : "bn";
    const suffix = mode === "gn" || mode === "mlp" ? "mce" : `mce_${mode}`;
    const { mce } = relativeMceOf(cells, mode);
    m[`${prefix}/${suffix}`] = mce;
    m[`${prefix === "bn" ? `bn/err_${mode}` : `${prefix}/err`}`] = 1 - mean(cells.map((c) => c.accuracy[mode]));
  }
  m["bn/rel_gain_full"] = 1 - m["bn/mce_full"] / m["bn/mce_none"];
  m["bn/rel_gain_adhoc"] = 1 - m["bn/mce_adhoc"] / m["bn/mce_none"];
  const partialKey = cfg.partial_n === 8 && cfg.partial_N === 0 ? "bn/rel_gain_partial8" : "bn/rel_gain_partial";
  m[partialKey] = 1 - m["bn/mce_partial"] / m["bn/mce_none"];
  m["bn/per_corruption_gain"] = m["bn/err_none"] - m["bn/err_full"];
  if (cells.length >= 2) {
    const errors = cells.map((c) => 1 - c.accuracy.none);
    const r = (values: number[]) => {
      const matrix = (data: number[]) => ({ data, rows: data.length, cols: 1 });
      return correlationMatrix(matrix(values), matrix(errors), "pearson")[0][0];
    };
    m["bn/r_w2_error"] = r(cells.map((c) => c.w2));
    m["bn/r_w2n_error"] = r(cells.map((c) => c.w2_normalized));
  }
  return m;
}

/** The dev grid's relative mCE per (n, N) over the dev cells so far, and the best finite N ≥ 1 at n = 1. */
export function devMetrics(cells: readonly Cell[], cfg: GridOptions): Record<string, number> {
  const m: Record<string, number> = {};
  if (cells.length === 0) return m;
  m["bn/dev_mce_none"] = relativeMceOf(cells, "none").mce;
  m["bn/dev_mce_full"] = relativeMceOf(cells, "full").mce;
  for (const n of cfg.grid_n) {
    for (const N of gridPriors(cfg)) m[gridKey(n, N)] = relativeMceOf(cells, gridCellKey(n, N)).mce;
  }
  const best = cfg.grid_n.includes(1) ? bestFinitePrior(cfg.grid_N, (N) => m[gridKey(1, N)]) : undefined;
  if (best !== undefined) {
    m["bn/best_N_n1"] = best;
    m["bn/log2_best_N_n1"] = Math.log2(best);
    m["bn/best_N_n1_beats_none"] = m[gridKey(1, best)] < m["bn/dev_mce_none"] ? 1 : 0;
  }
  return m;
}

/**
 * The N ≥ 1 (finite) of `priors` with the lowest `mce(N)`, ties to the smaller N; undefined when there is none.
 * N = 0 is left out (no log₂, and Table A.7 starts at N = 1), N = ∞ too: it is the unadapted model.
 */
export function bestFinitePrior(priors: readonly number[], mce: (N: number) => number): number | undefined {
  const finite = priors.filter((N) => N >= 1 && Number.isFinite(N)).sort((a, b) => a - b);
  return finite.length ? finite.reduce((a, b) => (mce(b) < mce(a) ? b : a)) : undefined;
}

/** The grid's N values: the finite ones, then ∞ when asked for. */
export function gridPriors(cfg: GridOptions): number[] {
  return [...cfg.grid_N, ...(cfg.grid_source ? [Infinity] : [])];
}

/** A cell's accuracy key for a grid point. */
export function gridCellKey(n: number, N: number): string {
  return `n${n}/N${N === Infinity ? "inf" : N}`;
}
