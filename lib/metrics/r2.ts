/**
 * The scores of the in-domain generalization benchmark (Schott2022): R² of
 * regressed factors against the
 * normalized ground truth, the OOD-factor/ID-factor R² on D_one-ood, the
 * "towards the mean" ratio (Eq. 2) and the correlation of OOD-factor errors
 * between models (Fig. 17).
 *
 * Targets are factor indices divided by (n_j − 1), so each factor lies in
 * [0, 1]. R² divides by the variance of the factor over the FULL grid, not
 * over the scored points, as the reference `RSquared` (evaluate_model.py)
 * does: uniform indices 0..n−1 scaled by 1/(n−1) have variance
 * (n + 1) / (12 (n − 1)).
 *
 * @module
 */
import { checkMatrix, correlationMatrix, type Matrix } from "../core/matrix.ts";
import { factorsOf, oodFactor, type Split, SPLIT_SIZES, SPLIT_VALUES, type SplitDataset } from "../data/splits.ts";
import { median } from "./study.ts";

/** Variance of the normalized factor index/(n − 1) over all n values: (n + 1) / (12 (n − 1)). */
export function gridVariance(n: number): number {
  if (!Number.isInteger(n) || n < 2) throw new Error(`a factor needs at least 2 values, got ${n}`);
  return (n + 1) / (12 * (n - 1));
}

/** Checks predictions `[n, k]` against factor indices `[n·k]` of a grid with `sizes`; returns k. */
function checkInputs(pred: Matrix, factors: Int32Array, sizes: readonly number[], what = "predictions"): number {
  checkMatrix(pred, what, 1);
  const k = sizes.length;
  if (pred.cols !== k) throw new Error(`${what} have ${pred.cols} columns, the grid has ${k} factors`);
  if (factors.length !== pred.rows * k) {
    throw new Error(`factors hold ${factors.length} values, expected ${pred.rows} rows × ${k} factors`);
  }
  sizes.forEach(gridVariance);
  for (let i = 0; i < factors.length; i++) {
    const j = i % k;
    if (!(factors[i] >= 0 && factors[i] < sizes[j])) {
      throw new Error(`factors[${Math.floor(i / k)}, ${j}] = ${factors[i]} is outside 0..${sizes[j] - 1}`);
    }
  }
  return k;
}

/** The result of {@linkcode r2Scores}. */
export interface R2Scores {
  /** Mean of `perFactor` over all factors (shape included), unclipped. */
  r2: number;
  /** R²_j = 1 − MSE_j / σ²_j per factor. */
  perFactor: number[];
  /** MSE_j per factor, in normalized units ([0, 1] targets). */
  mse: number[];
}

/**
 * R² of predictions `pred` `[n, k]` (normalized factors) against the factor
 * indices `factors` `[n, k]` (row-major, 0..sizes[j]−1): per factor
 * R²_j = 1 − MSE_j / σ²_j with y_j = index / (sizes[j] − 1) and σ²_j the
 * full-grid variance ({@linkcode gridVariance}); the score is their mean,
 * not clipped at 0 (Schott2022's tables are unclipped).
 */
export function r2Scores(pred: Matrix, factors: Int32Array, sizes: readonly number[]): R2Scores {
  const k = checkInputs(pred, factors, sizes);
  const squared = new Float64Array(k);
  for (let r = 0; r < pred.rows; r++) {
    for (let j = 0; j < k; j++) {
      const error = pred.data[r * k + j] - factors[r * k + j] / (sizes[j] - 1);
      squared[j] += error * error;
    }
  }
  const mse = Array.from(squared, (s) => s / pred.rows);
  const perFactor = mse.map((m, j) => 1 - m / gridVariance(sizes[j]));
  return { r2: perFactor.reduce((a, b) => a + b, 0) / k, perFactor, mse };
}

/** The result of {@linkcode constantR2}: the test R² of three constant predictions. */
export interface ConstantR2 {
  /** The training part's mean: where an MSE regressor blind to its input ends. */
  train: number;
  /** The grid's mean, 0.5 per factor. */
  grid: number;
  /** The test part's own mean: the best constant, every constant scores at most this. */
  best: number;
}

