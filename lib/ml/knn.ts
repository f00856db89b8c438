/**
 * k-nearest-neighbour regression and classification with uniform weights, as scikit-learn's
 * `KNeighborsRegressor` / `KNeighborsClassifier` (brute force) with the cosine or Euclidean
 * metric: CEBRA's decoders of position and direction from an embedding.
 *
 * Brute force in float64 rather than a wrapped library: ml-knn offers a k-d tree on Euclidean
 * distance only, and a few thousand training rows of a low-dimensional embedding take
 * milliseconds. Cosine distance is 1 − ⟨x/‖x‖, y/‖y‖⟩ clipped to [0, 2] (a zero row stays zero,
 * distance 1 to everything), as sklearn's `cosine_distances`.
 *
 * Ties: among training rows at equal computed distance the lower row index is taken first, and
 * a vote tie goes to the smallest label (sklearn's mode). sklearn computes its distances by
 * formulas (‖x‖² − 2⟨x, y⟩ + ‖y‖², normalised dot products) whose rounding separates exact ties,
 * so on data with exact ties (integer grids, repeated rows) its picks among them differ from any
 * index rule; on continuous data the two agree.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkMatrix, type Matrix } from "../core/matrix.ts";

/** Distance of {@linkcode knnRegress} and {@linkcode knnClassify}. */
export type KnnMetric = "cosine" | "euclidean";

/** The metrics kNN accepts. */
export const KNN_METRICS: readonly KnnMetric[] = ["cosine", "euclidean"];

function checkInput(m: Matrix, what: string, minRows: number): void {
  try {
    checkMatrix(m, what, minRows);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function checkCommon(train: Matrix, query: Matrix, k: number, metric: KnnMetric): void {
  checkInput(train, "train", 1);
  checkInput(query, "query", 0);
  if (query.cols !== train.cols) {
    throw new UsageError(`query has ${query.cols} columns but train has ${train.cols}: they must be equal`);
  }
  if (!KNN_METRICS.includes(metric)) {
    throw new UsageError(`unknown metric "${metric}": use one of ${KNN_METRICS.join(", ")}`);
  }
  if (!Number.isInteger(k) || k < 1 || k > train.rows) {
    throw new UsageError(`k must be an integer in 1..${train.rows} (the training rows), got ${k}`);
  }
}

/** Rows scaled to unit L2 norm in float64 (zero rows stay zero). */
function unitRows(m: Matrix): Float64Array {
  const out = new Float64Array(m.rows * m.cols);
  for (let i = 0; i < m.rows; i++) {
    let norm = 0;
    for (let c = 0; c < m.cols; c++) norm += m.data[i * m.cols + c] ** 2;
    norm = Math.sqrt(norm);
    for (let c = 0; c < m.cols; c++) out[i * m.cols + c] = norm > 0 ? m.data[i * m.cols + c] / norm : 0;
  }
  return out;
}

/**
 * Indices `[query.rows, k]` row-major of the k training rows nearest to each query row, nearest
 * first, ties to the lower training index.
 */
function nearest(train: Matrix, query: Matrix, k: number, metric: KnnMetric): Int32Array {
  const d = train.cols, n = train.rows;
  const cosine = metric === "cosine";
  const a = cosine ? unitRows(train) : train.data;
  const b = cosine ? unitRows(query) : query.data;
  const out = new Int32Array(query.rows * k);
  const bestD = new Float64Array(k), bestI = new Int32Array(k);
  for (let q = 0; q < query.rows; q++) {
    bestD.fill(Infinity);
    for (let i = 0; i < n; i++) {
      let dist = 0;
      if (cosine) {
        for (let c = 0; c < d; c++) dist += a[i * d + c] * b[q * d + c];
        dist = Math.min(Math.max(1 - dist, 0), 2);
      } else {
        for (let c = 0; c < d; c++) dist += (a[i * d + c] - b[q * d + c]) ** 2;
      }
      // Strictly smaller only: a later row at equal distance never displaces an earlier one.
      if (!(dist < bestD[k - 1])) continue;
      let j = k - 1;
      while (j > 0 && dist < bestD[j - 1]) {
        bestD[j] = bestD[j - 1];
        bestI[j] = bestI[j - 1];
        j--;
      }
      bestD[j] = dist;
      bestI[j] = i;
    }
    out.set(bestI, q * k);
  }
  return out;
}

/**
 * Mean target of the k nearest training rows: `train` `[n, d]`, `targets` `[n, t]`, `query`
 * `[m, d]` → `[m, t]` row-major.
 */
export function knnRegress(train: Matrix, targets: Matrix, query: Matrix, k: number, metric: KnnMetric): Float64Array {
  checkCommon(train, query, k, metric);
  checkInput(targets, "targets", 1);
  if (targets.rows !== train.rows) {
    throw new UsageError(`targets has ${targets.rows} rows but train has ${train.rows}: they must be equal`);
  }
  const t = targets.cols;
  const index = nearest(train, query, k, metric);
  const out = new Float64Array(query.rows * t);
  for (let q = 0; q < query.rows; q++) {
    for (let j = 0; j < k; j++) {
      const row = index[q * k + j];
      for (let c = 0; c < t; c++) out[q * t + c] += targets.data[row * t + c];
    }
    for (let c = 0; c < t; c++) out[q * t + c] /= k;
  }
  return out;
}

/**
 * Majority label of the k nearest training rows (a tie to the smallest label): `train` `[n, d]`,
 * `labels` `[n]` (any integers), `query` `[m, d]` → `[m]`.
 */
export function knnClassify(
  train: Matrix,
  labels: Int32Array,
  query: Matrix,
  k: number,
  metric: KnnMetric,
): Int32Array {
  checkCommon(train, query, k, metric);
  if (labels.length !== train.rows) {
    throw new UsageError(`labels has ${labels.length} entries but train has ${train.rows} rows: they must be equal`);
  }
  const index = nearest(train, query, k, metric);
  const out = new Int32Array(query.rows);
  const counts = new Map<number, number>();
  for (let q = 0; q < query.rows; q++) {
    counts.clear();
    for (let j = 0; j < k; j++) {
      const label = labels[index[q * k + j]];
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    let best = 0, bestCount = -1;
    for (const [label, count] of counts) {
      if (count > bestCount || (count === bestCount && label < best)) {
        best = label;
        bestCount = count;
      }
    }
    out[q] = best;
  }
  return out;
}
