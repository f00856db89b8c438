/**
 * The independence cross-entropy (iCE) of Jacobsen2019 Def. 7 and
 * App. B.2, as the reference `train.py` of jhjacobsen/fully-invertible-revnet
 * trains it: a bijection's output is split into logits z_s and nuisances z_n;
 * a nuisance classifier D_nc learns to read y off stop-grad z_n, and the
 * encoder is trained on
 *
 *   total = CE(softmax z_s, y) + λ_n·L_nCE + λ_m·L_MLEn
 *
 * - L_nCE, variant "permuted" (default, the reference's): CE(D_nc(z_n), y_perm)
 *   with y_perm a random permutation of the batch's labels (λ_n 0.05): z_n is
 *   pushed towards label-independent predictions;
 * - L_nCE, variant "literal" (Def. 7 with App. B.2's normalisation):
 *   −CE(D_nc(z_n), y)/dim z_n, the adversary's loss maximised;
 * - L_MLEn = −(Σ_k log N(z_n,k; β_k, γ_k) + log|det J|)/(d·ln 2) in bits per
 *   dimension, a factorial Gaussian prior with learned β and log γ (γ a
 *   standard deviation: ours, the paper leaves it open) (λ_m 1).
 *
 * The CE objective is the same network trained on CE alone.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { Params } from "../models/params.ts";
import type { LossTerms } from "./loop.ts";
import { Adamax } from "./adamax.ts";

/** How L_nCE makes z_n uninformative: the reference's permuted targets or Def. 7's maximised CE. */
export type IceVariant = "permuted" | "literal";
/** "ice": CE + λ_n·L_nCE + λ_m·L_MLEn; "ce": the CE term alone (the baseline). */
export type IceObjective = "ice" | "ce";

/** The variants, for config validation and listings. */
export const ICE_VARIANTS: readonly IceVariant[] = ["permuted", "literal"];
/** The objectives. */
export const ICE_OBJECTIVES: readonly IceObjective[] = ["ice", "ce"];

/** λ_n by variant: the reference's 0.05 for "permuted"; 1 for "literal", whose 1/dim z_n is the paper's weighting. */
export const DEFAULT_LAMBDA_N: Readonly<Record<IceVariant, number>> = { permuted: 0.05, literal: 1 };

const LOG_2PI = Math.log(2 * Math.PI);

/** Options of a {@linkcode NuisanceClassifier}. */
export interface NuisanceClassifierOptions {
  /** Width of z_n, d − C (or of whatever the classifier reads). */
  inputs: number;
  /** Classes (10). */
  classes?: number;
  /** Hidden widths, ReLU after each (App. B.2: [512, 512]; the quick preset 256–256). */
  hidden?: readonly number[];
  /** Dropout after each hidden ReLU while training (0.1). */
  dropout?: number;
  /** Adamax learning rate (1e-3). */
  learningRate?: number;
  /** Optimizer steps per {@linkcode NuisanceClassifier.update} call, k (5 per main step in the reference). */
  updates?: number;
}

function checkPositiveInteger(what: string, value: number): void {
  if (!(Number.isSafeInteger(value) && value >= 1)) throw new UsageError(`${what} = ${value}; allowed: an integer ≥ 1`);
}

/**
 * The nuisance classifier D_nc of iCE (reference: Linear–ReLU–Dropout ×2 –
 * Linear, 3072→512→512→10, Adamax 1e-3, 5 updates per main step), also usable
 * as the post-hoc classifier on a frozen network's z_n (e.g. hidden
 * [256, 256, 256], updates 1). Weights start as torch's `nn.Linear` default,
 * U(±1/√fan_in) for weights and biases, drawn from `rng`; dropout masks come
 * from the same stream, so a run is reproducible. It owns its parameters and
 * its optimizer: none of them is ever in the main optimizer's variable list.
 */
