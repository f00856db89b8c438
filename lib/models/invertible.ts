/**
 * Exactly invertible layers with their log-determinants: the building blocks
 * of fully invertible classifiers (fiRevNet, Jacobsen2019 §2.2,
 * App. B) and of Glow/RealNVP-style flows.
 *
 * Every layer acts on the last (channel) axis of `[batch, features]` or
 * `[batch, height, width, channels]` (NHWC) tensors, so one implementation
 * serves dense and convolutional nets. Constants follow the authors' code
 * (jhjacobsen/fully-invertible-revnet, `invertible_layers.py`, `layers.py`)
 * with two deliberate differences: ActNorm is y = (x + b)·exp(logs) (the
 * reference multiplies by exp(logs) + 0.001 but reports the log-det without
 * the 0.001), so the log-det is exact; and the squeeze uses TensorFlow's
 * space_to_depth channel order (the paper's MNIST model was TensorFlow)
 * rather than the reference's PyTorch NCHW order.
 *
 * Every op used has a gradient on the wasm backend: permutations are
 * matMuls with constant 0/1 matrices (gather's gradient is missing there),
 * the squeeze is a reshape and a 4-D transpose (depthToSpace has no
 * gradient), and the 1×1 convolution's inverse is a finite product of
 * matrices (tfjs has no matrix inverse or triangular solve).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { Mlp } from "./mlp.ts";
import { Params } from "./params.ts";

/** How a forward pass runs: training mode turns on dropout inside coupling networks. */
export interface ForwardOptions {
  /** Training mode (dropout active); inference by default. */
  training?: boolean;
  /** Seeds of the dropout masks in training mode (TF.js's own random state is never used). */
  rng?: Rng;
}

/** Output of a {@linkcode Bijection}'s forward pass. */
export interface BijectionOutput {
  /** The layer's output, same rank as the input. */
  y: tf.Tensor;
  /** The incoming log-det plus this layer's log|det ∂y/∂x|, per sample `[batch]`. */
  logDet: tf.Tensor1D;
}

/**
 * An invertible layer: y = f(x) with log|det ∂y/∂x| accumulated per sample,
 * and x = f⁻¹(y). `inverse` runs in inference mode.
 */
export interface Bijection {
  /** The store holding this layer's trainable variables (a net shares one store among its layers). */
  readonly params: Params;
  /** Maps x to y and adds this layer's log|det J| to `logDet` `[batch]`. */
  forward(x: tf.Tensor, logDet: tf.Tensor1D, options?: ForwardOptions): BijectionOutput;
  /** Maps y back to x (inference mode). */
  inverse(y: tf.Tensor): tf.Tensor;
  /** Frees the layer's constants, and its variables when it created its own store. */
  dispose(): void;
}

/**
 * Where a layer puts its variables: a shared `params` store under `prefix`
 * (the store's owner frees them), or, without `params`, a store of its own
 * that `dispose()` frees.
 */
export interface LayerStore {
  /** Shared store the layer's variables go into (its owner frees them); without it the layer owns its own. */
  params?: Params;
  /** Key prefix of the layer's variables ("level0/step3/"). */
  prefix?: string;
}

interface Store {
  params: Params;
  prefix: string;
  owned: boolean;
}

function openStore(options: LayerStore): Store {
  return { params: options.params ?? new Params(), prefix: options.prefix ?? "", owned: !options.params };
}

