/**
 * Ordinary least squares with an intercept, as scikit-learn's `LinearRegression` (the R² of
 * CEBRA's consistency and cl-ica's identifiability scores). The centred inputs are factored by
 * Householder QR and the triangular factor by one-sided Jacobi SVD, all in float64, so a
 * rank-deficient design gets the minimum-norm solution as `scipy.linalg.lstsq` gives it.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkMatrix, column, type Matrix } from "../core/matrix.ts";
import { r2Score } from "./lasso.ts";

/** A fitted linear map y ≈ x·coef + intercept. */
export interface LinearFit {
  /** Coefficients `[inCols, outCols]` row-major (sklearn's `coef_` transposed). */
  coef: Float64Array;
  /** Intercept per output `[outCols]`. */
  intercept: Float64Array;
  /** Numerical rank of the centred inputs. */
  rank: number;
  /** Predictions `[x.rows, outCols]` row-major for rows `x` `[rows, inCols]`. */
  predict(x: Matrix): Float64Array;
}

function checkInput(m: Matrix, what: string, minRows: number): void {
  try {
    checkMatrix(m, what, minRows);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Householder QR of `a` (column-major `[rows, cols]`, overwritten) applied to `b` (column-major
 * `[rows, outs]`, overwritten with Qᵀb). Returns R `[k, cols]` row-major, k = min(rows, cols).
 */
function householderQr(a: Float64Array, rows: number, cols: number, b: Float64Array, outs: number): Float64Array {
  const k = Math.min(rows, cols);
  const v = new Float64Array(rows);
  for (let j = 0; j < k; j++) {
    const col = j * rows;
    let norm = 0;
    for (let i = j; i < rows; i++) norm = Math.hypot(norm, a[col + i]);
    if (norm === 0) continue;
    const alpha = a[col + j] > 0 ? -norm : norm;
    // v = x − αe₁, normalised so the reflection is I − 2vvᵀ.
    let vNorm2 = 0;
    for (let i = j; i < rows; i++) {
      v[i] = a[col + i] - (i === j ? alpha : 0);
      vNorm2 += v[i] * v[i];
    }
    if (vNorm2 === 0) continue;
    const reflect = (target: Float64Array, offset: number) => {
      let dot = 0;
      for (let i = j; i < rows; i++) dot += v[i] * target[offset + i];
      const f = (2 * dot) / vNorm2;
      for (let i = j; i < rows; i++) target[offset + i] -= f * v[i];
    };
    for (let c = j; c < cols; c++) reflect(a, c * rows);
    for (let c = 0; c < outs; c++) reflect(b, c * rows);
  }
  const r = new Float64Array(k * cols);
  for (let i = 0; i < k; i++) for (let c = i; c < cols; c++) r[i * cols + c] = a[c * rows + i];
  return r;
}

/**
 * One-sided Jacobi SVD of `w` (row-major `[m, n]`, overwritten): rotates column pairs until they
 * are orthogonal, so w·V = U·Σ. Returns V `[n, n]` row-major and σ (column norms of the result).
 */
function jacobiSvd(w: Float64Array, m: number, n: number): { v: Float64Array; sigma: Float64Array } {
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 80; sweep++) {
    let rotated = false;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        let alpha = 0, beta = 0, gamma = 0;
        for (let i = 0; i < m; i++) {
          const wp = w[i * n + p], wq = w[i * n + q];
          alpha += wp * wp;
          beta += wq * wq;
          gamma += wp * wq;
        }
        if (gamma === 0 || Math.abs(gamma) <= 1e-15 * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        const t = Math.sign(zeta || 1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t), s = c * t;
        for (let i = 0; i < m; i++) {
          const wp = w[i * n + p], wq = w[i * n + q];
          w[i * n + p] = c * wp - s * wq;
          w[i * n + q] = s * wp + c * wq;
        }
        for (let i = 0; i < n; i++) {
          const vp = v[i * n + p], vq = v[i * n + q];
          v[i * n + p] = c * vp - s * vq;
          v[i * n + q] = s * vp + c * vq;
        }
      }
    }
    if (!rotated) break;
  }
  const sigma = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    let norm = 0;
    for (let i = 0; i < m; i++) norm = Math.hypot(norm, w[i * n + j]);
    sigma[j] = norm;
  }
  return { v, sigma };
}