export class NuisanceClassifier {
  /** The classifier's weights ("w0", "b0", …), for checkpoints. */
  readonly params: Params = new Params();
  /** Its own Adamax; save with `optimizerState` (lib/train/loop.ts) for checkpoints. */
  readonly optimizer: tf.Optimizer;
  /** Source of dropout masks; save its `state()` for an exact resume. */
  readonly rng: Rng;
  /** Input width (d − C). */
  readonly inputs: number;
  /** Output classes. */
  readonly classes: number;
  /** Adamax steps per {@linkcode update} call (k). */
  readonly updates: number;
  /** Dropout probability in training mode. */
  readonly dropout: number;
  /** Layer widths, input to output. */
  readonly sizes: readonly number[];

  /**
   * A classifier with fresh weights drawn from `rng`; throws a UsageError for a non-positive width, a dropout
   * outside [0, 1) or a non-positive rate.
   */
  constructor(rng: Rng, options: NuisanceClassifierOptions) {
    const { inputs, classes = 10, hidden = [512, 512], dropout = 0.1, learningRate = 1e-3, updates = 5 } = options;
    checkPositiveInteger("nuisance classifier inputs", inputs);
    checkPositiveInteger("nuisance classifier classes", classes);
    hidden.forEach((h) => checkPositiveInteger("nuisance classifier hidden width", h));
    if (!(dropout >= 0 && dropout < 1)) throw new UsageError(`nuisance dropout = ${dropout}; allowed: 0 ≤ p < 1`);
    if (!(Number.isFinite(learningRate) && learningRate > 0)) {
      throw new UsageError(`nuisance learning rate = ${learningRate}; allowed: a finite number > 0`);
    }
    if (!(Number.isSafeInteger(updates) && updates >= 0)) {
      throw new UsageError(`nuisance updates = ${updates}; allowed: an integer ≥ 0`);
    }
    this.rng = rng;
    this.inputs = inputs;
    this.classes = classes;
    this.updates = updates;
    this.dropout = dropout;
    this.sizes = [inputs, ...hidden, classes];
    for (let i = 0; i + 1 < this.sizes.length; i++) {
      const [fanIn, fanOut] = [this.sizes[i], this.sizes[i + 1]];
      const bound = 1 / Math.sqrt(fanIn);
      const uniform = (n: number) => Float32Array.from({ length: n }, () => (2 * rng.uniform() - 1) * bound);
      this.params.add(`w${i}`, uniform(fanIn * fanOut), [fanIn, fanOut]);
      this.params.add(`b${i}`, uniform(fanOut), [fanOut]);
    }
    // torch's Adamax defaults (β 0.9, 0.999, eps 1e-8).
    this.optimizer = new Adamax(learningRate);
  }

  /**
   * Logits `[batch, classes]` of `zn` `[batch, inputs]`. With `training`,
   * inverted dropout (kept units scaled by 1/(1 − p)) after each hidden ReLU,
   * masks drawn from {@linkcode rng}; iCE's encoder term uses training mode,
   * as the reference leaves D_nc in train mode.
   */
  logits(zn: tf.Tensor2D, training = false): tf.Tensor2D {
    this.#checkInput(zn);
    const layers = this.sizes.length - 1;
    const masks = training && this.dropout > 0
      ? Array.from({ length: layers - 1 }, (_, i) => this.#mask(zn.shape[0], this.sizes[i + 1]))
      : [];
    return tf.tidy(() => {
      let h: tf.Tensor2D = zn;
      for (let i = 0; i < layers; i++) {
        h = tf.add(tf.matMul(h, this.params.get(`w${i}`)), this.params.get(`b${i}`));
        if (i + 1 < layers) {
          h = tf.relu(h);
          if (masks.length > 0) h = tf.mul(h, tf.tensor2d(masks[i], [zn.shape[0], this.sizes[i + 1]]));
        }
      }
      return h;
    });
  }

  #checkInput(zn: tf.Tensor): void {
    if (zn.rank !== 2 || zn.shape[1] !== this.inputs) {
      throw new UsageError(`nuisance classifier: input of shape [${zn.shape}]; allowed: [batch, ${this.inputs}]`);
    }
  }