/**
 * Test R² (as {@linkcode r2Scores}: full-grid variance, mean over factors) of
 * constant predictions on split `name` of `dataset`, exact over the whole
 * test part. A listed split is a product set (every factor off its listed
 * values: the training part of interpolation and extrapolation, the test part
 * of composition) and its complement, so each factor's moments on either part
 * follow from its own values. On the i.i.d. random split all three are 0 in
 * expectation, and 0 is returned.
 */
export function constantR2(dataset: SplitDataset, name: Split["name"]): ConstantR2 {
  if (name === "random") return { train: 0, grid: 0, best: 0 };
  const sizes = SPLIT_SIZES[dataset], listed = SPLIT_VALUES[dataset][name];
  const indices = (n: number) => Array.from({ length: n }, (_, v) => v);
  const kept = sizes.map((n, j) => indices(n).filter((v) => !listed[j].includes(v)));
  const total = sizes.reduce((a, b) => a * b, 1), inProduct = kept.reduce((a, k) => a * k.length, 1);
  const perFactor = sizes.map((n, j) => {
    // Means of y and y² (y = index / (n − 1)) over the product part and the grid; the complement's by difference.
    const moments = (vs: number[]) => [1, 2].map((p) => vs.reduce((a, v) => a + (v / (n - 1)) ** p, 0) / vs.length);
    const product = moments(kept[j]), grid = moments(indices(n));
    const rest = grid.map((g, p) => (total * g - inProduct * product[p]) / (total - inProduct));
    const [test, train] = name === "composition" ? [product, rest] : [rest, product];
    const r2 = (c: number) => 1 - (test[1] - 2 * c * test[0] + c * c) / gridVariance(n);
    return [r2(train[0]), r2(0.5), r2(test[0])];
  });
  const [train, grid, best] = [0, 1, 2].map((i) => perFactor.reduce((a, t) => a + t[i], 0) / sizes.length);
  return { train, grid, best };
}

/** The result of {@linkcode oodAnalysis}; null where no point qualifies. */
export interface OodAnalysis {
  /** Mean over the factors that are ever the OOD one of `oodPerFactor`. */
  r2Ood: number | null;
  /** Mean over the factors of `idPerFactor`. */
  r2Id: number | null;
  /** Per factor: R² on the D_one-ood rows where this factor is the OOD one. */
  oodPerFactor: (number | null)[];
  /** Per factor: R² on the D_one-ood rows where this factor is in distribution (another one is OOD). */
  idPerFactor: (number | null)[];
  /** Median of the ratio r (Eq. 2) over the D_one-ood rows, on each row's OOD factor. */
  ratioMedian: number | null;
  /** Fraction of those ratios in [0, 1]: predicted between the training mean and the truth. */
  ratioInUnit: number | null;
  /** Rows of the input in D_one-ood. */
  n: number;
}

/** Mean of each factor's normalized value over the split's training part: ȳ_j of Eq. 2. */
function trainMeans(split: Split): Float64Array {
  const k = split.sizes.length;
  const { values } = factorsOf(split.sizes, split.train);
  const sums = new Float64Array(k);
  for (let i = 0; i < values.length; i++) sums[i % k] += values[i];
  return sums.map((s, j) => s / split.train.length / (split.sizes[j] - 1));
}

/** Each row's OOD factor (−1 outside D_one-ood), from its factor tuple. */
function oodFactors(factors: Int32Array, rows: number, split: Split): Int32Array {
  const k = split.sizes.length;
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let index = 0;
    for (let j = 0; j < k; j++) index = index * split.sizes[j] + factors[r * k + j];
    out[r] = oodFactor(split, index);
  }
  return out;
}

