/**
 * K independent small VAEs (or AEs, or β-VAE_Σs) trained as one graph: every
 * weight carries a leading member axis, `[K, in, out]`, and each layer is one
 * product over `[K, batch, in]` (a batched matMul, or for larger layers one
 * kernel running the members' products on the wasm backend's fast path), with
 * its backward pass written out. The seeds and β's of a study then run at the
 * cost of a few kernels per layer and step instead of K graphs of small ones
 * (Zietlow 2022 Ch. 3 runs many seeds of tiny synthetic models).
 *
 * Members never interact: the loss is the sum of the members' losses, so
 * member k's gradient is that of its own loss, and Adam's per-entry updates
 * keep each member's trajectory what it would be alone.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { memberProduct } from "../core/kernels/member_mat_mul.ts";
import { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";
import { positiveDiagonal, triangleIndex, triangleLayout, triangularCount } from "./full_covariance.ts";

/** Posterior of the members: diagonal Gaussian ("vae"), deterministic ("ae"), full-covariance Gaussian ("full", β-VAE_Σ). */
export type EnsembleKind = "vae" | "ae" | "full";

/** Options of an {@linkcode EnsembleVae}. */
export interface EnsembleOptions {
  /** Member k's weights come from Rng.derive(seeds[k], "model"); K = seeds.length. */
  seeds: readonly number[];
  /** Input dimension. */
  input: number;
  /** Latent dimension d. */
  latents: number;
  /** Encoder hidden widths; the decoder mirrors them (60–40–20 → 20–40–60). [] = linear encoder and decoder (with biases). */
  hidden: readonly number[];
  /** Hidden-layer nonlinearity (default tanh). */
  activation?: "tanh" | "relu";
  /** Posterior family of every member. */
  kind: EnsembleKind;
  /** β per member (length K); ignored by "ae". */
  betas: readonly number[];
  /** squared (default): Σ_dims (x̂ − x)²; bernoulli: sigmoid cross-entropy of the logits x̂, Σ_dims. */
  loss?: "squared" | "bernoulli";
}

/** Per-member loss terms of {@linkcode EnsembleVae.loss}. */
export type EnsembleLoss = {
  /** Σ_k (rec_k + β_k·kl_k): the scalar to minimise. */
  total: tf.Scalar;
  /** Batch-mean reconstruction loss per member `[K]`. */
  rec: tf.Tensor1D;
  /** Batch-mean KL to N(0, I) per member `[K]` (zeros for "ae"). */
  kl: tf.Tensor1D;
};

/** Encoder heads of every member. */
export type EnsembleCodes = {
  mean: tf.Tensor3D;
  logVar?: tf.Tensor3D;
  triangle?: tf.Tensor3D;
};

/** Smallest fanIn·fanOut of a layer multiplied member by member (memberProduct) rather than in one batched matMul. */
const MEMBER_PRODUCT_MIN = 64;

type LayerActivation = "tanh" | "relu" | "linear";

/**
 * tanh(x) = 2σ(2x) − 1: the wasm backend's Tanh kernel takes about 20 ns an
 * element, ten times its Sigmoid. Scalars go second in every binary op here:
 * the wasm kernels are slow when the scalar comes first.
 */
function tanh<T extends tf.Tensor>(x: T): T {
  return tf.sub(tf.mul(tf.sigmoid(tf.mul(x, 2)), 2), 1);
}

function activate<T extends tf.Tensor>(x: T, activation: LayerActivation): T {
  return activation === "tanh" ? tanh(x) : activation === "relu" ? tf.relu(x) : x;
}

/**
 * One dense layer of every member, y = act(h·W + b) with h `[K,B,in]`, W
 * `[K,in,out]`, b `[K,1,out]`, as one gradient node whose backward pass is
 * written out (dz = dy·act′, dh = dz·Wᵀ, dW = hᵀ·dz, db = Σ_B dz): a step then
 * records a few nodes per layer instead of one per elementwise op.
 */
