/**
 * The Latent Descent attack of Schott2019 (§5), made for
 * ABS: at the current image x, take the most likely wrong class ỹ and its reconstruction
 * x̃ = G_ỹ(μ_ỹ(x)) by that class's encoder mean and decoder, step x ← (1 − s)x + s·x̃ (s = 0.01)
 * until the image is adversarial, then bisect inside the last step (10 halvings) and along the
 * segment towards the original (10 halvings). The reference code reconstructs with ABS's own
 * optimised z*; we use the encoder means, as the paper describes.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { logitsOf, rowsTensor } from "./attack.ts";
import type { Attack, AttackBatch, AttackModel } from "./types.ts";

/** What the attack needs from ABS: each image through one chosen class's encoder mean and decoder. */
export interface LatentReconstructor {
  /** G_{c_i}(μ_{c_i}(x_i)) `[n, h, w, c]` for images `[n, h, w, c]` and classes `[n]`. */
  reconstructWith(x: tf.Tensor4D, classes: Int32Array): tf.Tensor4D;
}

/** Options of {@linkcode latentDescent}. */
export interface LatentDescentOptions {
  /** Blend factor s of each step towards the reconstruction (paper: 0.01). */
  stepSize?: number;
  /** Steps before a sample counts as a failure. */
  maxIterations?: number;
  /** Halvings inside the last step, and again towards the original (paper: 10). */
  bisections?: number;
}

/** The most likely wrong class per row of `[n, classes]` logits. */
function likeliestWrong(logits: Float32Array, classes: number, labels: ArrayLike<number>): Int32Array {
  return Int32Array.from({ length: labels.length }, (_, r) => {
    let best = -1;
    for (let c = 0; c < classes; c++) {
      if (c === labels[r]) continue;
      if (best < 0 || logits[r * classes + c] > logits[r * classes + best]) best = c;
    }
    return best;
  });
}

/**
 * Latent Descent as a minimization attack under L2 (no gradient needed). `abs` supplies the
 * reconstructions; the attacked `model` (usually the same ABS, or a wrapper of it) judges
 * adversariality. Failed samples come back as their last iterate.
 */
export function latentDescent(abs: LatentReconstructor, options: LatentDescentOptions = {}): Attack {
  const { stepSize = 0.01, maxIterations = 200, bisections = 10 } = options;
  if (!(stepSize > 0 && stepSize <= 1)) throw new UsageError(`stepSize must be in (0, 1], got ${stepSize}`);
  if (!(Number.isInteger(maxIterations) && maxIterations >= 1)) {
    throw new UsageError(`maxIterations must be an integer ≥ 1, got ${maxIterations}`);
  }
  if (!(Number.isInteger(bisections) && bisections >= 0)) {
    throw new UsageError(`bisections must be an integer ≥ 0, got ${bisections}`);
  }
  return {
    name: "latent_descent",
    distance: "l2",
    kind: "minimization",
    needsGradient: false,
    async perturb(model: AttackModel, batch: AttackBatch): Promise<Float32Array> {
      const { n, shape, labels } = batch;
      const size = shape[0] * shape[1] * shape[2];
      const [low, high] = model.bounds;
      const current = Float32Array.from(batch.x);
      // Per sample: the last clean iterate and the first adversarial one.
      const before = Float32Array.from(batch.x), after = Float32Array.from(batch.x);
      const found = new Uint8Array(n);
      let { logits, classes } = await logitsOf(model, current, n, shape);
      let active = Array.from({ length: n }, (_, i) => i);
      const isAdversarial = (scores: Float32Array, row: number, label: number) => {
        let best = 0;
        for (let c = 1; c < classes; c++) if (scores[row * classes + c] > scores[row * classes + best]) best = c;
        return best !== label;
      };
      // Already misclassified: the clean image is its own adversarial.
      active = active.filter((i) => {
        if (!isAdversarial(logits, i, labels[i])) return true;
        found[i] = 1;
        return false;
      });
      let rowLogits = Float32Array.from(active.flatMap((i) => [...logits.subarray(i * classes, (i + 1) * classes)]));
      for (let iteration = 0; iteration < maxIterations && active.length > 0; iteration++) {
        const m = active.length;
        const xs = new Float32Array(m * size);
        active.forEach((i, k) => xs.set(current.subarray(i * size, (i + 1) * size), k * size));
        const targets = likeliestWrong(rowLogits, classes, active.map((i) => labels[i]));
        const recon = tf.tidy(() => abs.reconstructWith(rowsTensor(xs, shape), targets));
        const xt = await recon.data();
        recon.dispose();
        const next = xs.map((v, p) => Math.min(high, Math.max(low, (1 - stepSize) * v + stepSize * xt[p])));
        ({ logits, classes } = await logitsOf(model, next, m, shape));
        const still: number[] = [], kept: number[] = [];
        active.forEach((i, k) => {
          const row = next.subarray(k * size, (k + 1) * size);
          if (isAdversarial(logits, k, labels[i])) {
            before.set(current.subarray(i * size, (i + 1) * size), i * size);
            after.set(row, i * size);
            found[i] = 1;
          } else {
            current.set(row, i * size);
            still.push(i);
            kept.push(k);
          }
        });
        active = still;
        rowLogits = Float32Array.from(kept.flatMap((k) => [...logits.subarray(k * classes, (k + 1) * classes)]));
      }
      const result = Float32Array.from(current);
      const done = [...found.keys()].filter((i) =>
        found[i] && !batch.x.subarray(i * size, (i + 1) * size).every(
          (v, p) => v === after[i * size + p],
        )
      );
      for (const i of found.keys()) if (found[i]) result.set(after.subarray(i * size, (i + 1) * size), i * size);
      if (done.length === 0 || bisections === 0) return result;
      // Bisection on t ∈ [0, 1] along a segment a + t(b − a), b adversarial, per sample.
      const bisect = async (from: Float32Array, to: Float32Array) => {
        const lo = new Float64Array(done.length), hi = new Float64Array(done.length).fill(1);
        const probe = new Float32Array(done.length * size);
        for (let step = 0; step < bisections; step++) {
          done.forEach((i, k) => {
            const t = (lo[k] + hi[k]) / 2;
            for (let p = 0; p < size; p++) {
              const a = from[i * size + p];
              probe[k * size + p] = a + t * (to[i * size + p] - a);
            }
          });
          const scores = (await logitsOf(model, probe, done.length, shape)).logits;
          done.forEach((i, k) => {
            if (isAdversarial(scores, k, labels[i])) hi[k] = (lo[k] + hi[k]) / 2;
            else lo[k] = (lo[k] + hi[k]) / 2;
          });
        }
        done.forEach((i, k) => {
          for (let p = 0; p < size; p++) {
            const a = from[i * size + p];
            result[i * size + p] = a + hi[k] * (to[i * size + p] - a);
          }
        });
      };
      await bisect(before, after);
      await bisect(batch.x, Float32Array.from(result));
      return result;
    },
  };
}
