/**
 * The nearest-neighbour baseline of ABS (Schott et al. 2019, §2.8; AnalysisBySynthesis
 * `nets.NearestNeighborLogits`): logit_c(x) = −min_j ‖x − t_j‖₂ over the training digits t_j of
 * class c. Decision-based attacks only (no gradient).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/** The nearest-neighbour classifier as an attack model (AttackModel by structure). */
export interface NearestNeighborModel {
  /** −(L2 distance to the nearest training digit of each class) `[n, classes]`; −∞ for a class without digits. */
  logits(x: tf.Tensor4D): tf.Tensor2D;
  /** The input box, [0, 1]. */
  bounds: [number, number];
  /** Always false: no gradient is offered, so only decision-based attacks apply. */
  gradient: boolean;
  /** Frees the stored training digits. */
  dispose(): void;
}

/**
 * Stores training images row-major `[m, ...shape]` (any shape; `pixels` values each) with labels
 * `[m]` in 0..classes−1. The nearest digit per class comes from the batched form
 * ‖x‖² + ‖t‖² − 2x·t; its distance is then recomputed directly, so small distances keep their
 * float32 precision.
 */
export function nearestNeighbor(
  images: Float32Array,
  labels: Int32Array,
  classes = 10,
  bounds: [number, number] = [0, 1],
): NearestNeighborModel {
  const m = labels.length, pixels = images.length / m;
  if (!Number.isInteger(pixels)) throw new RangeError(`${images.length} values for ${m} labels`);
  // Class-contiguous copy: the per-class minimum is a slice.
  const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => labels[a] - labels[b] || a - b);
  const sorted = new Float32Array(images.length);
  order.forEach((k, i) => sorted.set(images.subarray(k * pixels, (k + 1) * pixels), i * pixels));
  const counts = new Array<number>(classes).fill(0);
  for (const y of labels) {
    if (y < 0 || y >= classes) throw new RangeError(`label ${y} outside 0..${classes - 1}`);
    counts[y]++;
  }
  const train = tf.tensor2d(sorted, [m, pixels]);
  const norms = tf.tidy(() => tf.sum(tf.square(train), 1));
  return {
    bounds,
    gradient: false,
    logits: (x) =>
      tf.tidy(() => {
        const n = x.shape[0];
        const flat = tf.reshape(x, [n, pixels]) as tf.Tensor2D;
        const scores = tf.sub(norms, tf.mul(2, tf.matMul(flat, train, false, true)));
        let offset = 0;
        const columns = counts.map((count) => {
          const start = offset;
          offset += count;
          if (count === 0) return tf.fill([n], -Infinity);
          const nearest = tf.add(tf.argMin(tf.slice(scores, [0, start], [n, count]), 1), tf.scalar(start, "int32"));
          return tf.neg(tf.sqrt(tf.sum(tf.squaredDifference(flat, tf.gather(train, nearest)), 1)));
        });
        return tf.stack(columns, 1) as tf.Tensor2D;
      }),
    dispose: () => tf.dispose([train, norms]),
  };
}
