/**
 * Distal adversarials (Schott2019 §7, Fig. 4; the reference `scripts/attacks.py`):
 * start from uniform noise and descend the cross-entropy of one class (SGD
 * with momentum) until the model's calibrated probability of that class
 * reaches a confidence. A model whose calibrated posterior falls back to
 * uniform far from the data (ABS, η > 0) is never confident on noise.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { crossEntropy, logitsOf, lossGradient } from "./attack.ts";
import type { AttackModel } from "./types.ts";

/** Options of {@linkcode distalAscent}. */
export interface DistalOptions {
  /** Noise images to start from. */
  starts: number;
  /** Image shape `[height, width, channels]`. */
  shape: [number, number, number];
  /** SGD steps at most (reference: 10,000). */
  steps: number;
  /** SGD learning rate (reference: 1). */
  lr?: number;
  /** SGD momentum (reference: 0.95). */
  momentum?: number;
  /** Calibrated softmax slope α and floor η (Eq. 4). */
  alpha: number;
  /** Calibrated softmax floor η (Eq. 4). */
  eta: number;
  /** Confidence that ends a start (reference: 0.9). */
  confidence?: number;
  /** Target class of start i (reference: class 1 for every start). */
  target?: (start: number) => number;
}

/** What {@linkcode distalAscent} returns. */
export interface DistalResult {
  /** Final images `[starts, ...shape]`. */
  images: Float32Array;
  /** Highest calibrated probability of the target class each start reached. */
  confidence: Float64Array;
  /** 1 where it reached `confidence`. */
  reached: Uint8Array;
  /** Steps each start took (the step it reached the confidence, else `steps`). */
  steps: Int32Array;
  /** Target class of each start. */
  targets: Int32Array;
}

/**
 * log p_c of the calibrated softmax (Eq. 4) for every row's target class:
 * log(e^{α·l_c} + η) − log(Σ_k e^{α·l_k} + C·η), computed with log-sum-exp so
 * that neither the exponentials nor η underflow in float32.
 */
export function calibratedLogProbability(
  logits: tf.Tensor2D,
  targets: tf.Tensor1D,
  alpha: number,
  eta: number,
): tf.Tensor1D {
  return tf.tidy(() => {
    const [n, classes] = logits.shape;
    const scaled = tf.mul(logits, alpha);
    const picked = tf.sum(tf.mul(scaled, tf.oneHot(targets, classes)), 1);
    if (eta <= 0) return tf.sub(picked, tf.logSumExp(scaled, 1)) as tf.Tensor1D;
    const logEta = tf.fill([n, 1], Math.log(eta));
    const numerator = tf.logSumExp(tf.concat([tf.reshape(picked, [n, 1]), logEta], 1), 1);
    const denominator = tf.logSumExp(tf.concat([scaled, tf.add(logEta, Math.log(classes))], 1), 1);
    return tf.sub(numerator, denominator) as tf.Tensor1D;
  });
}

/**
 * SGD with momentum on the cross-entropy of the target class (softmax of the
 * logits, as the reference's gradient is) from U(0, 1) noise, each step
 * clipped to the model's bounds, per start until its calibrated probability
 * (Eq. 4: α, η) reaches `confidence` or `steps` run out.
 */
export async function distalAscent(model: AttackModel, options: DistalOptions, rng: Rng): Promise<DistalResult> {
  const { starts, shape, steps, alpha, eta } = options;
  const lr = options.lr ?? 1, momentum = options.momentum ?? 0.95, goal = options.confidence ?? 0.9;
  const size = shape[0] * shape[1] * shape[2];
  const [low, high] = model.bounds;
  const images = Float32Array.from({ length: starts * size }, () => low + (high - low) * rng.uniform());
  const velocity = new Float32Array(starts * size);
  const confidence = new Float64Array(starts);
  const reached = new Uint8Array(starts);
  const taken = new Int32Array(starts).fill(steps);
  const { classes } = await logitsOf(model, images.subarray(0, size), 1, shape);
  const targets = Int32Array.from({ length: starts }, (_, i) => options.target?.(i) ?? 1 % classes);
  for (let step = 0; step <= steps; step++) {
    const active = [...reached.keys()].filter((i) => !reached[i]);
    if (active.length === 0) break;
    const x = new Float32Array(active.length * size);
    active.forEach((i, r) => x.set(images.subarray(i * size, (i + 1) * size), r * size));
    const [p, gradient] = tf.tidy(() => {
      const input = tf.tensor4d(x, [active.length, ...shape]);
      const target = tf.tensor1d(active.map((i) => targets[i]), "int32");
      const { gradient, logits } = lossGradient(model, input, (l) => crossEntropy(l, target));
      return [tf.exp(calibratedLogProbability(logits, target, alpha, eta)), gradient];
    });
    const [pValues, gValues] = [await p.data(), await gradient.data()];
    tf.dispose([p, gradient]);
    active.forEach((i, r) => {
      confidence[i] = Math.max(confidence[i], pValues[r]);
      if (pValues[r] >= goal) {
        reached[i] = 1;
        taken[i] = step;
        return;
      }
      if (step === steps) return;
      for (let k = 0; k < size; k++) {
        const at = i * size + k;
        velocity[at] = momentum * velocity[at] + gValues[r * size + k];
        images[at] = Math.min(high, Math.max(low, images[at] - lr * velocity[at]));
      }
    });
  }
  return { images, confidence, reached, steps: taken, targets };
}
