/**
 * Analysis by synthesis (ABS, Schott et al. 2019; 000_306f4209a39c5a17.md §2.8, App. A.7): one
 * VAE per class, and a classifier whose class scores are the negative optimised ELBOs
 * ℓ*_c(x) = min_z (‖x − G_c(z)‖² + ½‖z‖²)/784, found by the best of P fixed prototypes
 * followed by Adam steps in the 8-d latent space (AnalysisBySynthesis `inference.py`,
 * `loss_functions.py`, `sampling.py`). Also the certified L2 radius (§2.8, re-derived), the
 * calibrated softmax (`utils.confidence_softmax`) and the Binary ABS variant.
 *
 * Gradients of the logits are our extension: by the envelope theorem,
 * ∂logit_c/∂x = −2(x − G_c(z*_c))/784 with z* held fixed, in place of the paper's costly
 * finite-difference gradient estimates ("w/ GE").
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { Params } from "./params.ts";

/** Latent dimensions of each class VAE (App. A.7: L = 8). */
export const ABS_LATENTS = 8;
/** Image side of the class VAEs (MNIST). */
export const ABS_SIDE = 28;
/** Pixels per image, the normaliser of every ABS loss. */
export const ABS_PIXELS = ABS_SIDE * ABS_SIDE;

/** torch's BatchNorm2d defaults, as the reference networks use them. */
const BN_MOMENTUM = 0.1;
const BN_EPSILON = 1e-5;
/** torch.optim.Adam's defaults for the latent search. */
const ADAM_BETA1 = 0.9, ADAM_BETA2 = 0.999, ADAM_EPSILON = 1e-8;

// ---------------------------------------------------------------------------------------------
// Layers

/** One batch's moments of a BatchNorm layer, recorded by a training-mode forward pass. */
export interface BatchMoments {
  /** Key of the layer in the network's `stats` ("enc0"). */
  key: string;
  mean: tf.Tensor1D;
  /** Biased batch variance (the one that normalised the batch). */
  variance: tf.Tensor1D;
  /** Values per channel that the moments averaged. */
  count: number;
}

/** How a forward pass runs. */
export interface ForwardOptions {
  /**
   * Training mode: BatchNorm normalises by batch moments and appends them here (kept tensors,
   * for {@linkcode applyBatchMoments}); without it, the running statistics are used.
   */
  moments?: BatchMoments[];
  /** Receives each layer's output `[batch, h, w, maps]`, for shape checks. */
  trace?: tf.Tensor4D[];
}

/** One layer of an App. A.7 stack. */
export interface ConvSpec {
  kernel: number;
  stride: number;
  maps: number;
}

/**
 * Adds a stack of valid convolutions (or transposed convolutions) to `params` (Glorot-uniform
 * kernels, zero biases, BatchNorm γ = 1, β = 0) and `stats` (running mean 0, variance 1), keyed
 * `${prefix}${i}`. Every layer but the last is conv → BatchNorm → ELU (the reference `nets.py`
 * order); the last is linear. Returns the forward map `[batch, h, w, inputs]` → `[batch, h', w', maps]`
 * with h' = (h − k)/s + 1 per convolution and (h − 1)s + k per transposed convolution.
 */
export function convBnStack(
  params: Params,
  stats: Params,
  rng: Rng,
  prefix: string,
  inputs: number,
  layers: readonly ConvSpec[],
  transposed: boolean,
): (x: tf.Tensor4D, options?: ForwardOptions) => tf.Tensor4D {
  let channels = inputs;
  layers.forEach(({ kernel, maps }, i) => {
    const key = `${prefix}${i}`, area = kernel * kernel;
    // conv2d filters are [k, k, in, out]; conv2dTranspose filters are [k, k, out, in].
    const shape = transposed ? [kernel, kernel, maps, channels] : [kernel, kernel, channels, maps];
    params.addGlorotUniform(rng, `${key}/w`, shape, area * channels, area * maps);
    params.addZeros(`${key}/b`, [maps]);
    if (i + 1 < layers.length) {
      params.add(`${key}/gamma`, new Float32Array(maps).fill(1), [maps]);
      params.addZeros(`${key}/beta`, [maps]);
      stats.addZeros(`${key}/mean`, [maps]);
      stats.add(`${key}/var`, new Float32Array(maps).fill(1), [maps]);
    }
    channels = maps;
  });
  return (x, options = {}) => {
    let h = x;
    layers.forEach(({ kernel, stride, maps }, i) => {
      const key = `${prefix}${i}`, batch = h.shape[0];
      const w = params.get(`${key}/w`) as tf.Tensor4D;
      if (transposed) {
        const side = (h.shape[1] - 1) * stride + kernel;
        h = tf.conv2dTranspose(h, w, [batch, side, side, maps], stride, "valid");
      } else h = tf.conv2d(h, w, stride, "valid");
      h = tf.add(h, params.get(`${key}/b`));
      if (i + 1 < layers.length) {
        let mean: tf.Tensor, variance: tf.Tensor;
        if (options.moments) {
          ({ mean, variance } = tf.moments(h, [0, 1, 2]));
          options.moments.push({
            key,
            mean: tf.keep(mean) as tf.Tensor1D,
            variance: tf.keep(variance) as tf.Tensor1D,
            count: batch * h.shape[1] * h.shape[2],
          });
        } else {
          mean = stats.get(`${key}/mean`);
          variance = stats.get(`${key}/var`);
        }
        const scale = tf.mul(params.get(`${key}/gamma`), tf.rsqrt(tf.add(variance, BN_EPSILON)));
        h = tf.elu(tf.add(tf.mul(tf.sub(h, mean), scale), params.get(`${key}/beta`)));
      }
      options.trace?.push(h);
    });
    return h;
  };
}

