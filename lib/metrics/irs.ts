/**
 * The Interventional Robustness Score (Suter et al. 2019) as
 * disentanglement_lib's `irs.py` computes it (`compute_irs` followed by
 * `scalable_disentanglement_score`): for each factor and each of its values,
 * the 0.99 quantile of |code − E[code | factor = value]| is averaged over the
 * factor's values and divided by the code's largest deviation from its mean;
 * a code's score is 1 minus the smallest such ratio over factors, and the
 * IRS is the average of the code scores weighted by those largest deviations.
 *
 * @module
 */
import { checkPaired, column as matrixColumn, type Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import { checkCount } from "./beta_vae_score.ts";
import { histogramDiscretize } from "./discrete.ts";
import { encodeFactors, type Representation } from "./representation.ts";

/** Options of {@linkcode irs}. */
export interface IrsOptions {
  /** Quantile of the within-group deviations, default 0.99 (1 gives the paper's max). */
  diffQuantile?: number;
  /**
   * Discretise each factor into this many equal-width bins first, as
   * disentanglement_lib's `histogram_discretizer` (20 bins in its IRS config);
   * by default factor values are grouped exactly.
   */
  numBins?: number;
}

/** The result of {@linkcode irs}. */
export interface IrsResult {
  /** IRS: the score of each active code weighted by its maximal deviation; 0 with no active code. */
  avg_score: number;
  /** Per code dimension (all `d` of them): 1 − min over factors of the normalised deviation; 0 for constant codes. */
  disentanglement_scores: number[];
  /** Codes with nonzero variance (the others are dropped, as disentanglement_lib's `_drop_constant_dims`). */
  num_active_dims: number;
  /** Which code dimensions are active. */
  active: boolean[];
}

/** np.quantile with its default linear interpolation, of a sorted array. */
function quantileSorted(sorted: Float64Array, q: number): number {
  const position = (sorted.length - 1) * q;
  const lo = Math.floor(position), hi = Math.ceil(position);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (position - lo);
}

/**
 * IRS of codes `[n, d]` against ground-truth factors `[n, k]` (rows paired).
 * Rows are grouped by exact factor value (or by histogram bin with
 * `numBins`); every group counts equally in a factor's mean deviation,
 * whatever its size, as in disentanglement_lib.
 */
export function irs(codes: Matrix, factors: Matrix, { diffQuantile = 0.99, numBins }: IrsOptions = {}): IrsResult {
  checkPaired(codes, factors, { minRows: 1 });
  if (!(diffQuantile >= 0 && diffQuantile <= 1)) throw new Error(`diffQuantile must be in [0, 1], got ${diffQuantile}`);
  if (numBins !== undefined) checkCount(numBins, "numBins", 1);
  const n = codes.rows, d = codes.cols, k = factors.cols;

  const column = (m: Matrix, j: number) => matrixColumn(m.data, m.rows, m.cols, j);
  const codeColumns = Array.from({ length: d }, (_, j) => column(codes, j));
  // A code is constant when all its values are equal (numpy's var > 0 test, without its rounding).
  const active = codeColumns.map((c) => c.some((v) => v !== c[0]));
  const activeDims = active.flatMap((a, j) => (a ? [j] : []));
  const scores = new Array<number>(d).fill(0);
  if (activeDims.length === 0) return { avg_score: 0, disentanglement_scores: scores, num_active_dims: 0, active };

  const maxDeviation = activeDims.map((j) => {
    const c = codeColumns[j];
    const mean = c.reduce((s, v) => s + v, 0) / n;
    return c.reduce((m, v) => Math.max(m, Math.abs(v - mean)), 0);
  });
  // irsMatrix[a][i] = 1 − cum_deviations / max_deviations for active code a and factor i.
  const best = activeDims.map(() => -Infinity);
  for (let i = 0; i < k; i++) {
    const raw = column(factors, i);
    const values = numBins === undefined ? raw : histogramDiscretize({ data: raw, rows: n, cols: 1 }, numBins);
    const groups = new Map<number, number[]>();
    for (let r = 0; r < n; r++) {
      const group = groups.get(values[r]);
      if (group) group.push(r);
      else groups.set(values[r], [r]);
    }
    activeDims.forEach((j, a) => {
      const c = codeColumns[j];
      let cumulative = 0;
      for (const rows of groups.values()) {
        const mean = rows.reduce((s, r) => s + c[r], 0) / rows.length;
        const diffs = Float64Array.from(rows, (r) => Math.abs(c[r] - mean)).sort();
        cumulative += quantileSorted(diffs, diffQuantile);
      }
      const score = 1 - cumulative / groups.size / maxDeviation[a];
      if (score > best[a]) best[a] = score;
    });
  }
  let weighted = 0, total = 0;
  activeDims.forEach((j, a) => {
    scores[j] = best[a];
    weighted += best[a] * maxDeviation[a];
    total += maxDeviation[a];
  });
  // Active codes have positive maximal deviation, so np.average's weights sum to > 0.
  return { avg_score: weighted / total, disentanglement_scores: scores, num_active_dims: activeDims.length, active };
}

/** Options of {@linkcode irsScore}; defaults are disentanglement_lib's IRS config. */
export interface IrsScoreOptions {
  /** Sampled points, default 10,000. */
  numTrain?: number;
  /** Quantile of the within-group deviations, default 0.99. */
  diffQuantile?: number;
  /** Histogram bins per factor, default 20 (disentanglement_lib's discretizer). */
  numBins?: number;
}

/**
 * IRS of a representation on `numTrain` uniformly sampled points of a
 * ground-truth dataset, with factors binned as disentanglement_lib does.
 */
export async function irsScore(
  dataset: GroundTruthDataset,
  represent: Representation,
  rng: Rng,
  { numTrain = 10000, diffQuantile = 0.99, numBins = 20 }: IrsScoreOptions = {},
): Promise<IrsResult> {
  checkCount(numTrain, "numTrain", 1);
  const sampled = dataset.sampleFactors(numTrain, rng);
  const codes = await encodeFactors(dataset, represent, sampled, rng);
  const factors: Matrix = { data: sampled.values, rows: numTrain, cols: dataset.factorSizes.length };
  return irs(codes, factors, { diffQuantile, numBins });
}
