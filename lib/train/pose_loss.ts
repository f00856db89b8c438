/**
 * DeepLabCut's training targets, loss and argmax decoding for single-animal
 * pose estimation (Schneider2023 Ch. 5).
 *
 * Follows DeepLabCut's TensorFlow code:
 * - targets: `compute_target_part_scoremap` (datasets/pose_deterministic.py,
 *   pose_base.py): score-map cell (i, j) has its centre at
 *   (j·stride + stride/2, i·stride + stride/2); every cell whose centre lies
 *   within `posDistThresh` px (≤, squared distances) of a keypoint is a
 *   positive (score 1, locref mask 1, locref (dx, dy)/locref_stdev with
 *   dx = keypoint − centre). Keypoints that are NaN or not strictly inside
 *   the frame carry no target, as pose_imgaug.py `next_batch` drops them.
 * - map size: `sm_size = ceil(side / (2·stride))·2` (pose_imgaug.py `get_batch`).
 * - loss: nnet/pose_net.py `PoseNet.train`, `tf.losses.sigmoid_cross_entropy`
 *   with weight 1 plus `locref_loss_weight · huber_loss(targets, pred, mask)`
 *   (nnet/losses.py). Both reduce as TF1's `compute_weighted_loss` default,
 *   SUM_BY_NONZERO_WEIGHTS: the score term is the mean over every score-map
 *   entry, the locref term Σ mask·huber / #(mask ≠ 0), and 0 when no entry is
 *   masked in (TF1's safe division).
 * - decode: nnet/predict.py `argmax_pose_predict` with `extract_cnn_output`:
 *   argmax cell per keypoint (first index on ties, as numpy) plus
 *   locref·locref_stdev.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";

/** Target and loss settings in frame pixels. */
export interface PoseTargetConfig {
  /** Score-map cell size in input pixels. */
  stride: number;
  /** Cells whose centres lie within this many pixels of a keypoint are positives. */
  posDistThresh: number;
  /** Locref targets are pixel offsets divided by this. */
  locrefStdev: number;
  /** Weight of the locref Huber term in the total loss. */
  locrefLossWeight: number;
  /** Huber threshold k: quadratic below, linear above. */
  huberK: number;
}

/**
 * pose_cfg.yaml defaults scaled by 64/288 for 64-px frames at stride 4:
 * posDistThresh 17 → 4, locrefStdev 7.2801 → 1.6, weight 0.05, Huber k 1.
 */
export const POSE_TARGETS_64: PoseTargetConfig = Object.freeze({
  stride: 4,
  posDistThresh: 4,
  locrefStdev: 1.6,
  locrefLossWeight: 0.05,
  huberK: 1,
});

/** Per-frame targets, row-major [n, S, S, channels]. */
export interface PoseTargets {
  /** [n, S, S, K]: 1 on positive cells. */
  scmap: Float32Array;
  /** [n, S, S, 2K]: (dx, dy)/locrefStdev per keypoint on positive cells, 0 elsewhere. */
  locref: Float32Array;
  /** [n, S, S, 2K]: 1 on both channels of a keypoint's positive cells. */
  mask: Float32Array;
  /** Score-map side S. */
  size: number;
  /** Keypoints per frame K. */
  keypoints: number;
}

