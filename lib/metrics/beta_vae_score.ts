/**
 * The BetaVAE score (Higgins et al. 2017) as disentanglement_lib's
 * `beta_vae.py` computes it: each point fixes one factor across two batches,
 * the feature is the mean absolute code difference of the batches, and a
 * default `LogisticRegression()` predicts which factor was fixed.
 *
 * @module
 */
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import { fitLogisticOrConstant } from "./downstream.ts";
import { accuracy } from "./classification.ts";
import { encodeFactors, MAX_ENCODE_CHUNK, type Representation } from "./representation.ts";

/** Throws unless `value` is an integer ≥ `min`. */
export function checkCount(value: number, name: string, min: number): void {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${value}`);
}

/** Options of {@linkcode betaVaeScore}; defaults are disentanglement_lib's. */
export interface BetaVaeOptions {
  /** Images per batch (each point encodes two batches), default 64. */
  batchSize?: number;
  /** Training points (features) for the classifier, default 10,000. */
  numTrain?: number;
  /** Evaluation points, default 5,000. */
  numEval?: number;
}

/** The result of {@linkcode betaVaeScore}. */
export interface BetaVaeResult {
  /** Accuracy of the score's classifier on its training points. */
  train_accuracy: number;
  /** Its accuracy on the evaluation points (the score). */
  eval_accuracy: number;
}

/** `numPoints` BetaVAE features `[numPoints, d]` and their labels (the fixed factor). */
async function betaVaeFeatures(
  dataset: GroundTruthDataset,
  represent: Representation,
  rng: Rng,
  numPoints: number,
  batchSize: number,
): Promise<{ x: Matrix & { data: Float64Array }; y: Int32Array }> {
  const k = dataset.factorSizes.length;
  const y = new Int32Array(numPoints);
  let features: Float64Array | undefined;
  let d = 0;
  // Several points' batches share one represent call, for speed.
  const perCall = Math.max(1, Math.floor(MAX_ENCODE_CHUNK / (2 * batchSize)));
  for (let start = 0; start < numPoints; start += perCall) {
    const points = Math.min(perCall, numPoints - start);
    const rows = 2 * batchSize;
    const values = new Int32Array(points * rows * k);
    for (let p = 0; p < points; p++) {
      // disentanglement_lib's draw order: the factor, then batch 1, then batch 2.
      const index = rng.int(k);
      y[start + p] = index;
      const first = dataset.sampleFactors(batchSize, rng);
      const second = dataset.sampleFactors(batchSize, rng);
      for (let b = 0; b < batchSize; b++) second.values[b * k + index] = first.values[b * k + index];
      values.set(first.values, p * rows * k);
      values.set(second.values, (p * rows + batchSize) * k);
    }
    const codes = await encodeFactors(dataset, represent, { values, n: points * rows }, rng);
    if (features === undefined) {
      d = codes.cols;
      features = new Float64Array(numPoints * d);
    }
    for (let p = 0; p < points; p++) {
      const feature = features.subarray((start + p) * d, (start + p + 1) * d);
      for (let b = 0; b < batchSize; b++) {
        const z1 = (p * rows + b) * d, z2 = (p * rows + batchSize + b) * d;
        for (let j = 0; j < d; j++) feature[j] += Math.abs(codes.data[z1 + j] - codes.data[z2 + j]);
      }
      for (let j = 0; j < d; j++) feature[j] /= batchSize;
    }
  }
  return { x: { data: features!, rows: numPoints, cols: d }, y };
}

/**
 * BetaVAE score of a representation on a ground-truth dataset: train and
 * eval accuracy of a default (C = 1, multinomial) logistic regression that
 * predicts the fixed factor from mean |z1 − z2| features. All randomness
 * (factor choice, factor batches, image noise) comes from `rng`.
 */
export async function betaVaeScore(
  dataset: GroundTruthDataset,
  represent: Representation,
  rng: Rng,
  { batchSize = 64, numTrain = 10000, numEval = 5000 }: BetaVaeOptions = {},
): Promise<BetaVaeResult> {
  checkCount(batchSize, "batchSize", 1);
  checkCount(numTrain, "numTrain", 2);
  checkCount(numEval, "numEval", 1);
  if (dataset.factorSizes.length < 1) throw new Error("the dataset has no factors");
  const train = await betaVaeFeatures(dataset, represent, rng, numTrain, batchSize);
  // sklearn's LogisticRegression(random_state=…) is deterministic with lbfgs; so is this fit.
  const model = fitLogisticOrConstant(train.x, train.y);
  const evaluation = await betaVaeFeatures(dataset, represent, rng, numEval, batchSize);
  return {
    train_accuracy: accuracy(model.predict(train.x), train.y),
    eval_accuracy: accuracy(model.predict(evaluation.x), evaluation.y),
  };
}
