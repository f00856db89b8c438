/**
 * CEBRA's embedding metrics (Schneider2023 Ch. 7; `cebra/integrations/sklearn/metrics.py`
 * and `helpers.py`):
 *
 * - goodness of fit: log(batch · sessions) − InfoNCE, in bits, per training step;
 * - consistency between runs: R² of a linear regression from one embedding onto another of the
 *   same samples, for every ordered pair;
 * - consistency between datasets: the same on embeddings first aligned on a shared 1-D label
 *   ({@linkcode alignEmbeddings}: mean embedding per label bin, L2-normalised).
 *
 * @module
 */
import { goodnessOfFitBits } from "../contrastive/infonce.ts";
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { linearR2 } from "../ml/linear_regression.ts";

/** Scores of every ordered pair (i, j), i ≠ j, in CEBRA's order (i outer, j inner). */
export interface ConsistencyScores {
  /** The pairs (i, j). */
  pairs: [number, number][];
  /** The score of each pair, in the same order. */
  scores: number[];
}

/**
 * Goodness of fit in bits of each InfoNCE value of a training history (CEBRA's
 * `goodness_of_fit_history`). A full-batch fit (`batchSize` null) has no fixed chance level and
 * is refused, as CEBRA does.
 */
export function goodnessOfFit(lossHistory: readonly number[], batchSize: number | null, sessions = 1): number[] {
  if (batchSize === null) {
    throw new UsageError("goodness of fit needs the training batch size; a full-batch fit (batchSize null) has none");
  }
  return lossHistory.map((loss) => goodnessOfFitBits(loss, batchSize, sessions));
}

function checkEmbeddings(embeddings: readonly Matrix[], allowNan: boolean): void {
  if (embeddings.length < 2) throw new UsageError(`consistency needs at least 2 embeddings, got ${embeddings.length}`);
  embeddings.forEach((e, k) => {
    if (!Number.isInteger(e.rows) || !Number.isInteger(e.cols) || e.rows < 1 || e.cols < 1) {
      throw new UsageError(`embedding ${k}: needs a shape [rows ≥ 1, cols ≥ 1], got [${e.rows}, ${e.cols}]`);
    }
    if (e.data.length !== e.rows * e.cols) {
      throw new UsageError(`embedding ${k}: data length ${e.data.length} does not match [${e.rows}, ${e.cols}]`);
    }
    for (let i = 0; i < e.data.length; i++) {
      const v = e.data[i];
      if (!(Number.isFinite(v) || (allowNan && Number.isNaN(v)))) {
        throw new UsageError(
          `embedding ${k}: value ${v} at index ${i}; only finite values${allowNan ? " or NaN" : ""}`,
        );
      }
    }
  });
}

function pairScores(embeddings: readonly Matrix[]): ConsistencyScores {
  const pairs: [number, number][] = [], scores: number[] = [];
  for (let i = 0; i < embeddings.length; i++) {
    for (let j = 0; j < embeddings.length; j++) {
      if (i === j) continue;
      pairs.push([i, j]);
      scores.push(linearR2(embeddings[i], embeddings[j]));
    }
  }
  return { pairs, scores };
}

/**
 * Consistency between runs on the same data: for every ordered pair (i, j), i ≠ j, the in-sample
 * R² of the least-squares map (with intercept) from embedding i `[T, d_i]` onto embedding j
 * `[T, d_j]`, averaged over j's columns (sklearn `LinearRegression().fit(i, j).score(i, j)`).
 */
export function consistencyRuns(embeddings: Matrix[]): ConsistencyScores {
  checkEmbeddings(embeddings, false);
  const rows = embeddings[0].rows;
  embeddings.forEach((e, k) => {
    if (e.rows !== rows) {
      throw new UsageError(
        `embedding ${k} has ${e.rows} rows but embedding 0 has ${rows}: runs must embed the same samples ` +
          "(use consistencyDatasets for different recordings)",
      );
    }
  });
  return pairScores(embeddings);
}

/**
 * Consistency between datasets: the embeddings are aligned on their 1-D labels
 * ({@linkcode alignEmbeddings}), then scored as {@linkcode consistencyRuns} over every ordered
 * pair of different datasets.
 */
