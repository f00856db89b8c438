/**
 * ETA (EATA without its Fisher anchor) and RDumb, ETA with periodic resets
 * (Schneider2023 Ch. 4, eq. 4.1; oripress/CCC `models/rdumb.py`,
 * itself from mr-eggplant/EATA).
 *
 * Each step forwards a batch with BN on its own statistics and minimises the
 * weighted entropy of the reliable, non-redundant samples:
 *
 *   L = mean over kept of exp(−(H − E0)) · H,  H = −Σ_j p_j log p_j,
 *   kept: H < E0, then |cos(p, p̄)| < ε (ε 0.05; once p̄ exists),
 *
 * with the weight detached, and p̄ ← 0.9 p̄ + 0.1 · mean p over the kept
 * (the first time: their mean). Only the BN affine γ, β train, by SGD with
 * momentum. RDumb restores the model, the optimizer and p̄ before every step
 * whose index is a multiple of T (step 0 included, as the reference).
 *
 * Where the thesis and the code differ, the code is followed (EMA p̄, not the
 * plain running mean of the text; SGD, not Adam), except E0, which is a
 * choice (`e0Rule`) the caller records.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { BnCnn, BnCnnSnapshot } from "../models/bn_cnn.ts";
import { detached } from "../core/gradients.ts";
import { readTogether } from "../core/readback.ts";
import { adaptGradients, disposeOptimizer, sampleEntropy } from "./self_learning.ts";

/** The two entropy margins: the thesis' 0.4 ln C and the CCC code's ln C / 2 − 1. */
export const E0_RULES = ["thesis", "code"] as const;
/** A choice of {@linkcode E0_RULES}. */
export type E0Rule = typeof E0_RULES[number];

/** ε of the redundancy filter |cos(p, p̄)| < ε (rdumb.py `d_margin`). */
export const ETA_COSINE_MARGIN = 0.05;
/** Weight of the old p̄ in its moving average (rdumb.py `update_model_probs`). */
export const ETA_PROBS_DECAY = 0.9;
/** SGD learning rate of ETA, EATA and RDumb (thesis §4 setup, rdumb.py). */
export const ETA_LEARNING_RATE = 2.5e-4;
/** SGD momentum (rdumb.py). */
export const ETA_MOMENTUM = 0.9;
/** RDumb's reset interval T in steps (thesis Table 4.4, rdumb.py). */
export const RDUMB_RESET_EVERY = 1000;

/**
 * The entropy margin E0 in nats for `classes` classes. "thesis": 0.4 ln C
 * (eq. 4.1, EATA's default). "code": ln C / 2 − 1, rdumb.py's
 * `math.log(1000) / 2 - 1` with the ImageNet class count 1000 read as C
 * (taken literally, 2.45 nats would exceed ln 10 and disable the filter on
 * 10 classes).
 */
export function entropyMargin(rule: E0Rule, classes: number): number {
  if (!Number.isInteger(classes) || classes < 2) throw new UsageError(`classes must be an integer ≥ 2, got ${classes}`);
  switch (rule) {
    case "thesis":
      return 0.4 * Math.log(classes);
    case "code":
      return Math.log(classes) / 2 - 1;
    default:
      throw new UsageError(`e0Rule must be one of ${E0_RULES.join(", ")}, got ${JSON.stringify(rule)}`);
  }
}

/** Which samples of a batch ETA trains on, and with which weight (all `[batch]`, float 0/1 masks). */
export interface EtaSelection {
  /** 1 where H < E0 (the reliability filter; rdumb.py `filter_ids_1`). */
  reliable: tf.Tensor1D;
  /** 1 where reliable and, once p̄ exists, |cos(p, p̄)| < ε (both filters). */
  kept: tf.Tensor1D;
  /** exp(−(H − E0)) where kept, else 0; no gradient. */
  weights: tf.Tensor1D;
}

/**
 * ETA's sample selection for logits `[batch, classes]`: the reliability
 * filter H < `e0` (nats), then the redundancy filter |cos(p, `meanProbs`)| <
 * `cosineMargin` when `meanProbs` `[classes]` (p̄) is given, and the
 * detached weights exp(−(H − E0)) of the kept samples.
 */
