/**
 * The attack contract, after foolbox 3 (`attacks/base.py`): a model exposes logits over a
 * bounded input box, an attack is fixed-ε or minimization under one distance, and running it
 * gives the raw and the ε-clipped adversarials with their success per ε.
 *
 * @module
 */
import type * as tf from "@tensorflow/tfjs";
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
  n: number;
  shape: [number, number, number];
  labels: Int32Array;
}

/** An adversarial attack (foolbox: `FixedEpsilonAttack` or `MinimizationAttack`). */
export interface Attack {
  name: string;
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
  raw: Float32Array[];
  clipped: Float32Array[];
  /** 1 where the clipped input is misclassified (argmax ≠ label). */
  success: Uint8Array[];
}

export type { Observations };
