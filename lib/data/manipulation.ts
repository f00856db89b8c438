/**
 * The dataset manipulation of Zietlow's thesis (Zietlow2022 §4.2.2–4.2.4,
 * §4.3.1): x' = reflect01(x + ε·m(w)) with ‖m‖∞ ≤ 1, a perturbation that depends
 * on the factors w only and is trained to make the images cheaper to
 * reconstruct for an entangled reference VAE and dearer for a disentangled
 * one, so that retrained VAEs lose their alignment while the factors stay
 * the same. Also the control of the same size: uniform pixel noise.
 *
 * Choices the thesis leaves open, ours:
 * - the bound ‖m‖∞ ≤ 1 is ε·tanh on the renderer's output;
 * - w enters as w/(size − 1) ∈ [0, 1] per factor, and the 1-neuron layer is
 *   affine (no activation);
 * - the noise control is drawn once per image (seeded by the image's flat
 *   factor index) and reflected, like the manipulation.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { readTogether } from "../core/readback.ts";
import { Rng } from "../core/rng.ts";
import { convDecoder, dense, type ImageSize } from "../models/dislib_vae.ts";
import type { Params } from "../models/params.ts";
import type { Decoder, Encoder } from "../models/vae.ts";
import { type Factors, FactorSpace, type GroundTruthDataset, type Observations } from "./ground_truth.ts";

/**
 * Range normalisation of §4.3.1: x − 2·ReLU(x − 1) + 2·ReLU(−x), a reflection
 * at the borders of [0, 1] (x > 1 → 2 − x, x < 0 → −x), not a clip, so the
 * perturbation keeps its size near the borders. Exact for x ∈ [−1, 2].
 */
export function reflect01(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => tf.add(tf.sub(x, tf.mul(2, tf.relu(tf.sub(x, 1)))), tf.mul(2, tf.relu(tf.neg(x)))));
}

/** {@linkcode reflect01} of one number. */
export function reflect01Value(v: number): number {
  return v - 2 * Math.max(v - 1, 0) + 2 * Math.max(-v, 0);
}

function checkEps(eps: number): void {
  if (!(eps > 0 && eps <= 0.5)) throw new UsageError(`eps must be in (0, 0.5], got ${eps}`);
}

/** Options of {@linkcode PerturbationNet}. */
export interface PerturbationOptions {
  /** Number of factors (the length of w). */
  factors: number;
  /** Values per factor; w/(size − 1) ∈ [0, 1] is the network's input. */
  factorSizes: readonly number[];
  /** Image shape `[h, w, c]`, square, h ∈ {32, 64}. */
  imageShape: [number, number, number];
  /** Bound of the perturbation in max-norm, in (0, 0.5] (thesis: 0.1 dSprites, 0.175 Shapes3D). */
  eps: number;
}

/**
 * The perturbation m_ψ of Fig. 4.2: w → w/(size − 1) → s = Dense(1) → the
 * disentanglement_lib transposed-convolution decoder
 * ({@linkcode convDecoder} with one latent) → ε·tanh. The single neuron is
 * the thesis's bottleneck: the whole modification is a curve s ↦ m(s) in
 * image space, indexed by one affine function of the factors. The renderer's
 * weights are drawn from `rng` first, then Dense(1)'s (Glorot-uniform, zero
 * bias).
 */
export class PerturbationNet {
  /** All weights: the renderer's (`fc1`, `fc2`, `upconv{i}`) and the bottleneck's (`scalar/w` `[factors, 1]`, `scalar/b`). */
  readonly params: Params;
  /** The options it was built with. */
  readonly options: PerturbationOptions;
  #renderer: Decoder;
  #scalar: (x: tf.Tensor2D) => tf.Tensor2D;
  /** 1/(size − 1) per factor (0 for a constant factor). */
  #scales: Float32Array;