/**
 * Moves the running BatchNorm statistics in `stats` towards the recorded batch moments (torch:
 * momentum 0.1, the unbiased variance) and disposes the recorded tensors.
 */
export function applyBatchMoments(stats: Params, moments: BatchMoments[]): void {
  for (const { key, mean, variance, count } of moments) {
    tf.tidy(() => {
      const running = stats.get(`${key}/mean`), runningVar = stats.get(`${key}/var`);
      const unbiased = tf.mul(variance, count / Math.max(count - 1, 1));
      running.assign(tf.add(tf.mul(running, 1 - BN_MOMENTUM), tf.mul(mean, BN_MOMENTUM)));
      runningVar.assign(tf.add(tf.mul(runningVar, 1 - BN_MOMENTUM), tf.mul(unbiased, BN_MOMENTUM)));
    });
    tf.dispose([mean, variance]);
  }
  moments.length = 0;
}

/**
 * x → 1[x ≥ 0.5] (the reference `utils.binarize`) with a straight-through gradient, so gradient
 * attacks on binary models see the gradient at the binarized input (§5 of the paper).
 */
export function binarizeStraightThrough<T extends tf.Tensor>(x: T): T {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
    value: tf.cast(tf.greaterEqual(args[0] as tf.Tensor, 0.5), "float32"),
    gradFunc: (dy: tf.Tensor) => dy,
  }));
  return f(x) as T;
}

// ---------------------------------------------------------------------------------------------
// Class VAE

/** Encoder of App. A.7: kernels [5,4,3,5], strides [1,2,2,1], maps [32,32,64,2L] (28→24→11→5→1). */
export const ABS_ENCODER: readonly ConvSpec[] = [
  { kernel: 5, stride: 1, maps: 32 },
  { kernel: 4, stride: 2, maps: 32 },
  { kernel: 3, stride: 2, maps: 64 },
  { kernel: 5, stride: 1, maps: 2 * ABS_LATENTS },
];

/**
 * Decoder of App. A.7 as the reference code builds it: transposed kernels [4,5,5,4] (the paper's
 * [4,5,5,3] ends at 27 px), strides [1,2,2,1], maps [32,16,16,1] (1→4→11→25→28).
 */
export const ABS_DECODER: readonly ConvSpec[] = [
  { kernel: 4, stride: 1, maps: 32 },
  { kernel: 5, stride: 2, maps: 16 },
  { kernel: 5, stride: 2, maps: 16 },
  { kernel: 4, stride: 1, maps: 1 },
];

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
  epoch: number;
  /** Steps taken so far, from 1. */
  step: number;
  /** Batch mean of ‖x − x̂‖² + β·KL. */
  loss: number;
  /** Batch mean of ‖x − x̂‖² (summed over pixels). */
  reconstruction: number;
  /** Batch mean of KL(q(z|x) ‖ N(0, I)) in nats. */
  kl: number;
  beta: number;
}

/** Options of {@linkcode trainClassVae}. */
export interface ClassVaeTraining {
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
  /** Called after each step (the loss is read back only when this is given). */
  onStep?: (step: ClassVaeStep) => void | Promise<void>;
}

/**
 * Trains one class VAE on the images of one class, row-major `[n, 28, 28, 1]` in [0, 1], with the
 * Gaussian-likelihood loss ‖x − x̂‖² + β·KL (σ = 1/√2, App. A.7), β annealed linearly (per step,
 * by epoch progress) and Adam. BatchNorm uses batch moments while training and running
 * statistics afterwards.
 */