function checkCount(name: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer ≥ ${min}, got ${value}`);
  }
}

/** Number of positions sharing one channel vector: h·w for NHWC, 1 for `[batch, features]`. */
function positions(x: tf.Tensor): number {
  return x.shape.slice(1, -1).reduce((a, b) => a * b, 1);
}

function channelsOf(x: tf.Tensor): number {
  return x.shape[x.rank - 1];
}

function checkChannels(layer: string, x: tf.Tensor, channels: number): void {
  if (x.rank < 2 || channelsOf(x) !== channels) {
    throw new UsageError(`${layer} expects ${channels} channels on the last axis, got shape [${x.shape}]`);
  }
}

/** x `[..., C]` times m `[C, C']` (or mᵀ) along the last axis. */
function channelMatMul(x: tf.Tensor, m: tf.Tensor2D, transposeM = false): tf.Tensor {
  const c = channelsOf(x);
  const out = tf.matMul(tf.reshape(x, [-1, c]) as tf.Tensor2D, m, false, transposeM);
  return tf.reshape(out, [...x.shape.slice(0, -1), out.shape[1] as number]);
}

/** Sum over every axis but the batch axis: `[batch, ...]` → `[batch]`. */
function sumPerSample(x: tf.Tensor): tf.Tensor1D {
  return tf.sum(tf.reshape(x, [x.shape[0], -1]), 1) as tf.Tensor1D;
}

/** The 0/1 matrix M with (x·M)[i] = x[permutation[i]]. */
function permutationMatrix(permutation: ArrayLike<number>): tf.Tensor2D {
  const n = permutation.length;
  const values = new Float32Array(n * n);
  for (let i = 0; i < n; i++) values[permutation[i] * n + i] = 1;
  return tf.tensor2d(values, [n, n]);
}

// ---------------------------------------------------------------------------------------------------------------------
// ActNorm

/**
 * Glow's activation normalisation: a per-channel affine map
 * y = (x + b)·exp(logs) whose b and logs are set on the first batch it sees
 * (b = −mean, logs = −log(std + 1e-6), biased moments over batch and
 * positions, as the reference), so that batch leaves with zero mean and unit
 * variance per channel. log|det J| = positions·Σ logs.
 */
export class ActNorm implements Bijection {
  readonly params: Params;
  /** Channels C of the last axis. */
  readonly channels: number;
  #store: Store;
  #initialized = false;

  /** b and logs start at zero and are set by the first batch. */
  constructor(options: { channels: number } & LayerStore) {
    checkCount("ActNorm channels", options.channels, 1);
    this.channels = options.channels;
    this.#store = openStore(options);
    this.params = this.#store.params;
    this.params.addZeros(`${this.#store.prefix}b`, [this.channels]);
    this.params.addZeros(`${this.#store.prefix}logs`, [this.channels]);
  }

  /** Whether the data-dependent initialisation has happened. */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** Skips the data-dependent initialisation (after loading trained values into `params`). */
  markInitialized(): void {
    this.#initialized = true;
  }

  /** Sets b and logs from the moments of `x` `[..., channels]` (what the first forward pass does). */
  initialize(x: tf.Tensor): void {
    checkChannels("ActNorm", x, this.channels);
    tf.tidy(() => {
      const flat = tf.reshape(x, [-1, this.channels]);
      const { mean, variance } = tf.moments(flat, 0);
      this.#bias.assign(tf.neg(mean));
      this.#logScale.assign(tf.neg(tf.log(tf.add(tf.sqrt(variance), 1e-6))));
    });
    this.#initialized = true;
  }

  get #bias(): tf.Variable {
    return this.params.get(`${this.#store.prefix}b`);
  }

  get #logScale(): tf.Variable {
    return this.params.get(`${this.#store.prefix}logs`);
  }

  /** y = (x + b)·exp(logs), initialising on the first call; for ActNorms inside coupling networks (no log-det). */
  apply<T extends tf.Tensor>(x: T): T {
    if (!this.#initialized) this.initialize(x);
    checkChannels("ActNorm", x, this.channels);
    return tf.mul(tf.add(x, this.#bias), tf.exp(this.#logScale));
  }

  forward(x: tf.Tensor, logDet: tf.Tensor1D): BijectionOutput {
    const y = this.apply(x);
    return { y, logDet: tf.add(logDet, tf.mul(tf.sum(this.#logScale), positions(x))) };
  }

  inverse(y: tf.Tensor): tf.Tensor {
    if (!this.#initialized) {
      throw new Error("ActNorm.inverse before the data-dependent initialisation (run forward first)");
    }
    checkChannels("ActNorm", y, this.channels);
    return tf.sub(tf.mul(y, tf.exp(tf.neg(this.#logScale))), this.#bias);
  }

  dispose(): void {
    if (this.#store.owned) this.params.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Permutations

/** A fixed channel order: "reverse" (the reference's default) or a seeded random "shuffle". */
export type PermutationKind = "reverse" | "shuffle";

/**
 * A fixed permutation of the channels (log-det 0), so that successive
 * couplings update different halves. "reverse" flips the channel axis;
 * "shuffle" applies a random permutation drawn from `rng`, as a matMul with
 * a constant 0/1 matrix.
 */
export class ChannelPermutation implements Bijection {
  readonly params: Params;
  /** Channels C of the last axis. */
  readonly channels: number;
  /** How the order was chosen. */
  readonly kind: PermutationKind;
  /** y[..., i] = x[..., permutation[i]]. */
  readonly permutation: Int32Array;
  #matrix: tf.Tensor2D | null;
  #store: Store;

  /** "shuffle" needs `rng`. */
  constructor(options: { channels: number; kind: PermutationKind; rng?: Rng } & LayerStore) {
    checkCount("ChannelPermutation channels", options.channels, 1);
    if (options.kind !== "reverse" && options.kind !== "shuffle") {
      throw new UsageError(`permutation kind must be "reverse" or "shuffle", got "${options.kind}"`);
    }
    this.channels = options.channels;
    this.kind = options.kind;
    this.#store = openStore(options);
    this.params = this.#store.params;
    if (options.kind === "reverse") {
      this.permutation = Int32Array.from({ length: this.channels }, (_, i) => this.channels - 1 - i);
      this.#matrix = null;
    } else {
      if (!options.rng) throw new UsageError('a "shuffle" ChannelPermutation needs an rng');
      this.permutation = options.rng.permutation(this.channels);
      this.#matrix = permutationMatrix(this.permutation);
    }
  }

  forward(x: tf.Tensor, logDet: tf.Tensor1D): BijectionOutput {
    checkChannels("ChannelPermutation", x, this.channels);
    const y = this.#matrix ? channelMatMul(x, this.#matrix) : tf.reverse(x, -1);
    return { y, logDet: tf.clone(logDet) };
  }

  inverse(y: tf.Tensor): tf.Tensor {
    checkChannels("ChannelPermutation", y, this.channels);
    return this.#matrix ? channelMatMul(y, this.#matrix, true) : tf.reverse(y, -1);
  }

  dispose(): void {
    this.#matrix?.dispose();
    if (this.#store.owned) this.params.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Invertible 1×1 convolution

/** Orthogonal `[n, n]` matrix (row-major, float64) from a Gaussian draw by modified Gram–Schmidt. */
function randomRotation(rng: Rng, n: number): Float64Array {
  const q = Float64Array.from({ length: n * n }, () => rng.normal());
  for (let c = 0; c < n; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let r = 0; r < n; r++) dot += q[r * n + c] * q[r * n + p];
      for (let r = 0; r < n; r++) q[r * n + c] -= dot * q[r * n + p];
    }
    let norm = 0;
    for (let r = 0; r < n; r++) norm += q[r * n + c] ** 2;
    norm = Math.sqrt(norm);
    for (let r = 0; r < n; r++) q[r * n + c] /= norm;
  }
  return q;
}

/** LU with partial pivoting, a[perm[i]] = (L·U)[i]: unit lower L and upper U packed in one array. */
function luDecompose(values: Float64Array, n: number): { lu: Float64Array; perm: Int32Array } {
  const lu = Float64Array.from(values);
  const perm = Int32Array.from({ length: n }, (_, i) => i);
  for (let k = 0; k < n; k++) {
    let pivot = k;
    for (let r = k + 1; r < n; r++) if (Math.abs(lu[r * n + k]) > Math.abs(lu[pivot * n + k])) pivot = r;
    if (pivot !== k) {
      for (let c = 0; c < n; c++) [lu[k * n + c], lu[pivot * n + c]] = [lu[pivot * n + c], lu[k * n + c]];
      [perm[k], perm[pivot]] = [perm[pivot], perm[k]];
    }
    for (let r = k + 1; r < n; r++) {
      const factor = lu[r * n + k] / lu[k * n + k];
      lu[r * n + k] = factor;
      for (let c = k + 1; c < n; c++) lu[r * n + c] -= factor * lu[k * n + c];
    }
  }
  return { lu, perm };
}

/** (I + N)⁻¹ for a nilpotent (strictly triangular) `[n, n]` N: Σ_{k<n} (−N)^k = Π_j (I + (−N)^{2^j}), exact. */
function unitTriangularInverse(n: tf.Tensor2D, eye: tf.Tensor2D): tf.Tensor2D {
  const size = n.shape[0];
  let power = tf.neg(n) as tf.Tensor2D;
  let result = tf.add(eye, power) as tf.Tensor2D;
  for (let reach = 2; reach < size; reach *= 2) {
    power = tf.matMul(power, power);
    result = tf.matMul(result, tf.add(eye, power) as tf.Tensor2D);
  }
  return result;
}

/**
 * Glow's invertible 1×1 convolution: one learned `[C, C]` matrix W applied
 * at every position (y = x·W along the channel axis), in Glow's LU form
 * W = P·(I + L)·(U + diag(sign·exp(log_s))) with a fixed permutation P and
 * sign, so log|det J| = positions·Σ log_s is cheap and differentiable, and
 * W⁻¹ is a finite product of matrices. Initialised to a random rotation, as
 * the reference's `Invertible1x1Conv` (which stores W itself and calls
 * torch.det / torch.inverse; tfjs has neither).
 */
export class Invertible1x1 implements Bijection {
  readonly params: Params;
  /** Channels C of the last axis. */
  readonly channels: number;
  #store: Store;
  #constants: {
    permutation: tf.Tensor2D;
    sign: tf.Tensor1D;
    lowerMask: tf.Tensor2D;
    upperMask: tf.Tensor2D;
    eye: tf.Tensor2D;
  };

  /** W starts as a random rotation drawn from `rng`. */
  constructor(rng: Rng, options: { channels: number } & LayerStore) {
    checkCount("Invertible1x1 channels", options.channels, 1);
    const c = this.channels = options.channels;
    this.#store = openStore(options);
    this.params = this.#store.params;
    const { lu, perm } = luDecompose(randomRotation(rng, c), c);
    const lower = new Float32Array(c * c), upper = new Float32Array(c * c), logS = new Float32Array(c);
    const sign = new Float32Array(c), lowerMask = new Float32Array(c * c), upperMask = new Float32Array(c * c);
    const permutation = new Float32Array(c * c);
    for (let r = 0; r < c; r++) {
      permutation[perm[r] * c + r] = 1;
      for (let k = 0; k < c; k++) {
        if (k < r) (lower[r * c + k] = lu[r * c + k], lowerMask[r * c + k] = 1);
        if (k > r) (upper[r * c + k] = lu[r * c + k], upperMask[r * c + k] = 1);
      }
      sign[r] = Math.sign(lu[r * c + r]);
      logS[r] = Math.log(Math.abs(lu[r * c + r]));
    }
    const { params, prefix } = this.#store;
    params.add(`${prefix}lower`, lower, [c, c]);
    params.add(`${prefix}upper`, upper, [c, c]);
    params.add(`${prefix}log_s`, logS, [c]);
    this.#constants = {
      permutation: tf.tensor2d(permutation, [c, c]),
      sign: tf.tensor1d(sign),
      lowerMask: tf.tensor2d(lowerMask, [c, c]),
      upperMask: tf.tensor2d(upperMask, [c, c]),
      eye: tf.eye(c),
    };
  }

  #parts(): { lower: tf.Tensor2D; upper: tf.Tensor2D; diag: tf.Tensor1D } {
    const { prefix } = this.#store;
    const { sign, lowerMask, upperMask } = this.#constants;
    return {
      lower: tf.mul(lowerMask, this.params.get(`${prefix}lower`)),
      upper: tf.mul(upperMask, this.params.get(`${prefix}upper`)),
      diag: tf.mul(sign, tf.exp(this.params.get(`${prefix}log_s`))),
    };
  }

  /** W `[C, C]`, acting on row vectors of channels. */
  weight(): tf.Tensor2D {
    return tf.tidy(() => {
      const { lower, upper, diag } = this.#parts();
      const { permutation, eye } = this.#constants;
      return tf.matMul(tf.matMul(permutation, tf.add(eye, lower)), tf.add(upper, tf.mul(eye, diag)));
    });
  }

  /** W⁻¹ `[C, C]` = (U + D)⁻¹·(I + L)⁻¹·Pᵀ with (U + D)⁻¹ = (I + D⁻¹U)⁻¹·D⁻¹. */
  inverseWeight(): tf.Tensor2D {
    return tf.tidy(() => {
      const { lower, upper, diag } = this.#parts();
      const { permutation, eye } = this.#constants;
      const inverseDiag = tf.reciprocal(diag);
      const scaledUpper = tf.mul(upper, tf.reshape(inverseDiag, [-1, 1])) as tf.Tensor2D;
      const upperInverse = tf.mul(unitTriangularInverse(scaledUpper, eye), inverseDiag) as tf.Tensor2D;
      return tf.matMul(tf.matMul(upperInverse, unitTriangularInverse(lower, eye)), permutation, false, true);
    });
  }

  forward(x: tf.Tensor, logDet: tf.Tensor1D): BijectionOutput {
    checkChannels("Invertible1x1", x, this.channels);
    const y = channelMatMul(x, this.weight());
    const logS = this.params.get(`${this.#store.prefix}log_s`);
    return { y, logDet: tf.add(logDet, tf.mul(tf.sum(logS), positions(x))) };
  }

  inverse(y: tf.Tensor): tf.Tensor {
    checkChannels("Invertible1x1", y, this.channels);
    return channelMatMul(y, this.inverseWeight());
  }

  dispose(): void {
    tf.dispose(Object.values(this.#constants));
    if (this.#store.owned) this.params.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Couplings

/** A coupling network over `[batch, features]` ("dense", an MLP) or NHWC maps ("conv", the reference's `NN`). */
export type CouplingKind = "dense" | "conv";

/** Options of {@linkcode AdditiveCoupling} and {@linkcode AffineCoupling}. */
export interface CouplingOptions extends LayerStore {
  /** Channels (features) of the coupled tensor; the first ⌊C/2⌋ condition the rest. */
  channels: number;
  /** Width of the coupling network's hidden layers (the reference's 128 filters). */
  hidden: number;
  /** "dense" (default) or "conv". */
  kind?: CouplingKind;
  /** Hidden layers of a dense coupling network (default 2: the fiRevNet bottleneck d/2 → h → h → d/2). */
  hiddenLayers?: number;
  /** Dropout rate before the last conv layer in training mode (conv only; default 0.1, the reference's). */
  dropout?: number;
}

/** U(±1/√fanIn) initial weights: torch's default conv/linear kernel initialisation. */
function torchDefault(rng: Rng, params: Params, key: string, shape: number[], fanIn: number): void {
  const bound = 1 / Math.sqrt(fanIn);
  const size = shape.reduce((a, b) => a * b, 1);
  params.add(key, Float32Array.from({ length: size }, () => (2 * rng.uniform() - 1) * bound), shape);
}

/**
 * The function F of a coupling, from the conditioning half to `outputs`
 * channels. Dense: an {@linkcode Mlp} with a zero last layer. Conv (the
 * reference's `NN`): conv3×3 (no bias) + ActNorm, ReLU, conv1×1 (no bias) +
 * ActNorm, ReLU, dropout, then a zero-initialised conv3×3 with bias whose
 * output is scaled by exp(3·logs) (`Conv2dZeroInit`). Either way F starts
 * as the zero map, so the coupling starts as the identity.
 */
class CouplingNet {
  #kind: CouplingKind;
  #mlp: Mlp | null = null;
  #norms: ActNorm[] = [];
  #params: Params;
  #prefix: string;
  #dropout: number;

  constructor(rng: Rng, store: Store, inputs: number, outputs: number, options: CouplingOptions) {
    this.#kind = options.kind ?? "dense";
    this.#params = store.params;
    this.#prefix = `${store.prefix}nn/`;
    this.#dropout = options.dropout ?? (this.#kind === "conv" ? 0.1 : 0);
    if (!(this.#dropout >= 0 && this.#dropout < 1)) {
      throw new UsageError(`dropout must be in [0, 1), got ${this.#dropout}`);
    }
    const hidden = options.hidden;
    if (this.#kind === "dense") {
      const layers = options.hiddenLayers ?? 2;
      checkCount("coupling hiddenLayers", layers, 1);
      this.#mlp = new Mlp(rng, this.#params, this.#prefix, [inputs, ...Array(layers).fill(hidden), outputs], {
        zeroLast: true,
      });
    } else if (this.#kind === "conv") {
      const p = this.#prefix;
      torchDefault(rng, this.#params, `${p}conv0`, [3, 3, inputs, hidden], 9 * inputs);
      this.#norms.push(new ActNorm({ channels: hidden, params: this.#params, prefix: `${p}actnorm0/` }));
      torchDefault(rng, this.#params, `${p}conv1`, [hidden, hidden], hidden);
      this.#norms.push(new ActNorm({ channels: hidden, params: this.#params, prefix: `${p}actnorm1/` }));
      this.#params.addZeros(`${p}conv2`, [3, 3, hidden, outputs]);
      this.#params.addZeros(`${p}bias2`, [outputs]);
      this.#params.addZeros(`${p}logs2`, [outputs]);
    } else {
      throw new UsageError(`coupling kind must be "dense" or "conv", got "${this.#kind}"`);
    }
  }

  get norms(): readonly ActNorm[] {
    return this.#norms;
  }

  apply(x: tf.Tensor, options: ForwardOptions): tf.Tensor {
    if (this.#mlp) {
      if (x.rank !== 2) throw new UsageError(`a dense coupling expects [batch, features], got shape [${x.shape}]`);
      return this.#mlp.apply(x as tf.Tensor2D);
    }
    if (x.rank !== 4) {
      throw new UsageError(`a conv coupling expects [batch, height, width, channels], got [${x.shape}]`);
    }
    const p = this.#prefix, params = this.#params;
    let h = tf.conv2d(x as tf.Tensor4D, params.get(`${p}conv0`) as tf.Tensor4D, 1, "same");
    h = tf.relu(this.#norms[0].apply(h));
    h = tf.relu(this.#norms[1].apply(channelMatMul(h, params.get(`${p}conv1`) as tf.Tensor2D) as tf.Tensor4D));
    if (options.training && this.#dropout > 0) {
      if (!options.rng) throw new UsageError("a training forward pass with dropout needs an rng");
      h = tf.dropout(h, this.#dropout, undefined, options.rng.int32()) as tf.Tensor4D;
    }
    const out = tf.add(tf.conv2d(h, params.get(`${p}conv2`) as tf.Tensor4D, 1, "same"), params.get(`${p}bias2`));
    return tf.mul(out, tf.exp(tf.mul(params.get(`${p}logs2`), 3)));
  }
}

/** What the couplings share: the split into halves along the channel axis and the network F of the first half. */
export abstract class Coupling implements Bijection {
  readonly params: Params;
  /** Channels C of the coupled tensor. */
  readonly channels: number;
  /** Dense (`[batch, C]`) or conv (`[batch, h, w, C]`) coupling network. */
  readonly kind: CouplingKind;
  /**
   * The network of the first half that gives the second half's shift (and log-scale).
   * @internal
   */
  protected net: CouplingNet;
  /** ⌊C/2⌋, the channels that condition the rest. */
  protected half: number;
  #store: Store;

  /** `outputsPerChannel`: F's outputs per channel of the second half (1 shift, or 2 shift and scale). */
  constructor(rng: Rng, options: CouplingOptions, outputsPerChannel: number) {
    checkCount("coupling channels", options.channels, 2);
    checkCount("coupling hidden", options.hidden, 1);
    this.channels = options.channels;
    this.kind = options.kind ?? "dense";
    this.half = Math.floor(options.channels / 2);
    this.#store = openStore(options);
    this.params = this.#store.params;
    this.net = new CouplingNet(rng, this.#store, this.half, (this.channels - this.half) * outputsPerChannel, options);
  }

  /** The ActNorms inside a conv coupling network (their data-dependent state). */
  get norms(): readonly ActNorm[] {
    return this.net.norms;
  }

  /** x split along the last axis into `[..., ⌊C/2⌋]` and `[..., C − ⌊C/2⌋]`. */
  protected halves(x: tf.Tensor): [tf.Tensor, tf.Tensor] {
    checkChannels(this.constructor.name, x, this.channels);
    return tf.split(x, [this.half, this.channels - this.half], -1) as [tf.Tensor, tf.Tensor];
  }

  abstract forward(x: tf.Tensor, logDet: tf.Tensor1D, options?: ForwardOptions): BijectionOutput;
  abstract inverse(y: tf.Tensor): tf.Tensor;

  dispose(): void {
    if (this.#store.owned) this.params.dispose();
  }
}

/**
 * Additive (NICE / i-RevNet) coupling: (x₁, x₂) ↦ (x₁, x₂ + F(x₁)), with x₁
 * the first ⌊C/2⌋ channels; log-det 0. Followed by a "reverse" permutation
 * it is the i-RevNet block (x₁, x₂) ↦ (x₂, x₁ + F(x₂)) up to the order.
 */
export class AdditiveCoupling extends Coupling {
  /** F starts from `rng`. */
  constructor(rng: Rng, options: CouplingOptions) {
    super(rng, options, 1);
  }

  /** (x₁, x₂) ↦ (x₁, x₂ + F(x₁)); the log-det passes through unchanged. */
  forward(x: tf.Tensor, logDet: tf.Tensor1D, options: ForwardOptions = {}): BijectionOutput {
    const [x1, x2] = this.halves(x);
    return { y: tf.concat([x1, tf.add(x2, this.net.apply(x1, options))], -1), logDet: tf.clone(logDet) };
  }

  /** (y₁, y₂) ↦ (y₁, y₂ − F(y₁)). */
  inverse(y: tf.Tensor): tf.Tensor {
    const [y1, y2] = this.halves(y);
    return tf.concat([y1, tf.sub(y2, this.net.apply(y1, {}))], -1);
  }
}

/**
 * Affine (RealNVP) coupling as the reference's `AffineCoupling`: F(x₁) has
 * 2·(C − ⌊C/2⌋) channels, interleaved shift (even) and raw scale (odd);
 * y₂ = (x₂ + shift)·sigmoid(raw + 2), log|det J| = Σ log sigmoid(raw + 2).
 * The sigmoid keeps the scale in (0, 1), starting near 0.88, for stability.
 */
export class AffineCoupling extends Coupling {
  /** F starts from `rng`. */
  constructor(rng: Rng, options: CouplingOptions) {
    super(rng, options, 2);
  }

  #shiftAndLogScale(
    x1: tf.Tensor,
    like: tf.Tensor,
    options: ForwardOptions,
  ): { shift: tf.Tensor; logScale: tf.Tensor } {
    // Pairs (shift, raw) are adjacent along the last axis: a [-1, 2] view splits them.
    const pairs = tf.reshape(this.net.apply(x1, options), [-1, 2]) as tf.Tensor2D;
    const [shift, raw] = tf.split(pairs, 2, 1);
    return { shift: tf.reshape(shift, like.shape), logScale: tf.logSigmoid(tf.reshape(tf.add(raw, 2), like.shape)) };
  }

  /** (x₁, x₂) ↦ (x₁, (x₂ + shift)·scale), adding Σ log scale to the log-det. */
  forward(x: tf.Tensor, logDet: tf.Tensor1D, options: ForwardOptions = {}): BijectionOutput {
    const [x1, x2] = this.halves(x);
    const { shift, logScale } = this.#shiftAndLogScale(x1, x2, options);
    const y2 = tf.mul(tf.add(x2, shift), tf.exp(logScale));
    return { y: tf.concat([x1, y2], -1), logDet: tf.add(logDet, sumPerSample(logScale)) };
  }

  /** (y₁, y₂) ↦ (y₁, y₂/scale − shift). */
  inverse(y: tf.Tensor): tf.Tensor {
    const [y1, y2] = this.halves(y);
    const { shift, logScale } = this.#shiftAndLogScale(y1, y2, {});
    return tf.concat([y1, tf.sub(tf.mul(y2, tf.exp(tf.neg(logScale))), shift)], -1);
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Multi-scale helpers

/**
 * The multi-scale factor-out (the reference's `Split`): the first ⌊C/2⌋
 * channels continue through the flow, the rest leave it as part of z. A
 * bijection onto the pair (kept, factored), log-det 0; without the
 * reference's learned prior on the factored half, which only enters its
 * likelihood term.
 */
export class Split {
  /** Channels C of the input. */
  readonly channels: number;
  /** ⌊C/2⌋, the channels that continue through the flow. */
  readonly kept: number;

  /** Splits C ≥ 2 channels. */
  constructor(channels: number) {
    checkCount("Split channels", channels, 2);
    this.channels = channels;
    this.kept = Math.floor(channels / 2);
  }

  /** x `[..., C]` → kept `[..., ⌊C/2⌋]`, factored `[..., C − ⌊C/2⌋]`. */
  forward(x: tf.Tensor): { y: tf.Tensor; factored: tf.Tensor } {
    checkChannels("Split", x, this.channels);
    const [y, factored] = tf.split(x, [this.kept, this.channels - this.kept], -1);
    return { y, factored };
  }

  /** (kept, factored) → x, concatenated along the channel axis. */
  inverse(y: tf.Tensor, factored: tf.Tensor): tf.Tensor {
    if (channelsOf(y) + channelsOf(factored) !== this.channels || channelsOf(y) !== this.kept) {
      throw new UsageError(
        `Split.inverse expects ${this.kept} + ${this.channels - this.kept} channels, got ${channelsOf(y)} + ${
          channelsOf(factored)
        }`,
      );
    }
    return tf.concat([y, factored], -1);
  }
}

function checkEvenSides(name: string, x: tf.Tensor): void {
  if (x.rank !== 4 || x.shape[1]! % 2 !== 0 || x.shape[2]! % 2 !== 0) {
    throw new UsageError(
      `${name} expects [batch, height, width, channels] with even height and width, got [${x.shape}]`,
    );
  }
}

/**
 * Invertible 2×2 downsampling (TensorFlow's space_to_depth):
 * `[b, h, w, c]` → `[b, h/2, w/2, 4c]` with
 * out[b, i, j, (2·di + dj)·c + k] = x[b, 2i + di, 2j + dj, k]. A reshape to
 * `[b·h/2, 2, w/2, 2c]`, a 4-D transpose [0, 2, 1, 3] and a reshape, all
 * with gradients on every backend (tfjs's depthToSpace has none).
 */
export function squeeze2x2(x: tf.Tensor4D): tf.Tensor4D {
  checkEvenSides("squeeze2x2", x);
  const [b, h, w, c] = x.shape;
  return tf.tidy(() => {
    const rows = tf.reshape(x, [b * h / 2, 2, w / 2, 2 * c]);
    return tf.reshape(tf.transpose(rows, [0, 2, 1, 3]), [b, h / 2, w / 2, 4 * c]);
  });
}

/** The inverse of {@linkcode squeeze2x2}: `[b, h, w, 4c]` → `[b, 2h, 2w, c]`. */
export function unsqueeze2x2(x: tf.Tensor4D): tf.Tensor4D {
  const [b, h, w, c4] = x.shape;
  if (x.rank !== 4 || c4 % 4 !== 0) {
    throw new UsageError(`unsqueeze2x2 expects [batch, height, width, 4·channels], got [${x.shape}]`);
  }
  return tf.tidy(() => {
    const rows = tf.reshape(x, [b * h, w, 2, c4 / 2]);
    return tf.reshape(tf.transpose(rows, [0, 2, 1, 3]), [b, 2 * h, 2 * w, c4 / 4]);
  });
}