  /** Draws the renderer's weights, then the bottleneck's, from `rng`; throws a UsageError on bad options. */
  constructor(rng: Rng, options: PerturbationOptions) {
    const { factors, factorSizes, imageShape, eps } = options;
    checkEps(eps);
    if (!Number.isInteger(factors) || factors < 1 || factorSizes.length !== factors) {
      throw new UsageError(
        `factors (${factors}) must be a positive integer equal to factorSizes.length (${factorSizes})`,
      );
    }
    if (factorSizes.some((s) => !Number.isInteger(s) || s < 1)) {
      throw new UsageError(`factorSizes must be positive integers, got ${factorSizes}`);
    }
    const [h, w, c] = imageShape;
    if (h !== w || (h !== 32 && h !== 64) || !Number.isInteger(c) || c < 1) {
      throw new UsageError(`imageShape must be [32 or 64, same, channels ≥ 1], got [${imageShape}]`);
    }
    this.options = { factors, factorSizes: [...factorSizes], imageShape: [h, w, c], eps };
    this.#renderer = convDecoder(rng, { size: h as ImageSize, channels: c, latents: 1 });
    this.params = this.#renderer.params;
    this.#scalar = dense(this.params, rng, "scalar", factors, 1);
    this.#scales = Float32Array.from(factorSizes, (s) => (s > 1 ? 1 / (s - 1) : 0));
  }

