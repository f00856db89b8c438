/**
 * Decoding behaviour from an embedding as CEBRA does for the rat hippocampus
 * (Schneider2023 Ch. 7, Fig. 7.6d): a kNN regressor for position and
 * a kNN classifier for direction, uniform weights, cosine distance, the number
 * of neighbours k ∈ {1, 4, 9, 16, 25} picked by the validation R² of the
 * (position, direction) pair; on the test set the median absolute position
 * error and the R² of the pair (sklearn `r2_score`, uniform average over the
 * two columns, the prediction stacked as in CEBRA's decoding demo).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { type KnnMetric, knnRegress } from "../ml/knn.ts";
import { r2Score } from "../ml/lasso.ts";

/** The neighbour counts CEBRA's rat decoding searches. */
export const KNN_NEIGHBORS: readonly number[] = [1, 4, 9, 16, 25];

/** Behaviour of one set of rows: position (any unit) and direction (class 0 or 1) per row. */
export interface PositionDirection {
  /** Position per row. */
  position: ArrayLike<number>;
  /** Direction per row, 0 or 1. */
  direction: ArrayLike<number>;
}

/** Embeddings and labels of the train, validation and test rows. */
export interface DecodingSets<T> {
  /** The training rows. */
  train: T;
  /** The validation rows. */
  valid: T;
  /** The test rows. */
  test: T;
}

/** What {@linkcode decodePositionDirection} finds. */
export interface PositionDirectionDecoding {
  /** The k with the highest validation R² (the smallest of a tie). */
  k: number;
  /** Validation R² of (position, direction) for each k searched, in order. */
  validR2: number[];
  /** Test R² of (position, direction), uniform average of the two columns. */
  r2: number;
  /** Test R² of position alone. */
  positionR2: number;
  /** Test median |predicted − true position|, in the position's unit. */
  medianAbsError: number;
  /** Test share of rows whose direction is predicted right. */
  directionAccuracy: number;
}

/**
 * R² of predictions `pred` against `truth`, both `[rows, cols]`: sklearn's
 * `r2_score` with the uniform average over columns (a constant column
 * scores 1 when predicted exactly, else 0).
 */
export function r2ScoreColumns(truth: Matrix, pred: Matrix): number {
  if (truth.rows !== pred.rows || truth.cols !== pred.cols) {
    throw new UsageError(`truth [${truth.rows}, ${truth.cols}] and prediction [${pred.rows}, ${pred.cols}] differ`);
  }
  let total = 0;
  for (let c = 0; c < truth.cols; c++) {
    const t = Float64Array.from({ length: truth.rows }, (_, r) => truth.data[r * truth.cols + c]);
    const p = Float64Array.from({ length: pred.rows }, (_, r) => pred.data[r * pred.cols + c]);
    total += r2Score(t, p);
  }
  return total / truth.cols;
}

/** Median of |a_i − b_i| (`np.median(abs(a − b))`: the mean of the middle two for an even count). */
export function medianAbsoluteError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new UsageError(`lengths differ: ${a.length} vs ${b.length}`);
  if (a.length === 0) throw new UsageError("the median of no values is undefined");
  const d = Float64Array.from({ length: a.length }, (_, i) => Math.abs(a[i] - b[i])).sort();
  const mid = d.length >> 1;
  return d.length % 2 === 1 ? d[mid] : (d[mid - 1] + d[mid]) / 2;
}

function checkLabels(set: PositionDirection, rows: number, what: string): void {
  if (set.position.length !== rows || set.direction.length !== rows) {
    throw new UsageError(
      `${what}: ${set.position.length} positions and ${set.direction.length} directions for ${rows} embedding rows`,
    );
  }
  for (let i = 0; i < rows; i++) {
    if (!Number.isFinite(set.position[i])) throw new UsageError(`${what}: position ${set.position[i]} at row ${i}`);
    const d = set.direction[i];
    if (d !== 0 && d !== 1) throw new UsageError(`${what}: direction must be 0 or 1, got ${d} at row ${i}`);
  }
}

/**
 * Position regressed and direction classified from k neighbours: one
 * neighbour search gives both, since with two classes the majority vote of
 * sklearn's classifier (a tie to the smaller label, 0) is "mean > ½".
 * Returns `[query.rows, 2]` row-major (position, direction).
 */
function predict(
  train: Matrix,
  labels: PositionDirection,
  query: Matrix,
  k: number,
  metric: KnnMetric,
): Float64Array {
  const targets = new Float64Array(train.rows * 2);
  for (let i = 0; i < train.rows; i++) {
    targets[2 * i] = labels.position[i];
    targets[2 * i + 1] = labels.direction[i];
  }
  const out = knnRegress(train, { data: targets, rows: train.rows, cols: 2 }, query, k, metric);
  for (let i = 0; i < query.rows; i++) out[2 * i + 1] = out[2 * i + 1] > 0.5 ? 1 : 0;
  return out;
}

function stacked(labels: PositionDirection): Matrix {
  const rows = labels.position.length;
  const data = new Float64Array(rows * 2);
  for (let i = 0; i < rows; i++) {
    data[2 * i] = labels.position[i];
    data[2 * i + 1] = labels.direction[i];
  }
  return { data, rows, cols: 2 };
}

/**
 * Decodes position and direction from embeddings (module notes): for each k
 * of `neighbors` the decoders are fit on the train rows and scored on the
 * validation rows; the best k is then scored on the test rows.
 */
export function decodePositionDirection(
  embeddings: DecodingSets<Matrix>,
  labels: DecodingSets<PositionDirection>,
  options: { neighbors?: readonly number[]; metric?: KnnMetric } = {},
): PositionDirectionDecoding {
  const neighbors = options.neighbors ?? KNN_NEIGHBORS;
  const metric = options.metric ?? "cosine";
  for (const part of ["train", "valid", "test"] as const) {
    checkLabels(labels[part], embeddings[part].rows, `${part} labels`);
  }
  if (embeddings.valid.rows < 2 || embeddings.test.rows < 2) {
    throw new UsageError(
      `validation and test need at least 2 rows each for an R², got ${embeddings.valid.rows} and ${embeddings.test.rows}`,
    );
  }
  if (neighbors.length === 0) throw new UsageError("neighbors must list at least one k");
  for (const k of neighbors) {
    if (!Number.isInteger(k) || k < 1 || k > embeddings.train.rows) {
      throw new UsageError(`every k must be an integer in 1..${embeddings.train.rows} (the train rows), got ${k}`);
    }
  }
  const validTruth = stacked(labels.valid);
  const validR2 = neighbors.map((k) => {
    const pred = predict(embeddings.train, labels.train, embeddings.valid, k, metric);
    return r2ScoreColumns(validTruth, { data: pred, rows: embeddings.valid.rows, cols: 2 });
  });
  let best = 0;
  for (let i = 1; i < validR2.length; i++) if (validR2[i] > validR2[best]) best = i;
  const k = neighbors[best];
  const rows = embeddings.test.rows;
  const pred = predict(embeddings.train, labels.train, embeddings.test, k, metric);
  const truth = stacked(labels.test);
  const position = Float64Array.from({ length: rows }, (_, i) => pred[2 * i]);
  let correct = 0;
  for (let i = 0; i < rows; i++) if (pred[2 * i + 1] === labels.test.direction[i]) correct++;
  return {
    k,
    validR2,
    r2: r2ScoreColumns(truth, { data: pred, rows, cols: 2 }),
    positionR2: r2Score(Float64Array.from(labels.test.position), position),
    medianAbsError: medianAbsoluteError(position, labels.test.position),
    directionAccuracy: correct / rows,
  };
}
