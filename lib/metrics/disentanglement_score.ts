/**
 * Scores of latents against continuous or mixed ground-truth factors, for the
 * synthetic data of Zietlow 2022 Ch. 3 where disentanglement_lib's discrete
 * metrics do not apply (Zietlow2022 eqs. 2.8, 3.32–3.37):
 *
 * - the thesis's "Disentanglement Score" (DS, eqs. 3.32–3.37): how much
 *   better the best single latent predicts a factor with a 1-D k-nearest-
 *   neighbours model than the second best, normalised by the factor's scale.
 *   The thesis defines it on [0, 1], but its formula is not bounded: a kNN
 *   regressor from an uninformative latent averages k unrelated values and
 *   has mse ≈ (1 + 1/k)·Var, so A = √Var − √mse ≈ −0.095·√Var (k 5) and a
 *   perfect code scores ≈ 1.095; the classification normaliser acc_const
 *   leaves (acc₁ − acc₂)/acc_const up to (1 − c)/c. `ds` floors each A at
 *   the constant predictor's and normalises classification by 1 − acc_const,
 *   which bounds it to [0, 1]; `dsThesis` is the formula as printed;
 * - MIG-binned: MIG with the factors cut into equal-width bins first;
 * - the correlation gap: the top |Pearson corr| of a factor with a latent
 *   minus the runner-up, a cheap check that catches "orthogonal but rotated".
 *
 * The thesis names "the SciPy" kNN with default settings; that is
 * scikit-learn's KNeighbors{Regressor,Classifier} (k = 5, uniform weights,
 * Euclidean distance), which this module reproduces exactly, ties included.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkPaired, column, correlationMatrix, type Matrix } from "../core/matrix.ts";
import { histogramDiscretize } from "./discrete.ts";
import { mig, type MigResult } from "./mig.ts";

/** How a factor is predicted by DS: kNN regression (continuous factors) or classification (discrete labels). */
export type FactorKind = "regression" | "classification";

/** The result of {@linkcode disentanglementScore}. */
export interface DsResult {
  /**
   * DS on [0, 1]: mean over factors of (Â_best − Â_second)/M̂ with every
   * predictor at least as good as the best constant one: regression
   * Â = max(0, √Var − √mse), M̂ = √Var; classification Â = max(acc,
   * acc_const) − acc_const, M̂ = 1 − acc_const. 0 when no latent beats the
   * constant, 1 only when one latent predicts the factor exactly and no
   * other latent beats the constant.
   */
  ds: number;
  /**
   * The formula as printed (3.32–3.37): mean over factors of (A_best −
   * A_second)/M with raw A and M = acc_const for classification. Exceeds 1
   * where the runner-up predicts worse than the constant (≈ 1.095 for a
   * perfect code with k 5) and for classification with acc_const < ½.
   */
  dsThesis: number;
  /** The per-factor terms of `ds` `[factors]`, each in [0, 1]. */
  perFactor: number[];
  /** The per-factor terms of `dsThesis` `[factors]`. */
  perFactorThesis: number[];
  /** Raw A `[factor][latent]`: √Var − √mse for regression, accuracy for classification (sklearn's numbers). */
  scores: number[][];
}

/** Options of {@linkcode disentanglementScore}. */
export interface DsOptions {
  /** Neighbours per prediction (sklearn's default 5). */
  k?: number;
  /** Share of the rows (the first ones) the kNN models are fitted on; the rest are scored. */
  trainFraction?: number;
}

/**
 * The k nearest fitting values of each query in one dimension: row-major
 * `[queries.length, k]` indices into `fit`, nearest first. Among equal
 * distances the lower fitting index wins, as scikit-learn's brute-force
 * search keeps the first it meets. Sorting the fitting values once and
 * growing a window of k around each query's position makes it
 * O((n + q) log n + q·k) instead of the O(n·q) of a brute-force search.
 */