export function etaSelect(
  logits: tf.Tensor2D,
  meanProbs: tf.Tensor1D | null,
  e0: number,
  cosineMargin = ETA_COSINE_MARGIN,
): EtaSelection {
  return tf.tidy(() => {
    // Masks and weights are constants of the step: computed off the gradient tape in one go.
    const rows = detached(logits, (l) => {
      const entropies = sampleEntropy(l as tf.Tensor2D);
      const reliable = tf.cast(tf.less(entropies, e0), "float32");
      let kept = reliable;
      if (meanProbs) {
        const cosine = cosineToMean(tf.softmax(l) as tf.Tensor2D, meanProbs);
        kept = tf.mul(reliable, tf.cast(tf.less(tf.abs(cosine), cosineMargin), "float32"));
      }
      // rdumb.py: coeff = 1 / exp(H − E0), from the detached entropies.
      return tf.stack([reliable, kept, tf.mul(kept, tf.exp(tf.sub(e0, entropies)))]);
    });
    const [reliable, kept, weights] = tf.unstack(rows) as tf.Tensor1D[];
    return { reliable, kept, weights };
  });
}

/** Options of {@linkcode Eta}. */
export interface EtaOptions {
  /** Which E0 (see {@linkcode entropyMargin}); record it with the run. */
  e0Rule: E0Rule;
  /** SGD learning rate (default 2.5e-4). */
  learningRate?: number;
  /** SGD momentum (default 0.9). */
  momentum?: number;
  /** ε of the redundancy filter (default 0.05). */
  cosineMargin?: number;
}

/**
 * ETA on a BN model: `step(x)` predicts a batch and adapts the BN affine
 * parameters on it. Owns an SGD-momentum optimizer; the model stays the
 * caller's (adapted in place, not disposed).
 */
export class Eta {
  /** The entropy margin E0 in nats. */
  readonly e0: number;
  /** The rule that set {@linkcode Eta.e0}. */
  readonly e0Rule: E0Rule;
  /** SGD learning rate. */
  readonly learningRate: number;
  /** SGD momentum. */
  readonly momentum: number;
  /** ε of the redundancy filter |cos(p, p̄)| < ε. */
  readonly cosineMargin: number;
  /** The adapted model (the caller's; adapted in place). */
  protected readonly model: BnCnn;
  /** The SGD-momentum optimizer of the BN affine parameters. */
  protected optimizer: tf.Optimizer;
  /** p̄ `[classes]`, the moving average of the kept samples' probabilities; null before any was kept. */
  protected meanProbs: tf.Tensor1D | null = null;
  #steps = 0;
  #reliableSamples = 0;
  #updatedSamples = 0;

  /** ETA adapting `model` in place; throws a UsageError on an invalid option. */
  constructor(model: BnCnn, options: EtaOptions) {
    const { e0Rule, learningRate = ETA_LEARNING_RATE, momentum = ETA_MOMENTUM } = options;
    const cosineMargin = options.cosineMargin ?? ETA_COSINE_MARGIN;
    if (!(learningRate > 0) || !Number.isFinite(learningRate)) {
      throw new UsageError(`learningRate must be a finite number > 0, got ${learningRate}`);
    }
    if (!(momentum >= 0 && momentum < 1)) throw new UsageError(`momentum must lie in [0, 1), got ${momentum}`);
    if (!(cosineMargin > 0)) throw new UsageError(`cosineMargin must be > 0, got ${cosineMargin}`);
    if (model.affineParams().length === 0) throw new UsageError(`ETA adapts norm layers; this model has none`);
    this.model = model;
    this.e0Rule = e0Rule;
    this.e0 = entropyMargin(e0Rule, model.params.get("fc1/b").shape[0]);
    this.learningRate = learningRate;
    this.momentum = momentum;
    this.cosineMargin = cosineMargin;
    this.optimizer = this.newOptimizer();
  }

  /** Steps taken. */
  get steps(): number {
    return this.#steps;
  }

  /** Samples that passed the reliability filter, over all steps (rdumb.py `num_samples_update_1`). */
  get reliableSamples(): number {
    return this.#reliableSamples;
  }

  /** Samples that passed both filters and entered a loss (rdumb.py `num_samples_update_2`). */
  get updatedSamples(): number {
    return this.#updatedSamples;
  }