  /** The bottleneck s `[n, 1]` of raw factor indices w `[n, factors]` (float). */
  scalar(w: tf.Tensor2D): tf.Tensor2D {
    if (w.shape[1] !== this.options.factors) {
      throw new Error(`w must be [n, ${this.options.factors}], got [${w.shape}]`);
    }
    return tf.tidy(() => this.#scalar(tf.mul(w, tf.tensor1d(this.#scales)) as tf.Tensor2D));
  }

  /** The perturbation ε·tanh(renderer(s)) `[n, h, w, c]` of bottleneck values s `[n, 1]`. */
  render(s: tf.Tensor2D): tf.Tensor4D {
    return tf.tidy(() => tf.mul(this.options.eps, tf.tanh(this.#renderer.decode(s))) as tf.Tensor4D);
  }

  /** ε·m(w) `[n, h, w, c]` of raw factor indices w `[n, factors]`. */
  apply(w: tf.Tensor2D): tf.Tensor4D {
    return tf.tidy(() => this.render(this.scalar(w)));
  }

  /**
   * m at `points` evenly spaced s over the s-range of every factor tuple
   * (min/max of the affine Dense(1) over the corners of the normalised factor
   * box), for synchronous O(batch) use by {@linkcode perturbedDataset};
   * linear interpolation, error ≤ 1e-3. Holds points·h·w·c floats (4096 ·
   * 64·64·3 ≈ 200 MB at most). Built asynchronously (WebGPU tensors have no
   * synchronous read); the table itself is read synchronously, as datasets
   * produce images synchronously.
   */
  async tabulate(points = 4096): Promise<PerturbationTable> {
    if (!Number.isInteger(points) || points < 2) throw new UsageError(`points must be an integer ≥ 2, got ${points}`);
    const weights = await this.params.get("scalar/w").data();
    const bias = (await this.params.get("scalar/b").data())[0];
    // s = b + Σ aᵢ·wᵢ over raw indices wᵢ ∈ [0, sizeᵢ − 1]: each term spans [0, aᵢ·(sizeᵢ − 1)] = [0, Wᵢ].
    const coefficients = Float64Array.from(weights, (v, i) => v * this.#scales[i]);
    let sMin = bias, sMax = bias;
    coefficients.forEach((a, i) => {
      const end = a * (this.options.factorSizes[i] - 1);
      sMin += Math.min(0, end);
      sMax += Math.max(0, end);
    });
    const shape = this.options.imageShape;
    const size = shape[0] * shape[1] * shape[2];
    const values = new Float32Array(points * size);
    const chunk = 128;
    for (let start = 0; start < points; start += chunk) {
      const rows = Math.min(chunk, points - start);
      const s = Float32Array.from({ length: rows }, (_, k) => sMin + (sMax - sMin) * (start + k) / (points - 1));
      const m = tf.tidy(() => this.render(tf.tensor2d(s, [rows, 1])));
      values.set(await m.data() as Float32Array, start * size);
      m.dispose();
    }
    return {
      eps: this.options.eps,
      sMin,
      sMax,
      points,
      values,
      shape: [...shape],
      at(w, out, offset) {
        let s = bias;
        for (let i = 0; i < coefficients.length; i++) s += coefficients[i] * w[i];
        const t = sMax > sMin ? Math.min(Math.max((s - sMin) / (sMax - sMin), 0), 1) * (points - 1) : 0;
        const i0 = Math.min(Math.floor(t), points - 2);
        const f = t - i0;
        const a = i0 * size, b = a + size;
        for (let p = 0; p < size; p++) out[offset + p] = (1 - f) * values[a + p] + f * values[b + p];
      },
    };
  }

  /** Frees the weights. */
  dispose(): void {
    this.params.dispose();
  }
}

/** A tabulated perturbation (see {@linkcode PerturbationNet.tabulate}). */
export interface PerturbationTable {
  /** The perturbation's bound in max-norm. */
  readonly eps: number;
  /** Smallest s over all factor tuples. */
  sMin: number;
  /** Largest s over all factor tuples. */
  sMax: number;
  /** Number of tabulated s values. */
  points: number;
  /** ε·m at each tabulated s: `[points, h, w, c]` row-major. */
  values: Float32Array;
  /** Image shape `[h, w, c]`. */
  shape: [number, number, number];
  /** Writes ε·m(w) of one raw factor tuple w into `out` at `offset` (h·w·c floats), linearly interpolated in s. */
  at(w: ArrayLike<number>, out: Float32Array, offset: number): void;
}

/** A trained reference VAE: its encoder stays frozen, its decoder is adapted to x'. */
export interface ReferenceModel {
  /** Frozen encoder of the reference VAE. */
  encoder: Encoder;
  /** Decoder that is adapted to the manipulated images x'. */
  decoder: Decoder;
}

/** Settings of {@linkcode trainPerturbation}. */
export interface PerturbationTraining {
  /** Perturbation (ψ) steps. */
  steps: number;
  /** Images per batch. */
  batch: number;
  /** Adam learning rate of ψ and of the decoders (thesis 1e-4). */
  lr: number;
  /** Decoder batches per ψ batch (thesis: 3× more), default 3. */
  decoderSteps?: number;
  /** Latent samples per image for the stochastic reconstruction loss (thesis 5), default 5. */
  latentSamples?: number;
  /** Draws batches and the latent noise. */
  rng: Rng;
  /** Called after every ψ step with `gap` = L_ent − L_dis and the two mean reconstruction losses `ent`, `dis`. */
  log?: (step: number, terms: Record<string, number>) => void;
  /** Checked before every ψ step; true ends training early. */
  shouldStop?: () => boolean;
}

/** Sigmoid cross-entropy on logits, summed over pixels, averaged over the batch, as disentanglement_lib. */
function reconstructionLoss(logits: tf.Tensor4D, target: tf.Tensor4D): tf.Scalar {
  // Same formula as lib/train/vae_objectives.ts bernoulliReconstruction (a test checks it); lib/data may not import
  // lib/train, so TF.js's own op is used here.
  const perPixel = tf.losses.sigmoidCrossEntropy(target, logits, undefined, 0, tf.Reduction.NONE);
  return tf.div(tf.sum(perPixel), target.shape[0]) as tf.Scalar;
}

/**
 * Trains the perturbation (thesis Fig. 4.2): ψ minimises L_rec^ENT(x') −
 * L_rec^DIS(x') (encoders frozen on x, 5 z per image, Bernoulli loss on
 * logits as disentanglement_lib), decoders start from the references and take
 * `decoderSteps` Adam batches per m batch; Adam (0.9, 0.999, 1e-7). ent/dis:
 * lists (the Shapes3D 4 + 4 ensemble), each side's loss the mean over its
 * members. Reference decoders' weights are COPIED (the trained references
 * stay intact): they are trained in place on working values and restored to
 * the saved weights before this returns, also when it throws. Returns the
 * logged gap history and the final gap and ‖ε·m‖∞, both measured on one fresh
 * batch after training (‖ε·m‖∞ ≤ eps).
 */
export async function trainPerturbation(
  net: PerturbationNet,
  dataset: GroundTruthDataset,
  ent: ReferenceModel[],
  dis: ReferenceModel[],
  training: PerturbationTraining,
): Promise<{ gap: number; maxAbs: number; history: { step: number; gap: number }[] }> {
  const { steps, batch, lr, rng } = training;
  const decoderSteps = training.decoderSteps ?? 3, latentSamples = training.latentSamples ?? 5;
  for (const [name, value] of Object.entries({ steps, decoderSteps })) {
    if (!Number.isInteger(value) || value < 0) throw new UsageError(`${name} must be an integer ≥ 0, got ${value}`);
  }
  for (const [name, value] of Object.entries({ batch, latentSamples })) {
    if (!Number.isInteger(value) || value < 1) throw new UsageError(`${name} must be an integer ≥ 1, got ${value}`);
  }
  if (!(lr > 0)) throw new UsageError(`lr must be > 0, got ${lr}`);
  if (ent.length === 0 || dis.length === 0) {
    throw new UsageError("trainPerturbation needs ≥ 1 entangled and ≥ 1 disentangled model");
  }
  const { imageShape, factorSizes } = net.options;
  if (dataset.imageShape.join() !== imageShape.join() || dataset.factorSizes.join() !== factorSizes.join()) {
    throw new UsageError(
      `the perturbation net is for images [${imageShape}] and factor sizes [${factorSizes}], the dataset ${dataset.name} ` +
        `has [${dataset.imageShape}] and [${dataset.factorSizes}]`,
    );
  }
  const models = [...ent, ...dis];
  const decoderParams = models.map((m) => m.decoder.params);
  if (new Set(decoderParams).size !== models.length || decoderParams.includes(net.params)) {
    throw new UsageError("each reference model needs its own decoder (one appears twice)");
  }
  const decoderVars = decoderParams.map((p) => p.list());
  // Side weights: the gap is mean(ENT losses) − mean(DIS losses).
  const sides = models.map((_, i) => (i < ent.length ? 1 / ent.length : -1 / dis.length));

  const draw = () =>
    tf.tidy(() => {
      const factors = dataset.sampleFactors(batch, rng);
      const images = dataset.observations(factors, rng);
      const w = tf.tensor2d(Float32Array.from(factors.values), [batch, factorSizes.length]);
      const x = tf.tensor4d(images.values, [batch, ...imageShape]);
      // z ~ q(z|x) of every reference, latentSamples per image, sample-major ([s₀ rows, s₁ rows, …]).
      const codes = models.map(({ encoder }) => {
        const { mean, logVar } = encoder.encode(x);
        const d = mean.shape[1];
        const rows = latentSamples * batch;
        const noise = tf.tensor2d(rng.normalArray(rows * d), [rows, d]);
        return tf.add(
          tf.tile(mean, [latentSamples, 1]),
          tf.mul(tf.exp(tf.mul(0.5, tf.tile(logVar, [latentSamples, 1]))), noise),
        );
      }) as tf.Tensor2D[];
      return { w, x, codes };
    });
  const perturbed = (w: tf.Tensor2D, x: tf.Tensor4D) =>
    tf.tile(reflect01(tf.add(x, net.apply(w))), [latentSamples, 1, 1, 1]) as tf.Tensor4D;
  /** The reconstruction loss of every model on x' (mean over samples and images), stacked `[models]`. */
  const losses = (codes: tf.Tensor2D[], target: tf.Tensor4D) =>
    tf.stack(models.map((m, i) => reconstructionLoss(m.decoder.decode(codes[i]), target))) as tf.Tensor1D;
  const sideWeights = tf.tensor1d(sides);

  const saved = decoderVars.map((vars) => vars.map((v) => tf.clone(v)));
  const adam = () => tf.train.adam(lr, 0.9, 0.999, 1e-7);
  const decoderOptimizers = models.map(adam);
  const netOptimizer = adam();
  const history: { step: number; gap: number }[] = [];
  try {
    for (let step = 0; step < steps; step++) {
      if (training.shouldStop?.()) break;
      for (let k = 0; k < decoderSteps; k++) {
        const { w, x, codes } = draw();
        const target = tf.tidy(() => perturbed(w, x));
        models.forEach((m, i) => {
          const loss = decoderOptimizers[i].minimize(
            () => reconstructionLoss(m.decoder.decode(codes[i]), target),
            false,
            decoderVars[i],
          );
          loss?.dispose();
        });
        tf.dispose([w, x, target, ...codes]);
      }
      const { w, x, codes } = draw();
      let terms: tf.Tensor1D | undefined;
      const gapTensor = netOptimizer.minimize(
        () => {
          const perModel = losses(codes, perturbed(w, x));
          terms = tf.keep(perModel);
          return tf.sum(tf.mul(perModel, sideWeights)) as tf.Scalar;
        },
        true,
        net.params.list(),
      )!;
      tf.dispose([w, x, ...codes]);
      let gap: number, perModel: Float32Array;
      try {
        // Every ψ step is logged: the gap and each model's loss in one readback.
        const [gapValue, modelValues] = await readTogether([gapTensor, terms!]);
        [gap, perModel] = [gapValue[0], modelValues];
      } finally {
        tf.dispose([gapTensor, terms!]);
      }
      history.push({ step, gap });
      training.log?.(step, { gap, ...sideMeans(perModel, ent.length) });
    }
    const { w, x, codes } = draw();
    const [gapTensor, maxTensor] = tf.tidy(() => [
      tf.sum(tf.mul(losses(codes, perturbed(w, x)), sideWeights)),
      tf.max(tf.abs(net.apply(w))),
    ]);
    const gap = (await gapTensor.data())[0], maxAbs = (await maxTensor.data())[0];
    tf.dispose([w, x, ...codes, gapTensor, maxTensor]);
    return { gap, maxAbs, history };
  } finally {
    decoderVars.forEach((vars, i) => vars.forEach((v, j) => v.assign(saved[i][j])));
    tf.dispose(saved.flat());
    [...decoderOptimizers, netOptimizer].forEach((o) => o.dispose());
    sideWeights.dispose();
  }
}

/** Mean ENT and DIS losses of the per-model losses (ENT models first). */
function sideMeans(perModel: ArrayLike<number>, entCount: number): { ent: number; dis: number } {
  let ent = 0, dis = 0;
  for (let i = 0; i < perModel.length; i++) {
    if (i < entCount) ent += perModel[i] / entCount;
    else dis += perModel[i] / (perModel.length - entCount);
  }
  return { ent, dis };
}

/** `base` with `transform(factor tuple, pixels)` applied in place to a copy of every image it produces. */
function mapped(
  base: GroundTruthDataset,
  name: string,
  description: string,
  transform: (tuple: Int32Array, pixels: Float32Array) => void,
): GroundTruthDataset {
  return {
    name,
    description,
    factorNames: base.factorNames,
    factorSizes: base.factorSizes,
    imageShape: base.imageShape,
    categorical: base.categorical,
    sampleFactors: (n, rng) => base.sampleFactors(n, rng),
    observations(factors: Factors, rng: Rng): Observations {
      const images = base.observations(factors, rng);
      const values = Float32Array.from(images.values);
      const k = base.factorSizes.length;
      const size = values.length / factors.n;
      for (let r = 0; r < factors.n; r++) {
        transform(factors.values.subarray(r * k, (r + 1) * k), values.subarray(r * size, (r + 1) * size));
      }
      return { values, n: images.n, shape: images.shape };
    },
  };
}

/**
 * The manipulated dataset: the same factors, observations reflect01(x +
 * ε·m(w)) with ε·m from the table. Named `${base.name}-mod`.
 */
export function perturbedDataset(base: GroundTruthDataset, table: PerturbationTable): GroundTruthDataset {
  if (table.shape.join() !== base.imageShape.join()) {
    throw new UsageError(`the perturbation is for [${table.shape}] images, ${base.name} has [${base.imageShape}]`);
  }
  const m = new Float32Array(table.shape[0] * table.shape[1] * table.shape[2]);
  return mapped(
    base,
    `${base.name}-mod`,
    `${base.description}; + a learned perturbation of max-norm ≤ ${table.eps} (reflected into [0, 1])`,
    (tuple, pixels) => {
      table.at(tuple, m, 0);
      for (let p = 0; p < pixels.length; p++) pixels[p] = reflect01Value(pixels[p] + m[p]);
    },
  );
}

/**
 * The control of the same size (§4.3.3): x + U[−ε, ε] per pixel, drawn from
 * `Rng.derive(seed, "noise", index)` with index the factor tuple's flat index
 * (so the same image always gets the same noise), reflected into [0, 1] as
 * the manipulation. Named `${base.name}-noise`. `eps` ∈ (0, 0.5].
 */
export function noisyDataset(base: GroundTruthDataset, eps: number, seed: number): GroundTruthDataset {
  checkEps(eps);
  const space = new FactorSpace(base.factorSizes);
  return mapped(
    base,
    `${base.name}-noise`,
    `${base.description}; + U[−${eps}, ${eps}] per pixel, fixed per image, reflected into [0, 1]`,
    (tuple, pixels) => {
      const rng = Rng.derive(seed, "noise", space.indexOf(tuple));
      for (let p = 0; p < pixels.length; p++) pixels[p] = reflect01Value(pixels[p] + (2 * rng.uniform() - 1) * eps);
    },
  );
}
