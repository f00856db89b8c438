/**
 * Gradient attacks on the cross-entropy loss, after foolbox 3
 * (`gradient_descent_base.py`, `fast_gradient_method.py`,
 * `basic_iterative_method.py`, `projected_gradient_descent.py`, `ddn.py`):
 * FGSM/FGM (one step of ε), BIM and PGD (iterated, projected steps), and DDN
 * (decoupled direction and norm, a minimization attack).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { crossEntropy, lossGradient, rowsTensor } from "./attack.ts";
import type { Attack, AttackBatch, AttackModel } from "./types.ts";

/** Options of foolbox's `BaseGradientDescent`. */
export interface GradientDescentOptions {
  /** Step size as a fraction of ε (used unless `absStepsize` is set). */
  relStepsize: number;
  /** Step size in input units, overriding `relStepsize`. */
  absStepsize?: number;
  /** Number of gradient steps. */
  steps: number;
  /** Start from a uniform point of the ε-ball instead of the clean input. */
  randomStart: boolean;
}

function checkPositive(name: string, options: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const ok = typeof value === "boolean" || (typeof value === "number" && value >= 0 && Number.isFinite(value));
    if (!ok) throw new UsageError(`${name}: ${key} must be a finite number ≥ 0, got ${value}`);
  }
}

/** Per-sample Lp norm of `[n, ...]` as `[n, 1, 1, 1]`, floored at 1e-12 as foolbox. */
function rowNorms(t: tf.Tensor4D, p: 1 | 2): tf.Tensor4D {
  return tf.tidy(() => {
    const flat = tf.reshape(t, [t.shape[0], -1]);
    const norms = p === 2 ? tf.sqrt(tf.sum(tf.square(flat), 1)) : tf.sum(tf.abs(flat), 1);
    return tf.reshape(tf.maximum(norms, 1e-12), [t.shape[0], 1, 1, 1]) as tf.Tensor4D;
  });
}

/** Random start: uniform in the L∞ ball (each entry in [−ε, ε]) or the L2 ball (foolbox `uniform_l2_n_balls`). */
function randomStart(distance: "linf" | "l2", n: number, size: number, epsilon: number, rng: Rng): Float32Array {
  const out = new Float32Array(n * size);
  if (distance === "linf") {
    for (let i = 0; i < out.length; i++) out[i] = (2 * rng.uniform() - 1) * epsilon;
    return out;
  }
  // A uniform point of the (size + 2)-sphere projected onto its first `size` coordinates is uniform in the size-ball.
  for (let r = 0; r < n; r++) {
    const g = new Float64Array(size + 2);
    let sq = 0;
    for (let i = 0; i < g.length; i++) {
      g[i] = rng.normal();
      sq += g[i] * g[i];
    }
    const scale = epsilon / Math.sqrt(sq);
    for (let i = 0; i < size; i++) out[r * size + i] = g[i] * scale;
  }
  return out;
}

/**
 * Iterated gradient ascent on the cross-entropy within the ε-ball of
 * `distance` (foolbox `LinfBaseGradientDescent` / `L2BaseGradientDescent`):
 * each step moves by `stepsize` along sign(∇) (L∞) or ∇/‖∇‖₂ (L2), projects
 * onto the ε-ball around the clean input and clips to the model's bounds.
 */