  /** A dropout mask: 0 with probability p, else 1/(1 − p). */
  #mask(rows: number, cols: number): Float32Array {
    const keep = 1 / (1 - this.dropout);
    return Float32Array.from({ length: rows * cols }, () => this.rng.uniform() < this.dropout ? 0 : keep);
  }

  /**
   * Runs the classifier's k = `updates` Adamax steps on CE(D_nc(zn), labels)
   * with dropout, the true labels and no gradient into `zn` (only this
   * classifier's variables are updated): the maximisation step of iCE.
   * Returns the last step's mean CE (nats; 0 when `updates` is 0), tracked
   * by the enclosing tidy if any, else the caller's to dispose.
   *
   * Two ways to drive it from `trainPhase` without a second forward pass:
   * - inside the loss callback, on the z_n of the main forward pass and before
   *   {@linkcode iceLosses}: the reference's order exactly, but the main
   *   tape records the inner steps (measured +40 ms a step at d 196, batch 64,
   *   256–256 on wasm);
   * - in `afterStep`, on a z_n kept from the loss callback (`tf.keep`, then
   *   dispose): no overhead, with D_nc one batch behind the encoder.
   */
  update(zn: tf.Tensor2D, labels: Int32Array): tf.Scalar {
    this.#checkInput(zn);
    const targets = oneHotLabels(labels, zn.shape[0], this.classes, "nuisance classifier");
    let last: tf.Scalar = tf.scalar(0);
    for (let k = 0; k < this.updates; k++) {
      last.dispose();
      last = this.optimizer.minimize(
        () => softmaxCrossEntropy(this.logits(zn, true), targets),
        true,
        this.params.list(),
      )!;
    }
    targets.dispose();
    return last;
  }

  /** Predicted classes of `zn` (argmax of the logits, no dropout). */
  async predict(zn: tf.Tensor2D): Promise<Int32Array> {
    const classes = tf.tidy(() => tf.argMax(this.logits(zn), 1));
    const out = Int32Array.from(await classes.data());
    classes.dispose();
    return out;
  }

  /** Frees the weights and the optimizer's state. */
  dispose(): void {
    this.params.dispose();
    this.optimizer.dispose();
  }
}

/** `[batch, classes]` one-hot targets after checking the labels. */
function oneHotLabels(labels: Int32Array, batch: number, classes: number, what: string): tf.Tensor2D {
  if (labels.length !== batch) throw new UsageError(`${what}: ${labels.length} labels for a batch of ${batch}`);
  for (const y of labels) {
    if (!(y >= 0 && y < classes)) throw new UsageError(`${what}: label ${y}; allowed: 0..${classes - 1}`);
  }
  return tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(labels, "int32"), classes), "float32") as tf.Tensor2D);
}

/** Mean softmax cross-entropy (nats) of `logits` against one-hot `targets`. */
function softmaxCrossEntropy(logits: tf.Tensor2D, targets: tf.Tensor2D): tf.Scalar {
  return tf.tidy(() => tf.neg(tf.mean(tf.sum(tf.mul(targets, tf.logSoftmax(logits)), 1))) as tf.Scalar);
}

/**
 * −Σ_k log N(z_k; β_k, γ_k²) per sample, in nats, with γ_k = exp(logGamma_k)
 * a standard deviation: `z` `[batch, k]`, `beta` and `logGamma` `[k]`;
 * returns `[batch]`. The factorial prior of L_MLEn.
 */
export function factorialGaussianNll(z: tf.Tensor2D, beta: tf.Tensor1D, logGamma: tf.Tensor1D): tf.Tensor1D {
  const k = z.shape[1];
  if (beta.shape[0] !== k || logGamma.shape[0] !== k) {
    throw new UsageError(
      `factorialGaussianNll: z has ${k} columns, beta ${beta.shape[0]}, logGamma ${logGamma.shape[0]}`,
    );
  }
  return tf.tidy(() => {
    const standardised = tf.mul(tf.sub(z, beta), tf.exp(tf.neg(logGamma)));
    const perEntry = tf.add(tf.mul(0.5, tf.square(standardised)), tf.add(logGamma, 0.5 * LOG_2PI));
    return tf.sum(perEntry, 1) as tf.Tensor1D;
  });
}

