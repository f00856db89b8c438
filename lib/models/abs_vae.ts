/**
 * The class VAEs of analysis by synthesis (ABS, Schott2019 §3–4,
 * App. A.7): one VAE per MNIST class with an 8-d Gaussian latent, a valid-convolution encoder
 * and a transposed-convolution decoder with BatchNorm and ELU, trained on the Gaussian-likelihood
 * ELBO with β annealed (AnalysisBySynthesis `nets.py`, `train.py`). The classifier over them is
 * `abs.ts`.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { readScalars } from "../core/readback.ts";
import type { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import {
  applyBatchMoments,
  type BatchMoments,
  convBnStack,
  convLayers,
  type ConvSpec,
  type ForwardOptions,
} from "./conv_bn.ts";
import { Params } from "./params.ts";

/** Latent dimensions of each class VAE (App. A.7: L = 8). */
export const ABS_LATENTS = 8;
/** Image side of the class VAEs (MNIST). */
export const ABS_SIDE = 28;
/** Pixels per image, the normaliser of every ABS loss. */
export const ABS_PIXELS = ABS_SIDE * ABS_SIDE;

/** Encoder of App. A.7: kernels [5,4,3,5], strides [1,2,2,1], maps [32,32,64,2L] (28→24→11→5→1). */
export const ABS_ENCODER: readonly ConvSpec[] = convLayers([5, 4, 3, 5], [1, 2, 2, 1], [32, 32, 64, 2 * ABS_LATENTS]);

/**
 * Decoder of App. A.7 as the reference code builds it: transposed kernels [4,5,5,4] (the paper's
 * [4,5,5,3] ends at 27 px), strides [1,2,2,1], maps [32,16,16,1] (1→4→11→25→28).
 */
export const ABS_DECODER: readonly ConvSpec[] = convLayers([4, 5, 5, 4], [1, 2, 2, 1], [32, 16, 16, 1]);

/** One class's VAE: Gaussian encoder and a decoder to pixel means in (0, 1). */
export interface ClassVae {
  /** Trainable weights: `enc{i}/…`, `dec{i}/…` (w, b, gamma, beta). */
  params: Params;
  /** BatchNorm running statistics: `enc{i}/mean`, `enc{i}/var`, `dec{i}/…`. */
  stats: Params;
  /** Images `[batch, 28, 28, 1]` → posterior mean and log-variance `[batch, 8]`. */
  encode(x: tf.Tensor4D, options?: ForwardOptions): { mean: tf.Tensor2D; logVar: tf.Tensor2D };
  /** Latents `[batch, 8]` → pixel means `[batch, 28, 28, 1]` (sigmoid outputs). */
  decode(z: tf.Tensor2D, options?: ForwardOptions): tf.Tensor4D;
  /** Frees its parameters and statistics. */
  dispose(): void;
}

/** Builds one class VAE of App. A.7, initialised from `rng` (encoder first). */
export function classVae(rng: Rng): ClassVae {
  const params = new Params(), stats = new Params();
  const encoder = convBnStack(params, stats, rng, "enc", 1, ABS_ENCODER, false);
  const decoder = convBnStack(params, stats, rng, "dec", ABS_LATENTS, ABS_DECODER, true);
  return {
    params,
    stats,
    encode: (x, options) => {
      const h = tf.reshape(encoder(x, options), [x.shape[0], 2 * ABS_LATENTS]);
      return {
        mean: tf.slice(h, [0, 0], [-1, ABS_LATENTS]) as tf.Tensor2D,
        logVar: tf.slice(h, [0, ABS_LATENTS], [-1, ABS_LATENTS]) as tf.Tensor2D,
      };
    },
    decode: (z, options) => tf.sigmoid(decoder(tf.reshape(z, [z.shape[0], 1, 1, ABS_LATENTS]), options)),
    dispose: () => {
      params.dispose();
      stats.dispose();
    },
  };
}

/** Progress of {@linkcode trainClassVae} after one step. */
export interface ClassVaeStep {
  /** Epoch of the step, from 0. */
  epoch: number;
  /** Steps taken so far, from 1. */
  step: number;
  /** Batch mean of ‖x − x̂‖² + β·KL. */
  loss: number;
  /** Batch mean of ‖x − x̂‖² (summed over pixels). */
  reconstruction: number;
  /** Batch mean of KL(q(z|x) ‖ N(0, I)) in nats. */
  kl: number;
  /** KL weight β the step used. */
  beta: number;
}

