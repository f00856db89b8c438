/**
 * Analysis by synthesis (ABS, Schott2019 §3–4, App. A.7): a
 * classifier over one generative model per class (the class VAEs of `abs_vae.ts`) whose class
 * scores are the negative optimised ELBOs ℓ*_c(x) = min_z (‖x − G_c(z)‖² + ½‖z‖²)/784, found by
 * the best of P fixed prototypes followed by Adam steps in the 8-d latent space
 * (AnalysisBySynthesis `inference.py`, `loss_functions.py`, `sampling.py`). Also the certified
 * L2 radius (Eq. 8, re-derived) and the Binary ABS variant; the calibrated softmax and the class
 * scales are in `abs_calibration.ts`.
 *
 * Gradients of the logits are our extension: by the envelope theorem,
 * ∂logit_c/∂x = −2(x − G_c(z*_c))/784 with z* held fixed, in place of the paper's costly
 * finite-difference gradient estimates ("w/ GE").
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { Rng } from "../core/rng.ts";
import { ABS_DECODER, ABS_LATENTS, ABS_PIXELS, ABS_SIDE, type ClassVae } from "./abs_vae.ts";
import { binarizeStraightThrough, BN_EPSILON } from "./conv_bn.ts";

/** torch.optim.Adam's defaults for the latent search. */
const ADAM_BETA1 = 0.9, ADAM_BETA2 = 0.999, ADAM_EPSILON = 1e-8;

/** One class's generative model as inference uses it: an eval-mode decoder with its vector–Jacobian product. */
export interface ClassGenerator {
  /** Latent dimension of z. */
  latents: number;
  /** Pixels per image (h·w·c), the width of G(z). */
  pixels: number;
  /** G(z): latents `[m, latents]` → pixel means `[m, pixels]`. */
  decode(z: tf.Tensor2D): tf.Tensor2D;
  /** G(z), and g ↦ gᵀ ∂G/∂z `[m, pixels]` → `[m, latents]` (valid inside the caller's tidy). */
  decodeVjp(z: tf.Tensor2D): { images: tf.Tensor2D; vjp(g: tf.Tensor2D): tf.Tensor2D };
  /** The encoder's posterior mean `[m, latents]` of images `[m, h, w, c]`, where there is an encoder. */
  encodeMean?(x: tf.Tensor4D): tf.Tensor2D;
  /** Frees the weights the generator holds, where it owns any. */
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
  /** Number of classes (one generator each). */
  readonly classes: number;
  /** Latent dimension of each class model. */
  readonly latents: number;
  /** Pixels per input image (784 for MNIST). */
  readonly pixels: number;
  /** Adam steps of the latent search after the best prototype. */
  readonly steps: number;
  /** Adam learning rate of the latent search. */
  readonly lr: number;
  /** Radius of the latent ball the search is projected into. */
  readonly radius: number;
  /** Whether inputs are binarized at 0.5 before inference (Binary ABS). */
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
   * Certified L2 radius per image (Schott2019 Eq. 8 re-derived with σ² = ½):
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
