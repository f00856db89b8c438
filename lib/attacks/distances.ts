/**
 * Per-sample distances between clean inputs and their perturbations, and
 * clipping a perturbation back into an ε-ball, after foolbox 3
 * (`distances.py`): norms of the flattened difference, L0 counting changed
 * entries.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";

/** The norms distances are measured in; attacks use l0, l2 and linf. */
export type DistanceName = "l0" | "l1" | "l2" | "linf";

/** A per-sample distance: `x`, `adv` row-major `[n, ...]` → `[n]`. */
export type DistanceFn = (x: Float32Array, adv: Float32Array, n: number) => Float64Array;

function checkSizes(x: Float32Array, adv: Float32Array, n: number): number {
  if (x.length !== adv.length) throw new RangeError(`inputs have ${x.length} values, perturbed ${adv.length}`);
  if (n <= 0 || x.length % n !== 0) throw new RangeError(`${x.length} values do not split into ${n} samples`);
  return x.length / n;
}

/** Accumulates `f(adv − x)` over each sample's entries (in float64), then applies `finish`. */
function reduceRows(
  x: Float32Array,
  adv: Float32Array,
  n: number,
  step: (acc: number, diff: number) => number,
  finish: (acc: number) => number = (a) => a,
): Float64Array {
  const size = checkSizes(x, adv, n);
  const out = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let acc = 0;
    for (let i = r * size; i < (r + 1) * size; i++) acc = step(acc, adv[i] - x[i]);
    out[r] = finish(acc);
  }
  return out;
}

/** Number of entries that differ, per sample (`[n, ...]` → `[n]`). */
export function l0(x: Float32Array, adv: Float32Array, n: number): Float64Array {
  return reduceRows(x, adv, n, (a, d) => a + (d !== 0 ? 1 : 0));
}

/** Sum of absolute differences, per sample (`[n, ...]` → `[n]`). */
export function l1(x: Float32Array, adv: Float32Array, n: number): Float64Array {
  return reduceRows(x, adv, n, (a, d) => a + Math.abs(d));
}

/** Euclidean norm of the difference, per sample (`[n, ...]` → `[n]`). */
export function l2(x: Float32Array, adv: Float32Array, n: number): Float64Array {
  return reduceRows(x, adv, n, (a, d) => a + d * d, Math.sqrt);
}

/** Largest absolute difference, per sample (`[n, ...]` → `[n]`). */
export function linf(x: Float32Array, adv: Float32Array, n: number): Float64Array {
  return reduceRows(x, adv, n, (a, d) => Math.max(a, Math.abs(d)));
}

const DISTANCES: Record<DistanceName, DistanceFn> = { l0, l1, l2, linf };

/** The distance function of a norm's name. */
export function distanceOf(name: DistanceName): DistanceFn {
  const fn = DISTANCES[name];
  if (!fn) throw new UsageError(`unknown distance "${name}"; valid: ${Object.keys(DISTANCES).join(", ")}`);
  return fn;
}

/**
 * `x + p'` where `p = adv − x` is shrunk into the ε-ball of `distance`
 * (foolbox `clip_perturbation`): linf clamps each entry of p to [−ε, ε]; l1 and
 * l2 rescale p by min(1, ε/‖p‖), so perturbations are shrunk, never grown.
 * `epsilon` null or +∞ leaves `adv` as it is. L0 cannot be clipped (which
 * entries to reset is an attack's choice): a finite ε throws.
 *
 * @param x clean inputs `[n, ...]`
 * @param adv perturbed inputs `[n, ...]`
 * @returns a new array `[n, ...]`
 * @throws {UsageError} for l0 with a finite ε, or ε < 0
 */
export function clipPerturbation(
  distance: DistanceName,
  x: Float32Array,
  adv: Float32Array,
  n: number,
  epsilon: number | null,
): Float32Array {
  const size = checkSizes(x, adv, n);
  if (epsilon === null || epsilon === Infinity) return adv.slice();
  if (!(epsilon >= 0)) throw new UsageError(`ε must be ≥ 0 or null (no clipping), got ${epsilon}`);
  if (distance === "l0") {
    throw new UsageError("reducing L0 norms is not supported: pass ε null for L0 attacks");
  }
  const out = new Float32Array(x.length);
  if (distance === "linf") {
    for (let i = 0; i < x.length; i++) out[i] = x[i] + Math.min(epsilon, Math.max(-epsilon, adv[i] - x[i]));
    return out;
  }
  const norms = distanceOf(distance)(x, adv, n);
  for (let r = 0; r < n; r++) {
    // foolbox floors the norm at 1e-12 so a zero perturbation stays zero.
    const factor = Math.min(1, epsilon / Math.max(norms[r], 1e-12));
    // Inside the ball: the exact input, not x + (adv − x) rounded in float32.
    if (factor === 1) {
      out.set(adv.subarray(r * size, (r + 1) * size), r * size);
      continue;
    }
    for (let i = r * size; i < (r + 1) * size; i++) out[i] = x[i] + factor * (adv[i] - x[i]);
  }
  return out;
}
