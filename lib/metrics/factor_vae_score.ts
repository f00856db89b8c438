/**
 * The FactorVAE score (Kim & Mnih 2018) as disentanglement_lib's
 * `factor_vae.py` computes it: codes are scaled by their global standard
 * deviation, one factor is fixed across a batch, and the code dimension of
 * least (relative) variance votes for that factor; a majority-vote classifier
 * maps each dimension to a factor.
 *
 * @module
 */
import { column, meanSd } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import { checkCount } from "./beta_vae_score.ts";
import { encodeFactors, MAX_ENCODE_CHUNK, type Representation } from "./representation.ts";

/** Options of {@linkcode factorVaeScore}; defaults are disentanglement_lib's. */
export interface FactorVaeOptions {
  /** Images per vote, default 64 (at least 2: the local variance uses ddof = 1). */
  batchSize?: number;
  /** Training votes, default 10,000. */
  numTrain?: number;
  /** Evaluation votes, default 5,000. */
  numEval?: number;
  /** Images for the global variance estimate, default 10,000. */
  numVarianceEstimate?: number;
  /** A dimension is active when its global standard deviation is at least this, default 0.05. */
  pruneThreshold?: number;
}

/** The result of {@linkcode factorVaeScore}. */
export interface FactorVaeResult {
  /** Accuracy of the majority-vote classifier on its training votes. */
  train_accuracy: number;
  /** Its accuracy on the evaluation votes (the score). */
  eval_accuracy: number;
  /** Number of active code dimensions. */
  num_active_dims: number;
}

/** Per-column variance (ddof = 1) of rows `[start, start + n)` of a `[*, d]` matrix. */
function columnVariances(data: Float64Array, d: number, start: number, n: number): Float64Array {
  const rows = data.subarray(start * d, (start + n) * d);
  return Float64Array.from({ length: d }, (_, j) => meanSd(column(rows, n, d, j)).variance);
}

/** A `[factors, d]` vote matrix (row-major) from `numVotes` fixed-factor batches. */
async function votes(
  dataset: GroundTruthDataset,
  represent: Representation,
  rng: Rng,
  numVotes: number,
  batchSize: number,
  globalVariances: Float64Array,
  active: number[],
): Promise<Float64Array> {
  const k = dataset.factorSizes.length, d = globalVariances.length;
  const matrix = new Float64Array(k * d);
  const perCall = Math.max(1, Math.floor(MAX_ENCODE_CHUNK / batchSize));
  for (let start = 0; start < numVotes; start += perCall) {
    const count = Math.min(perCall, numVotes - start);
    const values = new Int32Array(count * batchSize * k);
    const fixed = new Int32Array(count);
    for (let v = 0; v < count; v++) {
      const index = rng.int(k);
      fixed[v] = index;
      const batch = dataset.sampleFactors(batchSize, rng);
      for (let b = 1; b < batchSize; b++) batch.values[b * k + index] = batch.values[index];
      values.set(batch.values, v * batchSize * k);
    }
    const codes = await encodeFactors(dataset, represent, { values, n: count * batchSize }, rng);
    if (codes.cols !== d) throw new Error(`represent returned ${codes.cols} columns, expected ${d}`);
    for (let v = 0; v < count; v++) {
      const local = columnVariances(codes.data, d, v * batchSize, batchSize);
      // argmin over the active dims; np.argmin keeps the first minimum.
      let best = active[0];
      let bestRatio = local[best] / globalVariances[best];
      for (const j of active) {
        const ratio = local[j] / globalVariances[j];
        if (ratio < bestRatio) {
          best = j;
          bestRatio = ratio;
        }
      }
      // disentanglement_lib records the position among the active dims here, not the code index;
      // an injective relabelling of columns, so every accuracy below is the same either way.
      matrix[fixed[v] * d + best] += 1;
    }
  }
  return matrix;
}

/** Σ_d votes[classifier[d], d] / Σ votes. */
function voteAccuracy(matrix: Float64Array, classifier: Int32Array, d: number): number {
  let correct = 0, total = 0;
  for (let j = 0; j < d; j++) correct += matrix[classifier[j] * d + j];
  for (const v of matrix) total += v;
  return total > 0 ? correct / total : 0;
}

/**
 * FactorVAE score of a representation on a ground-truth dataset. With no
 * active dimension every score is 0. All randomness comes from `rng`.
 */
export async function factorVaeScore(
  dataset: GroundTruthDataset,
  represent: Representation,
  rng: Rng,
  {
    batchSize = 64,
    numTrain = 10000,
    numEval = 5000,
    numVarianceEstimate = 10000,
    pruneThreshold = 0.05,
  }: FactorVaeOptions = {},
): Promise<FactorVaeResult> {
  checkCount(batchSize, "batchSize", 2);
  checkCount(numTrain, "numTrain", 1);
  checkCount(numEval, "numEval", 1);
  checkCount(numVarianceEstimate, "numVarianceEstimate", 2);
  if (!(pruneThreshold >= 0)) throw new Error(`pruneThreshold must be ≥ 0, got ${pruneThreshold}`);
  const k = dataset.factorSizes.length;
  if (k < 1) throw new Error("the dataset has no factors");

  const sample = await encodeFactors(dataset, represent, dataset.sampleFactors(numVarianceEstimate, rng), rng);
  const d = sample.cols;
  const globalVariances = columnVariances(sample.data, d, 0, numVarianceEstimate);
  const active: number[] = [];
  // A zero-variance dim is never active (even with pruneThreshold 0), so the ratios below stay finite.
  for (let j = 0; j < d; j++) {
    if (globalVariances[j] > 0 && Math.sqrt(globalVariances[j]) >= pruneThreshold) active.push(j);
  }
  // disentanglement_lib returns num_active_dims = len(mask), i.e. all d dims whatever the pruning;
  // the count of active dims reported here is what the name promises.
  if (active.length === 0) return { train_accuracy: 0, eval_accuracy: 0, num_active_dims: 0 };

  const train = await votes(dataset, represent, rng, numTrain, batchSize, globalVariances, active);
  // Majority vote per dim; np.argmax keeps the first (lowest) factor on ties.
  const classifier = new Int32Array(d);
  for (let j = 0; j < d; j++) {
    for (let f = 1; f < k; f++) if (train[f * d + j] > train[classifier[j] * d + j]) classifier[j] = f;
  }
  const evaluation = await votes(dataset, represent, rng, numEval, batchSize, globalVariances, active);
  return {
    train_accuracy: voteAccuracy(train, classifier, d),
    eval_accuracy: voteAccuracy(evaluation, classifier, d),
    num_active_dims: active.length,
  };
}