  /**
   * Predicts `x` `[batch, 28, 28, 1]` with BN on the batch's statistics and
   * takes one ETA step on it (none when no sample is kept). Returns the
   * logits `[batch, classes]` of that forward (before the update), row-major.
   */
  async step(x: tf.Tensor4D): Promise<Float32Array> {
    let selection: EtaSelection | undefined;
    let keptMeanProbs: tf.Tensor1D | undefined;
    const { logits, grads } = adaptGradients(this.model, x, (logits) => {
      selection = etaSelect(logits, this.meanProbs, this.e0, this.cosineMargin);
      Object.values(selection).forEach((t) => tf.keep(t));
      const count = tf.maximum(tf.sum(selection.kept), 1);
      keptMeanProbs = tf.keep(
        detached(logits, (l) => tf.div(tf.sum(tf.mul(tf.softmax(l), tf.expandDims(selection!.kept, 1)), 0), count)),
      ) as tf.Tensor1D;
      return tf.div(tf.sum(tf.mul(selection.weights, sampleEntropy(logits))), count) as tf.Scalar;
    }, "affine");
    const { reliable, kept, weights } = selection!;
    // The predictions and both masks in one readback (on WebGPU each read waits for the queue to drain).
    const [values, reliableMask, keptMask] = await readTogether([logits, reliable, kept]);
    const keptCount = sum(keptMask);
    if (keptCount > 0) {
      this.optimizer.applyGradients(grads);
      const previous = this.meanProbs;
      this.meanProbs = previous
        ? tf.tidy(() => tf.add(tf.mul(previous, ETA_PROBS_DECAY), tf.mul(keptMeanProbs!, 1 - ETA_PROBS_DECAY)))
        : tf.clone(keptMeanProbs!);
      previous?.dispose();
    }
    tf.dispose([logits, reliable, kept, weights, keptMeanProbs!, ...Object.values(grads)]);
    this.#steps++;
    this.#reliableSamples += sum(reliableMask);
    this.#updatedSamples += keptCount;
    return values;
  }

  /** Frees the optimizer state and p̄ (not the model). */
  dispose(): void {
    disposeOptimizer(this.optimizer);
    this.meanProbs?.dispose();
    this.meanProbs = null;
  }

  /** A fresh SGD-momentum optimizer (torch SGD, dampening 0, no Nesterov: same update). */
  protected newOptimizer(): tf.Optimizer {
    return tf.train.momentum(this.learningRate, this.momentum);
  }
}

/** Options of {@linkcode RDumb}. */
export interface RDumbOptions extends EtaOptions {
  /** Reset interval T in steps, an integer ≥ 1 (default 1000). */
  resetEvery?: number;
}

/**
 * RDumb: {@linkcode Eta} that restores the model's parameters and
 * statistics (as they were at construction), a fresh optimizer and p̄ = none
 * before each step whose index is a multiple of `resetEvery`.
 */
export class RDumb extends Eta {
  /** Steps between resets. */
  readonly resetEvery: number;
  readonly #initial: BnCnnSnapshot;

  /** RDumb adapting `model` in place, remembering its parameters and statistics as they are now. */
  constructor(model: BnCnn, options: RDumbOptions) {
    const resetEvery = options.resetEvery ?? RDUMB_RESET_EVERY;
    if (!Number.isInteger(resetEvery) || resetEvery < 1) {
      throw new UsageError(`resetEvery (T) must be an integer ≥ 1, got ${resetEvery}`);
    }
    super(model, options);
    this.resetEvery = resetEvery;
    this.#initial = model.snapshot();
  }

  /** As {@linkcode Eta.step}, after the reset when the step index is a multiple of T. */
  override step(x: tf.Tensor4D): Promise<Float32Array> {
    if (this.steps % this.resetEvery === 0) this.reset();
    return super.step(x);
  }

  /** Frees the snapshot, the optimizer state and p̄ (not the model). */
  override dispose(): void {
    super.dispose();
    this.#initial.dispose();
  }

  /** Θ ← Θ₀, a fresh optimizer, p̄ ← none (rdumb.py `load_model_and_optimizer`, `current_model_probs = None`). */
  private reset(): void {
    this.model.restore(this.#initial);
    disposeOptimizer(this.optimizer);
    this.optimizer = this.newOptimizer();
    this.meanProbs?.dispose();
    this.meanProbs = null;
  }
}

/** cos(p_b, m) `[batch]` for rows p `[batch, classes]` and m `[classes]` (torch `cosine_similarity`, ε 1e-8). */
function cosineToMean(probs: tf.Tensor2D, mean: tf.Tensor1D): tf.Tensor1D {
  return tf.tidy(() => {
    const dot = tf.sum(tf.mul(probs, mean), 1);
    const norms = tf.mul(tf.norm(probs, 2, 1), tf.norm(mean));
    return tf.div(dot, tf.maximum(norms, 1e-8)) as tf.Tensor1D;
  });
}

function sum(values: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i];
  return total;
}