/** Options of {@linkcode trainClassVae}. */
export interface ClassVaeTraining {
  /** Passes over the images. */
  epochs: number;
  /** Images per step; the last partial batch of an epoch is used when it holds ≥ 2 images. */
  batch: number;
  /** Adam learning rate. */
  lr: number;
  /** KL weight at the start (App. A.7: 10). */
  betaFrom?: number;
  /** KL weight after `betaEpochs` epochs (App. A.7: 1). */
  betaTo?: number;
  /** Epochs over which β moves linearly from `betaFrom` to `betaTo` (App. A.7: 50). */
  betaEpochs: number;
  /** Seeds the weights, the order of the images and the posterior noise. */
  rng: Rng;
  /**
   * Called after every `logEvery`-th step and after the last (the loss is read back only when this is given,
   * its terms in one readback).
   */
  onStep?: (step: ClassVaeStep) => void | Promise<void>;
  /** Steps between `onStep` calls, default 1; the steps between read nothing back. */
  logEvery?: number;
  /** Checked before each step; an aborted signal stops training with its reason. */
  signal?: AbortSignal;
}

/**
 * Trains one class VAE on the images of one class, row-major `[n, 28, 28, 1]` in [0, 1], with the
 * Gaussian-likelihood loss ‖x − x̂‖² + β·KL (σ = 1/√2, App. A.7), β annealed linearly (per step,
 * by epoch progress) and Adam. BatchNorm uses batch moments while training and running
 * statistics afterwards.
 */
export async function trainClassVae(images: Float32Array, options: ClassVaeTraining): Promise<ClassVae> {
  const { epochs, batch, lr, betaEpochs, rng, onStep, logEvery = 1 } = options;
  const betaFrom = options.betaFrom ?? 10, betaTo = options.betaTo ?? 1;
  const n = images.length / ABS_PIXELS;
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`trainClassVae needs ≥ 2 images of 784 pixels`);
  if (!(Number.isInteger(logEvery) && logEvery >= 1)) throw new RangeError(`logEvery must be an integer ≥ 1`);
  const vae = classVae(rng);
  const optimizer = tf.train.adam(lr);
  const variables = vae.params.list();
  const stepsPerEpoch = Math.ceil(n / batch);
  // A last batch of one image is skipped (below), so an epoch takes n / batch steps rounded down or up.
  const lastStep = epochs * (n % batch === 1 ? Math.floor(n / batch) : stepsPerEpoch);
  let step = 0;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = rng.permutation(n);
    for (let start = 0; start < n; start += batch) {
      const rows = Math.min(batch, n - start);
      if (rows < 2) continue; // BatchNorm needs two images to have a variance
      options.signal?.throwIfAborted();
      stopPoint();
      const progress = (epoch + start / batch / stepsPerEpoch) / Math.max(betaEpochs, 1e-9);
      const beta = betaFrom + (betaTo - betaFrom) * Math.min(1, progress);
      const x = new Float32Array(rows * ABS_PIXELS);
      for (let i = 0; i < rows; i++) {
        x.set(images.subarray(order[start + i] * ABS_PIXELS, (order[start + i] + 1) * ABS_PIXELS), i * ABS_PIXELS);
      }
      const noise = rng.normalArray(rows * ABS_LATENTS);
      const moments: BatchMoments[] = [];
      const logging = onStep !== undefined && ((step + 1) % logEvery === 0 || step + 1 === lastStep);
      let parts: tf.Scalar[] = [];
      const loss = optimizer.minimize(
        () => {
          const xs = tf.tensor4d(x, [rows, ABS_SIDE, ABS_SIDE, 1]);
          const { mean, logVar } = vae.encode(xs, { moments });
          const z = tf.add(
            mean,
            tf.mul(tf.exp(tf.mul(0.5, logVar)), tf.tensor2d(noise, [rows, ABS_LATENTS])),
          ) as tf.Tensor2D;
          const recon = tf.mean(
            tf.sum(tf.reshape(tf.squaredDifference(vae.decode(z, { moments }), xs), [rows, ABS_PIXELS]), 1),
          );
          const kl = tf.mean(
            tf.mul(0.5, tf.sum(tf.sub(tf.add(tf.square(mean), tf.exp(logVar)), tf.add(logVar, 1)), 1)),
          );
          if (logging) parts = [tf.keep(recon), tf.keep(kl)] as tf.Scalar[];
          return tf.add(recon, tf.mul(beta, kl)) as tf.Scalar;
        },
        true,
        variables,
      )!;
      applyBatchMoments(vae.stats, moments);
      step++;
      try {
        if (logging && onStep) {
          const [total, recon, kl] = await readScalars([loss, ...parts]);
          await onStep({ epoch, step, loss: total, reconstruction: recon, kl, beta });
        }
      } finally {
        tf.dispose([loss, ...parts]);
      }
    }
  }
  optimizer.dispose();
  return vae;
}