/**
 * The learned factorial Gaussian prior N(β, diag γ²) of L_MLEn, β = 0 and
 * log γ = 0 at the start. Its parameters belong to the main network's
 * optimizer (the paper's θ includes them).
 */
export class FactorialGaussianPrior {
  /** "beta" and "log_gamma", each `[dims]`. */
  readonly params: Params = new Params();
  /** Width of z_n. */
  readonly dims: number;

  /** β = log γ = 0 over `dims` nuisance dimensions; throws a UsageError unless `dims` is a positive integer. */
  constructor(dims: number) {
    checkPositiveInteger("prior dimensions", dims);
    this.dims = dims;
    this.params.addZeros("beta", [dims]);
    this.params.addZeros("log_gamma", [dims]);
  }

  /** −log p(z) per sample, nats, `[batch]` ({@linkcode factorialGaussianNll}). */
  nll(z: tf.Tensor2D): tf.Tensor1D {
    return factorialGaussianNll(
      z,
      this.params.get("beta") as tf.Tensor as tf.Tensor1D,
      this.params.get("log_gamma") as tf.Tensor as tf.Tensor1D,
    );
  }

  /** Frees β and log γ. */
  dispose(): void {
    this.params.dispose();
  }
}

/** One batch as the bijection gives it. */
export interface IceBatch {
  /** Logits z_s `[batch, C]`. */
  zs: tf.Tensor2D;
  /**
   * Nuisances z_n `[batch, d − C]`. The prior term needs entries that vary:
   * a constant entry (the reference's logit slots set to 0.1) drives its γ
   * to 0 and L_MLEn to −∞, so leave such entries out of z_n.
   */
  zn: tf.Tensor2D;
  /** log|det J| of the bijection per sample `[batch]`, in nats (zeros for additive couplings and permutations). */
  logDet: tf.Tensor1D;
  /** True classes `[batch]`, 0..C−1. */
  labels: Int32Array;
}

/** Settings of {@linkcode iceLosses}. */
export interface IceOptions {
  /** "ice" (default) or "ce" (the CE term alone). */
  objective?: IceObjective;
  /** L_nCE's form, "permuted" (default) or "literal". */
  variant?: IceVariant;
  /** λ_n ≥ 0 ({@linkcode DEFAULT_LAMBDA_N} of the variant). */
  lambdaN?: number;
  /** λ_m ≥ 0 (1). */
  lambdaM?: number;
  /** D_nc, required by "ice"; with "ce" L_nCE is still reported when it is given. */
  nuisance?: NuisanceClassifier;
  /** The factorial prior over z_n, required by "ice"; with "ce" L_MLEn is still reported when it is given. */
  prior?: FactorialGaussianPrior;
  /** Draws y_perm (variant "permuted", when L_nCE is computed). */
  rng?: Rng;
  /** d of bits per dimension: the bijection's input size (default: the widths of z_s and z_n together). */
  dim?: number;
}

/** The terms of one step: `total` is minimised; `ce`, `nce` and `mle` are batch means, `nce` in nats, `mle` in bits/dim. */
export type IceLossTerms = LossTerms & { ce: tf.Scalar };