function meanOf(values: (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null;
}

/**
 * Modularity of the errors on D_one-ood (Schott2022 §5.2, Fig. 5) and the
 * "towards the mean" ratio (Eq. 2, §5.3) for predictions `pred` `[n, k]` of
 * the factor tuples `factors` `[n, k]`; rows outside D_one-ood of `split`
 * (see {@linkcode oodFactor}) are ignored. R² uses the full-grid variance
 * as {@linkcode r2Scores}. Eq. 2's ratio r = |f_j − ȳ_j| / |y_j − ȳ_j| is
 * taken on each row's OOD factor j with ȳ_j the mean over the training part
 * (§5.3); a row whose truth equals ȳ_j has no ratio.
 */
export function oodAnalysis(pred: Matrix, factors: Int32Array, split: Split): OodAnalysis {
  const { sizes } = split;
  const k = checkInputs(pred, factors, sizes);
  const ood = oodFactors(factors, pred.rows, split);
  const means = trainMeans(split);
  const oodSquared = new Float64Array(k), oodCount = new Float64Array(k);
  const idSquared = new Float64Array(k), idCount = new Float64Array(k);
  const ratios: number[] = [];
  let n = 0;
  for (let r = 0; r < pred.rows; r++) {
    const oodJ = ood[r];
    if (oodJ < 0) continue;
    n++;
    for (let j = 0; j < k; j++) {
      const y = factors[r * k + j] / (sizes[j] - 1), f = pred.data[r * k + j];
      const squared = (f - y) ** 2;
      if (j === oodJ) {
        oodSquared[j] += squared;
        oodCount[j]++;
        const away = Math.abs(y - means[j]);
        if (away > 0) ratios.push(Math.abs(f - means[j]) / away);
      } else {
        idSquared[j] += squared;
        idCount[j]++;
      }
    }
  }
  const r2 = (squared: Float64Array, count: Float64Array) =>
    Array.from(squared, (s, j) => count[j] ? 1 - s / count[j] / gridVariance(sizes[j]) : null);
  const oodPerFactor = r2(oodSquared, oodCount), idPerFactor = r2(idSquared, idCount);
  return {
    r2Ood: meanOf(oodPerFactor),
    r2Id: meanOf(idPerFactor),
    oodPerFactor,
    idPerFactor,
    ratioMedian: ratios.length ? median(ratios) : null,
    ratioInUnit: ratios.length ? ratios.filter((v) => v <= 1).length / ratios.length : null,
    n,
  };
}

/** The result of {@linkcode errorCorrelations}. */
export interface ErrorCorrelations {
  /** Pearson ρ between the two models' OOD-factor errors f_j − y_j. */
  between: number;
  /** Pearson ρ between model A's OOD-factor error and the true value y_j. */
  truthA: number;
  /** The same for model B. */
  truthB: number;
  /** D_one-ood rows the correlations are taken over. */
  n: number;
}

/**
 * How alike two models fail (Schott2022 Fig. 17): over the rows of `factors`
 * `[n, k]` in D_one-ood of `split`, the error f_j − y_j of each model on the
 * row's OOD factor j, pooled over factors; Pearson ρ between the models'
 * errors and of each model's error with y_j. Needs at least 2 such rows.
 */
export function errorCorrelations(predA: Matrix, predB: Matrix, factors: Int32Array, split: Split): ErrorCorrelations {
  const { sizes } = split;
  const k = checkInputs(predA, factors, sizes, "first predictions");
  checkInputs(predB, factors, sizes, "second predictions");
  const ood = oodFactors(factors, predA.rows, split);
  const errorA: number[] = [], errorB: number[] = [], truth: number[] = [];
  for (let r = 0; r < predA.rows; r++) {
    const j = ood[r];
    if (j < 0) continue;
    const y = factors[r * k + j] / (sizes[j] - 1);
    errorA.push(predA.data[r * k + j] - y);
    errorB.push(predB.data[r * k + j] - y);
    truth.push(y);
  }
  const n = truth.length;
  if (n < 2) throw new Error(`error correlations need at least 2 rows in D_one-ood, got ${n}`);
  const errors: Matrix = { data: errorA.flatMap((a, i) => [a, errorB[i]]), rows: n, cols: 2 };
  const between = correlationMatrix(errors, errors)[0][1];
  const [[truthA], [truthB]] = correlationMatrix(errors, { data: truth, rows: n, cols: 1 });
  return { between, truthA, truthB, n };
}
