/**
 * Pose-estimation errors of Mathis et al.'s out-of-domain study
 * (Schneider2023 Ch. 5): the pixel error divided by a
 * per-frame unit (the nose–eye "head segment" length), and PCK@0.3 — a
 * keypoint is correct when its error is below 0.3 units.
 *
 * Inputs are row-major: predictions and truths [n, K, 2] (x, y) pixels,
 * `unit` [n]; n is `unit.length` and K = pred.length / (2n), at least 2.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";

/** Validates the inputs and returns K. */
function checkPose(pred: Float32Array, truth: Float32Array, unit: Float32Array): number {
  const n = unit.length;
  if (n < 1) throw new UsageError("pose metrics need at least one frame (unit has length 0)");
  if (pred.length !== truth.length) {
    throw new UsageError(
      `predictions and truths must have the same shape, got ${pred.length} and ${truth.length} values`,
    );
  }
  const K = pred.length / (2 * n);
  if (!Number.isInteger(K) || K < 2) {
    throw new UsageError(
      `predictions must be [n, K, 2] with n = ${n} frames (unit.length) and K ≥ 2 keypoints, got ${pred.length} values`,
    );
  }
  for (let i = 0; i < pred.length; i++) {
    if (!Number.isFinite(pred[i]) || !Number.isFinite(truth[i])) {
      throw new UsageError(
        `predictions and truths must be finite; value ${i} is ${pred[i]} (pred), ${truth[i]} (truth)`,
      );
    }
  }
  for (let f = 0; f < n; f++) {
    if (!(unit[f] > 0) || !Number.isFinite(unit[f])) {
      throw new UsageError(`the unit length must be positive and finite in every frame; frame ${f} has ${unit[f]}`);
    }
  }
  return K;
}

/** ‖pred − truth‖ in pixels per keypoint, [n·K] in float64. */
function distances(pred: Float32Array, truth: Float32Array, n: number, K: number): Float64Array {
  const out = new Float64Array(n * K);
  for (let i = 0; i < n * K; i++) out[i] = Math.hypot(pred[2 * i] - truth[2 * i], pred[2 * i + 1] - truth[2 * i + 1]);
  return out;
}

/** ‖pred − truth‖ / unit[frame] per keypoint, [n·K]. */
function scaledErrors(pred: Float32Array, truth: Float32Array, unit: Float32Array, K: number): Float64Array {
  const errors = distances(pred, truth, unit.length, K);
  for (let i = 0; i < errors.length; i++) errors[i] /= unit[Math.floor(i / K)];
  return errors;
}

/** Mean over frames and keypoints of ‖pred − truth‖ / unit[frame]. */
export function normalizedError(pred: Float32Array, truth: Float32Array, unit: Float32Array): number {
  const errors = scaledErrors(pred, truth, unit, checkPose(pred, truth, unit));
  let sum = 0;
  for (const e of errors) sum += e;
  return sum / errors.length;
}

/** Mean over frames of ‖pred − truth‖ / unit[frame] for each of the `keypoints` keypoints, [K]. */
export function normalizedErrorPerKeypoint(
  pred: Float32Array,
  truth: Float32Array,
  unit: Float32Array,
  keypoints: number,
): Float64Array {
  const K = checkPose(pred, truth, unit);
  if (keypoints !== K) {
    throw new UsageError(`keypoints is ${keypoints}, but ${pred.length} values over ${unit.length} frames hold ${K}`);
  }
  const errors = scaledErrors(pred, truth, unit, K);
  const means = new Float64Array(K);
  for (let i = 0; i < errors.length; i++) means[i % K] += errors[i];
  for (let k = 0; k < K; k++) means[k] /= unit.length;
  return means;
}

/**
 * Share of keypoints with ‖pred − truth‖ < threshold·unit[frame] (PCK@0.3 by
 * default). Every keypoint is scored in every frame, so this equals
 * DeepLabCut's "average PCK", the mean over keypoints of per-keypoint PCK.
 */
export function pck(pred: Float32Array, truth: Float32Array, unit: Float32Array, threshold = 0.3): number {
  if (!Number.isFinite(threshold) || threshold <= 0) {
    throw new UsageError(`the PCK threshold must be a positive fraction of the unit length, got ${threshold}`);
  }
  const K = checkPose(pred, truth, unit);
  const errors = distances(pred, truth, unit.length, K);
  let correct = 0;
  for (let i = 0; i < errors.length; i++) if (errors[i] < threshold * unit[Math.floor(i / K)]) correct++;
  return correct / errors.length;
}