export async function trainClassVae(images: Float32Array, options: ClassVaeTraining): Promise<ClassVae> {
  const { epochs, batch, lr, betaEpochs, rng, onStep } = options;
  const betaFrom = options.betaFrom ?? 10, betaTo = options.betaTo ?? 1;
  const n = images.length / ABS_PIXELS;
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`trainClassVae needs ≥ 2 images of 784 pixels`);
  const vae = classVae(rng);
  const optimizer = tf.train.adam(lr);
  const variables = vae.params.list();
  const stepsPerEpoch = Math.ceil(n / batch);
  let step = 0;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = rng.permutation(n);
    for (let start = 0; start < n; start += batch) {
      const rows = Math.min(batch, n - start);
      if (rows < 2) continue; // BatchNorm needs two images to have a variance
      stopPoint();
      const progress = (epoch + start / batch / stepsPerEpoch) / Math.max(betaEpochs, 1e-9);
      const beta = betaFrom + (betaTo - betaFrom) * Math.min(1, progress);
      const x = new Float32Array(rows * ABS_PIXELS);
      for (let i = 0; i < rows; i++) {
        x.set(images.subarray(order[start + i] * ABS_PIXELS, (order[start + i] + 1) * ABS_PIXELS), i * ABS_PIXELS);
      }
      const noise = rng.normalArray(rows * ABS_LATENTS);
      const moments: BatchMoments[] = [];
      let parts: tf.Tensor[] = [];
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
          if (onStep) parts = [tf.keep(recon), tf.keep(kl)];
          return tf.add(recon, tf.mul(beta, kl)) as tf.Scalar;
        },
        true,
        variables,
      )!;
      applyBatchMoments(vae.stats, moments);
      step++;
      if (onStep) {
        const [total, recon, kl] = await Promise.all([loss, ...parts].map(async (t) => (await t.data())[0]));
        await onStep({ epoch, step, loss: total, reconstruction: recon, kl, beta });
      }
      tf.dispose([loss, ...parts]);
    }
  }
  optimizer.dispose();
  return vae;
}

// ---------------------------------------------------------------------------------------------
// Generators as ABS uses them

/** One class's generative model as inference uses it: an eval-mode decoder with its vector–Jacobian product. */
export interface ClassGenerator {
  latents: number;
  pixels: number;
  /** G(z): latents `[m, latents]` → pixel means `[m, pixels]`. */
  decode(z: tf.Tensor2D): tf.Tensor2D;
  /** G(z), and g ↦ gᵀ ∂G/∂z `[m, pixels]` → `[m, latents]` (valid inside the caller's tidy). */
  decodeVjp(z: tf.Tensor2D): { images: tf.Tensor2D; vjp(g: tf.Tensor2D): tf.Tensor2D };
  /** The encoder's posterior mean `[m, latents]` of images `[m, h, w, c]`, where there is an encoder. */
  encodeMean?(x: tf.Tensor4D): tf.Tensor2D;
  dispose?(): void;
}

/**
 * The eval-mode decoder of a trained class VAE as a {@linkcode ClassGenerator}: BatchNorm folded
 * into the transposed-convolution filters, and the backward pass written out (conv2d is the
 * adjoint of conv2dTranspose), so that the latent search needs no gradient tape and can run
 * inside the logits' own custom gradient. Holds copies of the weights (dispose it).
 */
export function classGenerator(vae: ClassVae): ClassGenerator {
  const layers = tf.tidy(() =>
    ABS_DECODER.map(({ stride, maps }, i) => {
      const key = `dec${i}`;
      let w: tf.Tensor = vae.params.get(`${key}/w`), b: tf.Tensor = vae.params.get(`${key}/b`);
      if (i + 1 < ABS_DECODER.length) {
        const scale = tf.mul(vae.params.get(`${key}/gamma`), tf.rsqrt(tf.add(vae.stats.get(`${key}/var`), BN_EPSILON)));
        w = tf.mul(w, tf.reshape(scale, [1, 1, maps, 1]));
        b = tf.add(tf.mul(tf.sub(b, vae.stats.get(`${key}/mean`)), scale), vae.params.get(`${key}/beta`));
      }
      return { w: tf.keep(tf.clone(w)) as tf.Tensor4D, b: tf.keep(tf.clone(b)), stride };
    })
  );
  const last = layers.length - 1;
  const forward = (z: tf.Tensor2D) => {
    const hidden: tf.Tensor4D[] = [];
    let h = tf.reshape(z, [z.shape[0], 1, 1, ABS_LATENTS]) as tf.Tensor4D;
    layers.forEach(({ w, b, stride }, i) => {
      const side = (h.shape[1] - 1) * stride + w.shape[0];
      const a = tf.add(tf.conv2dTranspose(h, w, [h.shape[0], side, side, w.shape[2]], stride, "valid"), b);
      h = (i < last ? tf.elu(a) : tf.sigmoid(a)) as tf.Tensor4D;
      hidden.push(h);
    });
    return { images: tf.reshape(h, [z.shape[0], ABS_PIXELS]) as tf.Tensor2D, hidden };
  };
  return {
    latents: ABS_LATENTS,
    pixels: ABS_PIXELS,
    decode: (z) => forward(z).images,
    decodeVjp: (z) => {
      const { images, hidden } = forward(z);
      const vjp = (g: tf.Tensor2D) => {
        const m = z.shape[0];
        // Through the sigmoid, then each layer: conv2d adjoint, ELU′(a) = min(elu(a), 0) + 1.
        let d = tf.reshape(tf.mul(g, tf.mul(images, tf.sub(1, images))), [m, ABS_SIDE, ABS_SIDE, 1]) as tf.Tensor4D;
        for (let i = last; i >= 0; i--) {
          d = tf.conv2d(d, layers[i].w, layers[i].stride, "valid");
          if (i > 0) d = tf.mul(d, tf.add(tf.minimum(hidden[i - 1], 0), 1));
        }
        return tf.reshape(d, [m, ABS_LATENTS]) as tf.Tensor2D;
      };
      return { images, vjp };
    },
    encodeMean: (x) => {
      const { mean, logVar } = vae.encode(x);
      logVar.dispose();
      return mean;
    },
    dispose: () => layers.forEach(({ w, b }) => tf.dispose([w, b])),
  };
}

