/**
 * The concentric-spheres toy of Jacobsen2019 (after Gilmer et
 * al. 2018b): two classes on spheres of radius R₁ (inner, label 0) and R₂
 * (outer, label 1) in ℝ^d, the mis-aligned classifier of Eq. 5 that ignores
 * the last coordinate, the max-margin oracle, the analytic invariance attack
 * of Example 6 and the closed-form clean error of Eq. 5 on outer points.
 *
 * Points are row-major `[n, dim]` Float32Arrays; classifiers return labels
 * 0 (inner) / 1 (outer), so they compare directly with the sampled `y`.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { betaSurvival } from "../core/special_functions.ts";

/** The two radii; the paper's setting is R₁ = 1, R₂ = 10. */
export interface SphereRadii {
  /** Inner radius R₁ (default 1), 0 < R₁ < R₂. */
  r1?: number;
  /** Outer radius R₂ (default 10). */
  r2?: number;
}

/** A labelled sample of the two spheres. */
export interface Spheres {
  /** Row-major `[n, dim]` points. */
  x: Float32Array;
  /** `[n]` labels: 0 on the inner sphere, 1 on the outer one. */
  y: Int32Array;
}

/** Checks the dimension and radii (shared by every function here); returns the radii with defaults filled in. */
function checkSetting(dim: number, { r1 = 1, r2 = 10 }: SphereRadii): { r1: number; r2: number } {
  if (!(Number.isSafeInteger(dim) && dim >= 2)) {
    throw new UsageError(`spheres: dim = ${dim}; allowed: an integer ≥ 2 (the attack moves coordinate d alone)`);
  }
  if (!(Number.isFinite(r1) && r1 > 0)) throw new UsageError(`spheres: r1 = ${r1}; allowed: a finite number > 0`);
  if (!(Number.isFinite(r2) && r2 > r1)) {
    throw new UsageError(`spheres: r1 = ${r1}, r2 = ${r2}; allowed: 0 < r1 < r2 (finite)`);
  }
  return { r1, r2 };
}

/** Checks that `x` holds whole rows of `dim` values; returns the row count. */
function rowsOf(x: Float32Array, dim: number): number {
  if (x.length % dim !== 0) {
    throw new UsageError(`spheres: ${x.length} values are not whole rows of dim = ${dim}`);
  }
  return x.length / dim;
}

/** The decision threshold (R₁ + R₂)/2 shared by Eq. 5 and the max-margin classifier (5.5 for 1, 10). */
export function sphereThreshold(options: SphereRadii = {}): number {
  const { r1 = 1, r2 = 10 } = options;
  return (r1 + r2) / 2;
}

/**
 * `n` points, exactly n/2 on each sphere in a seeded random order:
 * x = R·g/‖g‖ with g ~ N(0, I_d), uniform on the sphere of radius R. The
 * order is shuffled so that any prefix (a minibatch) mixes both classes.
 * `n` must be even and positive.
 */
export function sampleSpheres(n: number, dim: number, rng: Rng, options: SphereRadii = {}): Spheres {
  const { r1, r2 } = checkSetting(dim, options);
  if (!(Number.isSafeInteger(n) && n >= 2 && n % 2 === 0)) {
    throw new UsageError(`spheres: n = ${n}; allowed: an even integer ≥ 2 (exactly n/2 per class)`);
  }
  const y = new Int32Array(n);
  // Shuffled labels: positions of the first n/2 entries of a permutation are outer.
  const order = rng.permutation(n);
  for (let i = n / 2; i < n; i++) y[order[i]] = 1;
  const x = new Float32Array(n * dim);
  const g = new Float64Array(dim);
  for (let i = 0; i < n; i++) {
    let norm2 = 0;
    do {
      norm2 = 0;
      for (let k = 0; k < dim; k++) {
        g[k] = rng.normal();
        norm2 += g[k] * g[k];
      }
    } while (norm2 === 0);
    const scale = (y[i] === 1 ? r2 : r1) / Math.sqrt(norm2);
    for (let k = 0; k < dim; k++) x[i * dim + k] = g[k] * scale;
  }
  return { x, y };
}

