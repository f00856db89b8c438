/**
 * Running an attack the foolbox 3 way (`attacks/base.py`): fixed-ε attacks
 * run once per ε, minimization attacks once; every output is then clipped to
 * each ε and judged on the model. Also the batched predictions and the input
 * gradients every attack shares, the wrappers `repeat` (foolbox `Repeated`)
 * and `minimize` (ε bisection of a fixed-ε attack), and the input checks.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { argmaxRows } from "../metrics/classification.ts";
import { mapInChunks } from "../models/vae.ts";
import { clipPerturbation, distanceOf } from "./distances.ts";
import type { Attack, AttackBatch, AttackModel, AttackOutput, Observations } from "./types.ts";

/** Rows per forward pass when predicting many inputs. */
export const PREDICT_CHUNK = 256;

/** The attacks that need no gradient, named where a gradient attack meets a model without one. */
export const DECISION_BASED_ATTACKS = ["boundary", "salt_and_pepper", "pointwise", "noise"] as const;

/** Rows `[start, start + rows)` of row-major `[n, ...shape]` values as a `[rows, ...shape]` tensor. */
export function rowsTensor(
  x: Float32Array,
  shape: [number, number, number],
  start = 0,
  rows = x.length / (shape[0] * shape[1] * shape[2]),
): tf.Tensor4D {
  const size = shape[0] * shape[1] * shape[2];
  return tf.tensor4d(x.subarray(start * size, (start + rows) * size), [rows, ...shape]);
}

/**
 * Class scores of `n` inputs `[n, ...shape]`, `chunk` rows per forward pass,
 * with no tensor left behind.
 *
 * @returns logits row-major `[n, classes]` and the number of classes
 */
export async function logitsOf(
  model: AttackModel,
  x: Float32Array,
  n: number,
  shape: [number, number, number],
  chunk = PREDICT_CHUNK,
): Promise<{ logits: Float32Array; classes: number }> {
  if (n === 0) return { logits: new Float32Array(0), classes: 0 };
  const [logits] = await mapInChunks(n, chunk, (start, rows) => [model.logits(rowsTensor(x, shape, start, rows))]);
  return { logits, classes: logits.length / n };
}

/** Predicted classes `[n]` of inputs `[n, ...shape]`, in chunks of `chunk` rows. */
export async function predictions(
  model: AttackModel,
  x: Float32Array,
  n: number,
  shape: [number, number, number],
  chunk = PREDICT_CHUNK,
): Promise<Int32Array> {
  const { logits, classes } = await logitsOf(model, x, n, shape, chunk);
  return argmaxRows(logits, n, classes);
}

/** 1 where the prediction of `x` `[n, ...shape]` differs from the label (foolbox `Misclassification`). */
export async function misclassified(
  model: AttackModel,
  x: Float32Array,
  n: number,
  shape: [number, number, number],
  labels: Int32Array,
): Promise<Uint8Array> {
  const predicted = await predictions(model, x, n, shape);
  return Uint8Array.from(predicted, (p, i) => (p !== labels[i] ? 1 : 0));
}

/**
 * Cross-entropy of softmax(logits) against integer labels, per sample
 * (foolbox `ep.crossentropy`): `[n, classes]`, `[n]` int32 → `[n]` nats.
 */
export function crossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Tensor1D {
  return tf.tidy(() => {
    const onehot = tf.oneHot(labels, logits.shape[1]);
    return tf.neg(tf.sum(tf.mul(tf.logSoftmax(logits), onehot), 1)) as tf.Tensor1D;
  });
}

/**
 * The gradient of Σ_samples loss(model(x)) with respect to `x`, with the
 * forward pass's logits and per-sample losses (one forward, one backward).
 * Every returned tensor belongs to the caller's scope (call it inside
 * `tf.tidy`, or dispose them).
 *
 * @param x inputs `[n, h, w, c]`
 * @param loss per-sample loss of the logits `[n, classes]` → `[n]`, e.g. `(l) => crossEntropy(l, labels)`
 * @returns gradient `[n, h, w, c]`, logits `[n, classes]`, loss `[n]`
 */
export function lossGradient(
  model: AttackModel,
  x: tf.Tensor4D,
  loss: (logits: tf.Tensor2D) => tf.Tensor1D,
): { gradient: tf.Tensor4D; logits: tf.Tensor2D; loss: tf.Tensor1D } {
  let kept: [tf.Tensor2D, tf.Tensor1D] | null = null;
  const gradient = tf.grad((input: tf.Tensor) => {
    const logits = model.logits(input as tf.Tensor4D);
    const perSample = loss(logits);
    // tf.grad disposes its forward tensors; keep these two and hand over clones owned by the caller's scope.
    kept = [tf.keep(logits), tf.keep(perSample)];
    return tf.sum(perSample);
  })(x) as tf.Tensor4D;
  const [logitsKept, lossKept] = kept!;
  const logits = tf.clone(logitsKept), perSample = tf.clone(lossKept);
  tf.dispose([logitsKept, lossKept]);
  return { gradient, logits, loss: perSample };
}