// ---------------------------------------------------------------------------------------------
// Inference

/**
 * The prototypes of the latent search (`sampling.get_gaussian_samples`): draws ⌊P/0.9⌋ latents
 * from N(0, I) and keeps the P densest, i.e. those of smallest norm, in draw order. `[P, latents]`.
 */
export function gaussianPrototypes(count: number, rng: Rng, latents = ABS_LATENTS): Float32Array {
  const drawn = Math.floor(count / 0.9);
  const z = rng.normalArray(drawn * latents);
  const norms = Float64Array.from({ length: drawn }, (_, k) => {
    let s = 0;
    for (let d = 0; d < latents; d++) s += z[k * latents + d] ** 2;
    return s;
  });
  const keep = Array.from({ length: drawn }, (_, k) => k)
    .sort((a, b) => norms[a] - norms[b] || a - b)
    .slice(0, count)
    .sort((a, b) => a - b);
  const out = new Float32Array(count * latents);
  keep.forEach((k, i) => out.set(z.subarray(k * latents, (k + 1) * latents), i * latents));
  return out;
}

/**
 * z · min(1, radius/‖z‖) per row of the last axis: the projection onto the ball ‖z‖ ≤ radius.
 * The reference `utils.clip_to_sphere` assigns √(z²/‖z‖²)·radius and so drops the signs of the
 * clipped latents; we keep them.
 */
export function projectToBall<T extends tf.Tensor>(z: T, radius: number): T {
  return tf.tidy(() => {
    const norm = tf.sqrt(tf.sum(tf.square(z), -1, true));
    return tf.mul(z, tf.minimum(1, tf.div(radius, tf.maximum(norm, 1e-30)))) as T;
  });
}

/** Options of {@linkcode Abs}. */
export interface AbsOptions {
  /** Prototype count P (drawn with `seed`), or the prototypes themselves `[P, latents]`. Paper: 8,000. */
  prototypes: number | Float32Array;
  /** Adam steps on z after the best prototype (paper: 50 iterations). */
  steps: number;
  /** Adam learning rate of the latent search (reference `get_ABS`: 0.05). */
  lr?: number;
  /** Radius of the latent ball z is projected into after each step (reference: 5). */
  radius?: number;
  /** Seed of the prototype draw; fixed per model, so the model is deterministic. */
  seed?: number;
  /** Binary ABS: inputs are binarized at 0.5 before inference (straight-through gradient). */
  binary?: boolean;
  /** Per-class scales γ of the losses (Binary ABS, {@linkcode fitClassScales}); default all 1. */
  classScales?: ArrayLike<number>;
}

/** What {@linkcode Abs.infer} returns (tensors the caller disposes). */
export interface AbsInference {
  /** ℓ*_c(x) = (‖x − G_c(z*)‖² + ½‖z*‖²)/784, unscaled, `[n, classes]`. */
  losses: tf.Tensor2D;
  /** z*_c `[n, classes, latents]`. */
  latents: tf.Tensor3D;
  /** G_c(z*_c) `[n, classes, pixels]`. */
  reconstructions: tf.Tensor3D;
}

/**
 * The ABS classifier over trained class models: an AttackModel (logits, bounds [0, 1], gradient)
 * by structure. Inputs `[n, 28, 28, 1]` in [0, 1].
 *
 * @example
 * ```ts
 * const abs = await Abs.create(vaes, { prototypes: 1_000, steps: 5 });
 * const logits = abs.logits(x); // −ℓ*, [n, 10]
 * ```
 */
export class Abs {
  /** The input box. */
  readonly bounds: [number, number] = [0, 1];
  /** Logits have the envelope-theorem gradient (our extension). */
  readonly gradient = true;
  readonly classes: number;
  readonly latents: number;
  readonly pixels: number;
  readonly steps: number;
  readonly lr: number;
  readonly radius: number;
  readonly binary: boolean;
  /** γ_c multiplying each class's loss in the logits. */
  classScales: Float64Array;
  /** The prototypes z_k `[P, latents]`. */
  readonly prototypeLatents: Float32Array;
  /** G_c(z_k) per class, `[P, pixels]` each (31 MB at P = 1,000 for ten classes). */
  readonly prototypeImages: Float32Array[];
  #generators: ClassGenerator[];
  #owned: boolean;
  /** ‖G_c(z_k)‖² per class and ½‖z_k‖², the constant parts of the prototype scores. */
  #imageNorms: Float32Array[];
  #halfLatentNorms: Float32Array;

