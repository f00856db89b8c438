/**
 * Row-major matrices of samples × dimensions and the generic pieces every
 * layer above uses on them: shape and value checks, the train/test
 * {@linkcode Split} of codes and factors, columns, row gathering, ranks,
 * correlation matrices, and the mean and standard deviation of a sample.
 *
 * @module
 */

/** A row-major matrix `[rows, cols]` (samples × dimensions). */
export interface Matrix {
  /** The `rows * cols` values, row after row. */
  data: ArrayLike<number>;
  /** Number of rows (samples). */
  rows: number;
  /** Number of columns (dimensions). */
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

/** Options of {@linkcode checkPaired}. */
export interface PairedCheckOptions {
  /** Fewest rows each matrix may have, default 0. */
  minRows?: number;
  /** Names of the two matrices in errors, default "codes" and "factors". */
  names?: readonly [string, string];
}

/**
 * Checks codes `[n, d]` and factors `[n, k]` that describe the same `n`
 * observations row for row: each a valid matrix (see
 * {@linkcode checkMatrix}) with at least `minRows` rows, and equal row counts.
 */
export function checkPaired(
  codes: Matrix,
  factors: Matrix,
  { minRows = 0, names = ["codes", "factors"] }: PairedCheckOptions = {},
): void {
  checkMatrix(codes, names[0], minRows);
  checkMatrix(factors, names[1], minRows);
  if (codes.rows !== factors.rows) {
    throw new Error(`row counts differ: ${names[0]} has ${codes.rows}, ${names[1]} has ${factors.rows}`);
  }
}

/**
 * A train/test split of paired codes and factors, the input of the metrics
 * that fit on one half and score on the other (DCI, SAP, modularity and
 * explicitness, the downstream task). Within a half, row r of the codes
 * encodes the observation whose ground-truth factors are row r of the factors.
 */
export interface Split {
  /** Codes `[nTrain, d]`. */
  trainCodes: Matrix;
  /** Factors `[nTrain, k]`. */
  trainFactors: Matrix;
  /** Codes `[nTest, d]`. */
  testCodes: Matrix;
  /** Factors `[nTest, k]`. */
  testFactors: Matrix;
}

/**
 * Checks a {@linkcode Split}: each half passes {@linkcode checkPaired} with at
 * least `minRows` rows per matrix, and both halves have the same number of
 * codes and of factors. Errors name the offending matrix.
 */
export function checkSplit(split: Split, minRows = 0): void {
  const { trainCodes, trainFactors, testCodes, testFactors } = split;
  checkPaired(trainCodes, trainFactors, { minRows, names: ["trainCodes", "trainFactors"] });
  checkPaired(testCodes, testFactors, { minRows, names: ["testCodes", "testFactors"] });
  if (trainCodes.cols !== testCodes.cols) {
    throw new Error(`code counts differ: trainCodes has ${trainCodes.cols}, testCodes has ${testCodes.cols}`);
  }
  if (trainFactors.cols !== testFactors.cols) {
    throw new Error(`factor counts differ: trainFactors has ${trainFactors.cols}, testFactors has ${testFactors.cols}`);
  }
}

/** Throws unless every value of the named factor matrices is an integer class label. */
export function checkIntegerLabels(named: Record<string, Matrix>): void {
  for (const [what, m] of Object.entries(named)) {
    for (let i = 0; i < m.data.length; i++) {
      if (!Number.isInteger(m.data[i])) throw new Error(`${what}: factor labels must be integers, got ${m.data[i]}`);
    }
  }
}

/** Column `c` `[rows]` of a row-major `[rows, cols]` array. */
export function column(data: ArrayLike<number>, rows: number, cols: number, c: number): Float64Array {
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) out[r] = data[r * cols + c];
  return out;
}