/** Checks the objective, variant and weights before training (each {@linkcode iceLosses} call checks them too). */
export function checkIceOptions(options: IceOptions): void {
  const { objective = "ice", variant = "permuted", lambdaM = 1 } = options;
  if (!ICE_OBJECTIVES.includes(objective)) {
    throw new UsageError(`unknown objective "${objective}"; allowed: ${ICE_OBJECTIVES.join(", ")}`);
  }
  if (!ICE_VARIANTS.includes(variant)) {
    throw new UsageError(`unknown iCE variant "${variant}"; allowed: ${ICE_VARIANTS.join(", ")}`);
  }
  const lambdaN = options.lambdaN ?? DEFAULT_LAMBDA_N[variant];
  for (const [name, value] of [["lambda_n", lambdaN], ["lambda_m", lambdaM]] as const) {
    if (!(Number.isFinite(value) && value >= 0)) {
      throw new UsageError(`${name} = ${value}; allowed: a finite number ≥ 0`);
    }
  }
  if (objective === "ice") {
    if (!options.nuisance) throw new UsageError("the iCE objective needs a nuisance classifier");
    if (!options.prior) throw new UsageError("the iCE objective needs a factorial prior over z_n");
  }
}

/**
 * The loss terms of one step from the bijection's outputs (call it inside a
 * `trainPhase` loss callback, after {@linkcode NuisanceClassifier.update}):
 *
 * - `ce` = mean CE(softmax z_s, y), nats;
 * - `nce` = L_nCE (see the module doc), D_nc in training mode (dropout);
 * - `mle` = mean (−log N(z_n; β, γ) − log|det J|)/(d·ln 2), bits/dim;
 * - `total` = ce + λ_n·nce + λ_m·mle for "ice", = ce for "ce".
 *
 * Gradients reach z_s, z_n, log|det J| and the prior; D_nc's weights also
 * get gradients from `total`, but they are not the main optimizer's
 * variables, so the encoder step leaves them alone (the min–max of Def. 7).
 */
export function iceLosses(batch: IceBatch, options: IceOptions = {}): IceLossTerms {
  checkIceOptions(options);
  const { objective = "ice", variant = "permuted", lambdaM = 1, nuisance, prior } = options;
  const lambdaN = options.lambdaN ?? DEFAULT_LAMBDA_N[variant];
  const { zs, zn, logDet, labels } = batch;
  const size = zs.shape[0];
  if (zn.shape[0] !== size || logDet.shape[0] !== size) {
    throw new UsageError(`iceLosses: batch sizes differ: z_s ${size}, z_n ${zn.shape[0]}, logDet ${logDet.shape[0]}`);
  }
  const dim = options.dim ?? zs.shape[1] + zn.shape[1];
  checkPositiveInteger("iceLosses dim", dim);
  if (nuisance && nuisance.classes !== zs.shape[1]) {
    throw new UsageError(`iceLosses: z_s has ${zs.shape[1]} classes, the nuisance classifier ${nuisance.classes}`);
  }
  let permuted: Int32Array | null = null;
  if (nuisance && variant === "permuted") {
    if (!options.rng) throw new UsageError("iceLosses: the permuted variant needs an rng for y_perm");
    permuted = Int32Array.from(options.rng.permutation(size), (i) => labels[i]);
  }
  // Everything inside one tidy, so that a throw (a wrong width) leaves no tensor behind.
  const terms = tf.tidy(() => {
    const targets = oneHotLabels(labels, size, zs.shape[1], "iceLosses");
    const ce = softmaxCrossEntropy(zs, targets);
    const extra: Record<string, tf.Scalar> = {};
    if (nuisance) {
      const logits = nuisance.logits(zn, true);
      extra.nce = permuted
        ? softmaxCrossEntropy(logits, oneHotLabels(permuted, size, zs.shape[1], "iceLosses"))
        : tf.div(tf.neg(softmaxCrossEntropy(logits, targets)), zn.shape[1]) as tf.Scalar;
    }
    if (prior) extra.mle = tf.div(tf.mean(tf.sub(prior.nll(zn), logDet)), dim * Math.LN2) as tf.Scalar;
    const total = objective === "ce"
      ? tf.clone(ce)
      : tf.addN([ce, tf.mul(lambdaN, extra.nce), tf.mul(lambdaM, extra.mle)]) as tf.Scalar;
    return { total, ce, ...extra };
  });
  return terms;
}