  private constructor(
    generators: ClassGenerator[],
    owned: boolean,
    prototypes: Float32Array,
    images: Float32Array[],
    options: AbsOptions,
  ) {
    this.#generators = generators;
    this.#owned = owned;
    this.classes = generators.length;
    this.latents = generators[0].latents;
    this.pixels = generators[0].pixels;
    this.steps = options.steps;
    this.lr = options.lr ?? 0.05;
    this.radius = options.radius ?? 5;
    this.binary = options.binary ?? false;
    this.classScales = options.classScales
      ? Float64Array.from(options.classScales)
      : new Float64Array(this.classes).fill(1);
    if (this.classScales.length !== this.classes) throw new RangeError(`classScales needs ${this.classes} values`);
    this.prototypeLatents = prototypes;
    this.prototypeImages = images;
    const count = prototypes.length / this.latents;
    this.#imageNorms = images.map((g) =>
      Float32Array.from({ length: count }, (_, k) => {
        let s = 0;
        for (let p = k * this.pixels; p < (k + 1) * this.pixels; p++) s += g[p] * g[p];
        return s;
      })
    );
    this.#halfLatentNorms = Float32Array.from({ length: count }, (_, k) => {
      let s = 0;
      for (let d = k * this.latents; d < (k + 1) * this.latents; d++) s += prototypes[d] ** 2;
      return 0.5 * s;
    });
  }

  /** ABS over trained class VAEs (class c = `vaes[c]`); the VAEs stay the caller's. */
  static create(vaes: ClassVae[], options: AbsOptions): Promise<Abs> {
    return Abs.#build(vaes.map(classGenerator), true, options);
  }

  /** ABS over any class generators (a linear decoder in tests); they stay the caller's. */
  static fromGenerators(generators: ClassGenerator[], options: AbsOptions): Promise<Abs> {
    return Abs.#build(generators, false, options);
  }

  static async #build(generators: ClassGenerator[], owned: boolean, options: AbsOptions): Promise<Abs> {
    if (generators.length < 2) throw new RangeError("ABS needs at least two classes");
    const latents = generators[0].latents;
    const prototypes = typeof options.prototypes === "number"
      ? gaussianPrototypes(options.prototypes, Rng.derive(options.seed ?? 0, "abs-prototypes"), latents)
      : options.prototypes;
    const count = prototypes.length / latents;
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`prototypes must be [P, ${latents}] with P ≥ 1`);
    const images: Float32Array[] = [];
    for (const generator of generators) {
      const out = new Float32Array(count * generator.pixels);
      for (let start = 0; start < count; start += 512) {
        const rows = Math.min(512, count - start);
        const g = tf.tidy(() =>
          generator.decode(tf.tensor2d(prototypes.subarray(start * latents, (start + rows) * latents), [rows, latents]))
        );
        out.set(await g.data() as Float32Array, start * generator.pixels);
        g.dispose();
      }
      images.push(out);
    }
    return new Abs(generators, owned, prototypes, images, options);
  }

  /** The model's view of the input: `[n, pixels]`, binarized for Binary ABS. */
  #input(x: tf.Tensor4D): tf.Tensor2D {
    const flat = tf.reshape(x, [x.shape[0], this.pixels]) as tf.Tensor2D;
    return this.binary ? binarizeStraightThrough(flat) : flat;
  }

  /**
   * The latent search for inputs `[n, pixels]`: per class the best prototype, then `steps` Adam
   * steps on Σ ℓ, each followed by the projection into the ball. With `prior` false the loss is
   * the reconstruction term alone (d_c of the bound). Returns losses `[n, C]` (÷ pixels), latents
   * and reconstructions class-major `[C, n, …]`.
   */
  #search(x: tf.Tensor2D, prior: boolean): { losses: tf.Tensor2D; z: tf.Tensor3D; images: tf.Tensor3D } {
    const count = this.prototypeLatents.length / this.latents;
    let z = tf.tidy(() => {
      const protos = tf.tensor2d(this.prototypeLatents, [count, this.latents]);
      const starts = this.prototypeImages.map((images, c) => {
        // ‖x − G‖² (+ ½‖z‖²) up to the constant ‖x‖², via ‖G‖² − 2x·G.
        let constant = tf.tensor1d(this.#imageNorms[c]);
        if (prior) constant = tf.add(constant, tf.tensor1d(this.#halfLatentNorms));
        const cross = tf.matMul(x, tf.tensor2d(images, [count, this.pixels]), false, true);
        return tf.gather(protos, tf.argMin(tf.sub(constant, tf.mul(2, cross)), 1));
      });
      return tf.stack(starts) as tf.Tensor3D;
    });
    let m = tf.zerosLike(z), v = tf.zerosLike(z);
    const scale = 2 / this.pixels;
    for (let t = 1; t <= this.steps; t++) {
      const next = tf.tidy(() => {
        const grads = tf.unstack(z).map((zc, c) => {
          const { images, vjp } = this.#generators[c].decodeVjp(zc as tf.Tensor2D);
          const g = vjp(tf.mul(tf.sub(images, x), scale) as tf.Tensor2D);
          return prior ? tf.add(g, tf.div(zc, this.pixels)) : g;
        });
        const g = tf.stack(grads);
        const m1 = tf.add(tf.mul(m, ADAM_BETA1), tf.mul(g, 1 - ADAM_BETA1));
        const v1 = tf.add(tf.mul(v, ADAM_BETA2), tf.mul(tf.square(g), 1 - ADAM_BETA2));
        // torch.optim.Adam: z −= lr/(1 − β1ᵗ) · m / (√v/√(1 − β2ᵗ) + ε).
        const denom = tf.add(tf.div(tf.sqrt(v1), Math.sqrt(1 - ADAM_BETA2 ** t)), ADAM_EPSILON);
        const step = tf.mul(tf.div(m1, denom), this.lr / (1 - ADAM_BETA1 ** t));
        return [projectToBall(tf.sub(z, step), this.radius), m1, v1] as tf.Tensor3D[];
      });
      tf.dispose([z, m, v]);
      [z, m, v] = next;
    }
    tf.dispose([m, v]);
    const out = tf.tidy(() => {
      const images = tf.unstack(z).map((zc, c) => this.#generators[c].decode(zc as tf.Tensor2D));
      const losses = images.map((g, c) => {
        const rec = tf.sum(tf.squaredDifference(x, g), 1);
        if (!prior) return tf.div(rec, this.pixels);
        return tf.div(tf.add(rec, tf.mul(0.5, tf.sum(tf.square(tf.gather(z, c)), 1))), this.pixels);
      });
      return { losses: tf.stack(losses, 1) as tf.Tensor2D, z: tf.clone(z), images: tf.stack(images) as tf.Tensor3D };
    });
    z.dispose();
    return out;
  }

  /** ELBO-style losses ℓ*, z* and G_c(z*) of images `[n, 28, 28, 1]` (binarized first for Binary ABS). */
  infer(x: tf.Tensor4D): AbsInference {
    return tf.tidy(() => {
      const { losses, z, images } = this.#search(this.#input(x), true);
      return {
        losses,
        latents: tf.transpose(z, [1, 0, 2]) as tf.Tensor3D,
        reconstructions: tf.transpose(images, [1, 0, 2]) as tf.Tensor3D,
      };
    });
  }

  /**
   * Class scores −γ_c·ℓ*_c(x) `[n, classes]`. The gradient is the envelope theorem's,
   * ∂logit_c/∂x = −γ_c·2(x − G_c(z*_c))/784 with z* held fixed (our extension; the paper
   * estimated gradients by finite differences), through the binarization straight through.
   */
  logits(x: tf.Tensor4D): tf.Tensor2D {
    const scales = this.classScales;
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const input = args[0] as tf.Tensor, save = args[1] as tf.GradSaveFunc;
      const xs = this.#input(input as tf.Tensor4D);
      const { losses, images } = this.#search(xs, true);
      const reconstructions = tf.transpose(images, [1, 0, 2]);
      save([xs, reconstructions]);
      return {
        value: tf.neg(tf.mul(losses, tf.tensor1d(Float32Array.from(scales)))),
        gradFunc: (dy: tf.Tensor, [saved, recon]: tf.Tensor[]) => {
          const weights = tf.expandDims(tf.mul(dy, tf.tensor1d(Float32Array.from(scales))), 2);
          const diff = tf.sub(tf.expandDims(saved, 1), recon);
          return tf.reshape(tf.mul(-2 / this.pixels, tf.sum(tf.mul(diff, weights), 1)), input.shape);
        },
      };
    });
    return f(x) as tf.Tensor2D;
  }

  /**
   * The logits with every class's envelope gradient from one inference: `[n, classes]` and
   * ∂logit_c/∂x = −γ_c·2(x − G_c(z*_c))/784 as `[n, classes, 784]` (the gradient `logits` gives).
   */
  jacobian(x: tf.Tensor4D): { logits: tf.Tensor2D; jacobian: tf.Tensor3D } {
    return tf.tidy(() => {
      const xs = this.#input(x);
      const { losses, images } = this.#search(xs, true);
      const scales = tf.tensor1d(Float32Array.from(this.classScales));
      const diff = tf.sub(tf.expandDims(xs, 1), tf.transpose(images, [1, 0, 2]));
      return {
        logits: tf.neg(tf.mul(losses, scales)) as tf.Tensor2D,
        jacobian: tf.mul(-2 / this.pixels, tf.mul(diff, tf.reshape(scales, [1, -1, 1]))) as tf.Tensor3D,
      };
    });
  }

  /**
   * Certified L2 radius per image (report §2.8, Eq. 8 re-derived with σ² = ½):
   * ε_x = min_{c≠y} max{0, (d_c² − r² − ½‖z*_y‖²)/(2(d_c + r))}, r = ‖G_y(z*_y) − x‖,
   * d_c = min_z ‖G_c(z) − x‖ over the same ball, found by the prototypes and the same Adam steps
   * on the reconstruction term alone. Needs unit class scales and non-binary inputs, for which
   * the bound is derived. `[n]`, in L2 pixel units.
   */
  async lowerBoundL2(x: tf.Tensor4D, labels: Int32Array): Promise<Float64Array> {
    if (this.binary || this.classScales.some((s) => s !== 1)) {
      throw new RangeError("lowerBoundL2 is derived for ABS without binarization and class scales");
    }
    const n = x.shape[0];
    if (labels.length !== n) throw new RangeError(`${labels.length} labels for ${n} images`);
    const [distances, radii, latentNorms] = tf.tidy(() => {
      const xs = this.#input(x);
      const own = this.#search(xs, true);
      const other = this.#search(xs, false);
      const index = tf.tensor1d(labels, "int32");
      // Row i of class labels[i]: gather along the class axis of the class-major outputs.
      const pick = (t: tf.Tensor3D) =>
        tf.gatherND(tf.transpose(t, [1, 0, 2]), tf.stack([tf.range(0, n, 1, "int32"), index], 1));
      const r = tf.sqrt(tf.sum(tf.squaredDifference(pick(own.images), xs), 1));
      const zy = tf.sum(tf.square(pick(own.z)), 1);
      return [tf.sqrt(tf.mul(other.losses, this.pixels)), r, zy];
    });
    const [d, r, zsq] = await Promise.all([distances, radii, latentNorms].map((t) => t.data()));
    tf.dispose([distances, radii, latentNorms]);
    return Float64Array.from({ length: n }, (_, i) => {
      let best = Infinity;
      for (let c = 0; c < this.classes; c++) {
        if (c === labels[i]) continue;
        const dc = d[i * this.classes + c];
        best = Math.min(best, Math.max(0, (dc * dc - r[i] * r[i] - 0.5 * zsq[i]) / (2 * (dc + r[i]))));
      }
      return best;
    });
  }

  /**
   * G_{c_i}(μ_{c_i}(x_i)): each image through the encoder mean and decoder of the class
   * `classes[i]` (the Latent Descent attack's step target). `[n, 28, 28, 1]` → same shape.
   */
  reconstructWith(x: tf.Tensor4D, classes: Int32Array): tf.Tensor4D {
    const n = x.shape[0];
    if (classes.length !== n) throw new RangeError(`${classes.length} classes for ${n} images`);
    return tf.tidy(() => {
      const parts: tf.Tensor2D[] = [], rows: number[] = [];
      for (let c = 0; c < this.classes; c++) {
        const idx = [...classes.keys()].filter((i) => classes[i] === c);
        if (idx.length === 0) continue;
        const generator = this.#generators[c];
        if (!generator.encodeMean) throw new Error("reconstructWith needs generators with an encoder");
        const xc = tf.gather(x, tf.tensor1d(idx, "int32")) as tf.Tensor4D;
        parts.push(generator.decode(generator.encodeMean(xc)));
        rows.push(...idx);
      }
      const inverse = new Int32Array(n);
      rows.forEach((row, k) => inverse[row] = k);
      return tf.reshape(tf.gather(tf.concat(parts), tf.tensor1d(inverse, "int32")), x.shape) as tf.Tensor4D;
    });
  }

  /** Frees the folded decoder weights it made (not the class VAEs). */
  dispose(): void {
    if (this.#owned) this.#generators.forEach((g) => g.dispose?.());
  }
}

// ---------------------------------------------------------------------------------------------
// Calibration

/**
 * The calibrated softmax (Eq. 4, `utils.confidence_softmax`) in float64:
 * p_c = (e^{α·logit_c} + η)/(Σ e^{α·logit} + C·η), rows of `logits` `[n, classes]`. Numerator and
 * denominator are divided by e^s, s = max(α·max logit, ln η), which keeps η exact.
 */
export function calibratedSoftmax(
  logits: ArrayLike<number>,
  classes: number,
  alpha: number,
  eta: number,
): Float64Array {
  const n = logits.length / classes, out = new Float64Array(logits.length);
  const logEta = eta > 0 ? Math.log(eta) : -Infinity;
  for (let i = 0; i < n; i++) {
    let s = logEta;
    for (let c = 0; c < classes; c++) s = Math.max(s, alpha * logits[i * classes + c]);
    const floor = Math.exp(logEta - s);
    let total = classes * floor;
    for (let c = 0; c < classes; c++) total += out[i * classes + c] = Math.exp(alpha * logits[i * classes + c] - s);
    for (let c = 0; c < classes; c++) out[i * classes + c] = (out[i * classes + c] + floor) / total;
  }
  return out;
}

/** Mean cross-entropy of softmax(α·logits) against `labels`, in nats. */
function crossEntropy(logits: ArrayLike<number>, labels: ArrayLike<number>, classes: number, alpha: number): number {
  let sum = 0;
  for (let i = 0; i < labels.length; i++) {
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, alpha * logits[i * classes + c]);
    let total = 0;
    for (let c = 0; c < classes; c++) total += Math.exp(alpha * logits[i * classes + c] - max);
    sum += max + Math.log(total) - alpha * logits[i * classes + labels[i]];
  }
  return sum / labels.length;
}

