/**
 * The CNN baseline of ABS (Schott et al. 2019, App. A.7; AnalysisBySynthesis `models.get_CNN`):
 * valid convolutions with kernels [5,4,3,5], strides [1,2,2,1] and maps [20,70,256,10]
 * (28→24→11→5→1), BatchNorm and ELU on all but the last layer, cross-entropy with Adam. The
 * Binary CNN binarizes its inputs at 0.5 in training and test (straight-through gradient).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import {
  applyBatchMoments,
  type BatchMoments,
  binarizeStraightThrough,
  convBnStack,
  convLayers,
  type ConvSpec,
  type ForwardOptions,
} from "./conv_bn.ts";
import { Params } from "./params.ts";

/** The layers of App. A.7's CNN: the class VAE encoder's kernels and strides with other maps. */
export const ABS_CNN_LAYERS: readonly ConvSpec[] = convLayers([5, 4, 3, 5], [1, 2, 2, 1], [20, 70, 256, 10]);

/** The CNN: images `[batch, 28, 28, 1]` in [0, 1] → logits `[batch, 10]`. */
export interface AbsCnn {
  /** Trainable weights `conv{i}/…`. */
  params: Params;
  /** BatchNorm running statistics. */
  stats: Params;
  /** Binarizes inputs at 0.5 (Binary CNN). */
  binary: boolean;
  /** Logits; with `options.moments` BatchNorm uses batch moments (training). */
  logits(x: tf.Tensor4D, options?: ForwardOptions): tf.Tensor2D;
  /** Frees its parameters and statistics. */
  dispose(): void;
}

/** Builds the CNN, initialised from `rng` (Glorot-uniform kernels, zero biases). */
export function absCnn(rng: Rng, options: { binary?: boolean } = {}): AbsCnn {
  const params = new Params(), stats = new Params();
  const binary = options.binary ?? false;
  const stack = convBnStack(params, stats, rng, "conv", 1, ABS_CNN_LAYERS, false);
  return {
    params,
    stats,
    binary,
    logits: (x, forward) => {
      const input = binary ? binarizeStraightThrough(x) : x;
      return tf.reshape(stack(input, forward), [x.shape[0], ABS_CNN_LAYERS.at(-1)!.maps]) as tf.Tensor2D;
    },
    dispose: () => {
      params.dispose();
      stats.dispose();
    },
  };
}

/**
 * The CNN's training-mode forward for a training loop: BatchNorm normalises by batch moments, and
 * `update`, called after each optimizer step, moves the running statistics towards them.
 */
export function absCnnTraining(cnn: AbsCnn): { logits(x: tf.Tensor4D): tf.Tensor2D; update(): void } {
  const moments: BatchMoments[] = [];
  return { logits: (x) => cnn.logits(x, { moments }), update: () => applyBatchMoments(cnn.stats, moments) };
}

/**
 * The trained CNN as an attack model (the AttackModel contract of lib/attacks, by structure):
 * eval-mode logits, inputs in [0, 1], gradients (straight through the binarization).
 */
export function absCnnModel(cnn: AbsCnn): {
  logits(x: tf.Tensor4D): tf.Tensor2D;
  bounds: [number, number];
  gradient: boolean;
} {
  return { logits: (x) => cnn.logits(x), bounds: [0, 1], gradient: true };
}
