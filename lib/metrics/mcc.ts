/**
 * Mean correlation coefficient (MCC): the mean absolute correlation between
 * ground-truth sources and learned codes under the best one-to-one matching
 * (Hungarian algorithm on |corr|). Identifiability up to permutation and
 * elementwise rescaling gives MCC = 1. As in Paper A App. C of
 * 000_306f4209a39c5a17.md: Pearson ("linear") or Spearman ("rank")
 * correlation, and no random padding when codes outnumber sources.
 *
 * @module
 */
import { munkres } from "munkres";

/** A row-major matrix `[rows, cols]` (samples × dimensions). */
export interface Matrix {
  data: ArrayLike<number>;
  rows: number;
  cols: number;
}

/**
 * Checks that `m` is a well-formed matrix of finite values with at least
 * `minRows` rows and one column; `what` names it in the error.
 */
export function checkMatrix(m: Matrix, what: string, minRows = 0): void {
  if (!Number.isInteger(m.rows) || !Number.isInteger(m.cols) || m.rows < minRows || m.cols < 1) {
    throw new Error(`${what}: needs at least ${minRows} rows and 1 column, got shape [${m.rows}, ${m.cols}]`);
  }
  if (m.data.length !== m.rows * m.cols) {
    throw new Error(`${what}: data length ${m.data.length} does not match shape [${m.rows}, ${m.cols}]`);
  }
  for (let i = 0; i < m.data.length; i++) {
    if (!Number.isFinite(m.data[i])) throw new Error(`${what}: non-finite value at index ${i}`);
  }
}

/**
 * Checks a train/test split of codes and factors: each a valid matrix with
 * at least `minRows` rows, codes and factors of a split with equal row
 * counts, and both splits with the same code and factor counts.
 */
export function checkSplit(
  trainCodes: Matrix,
  trainFactors: Matrix,
  testCodes: Matrix,
  testFactors: Matrix,
  minRows = 0,
): void {
  checkMatrix(trainCodes, "trainCodes", minRows);
  checkMatrix(trainFactors, "trainFactors", minRows);
  checkMatrix(testCodes, "testCodes", minRows);
  checkMatrix(testFactors, "testFactors", minRows);
  if (trainCodes.rows !== trainFactors.rows) {
    throw new Error(`row counts differ: trainCodes has ${trainCodes.rows}, trainFactors has ${trainFactors.rows}`);
  }
  if (testCodes.rows !== testFactors.rows) {
    throw new Error(`row counts differ: testCodes has ${testCodes.rows}, testFactors has ${testFactors.rows}`);
  }
  if (trainCodes.cols !== testCodes.cols) {
    throw new Error(`code counts differ: train has ${trainCodes.cols}, test has ${testCodes.cols}`);
  }
  if (trainFactors.cols !== testFactors.cols) {
    throw new Error(`factor counts differ: train has ${trainFactors.cols}, test has ${testFactors.cols}`);
  }
}

/** Throws unless every factor value of the named matrices is an integer class label. */
export function checkIntegerLabels(named: Record<string, Matrix>): void {
  for (const [what, m] of Object.entries(named)) {
    for (let i = 0; i < m.data.length; i++) {
      if (!Number.isInteger(m.data[i])) throw new Error(`${what}: factor labels must be integers, got ${m.data[i]}`);
    }
  }
}

/** Correlation flavours. */
export type CorrelationMethod = "pearson" | "spearman";

/** The result of {@linkcode meanCorrelationCoefficient}. */
export interface MccResult {
  /** Mean |corr| over the matched pairs, in [0, 1]. */
  mcc: number;
  /** `matching[i]` is the code matched to source i (−1 if codes ran out). */
  matching: number[];
  /** |corr| of each source with its matched code. */
  perSource: number[];
  /** Full |corr| matrix `[sources][codes]`. */
  absCorrelation: number[][];
}

/** Ranks of `values` (1-based, ties get their average rank). */
export function ranks(values: ArrayLike<number>): Float64Array {
  const order = Array.from({ length: values.length }, (_, i) => i).sort((a, b) => values[a] - values[b]);
  const out = new Float64Array(values.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j + 1 < order.length && values[order[j + 1]] === values[order[i]]) j++;
    const average = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) out[order[k]] = average;
    i = j + 1;
  }
  return out;
}

function columns(m: Matrix, method: CorrelationMethod): Float64Array[] {
  return Array.from({ length: m.cols }, (_, c) => {
    const column = new Float64Array(m.rows);
    for (let r = 0; r < m.rows; r++) column[r] = m.data[r * m.cols + c];
    const values = method === "spearman" ? ranks(column) : column;
    // Centre and scale to unit norm, so a dot product is the correlation.
    let mean = 0;
    for (const v of values) mean += v;
    mean /= values.length;
    let norm = 0;
    for (let r = 0; r < values.length; r++) {
      values[r] -= mean;
      norm += values[r] * values[r];
    }
    norm = Math.sqrt(norm);
    for (let r = 0; r < values.length; r++) values[r] = norm > 0 ? values[r] / norm : 0;
    return values;
  });
}

/**
 * Correlation matrix `[a.cols][b.cols]` between the columns of two matrices
 * with the same number of rows. A constant column correlates 0 with everything.
 */
export function correlationMatrix(a: Matrix, b: Matrix, method: CorrelationMethod = "pearson"): number[][] {
  if (a.rows !== b.rows) throw new Error(`row counts differ: ${a.rows} vs ${b.rows}`);
  if (a.rows < 2) throw new Error("correlation needs at least 2 rows");
  const ca = columns(a, method);
  const cb = columns(b, method);
  return ca.map((x) =>
    cb.map((y) => {
      let dot = 0;
      for (let r = 0; r < x.length; r++) dot += x[r] * y[r];
      return dot;
    })
  );
}

/**
 * MCC between `sources` `[n, k]` and `codes` `[n, d]`: the best one-to-one
 * matching of sources to codes maximising total |corr|, averaged over the
 * min(k, d) matched pairs.
 */
export function meanCorrelationCoefficient(
  sources: Matrix,
  codes: Matrix,
  method: CorrelationMethod = "pearson",
): MccResult {
  const absCorrelation = correlationMatrix(sources, codes, method).map((row) => row.map(Math.abs));
  const pairs = munkres(absCorrelation.map((row) => row.map((v) => -v)));
  const matching = new Array(sources.cols).fill(-1);
  const perSource = new Array(sources.cols).fill(0);
  for (const [source, code] of pairs) {
    matching[source] = code;
    perSource[source] = absCorrelation[source][code];
  }
  const matched = pairs.length;
  const mcc = pairs.reduce((sum, [s, c]) => sum + absCorrelation[s][c], 0) / matched;
  return { mcc, matching, perSource, absCorrelation };
}