export function gradientDescent(name: string, distance: "linf" | "l2", options: GradientDescentOptions): Attack {
  checkPositive(name, { ...options });
  if (!Number.isInteger(options.steps)) throw new UsageError(`${name}: steps must be an integer, got ${options.steps}`);
  return {
    name,
    distance,
    kind: "fixed",
    needsGradient: true,
    async perturb(model: AttackModel, batch: AttackBatch, epsilon: number | null, rng: Rng): Promise<Float32Array> {
      if (epsilon === null) throw new UsageError(`${name} is a fixed-ε attack and needs a finite ε`);
      const { x: values, n, shape } = batch;
      const size = values.length / n;
      const stepsize = options.absStepsize ?? options.relStepsize * epsilon;
      const [lo, hi] = model.bounds;
      const x0 = rowsTensor(values, shape);
      const labels = tf.tensor1d(batch.labels, "int32");
      let x: tf.Tensor4D = options.randomStart
        ? tf.tidy(() =>
          tf.clipByValue(tf.add(x0, tf.tensor4d(randomStart(distance, n, size, epsilon, rng), x0.shape)), lo, hi)
        )
        : tf.clone(x0);
      try {
        for (let step = 0; step < options.steps; step++) {
          const next: tf.Tensor4D = tf.tidy(() => {
            const { gradient } = lossGradient(model, x, (logits) => crossEntropy(logits, labels));
            const direction = distance === "linf" ? tf.sign(gradient) : tf.div(gradient, rowNorms(gradient, 2));
            const moved = tf.sub(tf.add(x, tf.mul(direction, stepsize)), x0);
            const projected = distance === "linf"
              ? tf.clipByValue(moved, -epsilon, epsilon)
              : tf.mul(moved, tf.minimum(1, tf.div(epsilon, rowNorms(moved as tf.Tensor4D, 2))));
            return tf.clipByValue(tf.add(x0, projected), lo, hi) as tf.Tensor4D;
          });
          x.dispose();
          x = next;
        }
        return await x.data() as Float32Array;
      } finally {
        tf.dispose([x, x0, labels]);
      }
    },
  };
}

/** Fast Gradient Sign Method (Goodfellow et al. 2015): one L∞ step of ε along sign(∇ cross-entropy). */
export function fgsm(): Attack {
  return gradientDescent("fgsm", "linf", { relStepsize: 1, steps: 1, randomStart: false });
}

/** Fast Gradient Method, L2 (foolbox `L2FastGradientAttack`): one step of ε along ∇/‖∇‖₂. */
export function fgm(): Attack {
  return gradientDescent("fgm", "l2", { relStepsize: 1, steps: 1, randomStart: false });
}

/** L∞ Basic Iterative Method (Kurakin et al. 2017): `steps` sign steps of relStepsize·ε, no random start. */
export function linfBim({ relStepsize = 0.2, absStepsize, steps = 10, randomStart = false }: Partial<
  GradientDescentOptions
> = {}): Attack {
  return gradientDescent("linf_bim", "linf", { relStepsize, absStepsize, steps, randomStart });
}

/** L2 Basic Iterative Method: `steps` normalized-gradient steps of relStepsize·ε, no random start. */
export function l2Bim({ relStepsize = 0.2, absStepsize, steps = 10, randomStart = false }: Partial<
  GradientDescentOptions
> = {}): Attack {
  return gradientDescent("l2_bim", "l2", { relStepsize, absStepsize, steps, randomStart });
}

/** L∞ Projected Gradient Descent (Madry et al. 2018): 40 steps of 0.01/0.3·ε from a random start. */
export function linfPgd({ relStepsize = 0.01 / 0.3, absStepsize, steps = 40, randomStart = true }: Partial<
  GradientDescentOptions
> = {}): Attack {
  return gradientDescent("linf_pgd", "linf", { relStepsize, absStepsize, steps, randomStart });
}

/** L2 Projected Gradient Descent: 50 steps of 0.025·ε from a random start. */
export function l2Pgd({ relStepsize = 0.025, absStepsize, steps = 50, randomStart = true }: Partial<
  GradientDescentOptions
> = {}): Attack {
  return gradientDescent("l2_pgd", "l2", { relStepsize, absStepsize, steps, randomStart });
}

/** Options of foolbox's `DDNAttack`. */
export interface DdnOptions {
  /** Starting radius of the ε-ball (input units). */
  initEpsilon: number;
  /** Gradient steps. */
  steps: number;
  /** Relative change of the radius per step: ×(1 − γ) when adversarial, ×(1 + γ) otherwise. */
  gamma: number;
}