function denseLayer(activation: LayerActivation, member: boolean) {
  const product = (a: tf.Tensor3D, b: tf.Tensor3D, transposeA = false, transposeB = false) =>
    member ? memberProduct(a, b, transposeA, transposeB) : tf.matMul(a, b, transposeA, transposeB);
  return tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [h, w, b, save] = args as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D, tf.GradSaveFunc];
    const y = activate(tf.add(product(h, w), b), activation);
    save([h, w, y]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], [h, w, y]: tf.Tensor[]) => {
        const up = dy as tf.Tensor3D;
        // tanh′ = 1 − y², relu′ = [y > 0].
        const dz: tf.Tensor3D = activation === "tanh"
          ? tf.mul(up, tf.neg(tf.sub(tf.square(y), 1)))
          : activation === "relu"
          ? tf.mul(up, tf.step(y))
          : up;
        return [
          product(dz, w as tf.Tensor3D, false, true),
          product(h as tf.Tensor3D, dz, true, false),
          tf.sum(dz, 1, true),
        ];
      },
    };
  }) as (h: tf.Tensor3D, w: tf.Tensor3D, b: tf.Tensor3D) => tf.Tensor3D;
}

const DENSE = new Map<string, (h: tf.Tensor3D, w: tf.Tensor3D, b: tf.Tensor3D) => tf.Tensor3D>();
for (const activation of ["tanh", "relu", "linear"] as const) {
  for (const member of [false, true]) DENSE.set(`${activation}/${member}`, denseLayer(activation, member));
}

const positiveInteger = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;

function checkOptions(o: EnsembleOptions): void {
  if (!Array.isArray(o.seeds) || o.seeds.length === 0 || !o.seeds.every(Number.isInteger)) {
    throw new UsageError(`ensemble: seeds must be a non-empty list of integers, got ${JSON.stringify(o.seeds)}`);
  }
  for (const key of ["input", "latents"] as const) {
    if (!positiveInteger(o[key])) throw new UsageError(`ensemble: ${key} must be a positive integer, got ${o[key]}`);
  }
  if (!Array.isArray(o.hidden) || !o.hidden.every(positiveInteger)) {
    throw new UsageError(`ensemble: hidden must be a list of positive integers, got ${JSON.stringify(o.hidden)}`);
  }
  if (o.activation !== undefined && o.activation !== "tanh" && o.activation !== "relu") {
    throw new UsageError(`ensemble: activation must be "tanh" or "relu", got "${o.activation}"`);
  }
  if (!["vae", "ae", "full"].includes(o.kind)) {
    throw new UsageError(`ensemble: kind must be "vae", "ae" or "full", got "${o.kind}"`);
  }
  if (o.loss !== undefined && o.loss !== "squared" && o.loss !== "bernoulli") {
    throw new UsageError(`ensemble: loss must be "squared" or "bernoulli", got "${o.loss}"`);
  }
  if (o.kind !== "ae") {
    if (!Array.isArray(o.betas) || o.betas.length !== o.seeds.length) {
      throw new UsageError(
        `ensemble: betas must hold one β per seed (${o.seeds.length}), got ${JSON.stringify(o.betas)}`,
      );
    }
    const bad = o.betas.find((b) => !(Number.isFinite(b) && b >= 0));
    if (bad !== undefined) throw new UsageError(`ensemble: every β must be finite and ≥ 0, got ${bad}`);
  }
}

/** One dense layer of the stack: sizes and whether a nonlinearity follows. */
interface Layer {
  /** Params keys of the weight and the bias. */
  w: string;
  b: string;
  fanIn: number;
  fanOut: number;
  activated: boolean;
}

function stack(prefix: string, sizes: number[]): Layer[] {
  return sizes.slice(1).map((fanOut, i) => ({
    w: `${prefix}w${i}`,
    b: `${prefix}b${i}`,
    fanIn: sizes[i],
    fanOut,
    activated: i + 2 < sizes.length,
  }));
}

