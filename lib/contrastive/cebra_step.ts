/**
 * One training step of CEBRA's encoders, as `Cebra.fit` takes it for every solver (single-session, full-batch,
 * hybrid, multi-session): the windows of a drawn index batch gathered from the data on the device, the reference,
 * positive and negative windows embedded in one forward pass, the InfoNCE loss, one optimizer step. `deno task
 * bench` times this same function.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { CebraModel } from "../models/cebra_models.ts";
import type { HybridBatch, IndexBatch, MultiSessionBatch } from "./samplers.ts";

/** Behaviour features of the hybrid objective (the package's `num_behavior_features`, "overlapping" mode). */
export const HYBRID_BEHAVIOR_FEATURES = 3;

/** One draw of the indices a training step needs. */
export type StepIndices =
  | { kind: "single"; batch: IndexBatch }
  | { kind: "hybrid"; batch: HybridBatch }
  | { kind: "multi"; batch: MultiSessionBatch }
  | { kind: "full"; batch: IndexBatch };

/** The contrastive loss of reference, positive and negative embeddings `[n, d]` (InfoNCE with the fit's options). */
export type ContrastiveLoss = (ref: tf.Tensor2D, pos: tf.Tensor2D, neg: tf.Tensor2D) => tf.Scalar;

/**
 * Minimises `loss` on the windows of `indices` over `trainable`: `models` one encoder per session (one for a
 * single-session fit), `data` each session's rows `[T, features]` on the device. Returns the loss (the caller
 * disposes it).
 */
export function cebraStep(
  optimizer: tf.Optimizer,
  models: CebraModel[],
  data: tf.Tensor2D[],
  indices: StepIndices,
  loss: ContrastiveLoss,
  trainable: tf.Variable[],
): tf.Scalar {
  const { left, right } = models[0].offset;
  const width = left + right;
  // Windows of rows i − left … i + right − 1 for each index i, gathered on the device.
  const windows = (rows: tf.Tensor2D, index: Int32Array): tf.Tensor3D => {
    const flat = new Int32Array(index.length * width);
    for (let i = 0; i < index.length; i++) {
      for (let j = 0; j < width; j++) flat[i * width + j] = index[i] - left + j;
    }
    return tf.reshape(tf.gather(rows, tf.tensor1d(flat, "int32")), [index.length, width, rows.shape[1]]);
  };
  // One forward pass over reference, positive and negative windows together, split afterwards.
  const embedAll = (model: CebraModel, rows: tf.Tensor2D, parts: Int32Array[]): tf.Tensor2D[] => {
    const all = new Int32Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    const out = model.apply(windows(rows, all));
    return tf.split(out, parts.map((p) => p.length), 0) as tf.Tensor2D[];
  };
  return optimizer.minimize(
    () => {
      switch (indices.kind) {
        case "single": {
          const b = indices.batch;
          const [ref, pos, neg] = embedAll(models[0], data[0], [b.ref, b.pos, b.neg]);
          return loss(ref, pos, neg);
        }
        case "full": {
          // The solver embeds the whole sequence once and picks rows t − left of it.
          const b = indices.batch;
          const out = models[0].embed(data[0], { pad: false });
          const pick = (index: Int32Array) => tf.gather(out, tf.tensor1d(index.map((i) => i - left), "int32"));
          return loss(pick(b.ref), pick(b.pos), pick(b.neg));
        }
        case "hybrid": {
          const b = indices.batch;
          const [ref, pos, neg, posTime] = embedAll(models[0], data[0], [b.ref, b.pos, b.neg, b.posTime]);
          const k = HYBRID_BEHAVIOR_FEATURES;
          const head = (t: tf.Tensor2D) => tf.slice(t, [0, 0], [-1, k]);
          return tf.add(loss(head(ref), head(pos), head(neg)), loss(ref, posTime, neg)) as tf.Scalar;
        }
        case "multi": {
          // One encoder per session; the loss runs on the stacked S·n rows with every session's negatives,
          // each reference paired with the positive slot that answered its query (the package's _mix).
          const b = indices.batch;
          const outs = models.map((m, s) => embedAll(m, data[s], [b.ref[s], b.pos[s], b.neg[s]]));
          const ref = tf.concat(outs.map((x) => x[0]), 0);
          const posSlots = tf.concat(outs.map((x) => x[1]), 0);
          const neg = tf.concat(outs.map((x) => x[2]), 0);
          const slotOf = new Int32Array(b.queryOf.length);
          b.queryOf.forEach((refIndex, slot) => slotOf[refIndex] = slot);
          const pos = tf.gather(posSlots, tf.tensor1d(slotOf, "int32"));
          return loss(ref, pos, neg);
        }
      }
    },
    true,
    trainable,
  )!;
}