/**
 * Rows `index[i] + offset` of a row-major `[n, cols]` array, copied in order
 * into a new row-major `[index.length, cols]` array: a `Float32Array` for a
 * `Float32Array` input (ready for a TF.js tensor), else a `Float64Array`.
 * Throws a RangeError for a row outside 0..n−1.
 */
export function gatherRows(data: Float32Array, cols: number, index: ArrayLike<number>, offset?: number): Float32Array;
/** Any other array-like input: the rows as a `Float64Array`. */
export function gatherRows(
  data: ArrayLike<number>,
  cols: number,
  index: ArrayLike<number>,
  offset?: number,
): Float64Array;
export function gatherRows(
  data: ArrayLike<number>,
  cols: number,
  index: ArrayLike<number>,
  offset = 0,
): Float32Array | Float64Array {
  const n = data.length / cols;
  const out = data instanceof Float32Array
    ? new Float32Array(index.length * cols)
    : new Float64Array(index.length * cols);
  for (let i = 0; i < index.length; i++) {
    const r = index[i] + offset;
    if (!(Number.isInteger(r) && r >= 0 && r < n)) throw new RangeError(`gatherRows: row ${r} is outside 0..${n - 1}`);
    for (let j = 0; j < cols; j++) out[i * cols + j] = data[r * cols + j];
  }
  return out;
}

/** Ranks of `values` `[n]` (1-based; tied values all get the average of their ranks, as scipy's `rankdata`). */
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

/** Correlation flavours: Pearson's r of the values, or Spearman's ρ (Pearson's r of their ranks). */
export type CorrelationMethod = "pearson" | "spearman";

/** The columns of `m`, as ranks for Spearman, centred and scaled to unit norm. */
function unitColumns(m: Matrix, method: CorrelationMethod): Float64Array[] {
  return Array.from({ length: m.cols }, (_, c) => {
    const raw = column(m.data, m.rows, m.cols, c);
    const values = method === "spearman" ? ranks(raw) : raw;
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
 * with the same number of rows (at least 2). A constant column correlates 0
 * with everything.
 */
export function correlationMatrix(a: Matrix, b: Matrix, method: CorrelationMethod = "pearson"): number[][] {
  if (a.rows !== b.rows) throw new Error(`row counts differ: ${a.rows} vs ${b.rows}`);
  if (a.rows < 2) throw new Error("correlation needs at least 2 rows");
  // NaN would make a column look constant (correlation 0): a diverged model would score as measured.
  for (const [m, name] of [[a, "first"], [b, "second"]] as const) {
    for (let i = 0; i < m.data.length; i++) {
      if (!Number.isFinite(m.data[i])) {
        throw new Error(`correlation of non-finite values: the ${name} matrix holds ${m.data[i]} at ${i}`);
      }
    }
  }
  const ca = unitColumns(a, method);
  const cb = unitColumns(b, method);
  return ca.map((x) =>
    cb.map((y) => {
      let dot = 0;
      for (let r = 0; r < x.length; r++) dot += x[r] * y[r];
      return dot;
    })
  );
}

/** The result of {@linkcode meanSd}, in the units of the values (variance in squared units). */
export interface MeanSd {
  /** Arithmetic mean. */
  mean: number;
  /** Σ (x − mean)² / (n − ddof). */
  variance: number;
  /** √variance. */
  sd: number;
}

/**
 * Mean and standard deviation of the sample `values` `[n]`. The s.d. is the
 * sample s.d. (ddof = 1: divides by n − 1); `ddof: 0` gives the population
 * s.d. (divides by n), for where a reference defines it so (sklearn's
 * `StandardScaler`, `np.std`). NaN where n ≤ ddof.
 */
export function meanSd(values: ArrayLike<number>, { ddof = 1 }: { ddof?: 0 | 1 } = {}): MeanSd {
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[i] - mean) ** 2;
  const variance = n > ddof ? squares / (n - ddof) : NaN;
  return { mean, variance, sd: Math.sqrt(variance) };
}