/** Checks an attack and its inputs; throws {@linkcode UsageError} naming what is wrong and what is allowed. */
export function validateAttack(
  a: Attack,
  model: AttackModel,
  inputs: Observations,
  labels: Int32Array,
  epsilons: (number | null)[],
): void {
  const [lo, hi] = model.bounds;
  const size = inputs.shape[0] * inputs.shape[1] * inputs.shape[2];
  if (inputs.values.length !== inputs.n * size) {
    throw new UsageError(
      `inputs hold ${inputs.values.length} values, but n = ${inputs.n} of shape [${inputs.shape}] needs ${
        inputs.n * size
      }`,
    );
  }
  let min = Infinity, max = -Infinity;
  for (const v of inputs.values) {
    if (v < min) min = v;
    if (v > max) max = v;
    if (Number.isNaN(v)) throw new UsageError(`inputs contain NaN; they must lie in the model's bounds [${lo}, ${hi}]`);
  }
  if (inputs.n > 0 && (min < lo || max > hi)) {
    throw new UsageError(`inputs span [${min}, ${max}], outside the model's bounds [${lo}, ${hi}]`);
  }
  if (labels.length !== inputs.n) {
    throw new UsageError(`${labels.length} labels for ${inputs.n} inputs: give one label per input`);
  }
  const badLabel = labels.findIndex((l) => l < 0);
  if (badLabel >= 0) {
    throw new UsageError(`label ${labels[badLabel]} at index ${badLabel}: labels are class indices ≥ 0`);
  }
  if (epsilons.length === 0) throw new UsageError("no ε given: pass at least one ε (a number ≥ 0, or null)");
  for (const e of epsilons) {
    if (e !== null && !(e >= 0)) throw new UsageError(`ε = ${e} is invalid: each ε must be a number ≥ 0, or null`);
  }
  if (a.distance === "l0" && epsilons.some((e) => e !== null && e !== Infinity)) {
    throw new UsageError(
      `${a.name} minimizes L0, and reducing L0 norms is not supported: pass ε null and threshold the L0 distances`,
    );
  }
  if (a.kind === "fixed" && epsilons.some((e) => e === null || e === Infinity)) {
    throw new UsageError(
      `${a.name} is a fixed-ε attack: every ε must be a finite number ≥ 0 (null is for minimization attacks)`,
    );
  }
  if (a.needsGradient && !model.gradient) {
    throw new UsageError(
      `${a.name} needs the model's gradient, which this model does not provide; decision-based attacks: ${
        DECISION_BASED_ATTACKS.join(", ")
      }`,
    );
  }
}

/**
 * Runs attack `a` on `inputs` `[n, h, w, c]` with true `labels` `[n]` at each
 * ε of `epsilons` (in the attack's norm; null = unbounded), as foolbox 3's
 * `attack(model, inputs, criterion, epsilons=...)`: a fixed-ε attack runs once
 * per ε; a minimization attack runs once, told the smallest ε for early
 * stopping (null when any ε is null). Each output is then clipped into the
 * ε-ball with {@linkcode clipPerturbation} and counts as a success when the
 * model misclassifies it. Clean inputs the model already gets wrong are
 * successes at every ε.
 *
 * @returns per ε: the raw and clipped adversarials `[n, h, w, c]` and success `[n]`
 * @throws {UsageError} before any work, for inputs outside the model's bounds,
 *   a label count ≠ n, ε < 0 or NaN, a finite ε for an L0 attack, null for a
 *   fixed-ε attack, or a gradient attack on a model without gradients
 */
export async function attack(
  a: Attack,
  model: AttackModel,
  inputs: Observations,
  labels: Int32Array,
  epsilons: (number | null)[],
  rng: Rng,
): Promise<AttackOutput> {
  validateAttack(a, model, inputs, labels, epsilons);
  const { values: x, n, shape } = inputs;
  if (n === 0) {
    return {
      raw: epsilons.map(() => x.slice()),
      clipped: epsilons.map(() => x.slice()),
      success: epsilons.map(() => new Uint8Array(0)),
    };
  }
  const classes = (await logitsOf(model, x.subarray(0, x.length / n), 1, shape)).classes;
  const badLabel = labels.findIndex((l) => l >= classes);
  if (badLabel >= 0) {
    throw new UsageError(`label ${labels[badLabel]} at index ${badLabel}: the model has classes 0..${classes - 1}`);
  }
  const batch: AttackBatch = { x, n, shape, labels };
  const raw: Float32Array[] = [];
  if (a.kind === "fixed") {
    for (const e of epsilons) raw.push(await a.perturb(model, batch, e!, rng));
  } else {
    const earlyStop = epsilons.some((e) => e === null) ? null : Math.min(...(epsilons as number[]));
    const xp = await a.perturb(model, batch, earlyStop, rng);
    for (let k = 0; k < epsilons.length; k++) raw.push(k === 0 ? xp : xp.slice());
  }
  const clipped = epsilons.map((e, k) => clipPerturbation(a.distance, x, raw[k], n, e));
  const success: Uint8Array[] = [];
  for (const c of clipped) success.push(await misclassified(model, c, n, shape, labels));
  return { raw, clipped, success };
}