export function knnNeighbors1d(fit: ArrayLike<number>, queries: ArrayLike<number>, k: number): Int32Array {
  const n = fit.length;
  if (!Number.isInteger(k) || k < 1 || k > n) {
    throw new UsageError(`k must be an integer in 1..${n} (the fitting rows), got ${k}`);
  }
  for (const [what, values] of [["fit", fit], ["queries", queries]] as const) {
    for (let i = 0; i < values.length; i++) {
      if (!Number.isFinite(values[i])) throw new UsageError(`knnNeighbors1d: ${what}[${i}] is ${values[i]}`);
    }
  }
  // Fitting rows by value, then by index, so a run of equal values lists its indices ascending.
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => fit[a] - fit[b] || a - b);
  const sorted = Float64Array.from(order, (i) => fit[i]);
  /** First position in [lo, hi) where the monotone (false…true) `pred` holds, else hi. */
  const firstTrue = (lo: number, hi: number, pred: (p: number) => boolean) => {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pred(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const out = new Int32Array(queries.length * k);
  const row: number[] = [];
  for (let qi = 0; qi < queries.length; qi++) {
    const q = queries[qi];
    // Left of `mid` the values below q, from it on those ≥ q; the distance grows outwards on both sides.
    const mid = firstTrue(0, n, (p) => sorted[p] >= q);
    // The k-th smallest distance: grow a window of k around `mid`, the nearer side first.
    let left = mid - 1;
    let right = mid;
    let kth = 0;
    for (let taken = 0; taken < k; taken++) {
      const dl = left >= 0 ? q - sorted[left] : Infinity;
      const dr = right < n ? sorted[right] - q : Infinity;
      if (dl <= dr) {
        kth = dl;
        left--;
      } else {
        kth = dr;
        right++;
      }
    }
    // Rows nearer than the k-th distance are all in: one contiguous stretch [nearFrom, nearTo). The rest come from
    // the rows at exactly that distance, [tieLeft, nearFrom) and [nearTo, tieRight), lowest index first; equal
    // distances may straddle the window's edges, hence the searches rather than the window itself.
    const nearFrom = firstTrue(0, mid, (p) => q - sorted[p] < kth);
    const tieLeft = firstTrue(0, mid, (p) => q - sorted[p] <= kth);
    const nearTo = firstTrue(mid, n, (p) => sorted[p] - q >= kth);
    const tieRight = firstTrue(mid, n, (p) => sorted[p] - q > kth);
    row.length = 0;
    for (let p = nearFrom; p < nearTo; p++) row.push(order[p]);
    const need = k - row.length;
    const oneValue = (from: number, to: number) => from === to || sorted[from] === sorted[to - 1];
    if (oneValue(tieLeft, nearFrom) && oneValue(nearTo, tieRight)) {
      // Each tied stretch holds one value, so its indices ascend: merge the two.
      let a = tieLeft;
      let b = nearTo;
      for (let t = 0; t < need; t++) {
        row.push(b >= tieRight || (a < nearFrom && order[a] < order[b]) ? order[a++] : order[b++]);
      }
    } else {
      // Distinct values whose distances round to the same number: sort their indices.
      const tied: number[] = [];
      for (let p = tieLeft; p < nearFrom; p++) tied.push(order[p]);
      for (let p = nearTo; p < tieRight; p++) tied.push(order[p]);
      tied.sort((x, y) => x - y);
      for (let t = 0; t < need; t++) row.push(tied[t]);
    }
    // Nearest first (ties by index), the order sklearn reports neighbours in and sums the regression mean in.
    row.sort((x, y) => Math.abs(fit[x] - q) - Math.abs(fit[y] - q) || x - y);
    out.set(row, qi * k);
  }
  return out;
}

/** Most frequent label in `labels` (the smallest among tied counts, like sklearn's mode and DummyClassifier). */
function majority(labels: ArrayLike<number>): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) counts.set(labels[i], (counts.get(labels[i]) ?? 0) + 1);
  let best = NaN;
  let bestCount = -1;
  for (const [label, count] of counts) {
    if (count > bestCount || (count === bestCount && label < best)) {
      best = label;
      bestCount = count;
    }
  }
  return best;
}

/**
 * The thesis's Disentanglement Score of `codes` `[n, d]` (d ≥ 2) against
 * `factors` `[n, f]` with one {@linkcode FactorKind} per factor. Per (factor,
 * latent) a 1-D kNN (k neighbours, uniform weights) is fitted on the first
 * round(trainFraction·n) rows and scored on the rest; the rows must already
 * be in random order (nothing is shuffled here). Regression: A = √Var(w) −
 * √mse, M = √Var(w) (population variance of the scored rows); classification:
 * A = accuracy, M = accuracy of the fitting rows' majority class on the
 * scored rows (the best constant classifier). `ds` floors A at the constant
 * predictor's (see {@linkcode DsResult}) and lies on [0, 1]; `dsThesis` is
 * the printed formula. Throws where a denominator is 0 (a factor constant on
 * the scored rows, or its majority class absent there or everywhere).
 */
