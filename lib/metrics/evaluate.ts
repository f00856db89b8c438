/**
 * All array metrics on one (codes, factors) pair, as `deno task eval` runs
 * them for representations produced anywhere: rows [0, floor(0.8 n)) train,
 * the rest test, where a metric needs both.
 *
 * @module
 */
import type { NpyArray } from "../core/npy.ts";
import { UsageError } from "../core/errors.ts";
import { dci } from "./dci.ts";
import { type Matrix, meanCorrelationCoefficient } from "./mcc.ts";
import { mig } from "./mig.ts";
import { modularityExplicitness } from "./modularity.ts";
import { sap } from "./sap.ts";
import { unsupervisedScores } from "./unsupervised.ts";

/** Metric names `--metrics` accepts. */
export const ARRAY_METRICS = ["mig", "dci", "sap", "modularity", "mcc", "tc"] as const;
/** One of them. */
export type ArrayMetric = typeof ARRAY_METRICS[number];

/**
 * Checks and converts `.npy` arrays: codes finite `[n, d]`, factors integer
 * `[n, k]` with at least two values each, n ≥ 2 on both. Factor values are
 * relabelled 0..K−1 per factor. Throws {@linkcode UsageError} naming the problem.
 */
export function validateArrays(codes: NpyArray, factors: NpyArray): { codes: Matrix; factors: Matrix } {
  if (codes.shape.length !== 2) throw new UsageError(`codes must be 2-D [n, d], got shape [${codes.shape}]`);
  if (factors.shape.length !== 2) throw new UsageError(`factors must be 2-D [n, k], got shape [${factors.shape}]`);
  const [n, d] = codes.shape, [m, k] = factors.shape;
  if (n !== m) throw new UsageError(`codes have ${n} rows but factors have ${m}; they must match row for row`);
  if (n < 2) throw new UsageError(`at least 2 rows are needed, got ${n}`);
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

/** Results by metric, plus seconds per metric. */
export interface EvaluationResult {
  values: Record<string, unknown>;
  seconds: Record<string, number>;
}

/** Runs the chosen metrics; train = first floor(0.8 n) rows, test = the rest. */
export function evaluateArrays(codes: Matrix, factors: Matrix, metrics: readonly ArrayMetric[]): EvaluationResult {
  const split = Math.floor(0.8 * codes.rows);
  if (split < 1 || split >= codes.rows) throw new UsageError(`${codes.rows} rows leave no train or no test rows`);
  const train = [rows(codes, 0, split), rows(factors, 0, split)] as const;
  const test = [rows(codes, split, codes.rows), rows(factors, split, codes.rows)] as const;
  const values: Record<string, unknown> = {}, seconds: Record<string, number> = {};
  const time = (name: string, f: () => void) => {
    const start = performance.now();
    f();
    seconds[name] = (performance.now() - start) / 1000;
  };
  for (const metric of metrics) {
    time(metric, () => {
      switch (metric) {
        case "mig":
          values.mig = mig(train[0], train[1]).mig;
          break;
        case "dci": {
          const r = dci(train[0], train[1], test[0], test[1]);
          values.dci = {
            disentanglement: r.disentanglement,
            completeness: r.completeness,
            informativeness_train: r.informativeness_train,
            informativeness_test: r.informativeness_test,
          };
          break;
        }
        case "sap":
          values.sap = sap(train[0], train[1], test[0], test[1]).sap;
          break;
        case "modularity": {
          const r = modularityExplicitness(train[0], train[1], test[0], test[1]);
          values.modularity = r.modularity;
          values.explicitness = r.explicitness_test;
          break;
        }
        case "mcc":
          values.mcc = meanCorrelationCoefficient(factors, codes).mcc;
          break;
        case "tc":
          values.tc = unsupervisedScores(codes).gaussian_total_correlation;
          break;
      }
    });
  }
  return { values, seconds };
}
