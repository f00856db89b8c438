/**
 * DeepFool (Moosavi-Dezfooli et al. 2016) after foolbox 3 (`deepfool.py`,
 * loss "logits"): linearize the margins to the top candidate classes, step to
 * the nearest linearized boundary, accumulate, overshoot, repeat until every
 * sample is misclassified. A minimization attack in L2 or L∞.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { argmaxRows } from "../metrics/classification.ts";
import { logitsOf, lossGradient, rowsTensor } from "./attack.ts";
import type { Attack } from "./types.ts";

/** Options of foolbox's `DeepFoolAttack`. */
export interface DeepFoolOptions {
  /** Maximum number of linearization steps. */
  steps: number;
  /** How many top classes (by clean logit, the predicted one included) to consider. */
  candidates: number;
  /** The accumulated step is scaled by 1 + overshoot to cross the boundary. */
  overshoot: number;
}

/** Classes sorted by decreasing logit, row-major `[n, classes]` (stable on ties, like a reversed argsort). */
function classesByLogit(logits: Float32Array, n: number, classes: number): Int32Array {
  const out = new Int32Array(n * classes);
  for (let r = 0; r < n; r++) {
    const order = Array.from({ length: classes }, (_, c) => c);
    order.sort((a, b) => logits[r * classes + b] - logits[r * classes + a] || b - a);
    out.set(order, r * classes);
  }
  return out;
}

function deepFool(name: string, distance: "l2" | "linf", options: DeepFoolOptions): Attack {
  const { steps, candidates, overshoot } = options;
  if (!(Number.isInteger(steps) && steps >= 0)) {
    throw new UsageError(`${name}: steps must be an integer ≥ 0, got ${steps}`);
  }
  if (!(Number.isInteger(candidates) && candidates >= 2)) {
    throw new UsageError(`${name}: candidates must be an integer ≥ 2, got ${candidates}`);
  }
  if (!(overshoot >= 0)) throw new UsageError(`${name}: overshoot must be ≥ 0, got ${overshoot}`);
  return {
    name,
    distance,
    kind: "minimization",
    needsGradient: true,
    async perturb(model, batch, _earlyStop, _rng) {
      const { x: x0, n, shape, labels } = batch;
      const size = x0.length / n;
      const [lo, hi] = model.bounds;
      const clean = await logitsOf(model, x0, n, shape);
      const k = Math.min(candidates, clean.classes);
      if (k < 2) throw new UsageError(`${name} needs a model with at least 2 classes`);
      const order = classesByLogit(clean.logits, n, clean.classes);
      // masks[j] is onehot(class j) − onehot(predicted class): logits·mask is the margin to candidate j.
      const masks: Float32Array[] = [];
      for (let j = 1; j < k; j++) {
        const m = new Float32Array(n * clean.classes);
        for (let r = 0; r < n; r++) {
          m[r * clean.classes + order[r * clean.classes + j]] += 1;
          m[r * clean.classes + order[r * clean.classes]] -= 1;
        }
        masks.push(m);
      }
      const x = x0.slice();
      const pTotal = new Float64Array(x0.length);
      const losses = new Float64Array(n * (k - 1));
      const grads: Float32Array[] = [];
      for (let step = 0; step < steps; step++) {
        grads.length = 0;
        let adversarial: Uint8Array | null = null;
        if (model.jacobian) {
          // One forward pass gives every class's gradient: the margins' gradients are differences of its rows.
          const out = tf.tidy(() => model.jacobian!(rowsTensor(x, shape)));
          const [lg, jac] = [await out.logits.data(), await out.jacobian.data()];
          tf.dispose([out.logits, out.jacobian]);
          const classes = clean.classes;
          const predicted = argmaxRows(lg, n, classes);
          adversarial = Uint8Array.from(predicted, (p, r) => (p !== labels[r] ? 1 : 0));
          if (adversarial.every((a) => a === 1)) break;
          for (let j = 0; j < k - 1; j++) {
            const g = new Float32Array(n * size);
            for (let r = 0; r < n; r++) {
              const [to, from] = [order[r * classes + j + 1], order[r * classes]];
              const [rowTo, rowFrom] = [(r * classes + to) * size, (r * classes + from) * size];
              for (let i = 0; i < size; i++) g[r * size + i] = jac[rowTo + i] - jac[rowFrom + i];
              losses[r * (k - 1) + j] = lg[r * classes + to] - lg[r * classes + from];
            }
            grads.push(g);
          }
        }
        for (let j = 0; j < k - 1 && !model.jacobian; j++) {
          const [gradient, loss, logits] = tf.tidy(() => {
            const mask = tf.tensor2d(masks[j], [n, clean.classes]);
            const out = lossGradient(model, rowsTensor(x, shape), (l) => tf.sum(tf.mul(l, mask), 1) as tf.Tensor1D);
            return [out.gradient, out.loss, out.logits] as tf.Tensor[];
          });
          const [g, l, lg] = await Promise.all([gradient.data(), loss.data(), logits.data()]);
          tf.dispose([gradient, loss, logits]);
          if (j === 0) {
            const predicted = argmaxRows(lg, n, clean.classes);
            adversarial = Uint8Array.from(predicted, (p, r) => (p !== labels[r] ? 1 : 0));
            // foolbox stops the whole batch once every sample is adversarial.
            if (adversarial.every((a) => a === 1)) break;
          }
          grads.push(g as Float32Array);
          for (let r = 0; r < n; r++) losses[r * (k - 1) + j] = l[r];
        }
        if (grads.length < k - 1) break;
        for (let r = 0; r < n; r++) {
          // The nearest linearized boundary: |margin| / dual norm of its gradient.
          let best = 0, bestDistance = Infinity, bestNorm = 0;
          for (let j = 0; j < k - 1; j++) {
            let norm = 0;
            const g = grads[j];
            for (let i = r * size; i < (r + 1) * size; i++) norm += distance === "l2" ? g[i] * g[i] : Math.abs(g[i]);
            if (distance === "l2") norm = Math.sqrt(norm);
            const d = Math.abs(losses[r * (k - 1) + j]) / (norm + 1e-8);
            if (d < bestDistance) [best, bestDistance, bestNorm] = [j, d, norm];
          }
          const d = bestDistance + 1e-4; // foolbox's margin for numerical stability
          const g = grads[best];
          for (let i = r * size; i < (r + 1) * size; i++) {
            pTotal[i] += distance === "l2" ? (d / (bestNorm + 1e-8)) * g[i] : d * Math.sign(g[i]);
          }
          if (adversarial![r]) continue;
          for (let i = r * size; i < (r + 1) * size; i++) {
            x[i] = Math.min(hi, Math.max(lo, x0[i] + (1 + overshoot) * pTotal[i]));
          }
        }
      }
      return x;
    },
  };
}

/** L2 DeepFool (foolbox `L2DeepFoolAttack`): 50 steps, 10 candidate classes, overshoot 0.02. */
export function l2DeepFool({ steps = 50, candidates = 10, overshoot = 0.02 }: Partial<DeepFoolOptions> = {}): Attack {
  return deepFool("l2_deepfool", "l2", { steps, candidates, overshoot });
}

/** L∞ DeepFool (foolbox `LinfDeepFoolAttack`): 50 steps, 10 candidate classes, overshoot 0.02. */
export function linfDeepFool({ steps = 50, candidates = 10, overshoot = 0.02 }: Partial<DeepFoolOptions> = {}): Attack {
  return deepFool("linf_deepfool", "linf", { steps, candidates, overshoot });
}
