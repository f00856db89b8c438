/**
 * Unsupervised Disentanglement Ranking (Duan et al. 2020) for one pair of
 * models, as disentanglement_lib's `udr.py` computes it with
 * `correlation_matrix="spearman"`: R = |Spearman correlation| between every
 * code of model A and every code of model B on the same observations,
 * restricted to informative codes (average KL above a threshold), scored by
 * `relative_strength_disentanglement`.
 *
 * The score averages, over the columns of R, max² / sum of the column, and
 * likewise over the rows, then averages the two. The paper writes
 * 1/(d_a + d_b) [Σ_b r_b² / Σ_a R(a,b) + Σ_a r_a² / Σ_b R(a,b)]; the two agree
 * when both models have the same number of informative codes
 * (`normalization: "paper"` selects the paper's form).
 *
 * Deviation: a constant informative code has an undefined (NaN) Spearman
 * correlation; disentanglement_lib lets that NaN zero out every row and column
 * sum it touches, here its correlations are taken as 0 instead.
 *
 * @module
 */
import { checkMatrix, correlationMatrix, type Matrix } from "../core/matrix.ts";

/** Options of {@linkcode udr}. */
export interface UdrOptions {
  /** Average KL divergence per code of each model; without it every code is informative. */
  kl?: { a: ArrayLike<number>; b: ArrayLike<number> };
  /** A code is informative when its KL exceeds this, default 0.01. */
  klThreshold?: number;
  /** "disentanglement_lib" (default): mean of the row and column means; "paper": Σ over both / (d_a + d_b). */
  normalization?: "disentanglement_lib" | "paper";
}

/**
 * |Spearman ρ| between every code of `codesA` (rows of the result) and every
 * code of `codesB` (columns), both `[n, *]` on the same observations.
 */
export function spearmanAbsMatrix(codesA: Matrix, codesB: Matrix): number[][] {
  checkMatrix(codesA, "codesA", 2);
  checkMatrix(codesB, "codesB", 2);
  if (codesA.rows !== codesB.rows) throw new Error(`row counts differ: ${codesA.rows} vs ${codesB.rows}`);
  // Rounding can push |ρ| of a monotone pair a hair above 1.
  return correlationMatrix(codesA, codesB, "spearman").map((row) => row.map((rho) => Math.min(1, Math.abs(rho))));
}

/** max² / sum, or 0 where that is 0/0 (np.nan_to_num). */
function strength(values: number[]): number {
  const sum = values.reduce((s, v) => s + v, 0);
  return sum > 0 ? Math.max(...values) ** 2 / sum : 0;
}

/**
 * UDR similarity of two models' mean codes of the same observations, in
 * [0, 1]: 1 when each informative code of one model matches exactly one of
 * the other up to a monotone map, near 0 for unrelated codes; 0 when either
 * model has no informative code.
 */
export function udr(
  codesA: Matrix,
  codesB: Matrix,
  { kl, klThreshold = 0.01, normalization = "disentanglement_lib" }: UdrOptions = {},
): number {
  if (normalization !== "disentanglement_lib" && normalization !== "paper") {
    throw new Error(`unknown normalization "${normalization}"`);
  }
  if (!(klThreshold >= 0)) throw new Error(`klThreshold must be ≥ 0, got ${klThreshold}`);
  const full = spearmanAbsMatrix(codesA, codesB);
  const informative = (values: ArrayLike<number> | undefined, d: number, what: string): number[] => {
    if (values === undefined) return Array.from({ length: d }, (_, i) => i);
    if (values.length !== d) throw new Error(`kl.${what} has ${values.length} entries for ${d} codes`);
    const keep: number[] = [];
    for (let i = 0; i < d; i++) {
      if (!Number.isFinite(values[i])) throw new Error(`kl.${what}[${i}] is not finite`);
      if (values[i] > klThreshold) keep.push(i);
    }
    return keep;
  };
  const rowsA = informative(kl?.a, codesA.cols, "a"), colsB = informative(kl?.b, codesB.cols, "b");
  // nanmean of an empty selection is NaN in disentanglement_lib; no informative code scores 0 here.
  if (rowsA.length === 0 || colsB.length === 0) return 0;
  const r = rowsA.map((i) => colsB.map((j) => full[i][j]));
  const rowScores = r.map(strength);
  const colScores = colsB.map((_, j) => strength(r.map((row) => row[j])));
  const sum = (v: number[]) => v.reduce((s, x) => s + x, 0);
  if (normalization === "paper") return (sum(rowScores) + sum(colScores)) / (rowsA.length + colsB.length);
  return (sum(colScores) / colScores.length + sum(rowScores) / rowScores.length) / 2;
}