export function disentanglementScore(
  codes: Matrix,
  factors: Matrix,
  kinds: readonly FactorKind[],
  options: DsOptions = {},
): DsResult {
  const { k = 5, trainFraction = 0.8 } = options;
  checkPaired(codes, factors, { minRows: 2 });
  if (codes.cols < 2) {
    throw new UsageError(`DS compares the best latent with the second: needs ≥ 2 latents, got ${codes.cols}`);
  }
  if (kinds.length !== factors.cols) {
    throw new UsageError(`kinds names ${kinds.length} factors, the factors matrix has ${factors.cols}`);
  }
  kinds.forEach((kind, i) => {
    if (kind !== "regression" && kind !== "classification") {
      throw new UsageError(`factor ${i}: kind must be "regression" or "classification", got ${JSON.stringify(kind)}`);
    }
  });
  if (!Number.isInteger(k) || k < 1) throw new UsageError(`k must be a positive integer, got ${k}`);
  if (!(trainFraction > 0 && trainFraction < 1)) {
    throw new UsageError(`trainFraction must lie in (0, 1), got ${trainFraction}`);
  }
  const n = codes.rows;
  const nFit = Math.round(trainFraction * n);
  const nScore = n - nFit;
  if (nFit < k || nScore < 1) {
    throw new UsageError(`${n} rows split into ${nFit} fitting and ${nScore} scored rows: needs ≥ k = ${k} and ≥ 1`);
  }

  const factorColumns = Array.from({ length: factors.cols }, (_, i) => column(factors.data, n, factors.cols, i));
  const scores = factorColumns.map(() => new Array<number>(codes.cols).fill(0));
  // Neighbours depend on the latent only: find them once and score every factor with them.
  for (let j = 0; j < codes.cols; j++) {
    const code = column(codes.data, n, codes.cols, j);
    const neighbors = knnNeighbors1d(code.subarray(0, nFit), code.subarray(nFit), k);
    factorColumns.forEach((w, i) => {
      if (kinds[i] === "regression") {
        let mse = 0;
        for (let q = 0; q < nScore; q++) {
          let sum = 0;
          for (let t = 0; t < k; t++) sum += w[neighbors[q * k + t]];
          mse += (sum / k - w[nFit + q]) ** 2;
        }
        scores[i][j] = Math.sqrt(populationVariance(w.subarray(nFit))) - Math.sqrt(mse / nScore);
      } else {
        let correct = 0;
        const votes = new Float64Array(k);
        for (let q = 0; q < nScore; q++) {
          for (let t = 0; t < k; t++) votes[t] = w[neighbors[q * k + t]];
          if (majority(votes) === w[nFit + q]) correct++;
        }
        scores[i][j] = correct / nScore;
      }
    });
  }

  const perFactor: number[] = [];
  const perFactorThesis: number[] = [];
  factorColumns.forEach((w, i) => {
    const [best, second] = scores[i].slice().sort((a, b) => b - a);
    const scored = w.subarray(nFit);
    if (kinds[i] === "regression") {
      const scale = Math.sqrt(populationVariance(scored));
      if (!(scale > 0)) throw new UsageError(`factor ${i} is constant on the ${nScore} scored rows: DS is undefined`);
      perFactorThesis.push((best - second) / scale);
      // The constant predictor has A = 0 and the kNN's A ≤ √Var: the term lies in [0, 1].
      perFactor.push((Math.max(0, best) - Math.max(0, second)) / scale);
    } else {
      const constant = majority(w.subarray(0, nFit));
      let hits = 0;
      for (const v of scored) if (v === constant) hits++;
      const accConst = hits / nScore;
      if (accConst === 0 || accConst === 1) {
        throw new UsageError(
          `factor ${i}: the majority class of the fitting rows scores accuracy ${accConst} on the scored rows: DS is undefined`,
        );
      }
      perFactorThesis.push((best - second) / accConst);
      perFactor.push((Math.max(best, accConst) - Math.max(second, accConst)) / (1 - accConst));
    }
  });
  return { ds: mean(perFactor), dsThesis: mean(perFactorThesis), perFactor, perFactorThesis, scores };
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

/** Σ(x − x̄)²/n, as numpy's `var` (ddof 0). */
function populationVariance(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  const m = sum / values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i] - m) ** 2;
  return squares / values.length;
}

/**
 * "MIG-binned" (after Zietlow2022 eq. 2.8): MIG of `codes` `[n, d]` against continuous
 * `factors` `[n, f]` cut into `bins` equal-width bins over each factor's
 * [min, max] (disentanglement_lib's histogram_discretizer, the same
 * discretisation MIG applies to the codes), then {@linkcode mig} with the
 * same number of code bins. Labelled apart from MIG because the thesis's MIG
 * covers discrete factors only.
 */
export function migBinned(codes: Matrix, factors: Matrix, bins = 20): MigResult {
  checkPaired(codes, factors, { minRows: 2 });
  const binned = histogramDiscretize(factors, bins);
  return mig(codes, { data: binned, rows: factors.rows, cols: factors.cols }, { bins });
}

/**
 * Correlation gap of `codes` `[n, d]` against `factors` `[n, f]`: per factor
 * the largest |Pearson corr| over latents minus the second largest (0 with a
 * single latent), and their mean. 1 for a permuted, rescaled, sign-flipped
 * copy of uncorrelated factors; lower when a latent mixes factors, which
 * DtO ≈ 0 alone does not rule out.
 */
export function corrGap(codes: Matrix, factors: Matrix): { gap: number; perFactor: number[] } {
  checkPaired(codes, factors, { minRows: 2 });
  const perFactor = correlationMatrix(factors, codes).map((row) => {
    const [top, second = 0] = row.map(Math.abs).sort((a, b) => b - a);
    return top - second;
  });
  return { gap: mean(perFactor), perFactor };
}