/**
 * Least squares with an intercept of targets `y` `[n, outCols]` on inputs `x` `[n, inCols]`, in
 * float64: the centred x and y are solved by QR and SVD, and singular values below
 * max(n, inCols)·ε·σ_max count as zero (sklearn ≥ 1.6; before, scipy's default ε·σ_max let
 * rounding noise of an exactly collinear design through), giving the minimum-norm coefficients.
 */
export function fitLinearRegression(x: Matrix, y: Matrix): LinearFit {
  checkInput(x, "x", 1);
  checkInput(y, "y", 1);
  if (x.rows !== y.rows) throw new UsageError(`x has ${x.rows} rows but y has ${y.rows}: they must be equal`);
  const n = x.rows, d = x.cols, q = y.cols;
  const xMean = new Float64Array(d), yMean = new Float64Array(q);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < d; c++) xMean[c] += x.data[i * d + c];
    for (let c = 0; c < q; c++) yMean[c] += y.data[i * q + c];
  }
  for (let c = 0; c < d; c++) xMean[c] /= n;
  for (let c = 0; c < q; c++) yMean[c] /= n;
  const a = new Float64Array(n * d), b = new Float64Array(n * q);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < d; c++) a[c * n + i] = x.data[i * d + c] - xMean[c];
    for (let c = 0; c < q; c++) b[c * n + i] = y.data[i * q + c] - yMean[c];
  }
  const r = householderQr(a, n, d, b, q);
  const k = Math.min(n, d);
  const { v, sigma } = jacobiSvd(r, k, d);
  let sigmaMax = 0;
  for (const s of sigma) sigmaMax = Math.max(sigmaMax, s);
  const cutoff = Math.max(n, d) * Number.EPSILON * sigmaMax;
  // coef = Σ_j v_j (w_jᵀ Qᵀy) / σ_j² over σ_j > cutoff, with w_j = R v_j = σ_j u_j.
  const coef = new Float64Array(d * q);
  let rank = 0;
  for (let j = 0; j < d; j++) {
    if (!(sigma[j] > cutoff)) continue;
    rank++;
    for (let o = 0; o < q; o++) {
      let dot = 0;
      for (let i = 0; i < k; i++) dot += r[i * d + j] * b[o * n + i];
      const f = dot / (sigma[j] * sigma[j]);
      for (let c = 0; c < d; c++) coef[c * q + o] += v[c * d + j] * f;
    }
  }
  const intercept = Float64Array.from(yMean);
  for (let o = 0; o < q; o++) for (let c = 0; c < d; c++) intercept[o] -= xMean[c] * coef[c * q + o];
  return {
    coef,
    intercept,
    rank,
    predict(z: Matrix): Float64Array {
      checkInput(z, "x", 0);
      if (z.cols !== d) throw new UsageError(`x has ${z.cols} columns but the fit has ${d}`);
      const out = new Float64Array(z.rows * q);
      for (let i = 0; i < z.rows; i++) {
        for (let o = 0; o < q; o++) {
          let s = intercept[o];
          for (let c = 0; c < d; c++) s += z.data[i * d + c] * coef[c * q + o];
          out[i * q + o] = s;
        }
      }
      return out;
    },
  };
}

/**
 * In-sample R² of the least-squares fit of `y` `[n, outCols]` on `x` `[n, inCols]`, averaged
 * uniformly over outputs: sklearn's `LinearRegression().fit(x, y).score(x, y)` (a constant output
 * scores 1 when fitted exactly, else 0, as `r2_score`). Needs n ≥ 2.
 */
export function linearR2(x: Matrix, y: Matrix): number {
  checkInput(y, "y", 2);
  const pred = fitLinearRegression(x, y).predict(x);
  let total = 0;
  for (let o = 0; o < y.cols; o++) {
    total += r2Score(column(y.data, y.rows, y.cols, o), column(pred, y.rows, y.cols, o));
  }
  return total / y.cols;
}
