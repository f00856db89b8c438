/**
 * The CNN baseline of ABS (Schott et al. 2019, App. A.7; AnalysisBySynthesis `models.get_CNN`):
 * valid convolutions with kernels [5,4,3,5], strides [1,2,2,1] and maps [20,70,256,10]
 * (28→24→11→5→1), BatchNorm and ELU on all but the last layer, cross-entropy with Adam. The
 * Binary CNN binarizes its inputs at 0.5 in training and test (straight-through gradient).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { ABS_PIXELS, ABS_SIDE } from "./abs_vae.ts";
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

/** Progress of {@linkcode trainAbsCnn} after one step. */
export interface AbsCnnStep {
  epoch: number;
  /** Steps taken so far, from 1. */
  step: number;
  /** Batch mean cross-entropy in nats. */
  loss: number;
}

/** Options of {@linkcode trainAbsCnn}. */
export interface AbsCnnTraining {
  epochs: number;
  /** Images per step; a last partial batch of fewer than 2 images is skipped (BatchNorm). */
  batch: number;
  /** Adam learning rate. */
  lr: number;
  /** Seeds the weights and the order of the images. */
  rng: Rng;
  /** Binary CNN: binarized inputs in training and test. */
  binary?: boolean;
  /** Called after each step (the loss is read back only when this is given). */
  onStep?: (step: AbsCnnStep) => void | Promise<void>;
}

/**
 * Trains the CNN with softmax cross-entropy and Adam on images row-major `[n, 28, 28, 1]` in
 * [0, 1] with labels `[n]` in 0..9.
 */
export async function trainAbsCnn(images: Float32Array, labels: Int32Array, options: AbsCnnTraining): Promise<AbsCnn> {
  const { epochs, batch, lr, rng, onStep } = options;
  const n = labels.length;
  if (images.length !== n * ABS_PIXELS) throw new RangeError(`${images.length / ABS_PIXELS} images for ${n} labels`);
  const cnn = absCnn(rng, { binary: options.binary });
  const optimizer = tf.train.adam(lr);
  const variables = cnn.params.list();
  const classes = ABS_CNN_LAYERS.at(-1)!.maps;
  let step = 0;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = rng.permutation(n);
    for (let start = 0; start < n; start += batch) {
      const rows = Math.min(batch, n - start);
      if (rows < 2) continue;
      stopPoint();
      const x = new Float32Array(rows * ABS_PIXELS), y = new Int32Array(rows);
      for (let i = 0; i < rows; i++) {
        const k = order[start + i];
        x.set(images.subarray(k * ABS_PIXELS, (k + 1) * ABS_PIXELS), i * ABS_PIXELS);
        y[i] = labels[k];
      }
      const moments: BatchMoments[] = [];
      const loss = optimizer.minimize(
        () => {
          const logits = cnn.logits(tf.tensor4d(x, [rows, ABS_SIDE, ABS_SIDE, 1]), { moments });
          return tf.losses.softmaxCrossEntropy(tf.oneHot(tf.tensor1d(y, "int32"), classes), logits) as tf.Scalar;
        },
        true,
        variables,
      )!;
      applyBatchMoments(cnn.stats, moments);
      step++;
      if (onStep) await onStep({ epoch, step, loss: (await loss.data())[0] });
      loss.dispose();
    }
  }
  optimizer.dispose();
  return cnn;
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
