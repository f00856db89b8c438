/**
 * All array metrics on one (codes, factors) pair, as `deno task eval` runs
 * them for representations produced anywhere: rows [0, floor(0.8 n)) train,
 * the rest test, where a metric needs both.
 *
 * @module
 */
import type { NpyArray } from "../core/npy.ts";
import { UsageError } from "../core/errors.ts";
import type { Matrix, Split } from "../core/matrix.ts";
import { CODES_METRICS, METRICS } from "./registry.ts";

/**
 * The fewest rows `eval` scores: the split at floor(0.8 n) must leave at
 * least 2 train and 2 test rows (the metrics fit on one and score the other).
 */
export const MIN_ROWS = 6;

/**
 * Checks and converts `.npy` arrays: codes finite `[n, d]`, factors integer
 * `[n, k]` with at least two values each, n ≥ {@linkcode MIN_ROWS} on both,
 * d, k ≥ 1. Factor values are relabelled 0..K−1 per factor; int64 labels
 * beyond ±(2^53 − 1), which would merge as doubles, are refused. Throws
 * {@linkcode UsageError} naming the problem.
 */
export function validateArrays(codes: NpyArray, factors: NpyArray): { codes: Matrix; factors: Matrix } {
  if (codes.shape.length !== 2) throw new UsageError(`codes must be 2-D [n, d], got shape [${codes.shape}]`);
  if (factors.shape.length !== 2) throw new UsageError(`factors must be 2-D [n, k], got shape [${factors.shape}]`);
  const [n, d] = codes.shape, [m, k] = factors.shape;
  if (n !== m) throw new UsageError(`codes have ${n} rows but factors have ${m}; they must match row for row`);
  if (n < MIN_ROWS) {
    throw new UsageError(
      `at least ${MIN_ROWS} rows are needed (the 0.8 split must leave 2 train and 2 test rows), got ${n}`,
    );
  }
  if (d < 1) throw new UsageError(`codes have shape [${codes.shape}]: at least 1 column (code dimension) is needed`);
  if (k < 1) throw new UsageError(`factors have shape [${factors.shape}]: at least 1 column (factor) is needed`);
  if (factors.data instanceof BigInt64Array) {
    const limit = BigInt(Number.MAX_SAFE_INTEGER);
    const big = factors.data.findIndex((v) => v > limit || v < -limit);
    if (big >= 0) {
      throw new UsageError(
        `factors[${Math.floor(big / k)}, ${big % k}] = ${factors.data[big]} is beyond ±(2^53 − 1), where int64 ` +
          `labels stop being distinct as numbers; relabel the factor values (e.g. np.unique(f, return_inverse=True))`,
      );
    }
  }
  const codeValues = Float64Array.from(codes.data as ArrayLike<number>, Number);
  const bad = codeValues.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) {
    throw new UsageError(`codes[${Math.floor(bad / d)}, ${bad % d}] is ${codeValues[bad]}; codes must be finite`);
  }
  const raw = Array.from(factors.data as ArrayLike<number | bigint>, Number);
  const fractional = raw.findIndex((v) => !Number.isInteger(v));
  if (fractional >= 0) {
    throw new UsageError(
      `factors[${Math.floor(fractional / k)}, ${fractional % k}] = ${raw[fractional]} is not an integer class label`,
    );
  }
  const labels = new Float64Array(n * k);
  for (let j = 0; j < k; j++) {
    const values = [...new Set(Array.from({ length: n }, (_, r) => raw[r * k + j]))].sort((a, b) => a - b);
    if (values.length < 2) throw new UsageError(`factor ${j} is constant (${values[0]}); every factor needs 2+ values`);
    const index = new Map(values.map((v, i) => [v, i]));
    for (let r = 0; r < n; r++) labels[r * k + j] = index.get(raw[r * k + j])!;
  }
  return { codes: { data: codeValues, rows: n, cols: d }, factors: { data: labels, rows: n, cols: k } };
}

function rows(m: Matrix, start: number, end: number): Matrix {
  const data = (m.data as Float64Array).subarray(start * m.cols, end * m.cols);
  return { data, rows: end - start, cols: m.cols };
}

/** Scores by output key, plus seconds per metric. */
export interface EvaluationResult {
  /** Output key → score. */
  values: Record<string, number>;
  /** Metric → seconds it took. */
  seconds: Record<string, number>;
}

/**
 * Refuses, before any metric runs, codes the chosen metrics cannot score:
 * a split at floor(0.8 n) without train or test rows, tc of one code column.
 * Throws {@linkcode UsageError}.
 */
export function checkMetricInputs(codes: Matrix, metrics: readonly string[]): void {
  const at = Math.floor(0.8 * codes.rows);
  if (at < 1 || at >= codes.rows) throw new UsageError(`${codes.rows} rows leave no train or no test rows`);
  if (metrics.includes("tc") && codes.cols < 2) {
    throw new UsageError(
      `tc (total correlation between code dimensions) needs at least 2 code columns, the codes have ${codes.cols}; ` +
        `leave tc out of --metrics`,
    );
  }
}

/**
 * The code columns that are constant or nearly so (their range at most
 * 1e-9 of their largest magnitude, or of 1): they carry no information,
 * and scores of such codes (MIG, MCC 0) say so only silently.
 */
export function constantColumns(codes: Matrix): number[] {
  const constant: number[] = [];
  for (let j = 0; j < codes.cols; j++) {
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < codes.rows; i++) {
      const v = codes.data[i * codes.cols + j];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (hi - lo <= 1e-9 * Math.max(1, Math.abs(lo), Math.abs(hi))) constant.push(j);
  }
  return constant;
}

/** The warning `eval` prints about constant code columns, or null when every column varies. */
export function constantColumnsWarning(codes: Matrix): string | null {
  const constant = constantColumns(codes);
  if (!constant.length) return null;
  if (constant.length === codes.cols) {
    return `warning: all ${codes.cols} code columns are constant: the codes carry no information, and every score ` +
      `is that of such codes`;
  }
  return `warning: code column${constant.length > 1 ? "s" : ""} ${constant.join(", ")} of ${codes.cols} ` +
    `${constant.length > 1 ? "are" : "is"} constant: ${constant.length > 1 ? "they carry" : "it carries"} no ` +
    `information about any factor`;
}

/** Runs the chosen "codes" metrics of the registry; train = first floor(0.8 n) rows, test = the rest. */
export function evaluateArrays(codes: Matrix, factors: Matrix, metrics: readonly string[]): EvaluationResult {
  checkMetricInputs(codes, metrics);
  const at = Math.floor(0.8 * codes.rows);
  const split: Split = {
    trainCodes: rows(codes, 0, at),
    trainFactors: rows(factors, 0, at),
    testCodes: rows(codes, at, codes.rows),
    testFactors: rows(factors, at, codes.rows),
  };
  const values: Record<string, number> = {}, seconds: Record<string, number> = {};
  for (const name of metrics) {
    const metric = METRICS.find(name);
    if (!metric.compute) {
      throw new UsageError(`${name} needs a trained model, not codes; codes metrics: ${CODES_METRICS.join(", ")}`);
    }
    const start = performance.now();
    Object.assign(values, metric.compute({ codes, factors, split }));
    seconds[name] = (performance.now() - start) / 1000;
  }
  return { values, seconds };
}
