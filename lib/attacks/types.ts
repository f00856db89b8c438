/**
 * The attack contract, after foolbox 3 (`attacks/base.py`): a model exposes logits over a
 * bounded input box, an attack is fixed-ε or minimization under one distance, and running it
 * gives the raw and the ε-clipped adversarials with their success per ε. Decision-based
 * minimization attacks are built by {@linkcode decisionAttack}.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import type { Observations } from "../data/ground_truth.ts";

/** The norms an attack minimizes or is bounded by. */
export type AttackDistance = "l0" | "l2" | "linf";

/** A classifier under attack: inputs `[n, height, width, channels]` inside `bounds`. */
export interface AttackModel {
  /** Class scores `[n, classes]`; the prediction is their argmax. Must not keep `x`. */
  logits(x: tf.Tensor4D): tf.Tensor2D;
  /** The input box every adversarial stays in, e.g. [0, 1]. */
  bounds: [number, number];
  /** Whether `logits` is differentiable in `x` (gradient attacks need it). */
  gradient: boolean;
  /**
   * Optional: logits and every class's input gradient from one forward pass,
   * `[n, classes]` and `[n, classes, h·w·c]`, for models whose Jacobian costs no
   * more than their logits (ABS by the envelope theorem). Attacks that need
   * several classes' gradients (DeepFool) use it in place of a backward pass per class.
   */
  jacobian?(x: tf.Tensor4D): { logits: tf.Tensor2D; jacobian: tf.Tensor3D };
}

/** One batch handed to an attack's implementation. */
export interface AttackBatch {
  /** Clean inputs, row-major `[n, ...shape]`. */
  x: Float32Array;
  /** Number of inputs. */
  n: number;
  /** Shape of one input, `[h, w, c]`. */
  shape: [number, number, number];
  /** True class of each input `[n]`. */
  labels: Int32Array;
}

/** An adversarial attack (foolbox: `FixedEpsilonAttack` or `MinimizationAttack`). */
export interface Attack {
  /** Its name in reports. */
  name: string;
  /** The norm its ε is measured in. */
  distance: AttackDistance;
  /** fixed: perturbs within a given ε; minimization: searches the smallest adversarial. */
  kind: "fixed" | "minimization";
  /** Whether it needs `model.gradient`. */
  needsGradient: boolean;
  /**
   * Adversarial candidates `[n, ...shape]` inside the model's bounds. Fixed attacks get one finite ε;
   * minimization attacks get the smallest requested ε (as foolbox: they may stop once below it) or null (unbounded).
   * Samples the attack failed on may hold any value: success is judged after clipping.
   */
  perturb(model: AttackModel, batch: AttackBatch, epsilon: number | null, rng: Rng): Promise<Float32Array>;
}

/** What `attack` returns: one entry per requested ε, each `[n, ...shape]` or `[n]`. */
export interface AttackOutput {
  /** The attack's outputs as returned. */
  raw: Float32Array[];
  /** The outputs clipped into the ε-ball. */
  clipped: Float32Array[];
  /** 1 where the clipped input is misclassified (argmax ≠ label). */
  success: Uint8Array[];
}

/** A batch as a decision-based attack sees it: with its values per sample and the model's input box. */
export interface DecisionBatch extends AttackBatch {
  /** Values per sample, h·w·c. */
  d: number;
  /** The model's lower bound. */
  low: number;
  /** The model's upper bound. */
  high: number;
}

/**
 * A minimization attack that queries the model's decisions only (no gradient), so it applies
 * to any {@linkcode AttackModel}; `perturb` is handed the batch with `d`, `low` and `high`.
 */
export function decisionAttack(
  name: string,
  distance: AttackDistance,
  perturb: (model: AttackModel, batch: DecisionBatch, epsilon: number | null, rng: Rng) => Promise<Float32Array>,
): Attack {
  return {
    name,
    distance,
    kind: "minimization",
    needsGradient: false,
    perturb(model, batch, epsilon, rng) {
      const [low, high] = model.bounds;
      const d = batch.shape[0] * batch.shape[1] * batch.shape[2];
      return perturb(model, { ...batch, d, low, high }, epsilon, rng);
    },
  };
}

export type { Observations };