/** ‖x₁..ₘ‖ of row i (m = dim or dim − 1), accumulated in float64. */
function rowNorm(x: Float32Array, dim: number, i: number, m: number): number {
  let s = 0;
  for (let k = 0; k < m; k++) s += x[i * dim + k] * x[i * dim + k];
  return Math.sqrt(s);
}

/**
 * Eq. 5, the mis-aligned classifier D(x) = sign(‖x₁..d−1‖ − (R₁+R₂)/2): it
 * reads the norm of the first d − 1 coordinates only, so it is invariant to
 * the last one. Returns 1 (outer) where the norm exceeds the threshold, else
 * 0 (inner). No parameters: it is perfect on inner points and errs on outer
 * points whose last coordinate carries most of the norm
 * ({@linkcode outerErrorClosedForm}).
 */
export function misalignedClassifier(x: Float32Array, dim: number, options: SphereRadii = {}): Int32Array {
  checkSetting(dim, options);
  const threshold = sphereThreshold(options);
  const n = rowsOf(x, dim);
  return Int32Array.from({ length: n }, (_, i) => rowNorm(x, dim, i, dim - 1) > threshold ? 1 : 0);
}

/**
 * The max-margin classifier sign(‖x‖ − (R₁+R₂)/2) of Example 5, used as the
 * oracle: it is invariant exactly to the nuisance (norm-preserving) changes.
 * Returns 1 (outer) where ‖x‖ exceeds the threshold, else 0.
 */
export function maxMarginClassifier(x: Float32Array, dim: number, options: SphereRadii = {}): Int32Array {
  checkSetting(dim, options);
  const threshold = sphereThreshold(options);
  const n = rowsOf(x, dim);
  return Int32Array.from({ length: n }, (_, i) => rowNorm(x, dim, i, dim) > threshold ? 1 : 0);
}

/**
 * Example 6's analytic invariance attack: every inner point (y = 0) gets
 * x_d ← sign(x_d)·√(R₂² − ‖x₁..d−1‖²), which puts it on the outer sphere
 * (‖x*‖ = R₂, so the oracle says "outer") while Eq. 5's D, blind to x_d,
 * still says "inner". Outer points are copied unchanged. Returns a new array.
 *
 * sign(0) is taken as +1. A row labelled inner whose ‖x₁..d−1‖ exceeds R₂
 * (impossible for points on the inner sphere, where it is ≤ R₁ < R₂) cannot
 * reach the outer sphere by changing x_d; it gets x_d ← 0, the x_d that
 * brings its norm closest to R₂. Its norm then exceeds R₂ > (R₁+R₂)/2, so the
 * oracle still says "outer" and D is still unchanged.
 */
export function analyticShift(x: Float32Array, y: Int32Array, dim: number, options: SphereRadii = {}): Float32Array {
  const { r2 } = checkSetting(dim, options);
  const n = rowsOf(x, dim);
  if (y.length !== n) throw new UsageError(`analyticShift: ${n} points but ${y.length} labels`);
  const out = Float32Array.from(x);
  for (let i = 0; i < n; i++) {
    if (y[i] !== 0) continue;
    const head = rowNorm(x, dim, i, dim - 1);
    const last = i * dim + dim - 1;
    out[last] = head < r2 ? (x[last] < 0 ? -1 : 1) * Math.sqrt(r2 * r2 - head * head) : 0;
  }
  return out;
}

/**
 * Eq. 5's clean error on outer-sphere points in closed form (ours): D errs
 * when ‖x₁..d−1‖ ≤ (R₁+R₂)/2, i.e. when x_d²/R₂² > 1 − ((R₁+R₂)/(2R₂))²,
 * and x_d²/R² ~ Beta(½, (d−1)/2) for a uniform point on a sphere. Values for
 * R₁ 1, R₂ 10: d 2 0.3707, 3 0.1648, 5 0.0385, 10 0.0014, 100 ≈ 1.9e-27.
 * Inner points are never misclassified, so the error over both classes is half this.
 */
export function outerErrorClosedForm(dim: number, r1 = 1, r2 = 10): number {
  checkSetting(dim, { r1, r2 });
  const ratio = (r1 + r2) / (2 * r2);
  return betaSurvival(1 - ratio * ratio, 0.5, (dim - 1) / 2);
}
