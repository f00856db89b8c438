/**
 * Principal component analysis as scikit-learn's `PCA(n_components)` (no whitening): the data are
 * centred on the training mean and projected onto the leading eigenvectors of the sample
 * covariance (ddof = 1), in order of decreasing variance. The eigenvectors come from the cyclic
 * Jacobi solver of `linalg.ts` in float64, accurate to rounding for the ~100 columns of the data
 * here. Each component's sign makes its largest-magnitude loading positive (sklearn ≥ 1.5's
 * `svd_flip` on the components), so a fit is reproducible.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkMatrix, type Matrix } from "../core/matrix.ts";
import { covariance, symmetricEigen } from "./linalg.ts";

/** A fitted PCA. */
export interface Pca {
  /** Training mean per input column `[cols]`. */
  mean: Float64Array;
  /** Principal axes `[components, cols]` row-major (sklearn's `components_`). */
  components: Float64Array;
  /** Variance along each axis (sample variance, ddof = 1) `[components]`. */
  explainedVariance: Float64Array;
  /** Share of the total variance along each axis `[components]`. */
  explainedVarianceRatio: Float64Array;
  /** Projections `[x.rows, components]` of rows `x` `[rows, cols]` onto the axes, after centring. */
  transform(x: Matrix): Matrix;
}

/** Fits a PCA with `components` axes to rows `x` `[n, cols]` (n ≥ 2, 1 ≤ components ≤ cols). */
export function fitPca(x: Matrix, components: number): Pca {
  try {
    checkMatrix(x, "x", 2);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const d = x.cols;
  if (!Number.isInteger(components) || components < 1 || components > d) {
    throw new UsageError(`components must be an integer in 1..${d} (the columns of x), got ${components}`);
  }
  const mean = new Float64Array(d);
  for (let r = 0; r < x.rows; r++) for (let c = 0; c < d; c++) mean[c] += x.data[r * d + c];
  for (let c = 0; c < d; c++) mean[c] /= x.rows;
  const cov = covariance(x);
  const { values, vectors } = symmetricEigen(cov);
  const order = [...values.keys()].sort((a, b) => values[b] - values[a]).slice(0, components);
  const total = values.reduce((a, v) => a + Math.max(v, 0), 0);
  const axes = new Float64Array(components * d);
  order.forEach((k, i) => {
    let big = 0;
    for (let c = 0; c < d; c++) if (Math.abs(vectors[c][k]) > Math.abs(big)) big = vectors[c][k];
    const sign = big < 0 ? -1 : 1;
    for (let c = 0; c < d; c++) axes[i * d + c] = sign * vectors[c][k];
  });
  const variance = Float64Array.from(order, (k) => Math.max(values[k], 0));
  return {
    mean,
    components: axes,
    explainedVariance: variance,
    explainedVarianceRatio: Float64Array.from(variance, (v) => total > 0 ? v / total : 0),
    transform(q: Matrix): Matrix {
      if (q.cols !== d) throw new UsageError(`x has ${q.cols} columns but the PCA was fit on ${d}`);
      const out = new Float64Array(q.rows * components);
      const row = new Float64Array(d);
      for (let r = 0; r < q.rows; r++) {
        for (let c = 0; c < d; c++) row[c] = q.data[r * d + c] - mean[c];
        for (let i = 0; i < components; i++) {
          let sum = 0;
          for (let c = 0; c < d; c++) sum += row[c] * axes[i * d + c];
          out[r * components + i] = sum;
        }
      }
      return { data: out, rows: q.rows, cols: components };
    },
  };
}
