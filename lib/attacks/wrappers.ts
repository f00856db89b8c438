/**
 * Model wrappers for attacks: the binarized models of Schott2019 (x → 1[x ≥ 0.5]
 * before the classifier, gradients passed straight through) and the
 * post-processing that moves a binary model's adversarial pixels back toward
 * the clean image without changing its decision (§5).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { misclassified } from "./attack.ts";
import type { AttackBatch, AttackModel } from "./types.ts";

/**
 * A model that sees its input thresholded: `model(1[x ≥ threshold])`. The
 * threshold step has zero gradient almost everywhere, so gradients pass it
 * unchanged (straight-through estimator, as the paper attacks its binary
 * models); `gradient` follows the wrapped model.
 *
 * @param model classifier on inputs `[n, h, w, c]`
 * @param threshold input value from which a pixel counts as 1 (0.5 for MNIST in [0, 1])
 */
export function binarized(model: AttackModel, threshold = 0.5): AttackModel {
  const step = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
    value: tf.cast(tf.greaterEqual(args[0] as tf.Tensor, threshold), "float32"),
    gradFunc: (dy: tf.Tensor | tf.Tensor[]) => dy,
  }));
  return {
    bounds: model.bounds,
    gradient: model.gradient,
    logits: (x) => tf.tidy(() => model.logits(step(x) as tf.Tensor4D)),
  };
}

/** The largest float32 below `t`: the smallest change that keeps a pixel below a threshold `t`. */
export function float32Below(t: number): number {
  const f = new Float32Array([t]);
  const bits = new Int32Array(f.buffer);
  // Stepping the bit pattern toward −∞ gives the neighbouring float32 (sign-magnitude layout).
  if (f[0] === 0) return -1.401298464324817e-45;
  bits[0] += f[0] > 0 ? -1 : 1;
  return f[0];
}

/**
 * Post-processing of a binary model's adversarials (Schott2019 §5): each changed
 * pixel is reset to its clean value where the decision still differs from the
 * label, else moved to the threshold side that keeps its binarized value
 * (`threshold`, or the float32 just below it), which gives the same binarized
 * input at a smaller distance. Changes that would make an adversarial
 * correctly classified are undone, so a sample adversarial before stays
 * adversarial; non-adversarial rows are returned unchanged.
 *
 * Stages, each checked with the model and undone per sample where it fails:
 * (1) pixels on the clean side of the threshold reset to clean, (2) the others
 * moved to the threshold. Both leave the binarized input as it was, so they
 * are the paper's rule, which "reduces the norm without changing the
 * decision". With `greedy`, (3) each remaining changed pixel (in index order)
 * is tried at its clean value, which flips its bit back where the decision
 * survives it: fewer changed pixels, one forward pass of the changed rows per
 * pixel position.
 *
 * @param model the binary model (e.g. {@linkcode binarized})
 * @param batch clean inputs `[n, h, w, c]` and their labels
 * @param adv adversarials `[n, h, w, c]` row-major
 * @param options.threshold the binarization threshold of the model (default 0.5)
 * @param options.greedy run stage 3 (default false)
 * @returns the post-processed adversarials, a new array
 */
export async function resetBinaryPixels(
  model: AttackModel,
  batch: AttackBatch,
  adv: Float32Array,
  options: { threshold?: number; greedy?: boolean } = {},
): Promise<Float32Array> {
  const { threshold = 0.5, greedy = false } = options;
  const { x, n, shape, labels } = batch;
  const d = shape[0] * shape[1] * shape[2];
  if (x.length !== n * d || adv.length !== n * d) {
    throw new RangeError(
      `resetBinaryPixels: ${n} rows of ${d} values, got ${x.length} clean, ${adv.length} adversarial`,
    );
  }
  const out = adv.slice();
  const below = float32Below(threshold);
  let active = await adversarialRows(model, out, labels, shape, range(n));

  // Stages 1 and 2 change whole rows; a row whose decision returns to the label is restored.
  const stages: ((xi: number, ai: number) => number)[] = [
    (xi, ai) => (xi >= threshold) === (ai >= threshold) ? xi : ai,
    (xi, ai) => ai >= threshold ? (xi < threshold ? threshold : ai) : (xi >= threshold ? below : ai),
  ];
  for (const stage of stages) {
    const saved = out.slice();
    for (const i of active) for (let j = i * d; j < (i + 1) * d; j++) out[j] = stage(x[j], out[j]);
    const still = new Set(await adversarialRows(model, out, labels, shape, active));
    for (const i of active) if (!still.has(i)) out.set(saved.subarray(i * d, (i + 1) * d), i * d);
  }

  if (!greedy) return out;
  // Stage 3: greedy reset to clean, one pixel position per pass over the rows that changed it.
  active = await adversarialRows(model, out, labels, shape, active);
  for (let j = 0; j < d; j++) {
    const rows = active.filter((i) => out[i * d + j] !== x[i * d + j]);
    if (!rows.length) continue;
    const old = rows.map((i) => out[i * d + j]);
    for (const i of rows) out[i * d + j] = x[i * d + j];
    const still = new Set(await adversarialRows(model, out, labels, shape, rows));
    rows.forEach((i, k) => {
      if (!still.has(i)) out[i * d + j] = old[k];
    });
  }
  return out;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** The rows among `rows` of `x` `[n, ...shape]` whose predicted class differs from the label. */
async function adversarialRows(
  model: AttackModel,
  x: Float32Array,
  labels: Int32Array,
  shape: [number, number, number],
  rows: number[],
): Promise<number[]> {
  if (!rows.length) return [];
  const d = shape[0] * shape[1] * shape[2];
  const batch = new Float32Array(rows.length * d);
  rows.forEach((i, k) => batch.set(x.subarray(i * d, (i + 1) * d), k * d));
  const fooled = await misclassified(model, batch, rows.length, shape, Int32Array.from(rows, (i) => labels[i]));
  return rows.filter((_, k) => fooled[k]);
}
