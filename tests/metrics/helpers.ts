/** Matrices shared by the metric tests. */
import type { Matrix } from "../../lib/core/matrix.ts";

/** Every combination of factor values 0..size−1, as `[Π sizes, sizes.length]`. */
export function factorGrid(sizes: number[]): Matrix {
  const rows = sizes.reduce((p, s) => p * s, 1);
  const data = new Float64Array(rows * sizes.length);
  for (let r = 0; r < rows; r++) {
    let rest = r;
    for (let c = sizes.length - 1; c >= 0; c--) {
      data[r * sizes.length + c] = rest % sizes[c];
      rest = Math.floor(rest / sizes[c]);
    }
  }
  return { data, rows, cols: sizes.length };
}

/** Row-major Matrix from nested rows. */
export function fromRows(rows: number[][]): Matrix {
  return { data: Float64Array.from(rows.flat()), rows: rows.length, cols: rows[0].length };
}

/**
 * The factors of a `[3, 6, 10, 8]` grid and codes that are a permuted,
 * rescaled (one sign flipped) and shifted copy of them: a representation
 * every metric should score as disentangled. Code `permutation[c]` holds factor c.
 */
export function permutedGridCopy(): { factors: Matrix; codes: Matrix; permutation: number[] } {
  const factors = factorGrid([3, 6, 10, 8]);
  const permutation = [2, 0, 3, 1];
  const scales = [0.7, -3, 12.5, 0.01];
  const codes = { data: new Float64Array(factors.data.length), rows: factors.rows, cols: 4 };
  for (let r = 0; r < factors.rows; r++) {
    for (let c = 0; c < 4; c++) codes.data[r * 4 + permutation[c]] = scales[c] * factors.data[r * 4 + c] - 4 + c;
  }
  return { factors, codes, permutation };
}

/** One dataset of tests/metrics/fixtures/reference_metrics.json (written by make_reference.py). */
export interface ReferenceDataset {
  name: string;
  train_codes: number[][];
  train_factors: number[][];
  test_codes: number[][];
  test_factors: number[][];
  /** sklearn / disentanglement_lib results by metric name. */
  expected: Record<string, number>;
  diagnostics: {
    mutual_info: number[][];
    sap_discrete_matrix_converged: number[][];
    sap_continuous_matrix: number[][];
    sap_discrete_converged: number;
    /** Explicitness with the logistic regressions solved to the optimum (newton-cg), not stopped early by lbfgs. */
    explicitness_train_converged: number;
    explicitness_test_converged: number;
  };
}

/** The reference datasets computed with numpy and scikit-learn. */
export const REFERENCE: ReferenceDataset[] = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_metrics.json", import.meta.url)),
).datasets;
