/**
 * Inputs and a model that the BnCnn tests and the BN-adaptation tests share.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { Rng } from "../../lib/core/rng.ts";
import { type BnCnn, bnCnn } from "../../lib/models/bn_cnn.ts";

/** Digit-like inputs: smooth blobs in [0, 1], `[b, 28, 28, 1]` flattened. */
export function blobDigits(b: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const values = new Float32Array(b * 784);
  for (let i = 0; i < b; i++) {
    const r0 = 8 + 12 * rng.uniform(), c0 = 8 + 12 * rng.uniform(), contrast = 0.3 + 0.7 * rng.uniform();
    for (let r = 0; r < 28; r++) {
      for (let c = 0; c < 28; c++) {
        values[i * 784 + r * 28 + c] = contrast * Math.exp(-((r - r0) ** 2 + (c - c0) ** 2) / 30);
      }
    }
  }
  return values;
}

/** A BN model whose source statistics are not the initial 0 / 1 (a few training forwards). */
export function trainedStatsModel(seed: number): BnCnn {
  const model = bnCnn(new Rng(seed), { norm: "batch" });
  for (let i = 0; i < 3; i++) {
    tf.tidy(() => {
      model.trainLogits(tf.tensor4d(blobDigits(16, 100 + i), [16, 28, 28, 1]));
    });
  }
  return model;
}