/** Median over rows of the largest calibrated probability. */
function medianConfidence(logits: ArrayLike<number>, classes: number, alpha: number, eta: number): number {
  const p = calibratedSoftmax(logits, classes, alpha, eta);
  const n = p.length / classes;
  const top = Float64Array.from({ length: n }, (_, i) => Math.max(...p.subarray(i * classes, (i + 1) * classes)));
  top.sort();
  return n % 2 ? top[(n - 1) / 2] : (top[n / 2 - 1] + top[n / 2]) / 2;
}

/** Options of {@linkcode fitCalibration}. */
export interface CalibrationData {
  /** Training logits `[n, classes]` that α is fit on. */
  logits: ArrayLike<number>;
  labels: ArrayLike<number>;
  classes: number;
  /** Clean logits whose median confidence η sets (default: `logits`). */
  confidenceLogits?: ArrayLike<number>;
  /** Median confidence to reach (App. A.7: 0.9). */
  targetConfidence?: number;
}

/**
 * Fits the calibrated softmax (App. A.7): α > 0 minimising the cross-entropy of softmax(α·logit)
 * (η = 0; golden-section search on ln α, the loss being convex in α), then η ≥ 0 by bisection
 * on ln η so that the median of max_c p_c is the target (η = 0 when it is already below).
 */
