/**
 * Fully invertible RevNet classifiers (fiRevNet, Jacobsen2019,
 * "Excessive Invariance Causes Adversarial Vulnerability", §2.2, App. B):
 * a bijection z = F(x) whose first C outputs z_s are the logits and whose
 * remaining d − C outputs z_n are everything the classifier ignores.
 * Because F is exactly invertible, swapping z_n between inputs gives logit
 * metamers: images with the same logits as one input and, for an excessively invariant classifier, the
 * appearance of another.
 *
 * - {@linkcode DenseFiRevNet}: the spheres network of App. B.1 (additive
 *   bottleneck couplings with fixed random permutations, no normalisation),
 *   a {@linkcode CouplingFlow} with `coupling: "additive"`.
 * - {@linkcode ConvFiRevNet}: the authors' MNIST model
 *   (jhjacobsen/fully-invertible-revnet `train.py`): levels of [squeeze,
 *   steps × (ActNorm → reverse → additive conv coupling)] with half the
 *   channels factored out after every level but the last; logits at the
 *   centre of the final map through a BatchNorm.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { CouplingFlow } from "./coupling_flow.ts";
import {
  ActNorm,
  AdditiveCoupling,
  AffineCoupling,
  type Bijection,
  ChannelPermutation,
  type ForwardOptions,
  Invertible1x1,
  Split,
  squeeze2x2,
  unsqueeze2x2,
} from "./invertible.ts";
import { Params } from "./params.ts";

/** The split latent of a fiRevNet. */
export interface FiRevNetOutput {
  /** z_s `[batch, classes]`: the semantic variables (raw logits, before {@linkcode FiRevNet.logits}). */
  zs: tf.Tensor2D;
  /** z_n `[batch, dim − classes]`: the nuisance variables. */
  zn: tf.Tensor2D;
  /** log|det ∂z/∂x| per sample `[batch]`. */
  logDet: tf.Tensor1D;
}

/** A fully invertible classifier z = F(x) = (z_s, z_n). */
export interface FiRevNet {
  /** Trainable variables. */
  readonly params: Params;
  /** d: scalars per input (and per latent). */
  readonly dim: number;
  /** C: classes, the width of z_s. */
  readonly classes: number;
  /** x (`[batch, dim]` dense, `[batch, side, side, channels]` conv) → (z_s, z_n, log|det J|). */
  forward(x: tf.Tensor, options?: ForwardOptions): FiRevNetOutput;
  /** F⁻¹(z_s, z_n), inference mode; throws unless the widths are (classes, dim − classes). */
  inverse(zs: tf.Tensor2D, zn: tf.Tensor2D): Promise<tf.Tensor>;
  /**
   * The classifier's logits from z_s: z_s itself (dense) or z_s through the
   * reference's BatchNorm1d (conv; training mode normalises by the batch and
   * moves the running statistics).
   */
  logits(zs: tf.Tensor2D, options?: { training?: boolean }): tf.Tensor2D;
  /** Frees every variable and constant. */
  dispose(): void;
}