/**
 * Decoupled Direction and Norm (Rony et al. 2019; foolbox `DDNAttack`), an L2
 * minimization attack: gradient steps on the cross-entropy with a cosine-
 * annealed step size (1 → 0.01), while the perturbation is rescaled onto a
 * sphere whose radius shrinks by (1 − γ) while adversarial and grows by
 * (1 + γ) otherwise; returns the smallest adversarial seen (the clean input
 * where none was). The default of 100 steps follows the DDN paper
 * (foolbox's default is 10).
 */
export function ddn({ initEpsilon = 1, steps = 100, gamma = 0.05 }: Partial<DdnOptions> = {}): Attack {
  checkPositive("ddn", { initEpsilon, steps, gamma });
  if (!Number.isInteger(steps)) throw new UsageError(`ddn: steps must be an integer, got ${steps}`);
  return {
    name: "ddn",
    distance: "l2",
    kind: "minimization",
    needsGradient: true,
    async perturb(model, batch, _earlyStop, rng) {
      const { x: values, n, shape } = batch;
      const [lo, hi] = model.bounds;
      const x = rowsTensor(values, shape);
      const labels = tf.tensor1d(batch.labels, "int32");
      const worstNorm = tf.tidy(() => rowNorms(tf.maximum(tf.sub(x, lo), tf.sub(hi, x)) as tf.Tensor4D, 2));
      let delta: tf.Tensor4D = tf.zerosLike(x);
      let bestDelta: tf.Tensor4D = tf.zerosLike(x);
      let bestL2: tf.Tensor4D = tf.clone(worstNorm);
      let epsilon: tf.Tensor4D = tf.fill([n, 1, 1, 1], initEpsilon);
      try {
        for (let i = 0; i < steps; i++) {
          const stepsize = 0.01 + (1 - 0.01) * (1 + Math.cos(Math.PI * i / steps)) / 2;
          const seed = rng.int32();
          const next = tf.tidy(() => {
            const { gradient, logits } = lossGradient(model, tf.add(x, delta), (l) => crossEntropy(l, labels));
            // foolbox replaces a vanishing gradient by Gaussian noise so the search still moves.
            const norms = rowNorms(gradient, 2);
            const zero = tf.lessEqual(norms, 1e-12);
            const g = tf.where(
              tf.broadcastTo(zero, gradient.shape),
              tf.randomNormal(gradient.shape, 0, 1, "float32", seed),
              gradient,
            );
            const direction = tf.div(g, rowNorms(g as tf.Tensor4D, 2));
            const adversarial = tf.reshape(tf.notEqual(tf.argMax(logits, 1), labels), [n, 1, 1, 1]);
            const l2 = rowNorms(delta, 2);
            const better = tf.logicalAnd(adversarial, tf.lessEqual(l2, bestL2));
            const newBestL2 = tf.where(better, l2, bestL2);
            const newBestDelta = tf.where(tf.broadcastTo(better, delta.shape), delta, bestDelta);
            const stepped = tf.add(delta, tf.mul(direction, stepsize));
            const radius = tf.minimum(
              tf.mul(epsilon, tf.sub(1 + gamma, tf.mul(2 * gamma, tf.cast(adversarial, "float32")))),
              worstNorm,
            );
            const onSphere = tf.mul(stepped, tf.div(radius, rowNorms(stepped as tf.Tensor4D, 2)));
            const clipped = tf.sub(tf.clipByValue(tf.add(x, onSphere), lo, hi), x);
            return [clipped, newBestDelta, newBestL2, radius] as tf.Tensor4D[];
          });
          tf.dispose([delta, bestDelta, bestL2, epsilon]);
          [delta, bestDelta, bestL2, epsilon] = next;
        }
        const adv = tf.tidy(() => tf.add(x, bestDelta));
        const out = await adv.data() as Float32Array;
        adv.dispose();
        return out;
      } finally {
        tf.dispose([x, labels, worstNorm, delta, bestDelta, bestL2, epsilon]);
      }
    },
  };
}
