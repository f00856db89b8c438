/**
 * Mutual Information Gap (Chen et al. 2018) as disentanglement_lib's
 * `mig.py` computes it: codes histogram-discretised, the MI matrix against
 * the (already discrete) factors, and per factor the gap between its two most
 * informative codes normalised by the factor's entropy.
 *
 * @module
 */
import { checkPaired, column, type Matrix } from "../core/matrix.ts";
import { discreteEntropy, histogramDiscretize, mutualInfoMatrix } from "./discrete.ts";

/** Options of {@linkcode mig}. */
export interface MigOptions {
  /** Histogram bins per code. */
  bins?: number;
}

/** The result of {@linkcode mig}. */
export interface MigResult {
  /** Mean over factors of the normalised gap. */
  mig: number;
  /** (m0 − m1) / H_j per factor `[f]`. */
  perFactor: number[];
  /** Mutual information matrix `[codes][factors]` (nats). */
  mutualInfo: number[][];
  /** Entropy of each factor `[f]` (nats). */
  entropy: number[];
}

/**
 * MIG of `codes` `[n, d]` with respect to discrete `factors` `[n, f]`. With
 * a single code the runner-up information is taken as 0. A constant factor
 * (zero entropy) makes the gap undefined and throws.
 */
export function mig(codes: Matrix, factors: Matrix, { bins = 20 }: MigOptions = {}): MigResult {
  checkPaired(codes, factors, { minRows: 2 });
  const mutualInfo = mutualInfoMatrix(histogramDiscretize(codes, bins), codes.cols, factors);
  const entropy = Array.from(
    { length: factors.cols },
    (_, j) => discreteEntropy(column(factors.data, factors.rows, factors.cols, j)),
  );
  const perFactor = entropy.map((h, j) => {
    if (h === 0) throw new Error(`factor ${j} is constant: its entropy is 0 and MIG is undefined`);
    const sorted = mutualInfo.map((row) => row[j]).sort((a, b) => b - a);
    return (sorted[0] - (sorted[1] ?? 0)) / h;
  });
  return { mig: perFactor.reduce((s, v) => s + v, 0) / perFactor.length, perFactor, mutualInfo, entropy };
}