function checkCount(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer ≥ ${min}, got ${value}`);
  }
}

function checkClasses(classes: number, dim: number): void {
  checkCount("classes", classes, 1);
  if (classes >= dim) {
    throw new UsageError(`classes must be < dim (z_n would be empty): classes ${classes}, dim ${dim}`);
  }
}

function checkLatents(net: FiRevNet, zs: tf.Tensor2D, zn: tf.Tensor2D): void {
  const want = `(${net.classes}, ${net.dim - net.classes})`;
  if (zs.rank !== 2 || zn.rank !== 2 || zs.shape[1] !== net.classes || zn.shape[1] !== net.dim - net.classes) {
    throw new UsageError(
      `inverse needs z_s and z_n of widths ${want}, got z_s [${zs.shape}] and z_n [${zn.shape}]`,
    );
  }
  if (zs.shape[0] !== zn.shape[0]) {
    throw new UsageError(`z_s and z_n must have the same batch size, got z_s [${zs.shape}] and z_n [${zn.shape}]`);
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Dense

/** Options of a {@linkcode DenseFiRevNet}. */
export interface DenseFiRevNetOptions {
  /** d: input width. */
  dim: number;
  /** C: classes (z_s = z[:, 0:C]). */
  classes: number;
  /** Additive coupling blocks (App. B.1: 4). */
  blocks: number;
  /** Hidden width of each bottleneck (not given by Jacobsen2019; ours: 128). */
  hidden: number;
  /** Hidden layers per bottleneck (default 2: d/2 → h → h → d/2). */
  hiddenLayers?: number;
}

/**
 * The dense fiRevNet of App. B.1: `blocks` additive couplings, each after a
 * fixed random permutation, with ReLU bottlenecks whose last layer starts at
 * zero, no normalisation; z_s = z[:, 0:C]. A {@linkcode CouplingFlow}
 * (additive, no linear maps), whose learned per-coordinate output scale
 * exp(s) (zero at the start) gives the logits a temperature and adds Σ s to
 * the log-det.
 */
export class DenseFiRevNet implements FiRevNet {
  readonly params: Params;
  readonly dim: number;
  readonly classes: number;
  /** The wrapped flow. */
  readonly flow: CouplingFlow;

  /** Draws the permutations and initialises the couplings from `rng`. */
  constructor(rng: Rng, options: DenseFiRevNetOptions) {
    checkCount("dim", options.dim, 2);
    checkClasses(options.classes, options.dim);
    checkCount("blocks", options.blocks, 1);
    checkCount("hidden", options.hidden, 1);
    checkCount("hiddenLayers", options.hiddenLayers ?? 2, 1);
    this.dim = options.dim;
    this.classes = options.classes;
    this.flow = new CouplingFlow(rng, {
      dim: options.dim,
      blocks: options.blocks,
      hidden: options.hidden,
      hiddenLayers: options.hiddenLayers ?? 2,
      coupling: "additive",
    });
    this.params = this.flow.params;
  }

  /** x `[batch, dim]` → z_s `[batch, C]`, z_n `[batch, dim − C]`, log-det `[batch]`. */
  forward(x: tf.Tensor): FiRevNetOutput {
    if (x.rank !== 2 || x.shape[1] !== this.dim) {
      throw new UsageError(`DenseFiRevNet expects x of shape [batch, ${this.dim}], got [${x.shape}]`);
    }
    return tf.tidy(() => {
      const { z, logDet } = this.flow.forwardWithLogDet(x as tf.Tensor2D);
      const [zs, zn] = tf.split(z, [this.classes, this.dim - this.classes], 1) as tf.Tensor2D[];
      return { zs, zn, logDet };
    });
  }

  /** (z_s, z_n) → x `[batch, dim]`. */
  async inverse(zs: tf.Tensor2D, zn: tf.Tensor2D): Promise<tf.Tensor2D> {
    checkLatents(this, zs, zn);
    const z = tf.concat([zs, zn], 1);
    const x = await this.flow.inverse(z);
    z.dispose();
    return x;
  }

  /** The logits are z_s (a copy sharing its data). */
  logits(zs: tf.Tensor2D): tf.Tensor2D {
    return tf.clone(zs);
  }

  dispose(): void {
    this.flow.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Convolutional

/** Options of a {@linkcode ConvFiRevNet}. */
export interface ConvFiRevNetOptions {
  /** Input height = width (reference: MNIST padded to 32). */
  side: number;
  /** Levels of [squeeze, steps] (reference: 3); side must be divisible by 2^levels. */
  levels: number;
  /** Flow steps per level (reference: 16). */
  steps: number;
  /** Hidden channels of every coupling network (reference: 128). */
  filters: number;
  /** Input channels (reference: 3, the digit in the last). */
  channels?: number;
  /** C: logits read from the final map (reference: 10). */
  classes?: number;
  /** Coupling of each step (reference default "additive"). */
  coupling?: "additive" | "affine";
  /** Channel mixing of each step (reference default "reverse"; "conv" is Glow's 1×1 convolution). */
  permutation?: "reverse" | "shuffle" | "conv";
  /** Dropout in the coupling networks in training mode (reference: 0.1). */
  dropout?: number;
}

/** torch BatchNorm1d(momentum = 0.9) as the reference's logit normalisation. */
const BN_MOMENTUM = 0.9;
const BN_EPS = 1e-5;

interface Level {
  steps: Bijection[];
  split: Split | null;
}

/**
 * The authors' convolutional fiRevNet (jhjacobsen/fully-invertible-revnet,
 * `Glow_` with norm "actnorm", permutation "reverse", coupling "additive"):
 * for each level, squeeze2x2 then `steps` × (ActNorm → reverse → additive
 * coupling with a conv network of `filters` channels), then, except after
 * the last level, half the channels leave as factored-out variables. With
 * side 32, 3 levels and 3 channels: 16×16×12 → split → 8×8×24 → split →
 * 4×4×48 (NHWC). z_s = final[:, p, p, 0:C] with p = ⌊side_final/2⌋ (the
 * reference's (2, 2) on its 4×4 map); z_n = the rest of the final map
 * (NHWC order, the logit slots left out, where the reference writes the
 * constant 0.1 and keeps 3,072 inputs; a constant input carries nothing) ++
 * the factored-out maps in level order, so |z_n| = d − C.
 *
 * ActNorms initialise on the first batch a forward pass sees (the reference
 * runs one batch of 512 through the model first); {@linkcode markInitialized}
 * after loading trained values.
 */
export class ConvFiRevNet implements FiRevNet {
  readonly params = new Params();
  /** Running mean and variance of the logit BatchNorm (not trained). */
  readonly stats = new Params();
  readonly dim: number;
  readonly classes: number;
  /** Input side, pixels. */
  readonly side: number;
  /** Input channels. */
  readonly channels: number;
  /** Shape of the final map `[side_final, side_final, channels_final]`. */
  readonly finalShape: [number, number, number];
  #levels: Level[] = [];
  /** Offset of the logit slots in the flattened final map. */
  #logitOffset: number;
  /** Sizes of the factored-out maps, in level order, each `[side, side, channels]`. */
  #factoredShapes: [number, number, number][] = [];
  #dropoutRng: Rng;

  /** Builds the levels from `rng`; throws unless `side` is divisible by 2^levels. */
  constructor(rng: Rng, options: ConvFiRevNetOptions) {
    checkCount("side", options.side, 2);
    checkCount("levels", options.levels, 1);
    checkCount("steps", options.steps, 1);
    checkCount("filters", options.filters, 1);
    const channels = options.channels ?? 3;
    checkCount("channels", channels, 1);
    if (options.side % 2 ** options.levels !== 0) {
      throw new UsageError(
        `side must be divisible by 2^levels = ${
          2 ** options.levels
        } (one 2×2 squeeze per level), got side ${options.side}`,
      );
    }
    const coupling = options.coupling ?? "additive";
    const permutation = options.permutation ?? "reverse";
    if (coupling !== "additive" && coupling !== "affine") {
      throw new UsageError(`coupling must be "additive" or "affine", got "${coupling}"`);
    }
    if (!["reverse", "shuffle", "conv"].includes(permutation)) {
      throw new UsageError(`permutation must be "reverse", "shuffle" or "conv", got "${permutation}"`);
    }
    this.side = options.side;
    this.channels = channels;
    this.dim = options.side * options.side * channels;
    this.classes = options.classes ?? 10;
    checkClasses(this.classes, this.dim);

    let c = channels, s = options.side;
    for (let l = 0; l < options.levels; l++) {
      c *= 4;
      s /= 2;
      const steps: Bijection[] = [];
      for (let k = 0; k < options.steps; k++) {
        const prefix = `level${l}/step${k}/`;
        const store = { params: this.params };
        steps.push(new ActNorm({ channels: c, ...store, prefix: `${prefix}actnorm/` }));
        steps.push(
          permutation === "conv"
            ? new Invertible1x1(rng, { channels: c, ...store, prefix: `${prefix}conv1x1/` })
            : new ChannelPermutation({ channels: c, kind: permutation as "reverse" | "shuffle", rng }),
        );
        const couplingOptions = {
          channels: c,
          hidden: options.filters,
          kind: "conv" as const,
          dropout: options.dropout ?? 0.1,
          ...store,
          prefix: `${prefix}coupling/`,
        };
        steps.push(
          coupling === "additive"
            ? new AdditiveCoupling(rng, couplingOptions)
            : new AffineCoupling(rng, couplingOptions),
        );
      }
      const last = l === options.levels - 1;
      const split = last ? null : new Split(c);
      if (split) {
        this.#factoredShapes.push([s, s, c - split.kept]);
        c = split.kept;
      }
      this.#levels.push({ steps, split });
    }
    this.finalShape = [s, s, c];
    if (this.classes > c) {
      throw new UsageError(`classes must be ≤ the final map's ${c} channels (the logits sit at one position)`);
    }
    const p = Math.floor(s / 2);
    this.#logitOffset = (p * s + p) * c;
    this.stats.addZeros("bn/mean", [this.classes]);
    this.stats.add("bn/var", new Float32Array(this.classes).fill(1), [this.classes]);
    this.params.add("bn/gamma", new Float32Array(this.classes).fill(1), [this.classes]);
    this.params.addZeros("bn/beta", [this.classes]);
    this.#dropoutRng = new Rng(rng.int32());
  }

  /** Every ActNorm of the net, in forward order (the flow's and those inside coupling networks). */
  get actNorms(): ActNorm[] {
    return this.#levels.flatMap((level) =>
      level.steps.flatMap((step) => [
        ...(step instanceof ActNorm ? [step] : []),
        ...(step instanceof AdditiveCoupling || step instanceof AffineCoupling ? step.norms : []),
      ])
    );
  }

  /** Whether the data-dependent ActNorm initialisation has happened. */
  get initialized(): boolean {
    return this.actNorms.every((norm) => norm.initialized);
  }

  /** Marks every ActNorm initialised (after loading trained values into `params`). */
  markInitialized(): void {
    for (const norm of this.actNorms) norm.markInitialized();
  }

  /**
   * x `[batch, side, side, channels]` → z_s `[batch, C]`, z_n `[batch, d − C]`,
   * log-det `[batch]`. Training mode applies dropout in the coupling networks,
   * seeded from `options.rng` or the net's own stream.
   */
  forward(x: tf.Tensor, options: ForwardOptions = {}): FiRevNetOutput {
    if (x.rank !== 4 || x.shape[1] !== this.side || x.shape[2] !== this.side || x.shape[3] !== this.channels) {
      throw new UsageError(
        `ConvFiRevNet expects x of shape [batch, ${this.side}, ${this.side}, ${this.channels}], got [${x.shape}]`,
      );
    }
    const stepOptions = { training: options.training, rng: options.rng ?? this.#dropoutRng };
    return tf.tidy(() => {
      const batch = x.shape[0];
      let h = x as tf.Tensor4D;
      let logDet: tf.Tensor1D = tf.zeros([batch]);
      const factored: tf.Tensor[] = [];
      for (const level of this.#levels) {
        h = squeeze2x2(h);
        for (const step of level.steps) {
          const out = step.forward(h, logDet, stepOptions);
          h = out.y as tf.Tensor4D;
          logDet = out.logDet;
        }
        if (level.split) {
          const { y, factored: f } = level.split.forward(h);
          h = y as tf.Tensor4D;
          factored.push(tf.reshape(f, [batch, -1]));
        }
      }
      const flat = tf.reshape(h, [batch, -1]) as tf.Tensor2D;
      const size = flat.shape[1];
      const [before, zs, after] = tf.split(flat, [
        this.#logitOffset,
        this.classes,
        size - this.#logitOffset - this.classes,
      ], 1);
      const zn = tf.concat([before, after, ...factored], 1) as tf.Tensor2D;
      return { zs: zs as tf.Tensor2D, zn, logDet };
    });
  }

  /** (z_s, z_n) → x `[batch, side, side, channels]` (inference mode). */
  // deno-lint-ignore require-await
  async inverse(zs: tf.Tensor2D, zn: tf.Tensor2D): Promise<tf.Tensor4D> {
    checkLatents(this, zs, zn);
    if (!this.initialized) {
      throw new Error("ConvFiRevNet.inverse before the ActNorm initialisation (run forward first)");
    }
    return tf.tidy(() => {
      const batch = zs.shape[0];
      const [s, , c] = this.finalShape;
      const finalSize = s * s * c;
      const factoredSizes = this.#factoredShapes.map(([a, b, k]) => a * b * k);
      const [rest, ...factored] = tf.split(zn, [finalSize - this.classes, ...factoredSizes], 1);
      const [before, after] = tf.split(rest, [this.#logitOffset, finalSize - this.classes - this.#logitOffset], 1);
      let h = tf.reshape(tf.concat([before, zs, after], 1), [batch, s, s, c]) as tf.Tensor4D;
      for (let l = this.#levels.length - 1; l >= 0; l--) {
        const level = this.#levels[l];
        if (level.split) {
          h = level.split.inverse(h, tf.reshape(factored[l], [batch, ...this.#factoredShapes[l]])) as tf.Tensor4D;
        }
        for (let k = level.steps.length - 1; k >= 0; k--) h = level.steps[k].inverse(h) as tf.Tensor4D;
        h = unsqueeze2x2(h);
      }
      return h;
    });
  }

  /**
   * z_s through the reference's BatchNorm1d(C, momentum 0.9, ε 1e-5): training
   * mode normalises by the batch's biased moments and moves the running
   * statistics 90% of the way to the batch's (unbiased variance, as torch);
   * inference uses the running statistics.
   */
  logits(zs: tf.Tensor2D, options: { training?: boolean } = {}): tf.Tensor2D {
    return tf.tidy(() => {
      const gamma = this.params.get("bn/gamma"), beta = this.params.get("bn/beta");
      const runningMean = this.stats.get("bn/mean"), runningVar = this.stats.get("bn/var");
      let mean: tf.Tensor = runningMean, variance: tf.Tensor = runningVar;
      if (options.training) {
        ({ mean, variance } = tf.moments(zs, 0));
        const n = zs.shape[0];
        const unbiased = tf.mul(variance, n / Math.max(n - 1, 1));
        runningMean.assign(tf.add(tf.mul(runningMean, 1 - BN_MOMENTUM), tf.mul(mean, BN_MOMENTUM)));
        runningVar.assign(tf.add(tf.mul(runningVar, 1 - BN_MOMENTUM), tf.mul(unbiased, BN_MOMENTUM)));
      }
      return tf.add(tf.mul(tf.div(tf.sub(zs, mean), tf.sqrt(tf.add(variance, BN_EPS))), gamma), beta);
    });
  }

  dispose(): void {
    for (const level of this.#levels) for (const step of level.steps) step.dispose();
    this.params.dispose();
    this.stats.dispose();
  }
}

/**
 * The reference's MNIST input: 28×28 digits `[n·784]` in [0, 1] zero-padded
 * to 32×32, placed in the last of 3 channels, x' = 2(x + u) − 1 with
 * dequantisation noise u ~ U(0, 1/256) when `rng` is given (training; the
 * reference's test transform has none) → `[n, 32, 32, 3]`.
 */
export function firevnetMnistInput(pixels: Float32Array, rng: Rng | null = null): tf.Tensor4D {
  if (pixels.length % 784 !== 0) throw new UsageError(`expected 28×28 images, got ${pixels.length} values`);
  const n = pixels.length / 784;
  const out = new Float32Array(n * 32 * 32 * 3);
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < 32; r++) {
      for (let c = 0; c < 32; c++) {
        const inside = r >= 2 && r < 30 && c >= 2 && c < 30;
        const base = ((i * 32 + r) * 32 + c) * 3;
        for (let k = 0; k < 3; k++) {
          const value = k === 2 && inside ? pixels[i * 784 + (r - 2) * 28 + (c - 2)] : 0;
          const noise = rng ? rng.uniform() / 256 : 0;
          out[base + k] = 2 * (value + noise) - 1;
        }
      }
    }
  }
  return tf.tensor4d(out, [n, 32, 32, 3]);
}

// ---------------------------------------------------------------------------------------------------------------------
// Metameric sampling

function checkPair(xA: tf.Tensor, xB: tf.Tensor): void {
  if (xA.shape.length !== xB.shape.length || xA.shape.some((v, i) => v !== xB.shape[i])) {
    throw new UsageError(`xA and xB must have the same shape, got [${xA.shape}] and [${xB.shape}]`);
  }
}

/**
 * Logit metamers F⁻¹(z_s(A), z_n(B)) of paired inputs (Jacobsen2019 §2.2): each
 * has exactly the logits of its xA and the nuisance variables of its xB.
 * xA, xB: equal shapes, the net's input layout.
 */
export async function metamers(net: FiRevNet, xA: tf.Tensor, xB: tf.Tensor): Promise<tf.Tensor> {
  checkPair(xA, xB);
  const a = net.forward(xA), b = net.forward(xB);
  try {
    return await net.inverse(a.zs, b.zn);
  } finally {
    tf.dispose([a.zs, a.zn, a.logDet, b.zs, b.zn, b.logDet]);
  }
}

/**
 * Fig. 6's nuisance interpolation: z_s fixed at z_s(A) while z_n moves
 * linearly from z_n(A) (t = 0) to z_n(B) (t = 1) in `steps` ≥ 2 equal steps;
 * returns the inverted inputs `[steps, batch, ...input shape]`.
 */
export async function nuisanceInterpolation(
  net: FiRevNet,
  xA: tf.Tensor,
  xB: tf.Tensor,
  steps: number,
): Promise<tf.Tensor> {
  checkPair(xA, xB);
  checkCount("steps", steps, 2);
  const a = net.forward(xA), b = net.forward(xB);
  const { zs, zn } = tf.tidy(() => {
    const ts = Array.from({ length: steps }, (_, i) => i / (steps - 1));
    return {
      zs: tf.tile(a.zs, [steps, 1]) as tf.Tensor2D,
      zn: tf.concat(ts.map((t) => tf.add(tf.mul(a.zn, 1 - t), tf.mul(b.zn, t))), 0) as tf.Tensor2D,
    };
  });
  tf.dispose([a.zs, a.zn, a.logDet, b.zs, b.zn, b.logDet]);
  try {
    const x = await net.inverse(zs, zn);
    const out = tf.reshape(x, [steps, ...xA.shape]);
    x.dispose();
    return out;
  } finally {
    tf.dispose([zs, zn]);
  }
}