/**
 * K VAEs in one graph. Params: `enc/w{i}` `[K, in, out]`, `enc/b{i}` `[K, 1, out]`,
 * `dec/w{i}`, `dec/b{i}`; the encoder's last layer is one head holding mean
 * and logVar ("vae", `2d` outputs), mean and the raw Cholesky triangle
 * ("full", `d + d(d+1)/2`, row-major lower triangle, exp on the diagonal) or
 * the mean alone ("ae").
 *
 * Init: biases 0; each weight matrix N(0, gain²/fan_in) with gain √2 when a
 * relu follows the layer and 1 otherwise (tanh hidden layers, the linear
 * output layers), drawn like `Params.addNormal` from member k's own
 * Rng.derive(seeds[k], "model") in the order enc/w0, enc/w1, …, dec/w0, dec/w1, …
 * and stacked; so member k equals an ensemble of one with seeds [seeds[k]].
 */
export class EnsembleVae {
  /** K, the number of members. */
  readonly members: number;
  /** Members' weights, stacked: `enc/w{i}` `[K, in, out]`, `enc/b{i}` `[K, 1, out]`, and `dec/…`. */
  readonly params: Params;
  /** The options it was built with (copied). */
  readonly options: EnsembleOptions;
  #encoder: Layer[];
  #decoder: Layer[];
  #activation: "tanh" | "relu";
  /** Constants kept across calls (freed by dispose). */
  #betas: tf.Tensor1D;
  #triangle: { diagonal: tf.Tensor1D; spread: tf.Tensor2D; gather: tf.Tensor2D } | null = null;

  /** Draws every member's weights from its own seed; throws on inconsistent options. */
  constructor(options: EnsembleOptions) {
    checkOptions(options);
    this.options = {
      ...options,
      seeds: [...options.seeds],
      hidden: [...options.hidden],
      betas: [...(options.betas ?? [])],
    };
    const { seeds, input, latents: d, hidden, kind } = this.options;
    this.members = seeds.length;
    this.#activation = options.activation ?? "tanh";
    const head = kind === "vae" ? 2 * d : kind === "full" ? d + d * (d + 1) / 2 : d;
    this.#encoder = stack("enc/", [input, ...hidden, head]);
    this.#decoder = stack("dec/", [d, ...[...hidden].reverse(), input]);
    this.params = new Params();
    const layers = [...this.#encoder, ...this.#decoder];
    const weights = layers.map((l) => new Float32Array(this.members * l.fanIn * l.fanOut));
    seeds.forEach((seed, k) => {
      const rng = Rng.derive(seed, "model");
      layers.forEach((l, i) => {
        const gain = l.activated && this.#activation === "relu" ? Math.SQRT2 : 1;
        const size = l.fanIn * l.fanOut;
        weights[i].set(rng.normalArray(size, gain / Math.sqrt(l.fanIn)), k * size);
      });
    });
    layers.forEach((l, i) => {
      this.params.add(l.w, weights[i], [this.members, l.fanIn, l.fanOut]);
      this.params.addZeros(l.b, [this.members, 1, l.fanOut]);
    });
    this.#betas = tf.keep(
      tf.tensor1d(kind === "ae" ? new Float32Array(this.members) : Float32Array.from(this.options.betas)),
    );
    if (kind === "full") this.#triangle = triangleConstants(d);
  }