export function fitCalibration(data: CalibrationData): { alpha: number; eta: number } {
  const { logits, labels, classes } = data;
  const target = data.targetConfidence ?? 0.9;
  const ce = (logAlpha: number) => crossEntropy(logits, labels, classes, Math.exp(logAlpha));
  let lo = Math.log(1e-4), hi = Math.log(1e6);
  const phi = (Math.sqrt(5) - 1) / 2;
  let a = hi - phi * (hi - lo), b = lo + phi * (hi - lo), fa = ce(a), fb = ce(b);
  while (hi - lo > 1e-9) {
    if (fa <= fb) {
      [hi, b, fb] = [b, a, fa];
      a = hi - phi * (hi - lo);
      fa = ce(a);
    } else {
      [lo, a, fa] = [a, b, fb];
      b = lo + phi * (hi - lo);
      fb = ce(b);
    }
  }
  const alpha = Math.exp((lo + hi) / 2);
  const clean = data.confidenceLogits ?? logits;
  if (medianConfidence(clean, classes, alpha, 0) <= target) return { alpha, eta: 0 };
  // The confidence falls monotonically in η (towards 1/C); bracket, then bisect ln η.
  let low = -700, high = 0;
  while (medianConfidence(clean, classes, alpha, Math.exp(high)) > target && high < 700) high += 20;
  for (let k = 0; k < 200 && high - low > 1e-12; k++) {
    const mid = (low + high) / 2;
    if (medianConfidence(clean, classes, alpha, Math.exp(mid)) > target) low = mid;
    else high = mid;
  }
  return { alpha, eta: Math.exp((low + high) / 2) };
}

