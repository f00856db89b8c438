/**
 * Lasso regression as scikit-learn's `Lasso` (fit_intercept, no precomputed
 * Gram matrix): minimises (1 / 2n)·‖y − Xw − b‖² + α‖w‖₁ by cyclic coordinate
 * descent, stopping on sklearn's duality-gap test, so coefficients agree with
 * sklearn's to its tolerance.
 *
 * @module
 */
import { checkMatrix, type Matrix } from "../core/matrix.ts";
import { stopPoint } from "../core/run_guard.ts";

/** Hyperparameters; the defaults are sklearn's except `alpha` (DCI's 0.01). */
export interface LassoOptions {
  /** L1 penalty weight α, default 0.01. */
  alpha?: number;
  /** Maximum coordinate-descent sweeps, default 1000. */
  maxIter?: number;
  /** Tolerance on coefficient updates and on the duality gap (relative to ‖y − ȳ‖²), default 1e-4. */
  tol?: number;
}

/** A fitted model from {@linkcode fitLasso}. */
export interface LassoModel {
  /** One coefficient per feature. */
  coef: Float64Array;
  /** The fitted intercept. */
  intercept: number;
  /** Sweeps run; equal to `maxIter` when the duality gap did not converge. */
  nIter: number;
  /** Predictions `Xw + b` for the rows of `x`. */
  predict(x: Matrix): Float64Array;
  /** Coefficient of determination R² of the predictions on `(x, y)`. */
  r2(x: Matrix, y: ArrayLike<number>): number;
}

/**
 * R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)², as sklearn's `r2_score`: a constant `yTrue`
 * scores 1 when predicted exactly and 0 otherwise.
 */
export function r2Score(yTrue: ArrayLike<number>, yPred: ArrayLike<number>): number {
  if (yTrue.length !== yPred.length) throw new Error(`lengths differ: ${yTrue.length} vs ${yPred.length}`);
  if (yTrue.length < 2) throw new Error("R² needs at least 2 values");
  let mean = 0;
  for (let i = 0; i < yTrue.length; i++) mean += yTrue[i];
  mean /= yTrue.length;
  let residual = 0, total = 0;
  for (let i = 0; i < yTrue.length; i++) {
    residual += (yTrue[i] - yPred[i]) ** 2;
    total += (yTrue[i] - mean) ** 2;
  }
  if (total === 0) return residual === 0 ? 1 : 0;
  return 1 - residual / total;
}

/** Fits a Lasso to rows `x` `[n, d]` and targets `y` (length n, n ≥ 2). */
export function fitLasso(x: Matrix, y: ArrayLike<number>, options: LassoOptions = {}): LassoModel {
  const alpha = options.alpha ?? 0.01;
  const maxIter = options.maxIter ?? 1000;
  const tol = options.tol ?? 1e-4;
  if (!(alpha >= 0)) throw new Error(`alpha must be ≥ 0, got ${alpha}`);
  if (!Number.isInteger(maxIter) || maxIter < 1) throw new Error(`maxIter must be ≥ 1, got ${maxIter}`);
  checkMatrix(x, "x");
  if (x.rows !== y.length) throw new Error(`row counts differ: x has ${x.rows}, y has ${y.length}`);
  if (x.rows < 2) throw new Error(`lasso needs at least 2 rows, got ${x.rows}`);
  for (let i = 0; i < y.length; i++) if (!Number.isFinite(y[i])) throw new Error(`y: non-finite value at row ${i}`);
  const n = x.rows, d = x.cols;

  // Centre X and y, which fits the intercept without penalising it; column-major for the sweeps.
  const xMean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) xMean[j] += x.data[i * d + j] / n;
  let yMean = 0;
  for (let i = 0; i < n; i++) yMean += y[i] / n;
  const columns = Array.from(
    { length: d },
    (_, j) => Float64Array.from({ length: n }, (_, i) => x.data[i * d + j] - xMean[j]),
  );
  const yc = Float64Array.from({ length: n }, (_, i) => y[i] - yMean);
  const norms = columns.map((c) => c.reduce((s, v) => s + v * v, 0));

  // sklearn's enet_coordinate_descent with l2_reg = 0: the penalty scales with n, the gap tolerance with ‖y‖².
  const l1 = alpha * n;
  const w = new Float64Array(d);
  const r = Float64Array.from(yc);
  const gapTol = tol * yc.reduce((s, v) => s + v * v, 0);
  let nIter = 0;
  if (gapTol > 0) {
    for (let iter = 0; iter < maxIter; iter++) {
      stopPoint();
      nIter = iter + 1;
      let wMax = 0, dwMax = 0;
      for (let j = 0; j < d; j++) {
        if (norms[j] === 0) continue;
        const c = columns[j];
        const old = w[j];
        if (old !== 0) { for (let i = 0; i < n; i++) r[i] += old * c[i]; }
        let dot = 0;
        for (let i = 0; i < n; i++) dot += c[i] * r[i];
        w[j] = (Math.sign(dot) * Math.max(Math.abs(dot) - l1, 0)) / norms[j];
        if (w[j] !== 0) { for (let i = 0; i < n; i++) r[i] -= w[j] * c[i]; }
        dwMax = Math.max(dwMax, Math.abs(w[j] - old));
        wMax = Math.max(wMax, Math.abs(w[j]));
      }
      if (wMax === 0 || dwMax / wMax < tol || iter === maxIter - 1) {
        // Duality gap of the current iterate (dual point: the residual scaled into the feasible set).
        let dualNorm = 0, rNorm2 = 0, ry = 0, l1Norm = 0;
        for (let j = 0; j < d; j++) {
          let dot = 0;
          for (let i = 0; i < n; i++) dot += columns[j][i] * r[i];
          dualNorm = Math.max(dualNorm, Math.abs(dot));
          l1Norm += Math.abs(w[j]);
        }
        for (let i = 0; i < n; i++) {
          rNorm2 += r[i] * r[i];
          ry += r[i] * yc[i];
        }
        let gap: number, constant: number;
        if (dualNorm > l1) {
          constant = l1 / dualNorm;
          gap = 0.5 * (rNorm2 + rNorm2 * constant * constant);
        } else {
          constant = 1;
          gap = rNorm2;
        }
        gap += l1 * l1Norm - constant * ry;
        if (gap < gapTol) break;
      }
    }
  }
  let intercept = yMean;
  for (let j = 0; j < d; j++) intercept -= xMean[j] * w[j];

  const predict = (q: Matrix): Float64Array => {
    checkMatrix(q, "x");
    if (q.cols !== d) throw new Error(`column counts differ: fitted on ${d}, got ${q.cols}`);
    const out = new Float64Array(q.rows);
    for (let i = 0; i < q.rows; i++) {
      let s = intercept;
      for (let j = 0; j < d; j++) s += q.data[i * d + j] * w[j];
      out[i] = s;
    }
    return out;
  };
  return {
    coef: w,
    intercept,
    nIter,
    predict,
    r2: (q, target) => {
      if (q.rows !== target.length) throw new Error(`row counts differ: x has ${q.rows}, y has ${target.length}`);
      return r2Score(target, predict(q));
    },
  };
}
