/**
 * Discretisation, entropy and mutual information as disentanglement_lib's
 * `utils.py` defines them (`_histogram_discretize`, `discrete_entropy`,
 * `discrete_mutual_info`), which the MIG, modularity and unsupervised
 * metrics share. Information is in nats.
 *
 * @module
 */
import { column, type Matrix } from "../core/matrix.ts";

/**
 * Discretises each column of `codes` `[n, d]` into `bins` equal-width bins,
 * as `np.digitize(col, np.histogram(col, bins)[1][:-1])`: bin labels run
 * 1..bins and the column maximum lands in bin `bins`. Returns row-major
 * `[n, d]` labels. A constant column becomes all 1 (numpy would give one
 * middle label; any single label carries the same zero information).
 */
export function histogramDiscretize(codes: Matrix, bins = 20): Int32Array {
  if (!Number.isInteger(bins) || bins < 1) throw new Error(`bins must be a positive integer, got ${bins}`);
  const { rows, cols, data } = codes;
  if (data.length !== rows * cols) throw new Error(`matrix holds ${data.length} values, expected ${rows}×${cols}`);
  const out = new Int32Array(rows * cols);
  const edges = new Float64Array(bins);
  for (let c = 0; c < cols; c++) {
    let min = Infinity;
    let max = -Infinity;
    for (let r = 0; r < rows; r++) {
      const v = data[r * cols + c];
      if (!Number.isFinite(v)) throw new Error(`histogramDiscretize: non-finite value ${v} in column ${c}`);
      if (v < min) min = v;
      if (v > max) max = v;
    }
    if (min === max) {
      for (let r = 0; r < rows; r++) out[r * cols + c] = 1;
      continue;
    }
    // The same arithmetic as np.linspace (k·step + start), so values lying
    // on an edge fall on the same side as in numpy.
    const step = (max - min) / bins;
    for (let k = 0; k < bins; k++) edges[k] = k * step + min;
    for (let r = 0; r < rows; r++) {
      const v = data[r * cols + c];
      // digitize(right=False) = number of left edges ≤ v.
      let lo = 0;
      let hi = bins;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (edges[mid] <= v) lo = mid + 1;
        else hi = mid;
      }
      out[r * cols + c] = lo;
    }
  }
  return out;
}

/** Maps labels `[n]` to dense indices 0..k−1 and returns them with k. */
function encode(labels: ArrayLike<number>): { index: Int32Array; k: number } {
  const seen = new Map<number, number>();
  const index = new Int32Array(labels.length);
  for (let i = 0; i < labels.length; i++) {
    let id = seen.get(labels[i]);
    if (id === undefined) {
      id = seen.size;
      seen.set(labels[i], id);
    }
    index[i] = id;
  }
  return { index, k: seen.size };
}

/**
 * Mutual information (nats) between two label vectors `[n]`, with the
 * contingency-table formula of `sklearn.metrics.mutual_info_score`
 * (terms below machine epsilon dropped, the sum clipped at 0).
 */
export function discreteMutualInfo(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  if (b.length !== n) throw new Error(`row counts differ: ${n} vs ${b.length}`);
  if (n === 0) throw new Error("mutual information needs at least 1 sample");
  const ea = encode(a);
  const eb = encode(b);
  if (ea.k === 1 || eb.k === 1) return 0;
  const counts = new Map<number, number>();
  const pi = new Float64Array(ea.k);
  const pj = new Float64Array(eb.k);
  for (let i = 0; i < n; i++) {
    const key = ea.index[i] * eb.k + eb.index[i];
    counts.set(key, (counts.get(key) ?? 0) + 1);
    pi[ea.index[i]]++;
    pj[eb.index[i]]++;
  }
  const logN = Math.log(n);
  let mi = 0;
  for (const [key, count] of counts) {
    const i = Math.floor(key / eb.k);
    const j = key % eb.k;
    const p = count / n;
    const term = p * (Math.log(count) - logN) + p * (-Math.log(pi[i] * pj[j]) + logN + logN);
    if (Math.abs(term) >= Number.EPSILON) mi += term;
  }
  return Math.max(mi, 0);
}

/** Entropy (nats) of a label vector `[n]`, as `mutual_info_score(y, y)`. */
export function discreteEntropy(labels: ArrayLike<number>): number {
  return discreteMutualInfo(labels, labels);
}

/**
 * Mutual information matrix `[codes][factors]` between the discretised codes
 * `codesDisc` (row-major `[n, numCodes]`, e.g. from
 * {@linkcode histogramDiscretize}) and the discrete `factors` `[n, f]`.
 */
export function mutualInfoMatrix(codesDisc: ArrayLike<number>, numCodes: number, factors: Matrix): number[][] {
  const n = factors.rows;
  if (codesDisc.length !== n * numCodes) {
    throw new Error(`row counts differ: codes hold ${codesDisc.length / numCodes} rows, factors ${n}`);
  }
  const factorColumns = Array.from({ length: factors.cols }, (_, j) => column(factors.data, n, factors.cols, j));
  return Array.from({ length: numCodes }, (_, i) => {
    const code = column(codesDisc, n, numCodes, i);
    return factorColumns.map((factor) => discreteMutualInfo(factor, code));
  });
}