function requirePositiveInteger(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${what} must be a positive integer, got ${value}`);
}

function checkConfig(cfg: PoseTargetConfig): void {
  for (const key of ["stride", "posDistThresh", "locrefStdev", "huberK"] as const) {
    const value = cfg[key];
    if (!Number.isFinite(value) || value <= 0) {
      throw new UsageError(`pose ${key} must be a positive number, got ${value}`);
    }
  }
  if (!Number.isFinite(cfg.locrefLossWeight) || cfg.locrefLossWeight < 0) {
    throw new UsageError(`pose locrefLossWeight must be a non-negative number, got ${cfg.locrefLossWeight}`);
  }
}

/** Score-map side for a square frame: ceil(side / (2·stride))·2, as DeepLabCut's `sm_size`. */
export function scoreMapSize(imageSide: number, stride: number): number {
  if (!Number.isFinite(imageSide) || imageSide <= 0) {
    throw new UsageError(`image side must be a positive number of pixels, got ${imageSide}`);
  }
  if (!Number.isFinite(stride) || stride <= 0) throw new UsageError(`stride must be a positive number, got ${stride}`);
  return Math.ceil(imageSide / (stride * 2)) * 2;
}

/**
 * Keypoints [n, K, 2] (x, y) in pixels of square `imageSide` frames →
 * DeepLabCut targets; cell (i, j) has its centre at
 * (j·stride + stride/2, i·stride + stride/2). NaN keypoints (absent) and
 * keypoints not strictly inside (0, imageSide)² get no positive cells.
 */
export function poseTargets(
  keypoints: Float32Array,
  n: number,
  K: number,
  imageSide: number,
  cfg: PoseTargetConfig = POSE_TARGETS_64,
): PoseTargets {
  requirePositiveInteger(n, "frame count n");
  requirePositiveInteger(K, "keypoint count K");
  checkConfig(cfg);
  const size = scoreMapSize(imageSide, cfg.stride);
  if (keypoints.length !== n * K * 2) {
    throw new UsageError(`keypoints must hold n·K·2 = ${n * K * 2} values ([n, K, (x, y)]), got ${keypoints.length}`);
  }
  const { stride, posDistThresh } = cfg;
  const halfStride = stride / 2;
  // Same float64 operations as DeepLabCut (dx · (1/stdev), dist ≤ thresh²), so the targets match it bit for bit.
  const locrefScale = 1 / cfg.locrefStdev;
  const threshSq = posDistThresh ** 2;
  const cells = size * size;
  const scmap = new Float32Array(n * cells * K);
  const locref = new Float32Array(n * cells * 2 * K);
  const mask = new Float32Array(n * cells * 2 * K);
  // Cells one beyond the disk's bounds on each side: the distance test decides, rounding in the bounds cannot drop one.
  const reach = posDistThresh / stride + 1;
  for (let f = 0; f < n; f++) {
    for (let k = 0; k < K; k++) {
      const x = keypoints[(f * K + k) * 2], y = keypoints[(f * K + k) * 2 + 1];
      if (!(x > 0 && x < imageSide && y > 0 && y < imageSide)) continue;
      const cx = (x - halfStride) / stride, cy = (y - halfStride) / stride;
      const iMin = Math.max(0, Math.floor(cy - reach)), iMax = Math.min(size - 1, Math.ceil(cy + reach));
      const jMin = Math.max(0, Math.floor(cx - reach)), jMax = Math.min(size - 1, Math.ceil(cx + reach));
      for (let i = iMin; i <= iMax; i++) {
        const dy = y - (i * stride + halfStride);
        for (let j = jMin; j <= jMax; j++) {
          const dx = x - (j * stride + halfStride);
          if (dx ** 2 + dy ** 2 > threshSq) continue;
          const cell = f * cells + i * size + j;
          scmap[cell * K + k] = 1;
          const at = cell * 2 * K + 2 * k;
          mask[at] = mask[at + 1] = 1;
          locref[at] = dx * locrefScale;
          locref[at + 1] = dy * locrefScale;
        }
      }
    }
  }
  return { scmap, locref, mask, size, keypoints: K };
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Sum of a [n, S, S, C] tensor over each frame's cells first, then over the
 * frames: float32 sums of n·S·S·C terms in one pass drift by ~1e-6 relative
 * at a few hundred terms already.
 */
function stagedSum(t: tf.Tensor): tf.Scalar {
  return tf.sum(tf.sum(t, [2, 3])) as tf.Scalar;
}

/**
 * DeepLabCut's loss on network outputs `scoreLogits` [n, S, S, K] and
 * `locrefPred` [n, S, S, 2K]: score = mean sigmoid cross-entropy over all
 * entries; locref = Σ mask·huber(pred − target) / #(mask ≠ 0) (0 without
 * masked entries); total = score + locrefLossWeight·locref. Differentiable.
 */
export function poseLoss(
  scoreLogits: tf.Tensor4D,
  locrefPred: tf.Tensor4D,
  targets: { scmap: tf.Tensor4D; locref: tf.Tensor4D; mask: tf.Tensor4D },
  cfg: PoseTargetConfig = POSE_TARGETS_64,
): { total: tf.Scalar; score: tf.Scalar; locref: tf.Scalar } {
  checkConfig(cfg);
  const [n, s1, s2, K] = scoreLogits.shape;
  const locrefShape = [n, s1, s2, 2 * K];
  if (!sameShape(locrefPred.shape, locrefShape)) {
    throw new UsageError(
      `locref predictions must be [${locrefShape}] for score logits [${scoreLogits.shape}], got [${locrefPred.shape}]`,
    );
  }
  if (!sameShape(targets.scmap.shape, scoreLogits.shape)) {
    throw new UsageError(
      `score targets must match the score logits [${scoreLogits.shape}], got [${targets.scmap.shape}]`,
    );
  }
  for (const key of ["locref", "mask"] as const) {
    if (!sameShape(targets[key].shape, locrefShape)) {
      throw new UsageError(`locref ${key} targets must be [${locrefShape}], got [${targets[key].shape}]`);
    }
  }
  return tf.tidy(() => {
    const x = scoreLogits, z = targets.scmap;
    // max(x, 0) − x·z + log(1 + e^−|x|): the stable form TF uses.
    const crossEntropy = tf.add(tf.sub(tf.relu(x), tf.mul(x, z)), tf.log1p(tf.exp(tf.neg(tf.abs(x)))));
    const score = tf.div(stagedSum(crossEntropy), crossEntropy.size) as tf.Scalar;

    // 0.5·min(|d|, k)² + k·(|d| − min(|d|, k)) is Huber's two branches without a comparison op, which has no gradient.
    const k = cfg.huberK;
    const absDiff = tf.abs(tf.sub(locrefPred, targets.locref));
    const quadratic = tf.minimum(absDiff, k);
    const huber = tf.add(tf.mul(0.5, tf.square(quadratic)), tf.mul(k, tf.sub(absDiff, quadratic)));
    // SUM_BY_NONZERO_WEIGHTS. The count comes from the targets alone. Without masked entries the masked sum is 0
    // too, so dividing by max(count, 1) gives TF1's safe 0.
    const present = tf.maximum(stagedSum(tf.sign(tf.abs(targets.mask))), 1);
    const locref = tf.div(stagedSum(tf.mul(huber, targets.mask)), present) as tf.Scalar;

    const total = tf.add(score, tf.mul(cfg.locrefLossWeight, locref)) as tf.Scalar;
    return { total, score, locref };
  });
}

/**
 * Argmax decoding, DeepLabCut's `argmax_pose_predict`: per frame and
 * keypoint the highest-scoring cell (row-major, the first on ties) plus its
 * locref·locrefStdev → keypoints [n, K, 2] (x, y) in pixels, and that cell's
 * score as confidence [n, K] (pass sigmoid probabilities for DeepLabCut's
 * likelihood). `scores` [n, S, S, K], `locref` [n, S, S, 2K], read from the
 * network with `await data()`.
 */
export function decodePose(
  scores: Float32Array,
  locref: Float32Array,
  n: number,
  size: number,
  K: number,
  cfg: PoseTargetConfig = POSE_TARGETS_64,
): { keypoints: Float32Array; confidence: Float32Array } {
  requirePositiveInteger(n, "frame count n");
  requirePositiveInteger(size, "score-map side");
  requirePositiveInteger(K, "keypoint count K");
  checkConfig(cfg);
  const cells = size * size;
  if (scores.length !== n * cells * K) {
    throw new UsageError(`scores must hold n·S·S·K = ${n * cells * K} values, got ${scores.length}`);
  }
  if (locref.length !== n * cells * 2 * K) {
    throw new UsageError(`locref must hold n·S·S·2K = ${n * cells * 2 * K} values, got ${locref.length}`);
  }
  if (scores.some(Number.isNaN)) throw new UsageError("scores contain NaN: the network output has diverged");
  const keypoints = new Float32Array(n * K * 2);
  const confidence = new Float32Array(n * K);
  const halfStride = cfg.stride / 2;
  for (let f = 0; f < n; f++) {
    for (let k = 0; k < K; k++) {
      let best = 0;
      for (let c = 1; c < cells; c++) {
        if (scores[(f * cells + c) * K + k] > scores[(f * cells + best) * K + k]) best = c;
      }
      const i = Math.floor(best / size), j = best % size;
      const at = (f * cells + best) * 2 * K + 2 * k;
      keypoints[(f * K + k) * 2] = j * cfg.stride + halfStride + locref[at] * cfg.locrefStdev;
      keypoints[(f * K + k) * 2 + 1] = i * cfg.stride + halfStride + locref[at + 1] * cfg.locrefStdev;
      confidence[f * K + k] = scores[(f * cells + best) * K + k];
    }
  }
  return { keypoints, confidence };
}
