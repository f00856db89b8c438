/**
 * Small dense linear algebra on `number[][]` (row arrays) for the metrics:
 * covariance, log-determinant, Cholesky solves and the symmetric
 * eigendecomposition (cyclic Jacobi). Sizes are tens of rows at most, so
 * clarity wins over blocking or BLAS.
 *
 * @module
 */
import { column, type Matrix, meanSd } from "../core/matrix.ts";

/**
 * Sample covariance `[cols][cols]` of the columns of `m` `[rows, cols]`
 * with ddof = 1, as `np.cov(m.T)`.
 */
export function covariance(m: Matrix): number[][] {
  if (m.rows < 2) throw new Error(`covariance needs at least 2 rows, got ${m.rows}`);
  const { rows, cols, data } = m;
  const mean = new Float64Array(cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) mean[c] += data[r * cols + c];
  for (let c = 0; c < cols; c++) mean[c] /= rows;
  const cov = Array.from({ length: cols }, () => new Array<number>(cols).fill(0));
  const centred = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) centred[c] = data[r * cols + c] - mean[c];
    for (let i = 0; i < cols; i++) for (let j = i; j < cols; j++) cov[i][j] += centred[i] * centred[j];
  }
  for (let i = 0; i < cols; i++) {
    for (let j = i; j < cols; j++) {
      cov[i][j] /= rows - 1;
      cov[j][i] = cov[i][j];
    }
  }
  return cov;
}

/**
 * log |det a| of a square matrix `[n][n]`, by LU with partial pivoting as
 * `np.linalg.slogdet(a)[1]`; −Infinity when `a` is singular.
 */
export function logAbsDet(a: number[][]): number {
  const n = a.length;
  const lu = a.map((row) => {
    if (row.length !== n) throw new Error("logAbsDet needs a square matrix");
    return row.slice();
  });
  let logDet = 0;
  for (let k = 0; k < n; k++) {
    let pivot = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(lu[i][k]) > Math.abs(lu[pivot][k])) pivot = i;
    if (lu[pivot][k] === 0) return -Infinity;
    [lu[k], lu[pivot]] = [lu[pivot], lu[k]];
    logDet += Math.log(Math.abs(lu[k][k]));
    for (let i = k + 1; i < n; i++) {
      const factor = lu[i][k] / lu[k][k];
      for (let j = k + 1; j < n; j++) lu[i][j] -= factor * lu[k][j];
    }
  }
  return logDet;
}

/**
 * Lower-triangular Cholesky factor L `[n][n]` of a symmetric positive
 * definite `a` `[n][n]` (a = L Lᵀ); null when a pivot is not positive.
 */
export function cholesky(a: number[][]): number[][] | null {
  const n = a.length;
  const l = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let j = 0; j < n; j++) {
    let diag = a[j][j];
    for (let k = 0; k < j; k++) diag -= l[j][k] * l[j][k];
    if (!(diag > 0)) return null;
    l[j][j] = Math.sqrt(diag);
    for (let i = j + 1; i < n; i++) {
      let s = a[i][j];
      for (let k = 0; k < j; k++) s -= l[i][k] * l[j][k];
      l[i][j] = s / l[j][j];
    }
  }
  return l;
}

/** Solves L Lᵀ x = b for x `[n]`, given the Cholesky factor L `[n][n]`. */
export function choleskySolve(l: number[][], b: ArrayLike<number>): Float64Array {
  const n = l.length;
  const x = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < i; k++) x[i] -= l[i][k] * x[k];
    x[i] /= l[i][i];
  }
  for (let i = n - 1; i >= 0; i--) {
    for (let k = i + 1; k < n; k++) x[i] -= l[k][i] * x[k];
    x[i] /= l[i][i];
  }
  return x;
}

/**
 * Solves a x = b for a symmetric positive (semi)definite `a` `[n][n]`. A
 * growing ridge is added when the Cholesky factorisation fails, so flat
 * directions (e.g. a softmax's shared intercept shift) get a zero step
 * instead of an error.
 */
export function solveSpd(a: number[][], b: ArrayLike<number>): Float64Array {
  const n = a.length;
  let scale = 0;
  for (let i = 0; i < n; i++) scale = Math.max(scale, Math.abs(a[i][i]));
  let ridge = 0;
  for (let attempt = 0; attempt < 30; attempt++) {
    const shifted = ridge === 0 ? a : a.map((row, i) => row.map((v, j) => (i === j ? v + ridge : v)));
    const l = cholesky(shifted);
    if (l) return choleskySolve(l, b);
    ridge = ridge === 0 ? Math.max(scale, 1) * 1e-12 : ridge * 10;
  }
  throw new Error("solveSpd: matrix is not positive semidefinite");
}