/**
 * `a` run `times` times (foolbox `Repeated`), keeping per sample the
 * successful run with the smallest perturbation under `a.distance`; samples
 * no run fooled keep the last run's output. A fixed-ε run counts as successful
 * when its output clipped to ε is misclassified, a minimization run when its
 * raw output is. Useful for randomized attacks (random starts, noise).
 */
export function repeat(a: Attack, times: number): Attack {
  if (!(Number.isInteger(times) && times >= 1)) {
    throw new UsageError(`repeat: times must be an integer ≥ 1, got ${times}`);
  }
  const distance = distanceOf(a.distance);
  return {
    name: `${a.name}_x${times}`,
    distance: a.distance,
    kind: a.kind,
    needsGradient: a.needsGradient,
    async perturb(model, batch, epsilon, rng) {
      const { x, n, shape, labels } = batch;
      const size = x.length / n;
      let best: Float32Array | null = null;
      const bestDistance = new Float64Array(n).fill(Infinity);
      for (let t = 0; t < times; t++) {
        const xp = await a.perturb(model, batch, epsilon, rng);
        const judged = a.kind === "fixed" ? clipPerturbation(a.distance, x, xp, n, epsilon) : xp;
        const fooled = await misclassified(model, judged, n, shape, labels);
        const d = distance(x, judged, n);
        if (best === null) best = judged.slice();
        for (let r = 0; r < n; r++) {
          const better = fooled[r] === 1 && d[r] < bestDistance[r];
          // Unfooled rows follow the latest run until a run succeeds.
          if (better || (bestDistance[r] === Infinity && t > 0)) {
            best.set(judged.subarray(r * size, (r + 1) * size), r * size);
          }
          if (better) bestDistance[r] = d[r];
        }
      }
      return best!;
    },
  };
}

/** The largest distance any input in `bounds` can be from `x` (per sample), the bisection's upper end. */
function worstDistance(a: Attack, x: Float32Array, n: number, bounds: [number, number]): Float64Array {
  const [lo, hi] = bounds;
  const far = Float32Array.from(x, (v) => (v - lo > hi - v ? lo : hi));
  return distanceOf(a.distance)(x, far, n);
}

/**
 * A minimization attack from a fixed-ε one: per sample, bisection of ε over
 * [0, largest distance inside the bounds] for `steps` rounds, keeping the
 * adversarial (clipped to its ε) of the smallest successful ε. Samples that
 * share an ε are attacked in one batch. Told an early-stop ε, a sample stops
 * once its successful ε is at most that. Samples the model already gets wrong
 * are returned unchanged; those not fooled even at the largest ε keep that
 * attempt (a failure).
 *
 * @param steps bisection rounds; the ε found is within (upper end)/2^steps of the smallest successful one
 */
export function minimize(a: Attack, steps = 10): Attack {
  if (a.kind !== "fixed") throw new UsageError(`minimize: ${a.name} is already a minimization attack`);
  if (!(Number.isInteger(steps) && steps >= 0)) {
    throw new UsageError(`minimize: steps must be an integer ≥ 0, got ${steps}`);
  }
  return {
    name: `${a.name}_min`,
    distance: a.distance,
    kind: "minimization",
    needsGradient: a.needsGradient,
    async perturb(model, batch, earlyStop, rng) {
      const { x, n, shape, labels } = batch;
      const size = x.length / n;
      const out = x.slice();
      const clean = await misclassified(model, x, n, shape, labels);
      const lower = new Float64Array(n);
      const upper = worstDistance(a, x, n, model.bounds);
      // Per sample: the ε to try next, or NaN once done.
      const trial = Float64Array.from(upper, (u, r) => (clean[r] ? NaN : u));
      for (let round = 0; round <= steps; round++) {
        const groups = new Map<number, number[]>();
        trial.forEach((e, r) => {
          if (!Number.isNaN(e)) groups.set(e, [...(groups.get(e) ?? []), r]);
        });
        if (groups.size === 0) break;
        for (const [epsilon, rows] of groups) {
          const sub = new Float32Array(rows.length * size);
          rows.forEach((r, i) => sub.set(x.subarray(r * size, (r + 1) * size), i * size));
          const subBatch: AttackBatch = {
            x: sub,
            n: rows.length,
            shape,
            labels: Int32Array.from(rows, (r) => labels[r]),
          };
          const xp = clipPerturbation(
            a.distance,
            sub,
            await a.perturb(model, subBatch, epsilon, rng),
            rows.length,
            epsilon,
          );
          const fooled = await misclassified(model, xp, rows.length, shape, subBatch.labels);
          rows.forEach((r, i) => {
            const first = round === 0;
            if (fooled[i]) upper[r] = epsilon;
            else lower[r] = epsilon;
            // The first round (largest ε) writes every row, so an unfooled sample returns its best try.
            if (fooled[i] || first) out.set(xp.subarray(i * size, (i + 1) * size), r * size);
            const done = (first && !fooled[i]) || round === steps || (earlyStop !== null && upper[r] <= earlyStop);
            trial[r] = done ? NaN : (lower[r] + upper[r]) / 2;
          });
        }
      }
      return out;
    },
  };
}