export function consistencyDatasets(
  embeddings: Matrix[],
  labels: ArrayLike<number>[],
  options: { bins?: number } = {},
): ConsistencyScores {
  return pairScores(alignEmbeddings(embeddings, labels, options.bins ?? 100));
}

/** np.linspace(start, stop, num): start + i·step, the last point exactly stop. */
function linspace(start: number, stop: number, num: number): Float64Array {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) out[i] = step === 0 ? start + (i / (num - 1)) * (stop - start) : i * step + start;
  out[num - 1] = stop;
  return out;
}

/** np.digitize(x, edges) for increasing edges: the number of edges ≤ x. */
function digitize(x: number, edges: Float64Array): number {
  let lo = 0, hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (edges[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * CEBRA's `align_embeddings` (normalize true): each embedding `[T_k, d_k]` becomes `[bins − 1,
 * d_k]`, row b − 1 the mean of the rows whose label falls in bin b = 1 … bins − 1 of
 * `np.digitize(label, linspace(min, max, bins))`, min and max over all datasets' labels, scaled to
 * unit L2 norm. An empty bin takes the mean over bins b ± 1, then b ± 2 (`_coarse_to_fine`);
 * beyond that it is an error. Rows with a NaN are dropped first, as CEBRA does; the labels'
 * largest value digitizes to `bins` and only reaches bin bins − 1 as a neighbour.
 */
export function alignEmbeddings(embeddings: Matrix[], labels: ArrayLike<number>[], bins = 100): Matrix[] {
  checkEmbeddings(embeddings, true);
  if (labels.length !== embeddings.length) {
    throw new UsageError(`got ${embeddings.length} embeddings but ${labels.length} label arrays: one each`);
  }
  if (!Number.isInteger(bins) || bins < 2) throw new UsageError(`bins must be an integer ≥ 2, got ${bins}`);
  let min = Infinity, max = -Infinity;
  labels.forEach((label, k) => {
    if (label.length !== embeddings[k].rows) {
      throw new UsageError(`labels ${k} has ${label.length} values but embedding ${k} has ${embeddings[k].rows} rows`);
    }
    for (let i = 0; i < label.length; i++) {
      if (!Number.isFinite(label[i])) {
        throw new UsageError(`labels ${k}: value ${label[i]} at ${i}; labels must be finite`);
      }
      min = Math.min(min, label[i]);
      max = Math.max(max, label[i]);
    }
  });
  const edges = linspace(min, max, bins);
  return embeddings.map((e, k) => {
    const d = e.cols;
    // Per bin 0..bins: sums and counts of the valid rows, so a ±1/±2 fallback is a sum over neighbours.
    const sums = new Float64Array((bins + 1) * d), counts = new Float64Array(bins + 1);
    for (let i = 0; i < e.rows; i++) {
      let valid = true;
      for (let c = 0; c < d; c++) if (Number.isNaN(e.data[i * d + c])) valid = false;
      if (!valid) continue;
      const b = digitize(labels[k][i], edges);
      counts[b]++;
      for (let c = 0; c < d; c++) sums[b * d + c] += e.data[i * d + c];
    }
    const out = new Float64Array((bins - 1) * d);
    for (let b = 1; b < bins; b++) {
      let found = false;
      for (let reach = 0; reach <= 2 && !found; reach++) {
        let count = 0;
        const mean = new Float64Array(d);
        for (let nb = Math.max(0, b - reach); nb <= Math.min(bins, b + reach); nb++) {
          count += counts[nb];
          for (let c = 0; c < d; c++) mean[c] += sums[nb * d + c];
        }
        if (count === 0) continue;
        found = true;
        let norm = 0;
        for (let c = 0; c < d; c++) norm += (mean[c] / count) ** 2;
        norm = Math.sqrt(norm);
        if (norm === 0) {
          throw new UsageError(`embedding ${k}: the mean of label bin ${b} is zero and cannot be normalised`);
        }
        for (let c = 0; c < d; c++) out[(b - 1) * d + c] = mean[c] / count / norm;
      }
      if (!found) {
        throw new UsageError(
          `embedding ${k}: no labels within 2 bins of bin ${b} of ${bins} over [${min}, ${max}]; ` +
            "use fewer bins or labels that cover the shared range",
        );
      }
    }
    return { data: out, rows: bins - 1, cols: d };
  });
}