/** Eigenvalues `[n]` and eigenvectors (columns of `vectors` `[n][n]`) of a symmetric matrix. */
export interface SymmetricEigen {
  /** The eigenvalues `[n]`. */
  values: number[];
  /** The eigenvectors, column `j` for `values[j]`. */
  vectors: number[][];
}

/**
 * Eigendecomposition of a symmetric `a` `[n][n]` by cyclic Jacobi rotations:
 * slow for large n but accurate to rounding for the small covariances here.
 * Eigenvalues come unsorted, paired with the columns of `vectors`.
 */
export function symmetricEigen(a: number[][], maxSweeps = 100): SymmetricEigen {
  const n = a.length;
  const m = a.map((row) => {
    if (row.length !== n) throw new Error("symmetricEigen needs a square matrix");
    return row.slice();
  });
  const v: number[][] = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < maxSweeps; sweep++) {
    let off = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        total += m[i][j] * m[i][j];
        if (i !== j) off += m[i][j] * m[i][j];
      }
    }
    if (off <= 1e-30 * total || off === 0) break;
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        if (m[p][q] === 0) continue;
        // Rotation angle that zeroes m[p][q] (Golub & Van Loan, Alg. 8.4.1).
        const theta = (m[q][q] - m[p][p]) / (2 * m[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const mkp = m[k][p];
          const mkq = m[k][q];
          m[k][p] = c * mkp - s * mkq;
          m[k][q] = s * mkp + c * mkq;
        }
        for (let k = 0; k < n; k++) {
          const mpk = m[p][k];
          const mqk = m[q][k];
          m[p][k] = c * mpk - s * mqk;
          m[q][k] = s * mpk + c * mqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k][p];
          const vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  return { values: m.map((row, i) => row[i]), vectors: v };
}

/**
 * tr(sqrtm(D · cov)) for a symmetric positive semidefinite `cov` `[n][n]` and
 * the diagonal D = diag(`d`) with d ≥ 0. D·cov is not symmetric, but it is
 * similar to D^½ cov D^½, so its principal square root has trace
 * Σ sqrt(eig(D^½ cov D^½)); tiny negative eigenvalues from rounding count as 0.
 */
export function traceSqrtmScaled(cov: number[][], d: ArrayLike<number>): number {
  const n = cov.length;
  const root = Array.from({ length: n }, (_, i) => {
    if (!(d[i] >= 0)) throw new Error(`traceSqrtmScaled needs d ≥ 0, got d[${i}] = ${d[i]}`);
    return Math.sqrt(d[i]);
  });
  const sym = cov.map((row, i) => row.map((v, j) => root[i] * v * root[j]));
  return symmetricEigen(sym).values.reduce((sum, value) => sum + Math.sqrt(Math.max(value, 0)), 0);
}

/**
 * Standardises `train` and `others` `[n, d]` with the training mean and
 * population standard deviation of each column; a constant training column
 * keeps scale 1 (it would divide by 0, NaN in disentanglement_lib).
 */
export function standardizeByTrain(train: Matrix, ...others: Matrix[]): Matrix[] {
  const d = train.cols;
  const mean = new Float64Array(d), std = new Float64Array(d);
  for (let c = 0; c < d; c++) {
    // Population s.d. (ddof = 0), as sklearn's StandardScaler that disentanglement_lib uses.
    const moments = meanSd(column(train.data, train.rows, d, c), { ddof: 0 });
    mean[c] = moments.mean;
    std[c] = moments.sd || 1;
  }
  return [train, ...others].map((m) => ({
    data: Float64Array.from(m.data, (v, k) => (v - mean[k % d]) / std[k % d]),
    rows: m.rows,
    cols: d,
  }));
}

/**
 * PCA whitening in place of a row-major `[n, dim]` Float32Array, as
 * scikit-learn's `PCA(whiten=True).fit_transform`: centred, projected onto
 * the covariance's eigenvectors in order of decreasing variance, each
 * component divided by its standard deviation (ddof = 1), so the result has
 * identity sample covariance. Components keep the eigenvectors' signs.
 */
export function pcaWhiten(values: Float32Array, dim: number): void {
  const n = values.length / dim;
  const cov = covariance({ data: values, rows: n, cols: dim });
  const { values: variances, vectors } = symmetricEigen(cov);
  const order = [...variances.keys()].sort((a, b) => variances[b] - variances[a]);
  const mean = new Float64Array(dim);
  for (let t = 0; t < n; t++) for (let c = 0; c < dim; c++) mean[c] += values[t * dim + c] / n;
  const row = new Float64Array(dim);
  for (let t = 0; t < n; t++) {
    order.forEach((k, out) => {
      let sum = 0;
      for (let c = 0; c < dim; c++) sum += vectors[c][k] * (values[t * dim + c] - mean[c]);
      row[out] = sum / Math.sqrt(variances[k]);
    });
    values.set(row, t * dim);
  }
}