/** Share of rows whose argmin over c of γ_c·loss_c is the label. */
function scaledAccuracy(losses: ArrayLike<number>, labels: ArrayLike<number>, scales: Float64Array): number {
  const classes = scales.length;
  let correct = 0;
  for (let i = 0; i < labels.length; i++) {
    let best = 0, bestValue = Infinity;
    for (let c = 0; c < classes; c++) {
      const value = scales[c] * losses[i * classes + c];
      if (value < bestValue) [best, bestValue] = [c, value];
    }
    if (best === labels[i]) correct++;
  }
  return correct / labels.length;
}

/**
 * Binary ABS's class scales γ (§2.8, published [1, .96, 1.001, 1.06, .98, .96, 1.03, 1, 1, 1]):
 * a coordinate-wise line search over `grid` maximising the training accuracy of argmin γ_c·ℓ*_c,
 * class 0 fixed at 1 (only ratios matter), ties to the value nearest 1. `losses` are ℓ*
 * `[n, classes]` of the (binarized) training images; returns `[classes]`.
 */
export function fitClassScales(
  losses: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
  options: { grid?: number[]; sweeps?: number } = {},
): Float64Array {
  const grid = options.grid ?? Array.from({ length: 101 }, (_, k) => 0.9 + 0.002 * k);
  const scales = new Float64Array(classes).fill(1);
  for (let sweep = 0; sweep < (options.sweeps ?? 3); sweep++) {
    for (let c = 1; c < classes; c++) {
      let best = scales[c], bestAccuracy = scaledAccuracy(losses, labels, scales);
      for (const value of grid) {
        scales[c] = value;
        const accuracy = scaledAccuracy(losses, labels, scales);
        if (accuracy > bestAccuracy || (accuracy === bestAccuracy && Math.abs(value - 1) < Math.abs(best - 1))) {
          [best, bestAccuracy] = [value, accuracy];
        }
      }
      scales[c] = best;
    }
  }
  return scales;
}