  #forward(layers: Layer[], h: tf.Tensor3D): tf.Tensor3D {
    for (const l of layers) {
      // Small products are cheaper in one batched kernel; larger ones member by member on the fast path.
      const member = l.fanIn * l.fanOut >= MEMBER_PRODUCT_MIN;
      const dense = DENSE.get(`${l.activated ? this.#activation : "linear"}/${member}`)!;
      h = dense(h, this.params.get(l.w) as tf.Tensor3D, this.params.get(l.b) as tf.Tensor3D);
    }
    return h;
  }

  #check(x: tf.Tensor, last: number, what: string): void {
    if (x.rank !== 3 || x.shape[0] !== this.members || x.shape[2] !== last) {
      throw new Error(`ensemble ${what}: expected [${this.members}, batch, ${last}], got [${x.shape}]`);
    }
  }

  /** Encoder heads: mean `[K,B,d]`; logVar `[K,B,d]` ("vae"); raw triangle `[K,B,d(d+1)/2]` ("full"); none ("ae"). */
  encode(x: tf.Tensor3D): EnsembleCodes {
    this.#check(x, this.options.input, "encode");
    const d = this.options.latents;
    return tf.tidy(() => {
      const head = this.#forward(this.#encoder, x);
      switch (this.options.kind) {
        case "ae":
          return { mean: head };
        // Two slices rather than tf.split: the wasm SplitV kernel is several times slower.
        case "vae":
          return { mean: tf.slice(head, [0, 0, 0], [-1, -1, d]), logVar: tf.slice(head, [0, 0, d], [-1, -1, d]) };
        case "full":
          return { mean: tf.slice(head, [0, 0, 0], [-1, -1, d]), triangle: tf.slice(head, [0, 0, d], [-1, -1, -1]) };
      }
    }) as EnsembleCodes;
  }

  /** Decoder outputs (means, or logits for the bernoulli loss) `[K,B,input]` of latents `[K,B,d]`. */
  decode(z: tf.Tensor3D): tf.Tensor3D {
    this.#check(z, this.options.latents, "decode");
    return tf.tidy(() => this.#forward(this.#decoder, z));
  }

  /**
   * Sum over members of each member's batch-mean (rec + β_k·KL); also
   * per-member rec and kl `[K]` (for logging). x `[K,B,input]` (each member
   * its own batch), noise `[K,B,d]` standard normal (ignored by "ae"). The
   * sum keeps members independent under Adam.
   */
  loss(x: tf.Tensor3D, noise: tf.Tensor3D): EnsembleLoss {
    this.#check(x, this.options.input, "loss x");
    const { kind, latents: d } = this.options;
    const batch = x.shape[1];
    if (kind !== "ae" && (noise.rank !== 3 || noise.shape.join() !== [this.members, batch, d].join())) {
      throw new Error(`ensemble loss: noise must be [${this.members}, ${batch}, ${d}], got [${noise.shape}]`);
    }
    return tf.tidy(() => {
      const codes = this.encode(x);
      const { mean } = codes;
      let z: tf.Tensor3D, kl: tf.Tensor1D;
      if (kind === "ae") {
        z = mean;
        kl = tf.zeros([this.members]);
      } else if (kind === "vae") {
        const logVar = codes.logVar!;
        const sd = tf.exp(tf.mul(logVar, 0.5));
        z = tf.add(mean, tf.mul(sd, noise));
        // ½ Σ_j (μ² + σ² − log σ² − 1), eq. 2.6; the "− 1" summed over the batch is the constant B·d.
        const perMember = tf.sum(tf.sub(tf.add(tf.square(mean), tf.square(sd)), logVar), [1, 2]);
        kl = tf.mul(tf.sub(perMember, batch * d), 0.5 / batch);
      } else {
        ({ z, kl } = this.#fullCovariance(mean, codes.triangle!, noise, batch));
      }
      const out = this.#forward(this.#decoder, z);
      const perEntry = this.options.loss === "bernoulli"
        ? tf.sub(tf.softplus(out), tf.mul(out, x))
        : tf.squaredDifference(out, x);
      const rec = tf.mul(tf.sum(perEntry, [1, 2]), 1 / batch) as tf.Tensor1D;
      const total = kind === "ae" ? tf.sum(rec) : tf.sum(tf.add(rec, tf.mul(this.#betas, kl)));
      return { total: total as tf.Scalar, rec, kl };
    });
  }

  /**
   * β-VAE_Σ (eqs. 3.30–3.31) from the raw triangle t: L has t_ij below and
   * exp(t_jj) on the diagonal (positiveDiagonal); z = μ + Lε and KL =
   * ½(‖μ‖² + ‖L‖²_F − 2Σ_j t_jj − d), since log L_jj = t_jj. The same L and KL
   * as lowerTriangular, sampleFullCovariance and fullCovarianceKl, without
   * building [K, B, d, d].
   */
  #fullCovariance(mean: tf.Tensor3D, t: tf.Tensor3D, noise: tf.Tensor3D, batch: number) {
    const { diagonal, spread, gather } = this.#triangle!;
    const d = this.options.latents, count = t.shape[2], rows = this.members * batch;
    const diagonalRaw = tf.mul(t, diagonal);
    const filled = positiveDiagonal(t, diagonal);
    // (Lε)_i = Σ_{j≤i} L_ij ε_j: ε_j spread to the triangle entries (i, j), multiplied, summed per row i.
    const spreadNoise = tf.matMul(tf.reshape(noise, [rows, d]), spread);
    const lNoise = tf.matMul(tf.mul(tf.reshape(filled, [rows, count]), spreadNoise), gather);
    const z = tf.add(mean, tf.reshape(lNoise, [this.members, batch, d])) as tf.Tensor3D;
    const squares = tf.sum(tf.add(tf.sum(tf.square(mean), 2), tf.sum(tf.square(filled), 2)), 1);
    const logDiagonal = tf.sum(diagonalRaw, [1, 2]);
    const kl = tf.mul(tf.sub(tf.sub(squares, tf.mul(logDiagonal, 2)), batch * d), 0.5 / batch) as tf.Tensor1D;
    return { z, kl };
  }

  /** Member k's slice `[rows, cols]` of a stacked `[K, rows, cols]` parameter. */
  #slice(key: string, k: number, rows: number, cols: number): tf.Tensor2D {
    return tf.reshape(tf.slice(this.params.get(key), [k, 0, 0], [1, -1, -1]), [rows, cols]);
  }

  #member(layers: Layer[], k: number, h: tf.Tensor2D): tf.Tensor2D {
    if (!(Number.isInteger(k) && k >= 0 && k < this.members)) {
      throw new Error(`ensemble: member ${k} is outside 0..${this.members - 1}`);
    }
    for (const l of layers) {
      h = tf.add(tf.matMul(h, this.#slice(l.w, k, l.fanIn, l.fanOut)), this.#slice(l.b, k, 1, l.fanOut));
      if (l.activated) h = activate(h, this.#activation);
    }
    return h;
  }

  /** Member k's encoder on `[n, input]`: mean `[n, d]` and, for "vae", logVar `[n, d]`. */
  memberEncoder(k: number): (x: tf.Tensor2D) => { mean: tf.Tensor2D; logVar?: tf.Tensor2D } {
    const d = this.options.latents;
    return (x) =>
      tf.tidy(() => {
        const head = this.#member(this.#encoder, k, x);
        const mean = tf.slice(head, [0, 0], [-1, d]) as tf.Tensor2D;
        return this.options.kind === "vae"
          ? { mean, logVar: tf.slice(head, [0, d], [-1, d]) as tf.Tensor2D }
          : { mean };
      }) as { mean: tf.Tensor2D; logVar?: tf.Tensor2D };
  }

  /** Member k's decoder on `[n, d]` → `[n, input]` (for Jacobians and scoring). */
  memberDecoder(k: number): (z: tf.Tensor2D) => tf.Tensor2D {
    return (z) => tf.tidy(() => this.#member(this.#decoder, k, z));
  }

  /** Frees the weights and the kept constants. */
  dispose(): void {
    this.params.dispose();
    this.#betas.dispose();
    if (this.#triangle) tf.dispose(Object.values(this.#triangle));
  }
}

/** Linear members: an {@linkcode EnsembleVae} with `hidden` = [] (the linear VAE of Thm. 2: a linear map and a bias each way). */
export class EnsembleLinearVae extends EnsembleVae {
  /** Linear members (`hidden` = []). */
  constructor(options: Omit<EnsembleOptions, "hidden">) {
    super({ ...options, hidden: [] });
  }
}

/**
 * Constant 0/1 matrices of the raw triangle (full_covariance.ts's layout): the
 * diagonal mask `[T]`, `spread` `[d, T]` (ε_j → every entry of column j) and
 * `gather` `[T, d]` (entries of row i → i).
 */
function triangleConstants(d: number): { diagonal: tf.Tensor1D; spread: tf.Tensor2D; gather: tf.Tensor2D } {
  const count = triangularCount(d);
  const spread = new Float32Array(d * count), gather = new Float32Array(count * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      const t = triangleIndex(i, j);
      spread[j * count + t] = 1;
      gather[t * d + i] = 1;
    }
  }
  return tf.tidy(() => ({
    diagonal: tf.keep(tf.tensor1d(triangleLayout(d).diagonal)),
    spread: tf.keep(tf.tensor2d(spread, [d, count])),
    gather: tf.keep(tf.tensor2d(gather, [count, d])),
  }));
}
