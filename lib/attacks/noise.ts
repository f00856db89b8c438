/**
 * Noise attacks as a line search (foolbox's additive-noise and
 * salt-and-pepper baselines, Paper D §5): one random direction per sample,
 * then the smallest scale along it at which the decision flips, found on a
 * coarse grid and refined by bisection. The search itself,
 * {@linkcode smallestAdversarialScale}, is shared with the transfer attack.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { misclassified } from "./attack.ts";
import type { Attack, AttackBatch, AttackModel } from "./types.ts";

/**
 * Writes sample `row`'s input at scale `t` into `out` (`h·w·c` values). Scale 0
 * must give the clean input; larger scales move further from it.
 */
export type ScalePath = (row: number, t: number, out: Float32Array) => void;

/** How {@linkcode smallestAdversarialScale} searches. */
export interface LineSearchOptions {
  /** Evenly spaced scales tried in (0, maxScale], stopping per sample at the first adversarial one. */
  gridSteps?: number;
  /** Halvings of the grid interval that holds the first adversarial scale. */
  bisectionSteps?: number;
}

/** Checks line-search options; throws {@linkcode UsageError} naming the bad one. */
export function checkLineSearchOptions({ gridSteps = 100, bisectionSteps = 10 }: LineSearchOptions): void {
  if (!(Number.isInteger(gridSteps) && gridSteps >= 1)) {
    throw new UsageError(`gridSteps must be an integer ≥ 1, got ${gridSteps}`);
  }
  if (!(Number.isInteger(bisectionSteps) && bisectionSteps >= 0)) {
    throw new UsageError(`bisectionSteps must be an integer ≥ 0, got ${bisectionSteps}`);
  }
}

/** Result of a line search: per sample the scale and the input found there. */
export interface LineSearchResult {
  /** `[n]` the smallest adversarial scale found; 0 for inputs misclassified already, ∞ where none was found. */
  scale: Float64Array;
  /** `[n, h, w, c]` the input at that scale; the clean input where none was found. */
  adversarial: Float32Array;
}

/**
 * Per sample, the smallest scale `t` ∈ [0, maxScale] on an evenly spaced grid
 * of `gridSteps` points at which `path(row, t)` is misclassified, refined by
 * `bisectionSteps` bisections between the last correctly classified grid point
 * and the first adversarial one. The path need not be monotone: the first
 * adversarial grid point counts. Each grid point and each bisection step is
 * one forward pass over the samples still searching.
 *
 * @param maxScale the largest scale, one for all samples or one per sample
 */
export async function smallestAdversarialScale(
  model: AttackModel,
  batch: AttackBatch,
  path: ScalePath,
  maxScale: number | ArrayLike<number>,
  { gridSteps = 100, bisectionSteps = 10 }: LineSearchOptions = {},
): Promise<LineSearchResult> {
  const { n, shape, labels } = batch;
  const d = shape[0] * shape[1] * shape[2];
  const tMax = (i: number) => typeof maxScale === "number" ? maxScale : maxScale[i];
  const scale = new Float64Array(n).fill(Infinity);
  const adversarial = batch.x.slice();
  const lower = new Float64Array(n);
  const evaluate = (rows: number[], t: (i: number) => number) =>
    adversarialAt(model, shape, rows, labels, (i, out) => path(i, t(i), out));

  // A clean error needs no perturbation (distance 0 under the reporting convention).
  let searching = Array.from({ length: n }, (_, i) => i);
  const clean = await evaluate(searching, () => 0);
  searching = searching.filter((i, k) => {
    if (clean[k]) scale[i] = 0;
    return !clean[k];
  });
  const found: number[] = [];
  for (let k = 1; k <= gridSteps && searching.length; k++) {
    const isAdv = await evaluate(searching, (i) => tMax(i) * k / gridSteps);
    searching = searching.filter((i, r) => {
      if (isAdv[r]) {
        scale[i] = tMax(i) * k / gridSteps;
        lower[i] = tMax(i) * (k - 1) / gridSteps;
        found.push(i);
      }
      return !isAdv[r];
    });
  }
  for (let b = 0; b < bisectionSteps && found.length; b++) {
    const mid = (i: number) => (lower[i] + scale[i]) / 2;
    const isAdv = await evaluate(found, mid);
    found.forEach((i, r) => {
      if (isAdv[r]) scale[i] = mid(i);
      else lower[i] = mid(i);
    });
  }
  const row = new Float32Array(d);
  for (let i = 0; i < n; i++) {
    if (scale[i] > 0 && scale[i] < Infinity) {
      path(i, scale[i], row);
      adversarial.set(row, i * d);
    }
  }
  return { scale, adversarial };
}

/**
 * Whether each of `rows` is misclassified when its input is what `write`
 * puts into it (`position` is the row's place in `rows`): one forward pass
 * over those rows.
 *
 * @returns `[rows.length]` 1 where argmax ≠ label
 */
export async function adversarialAt(
  model: AttackModel,
  shape: [number, number, number],
  rows: readonly number[],
  labels: Int32Array,
  write: (row: number, out: Float32Array, position: number) => void,
): Promise<Uint8Array> {
  const d = shape[0] * shape[1] * shape[2];
  const inputs = new Float32Array(rows.length * d);
  rows.forEach((i, k) => write(i, inputs.subarray(k * d, (k + 1) * d), k));
  return await misclassified(model, inputs, rows.length, shape, Int32Array.from(rows, (i) => labels[i]));
}

/** The noise a {@linkcode noiseLineSearch} draws per sample. */
export type NoiseKind = "gaussian" | "uniform" | "salt_and_pepper";

/** Options of {@linkcode noiseLineSearch}. */
export interface NoiseLineSearchOptions extends LineSearchOptions {
  /** gaussian: N(0, I) direction; uniform: U(−1, 1) direction; salt_and_pepper: pixels set to the bounds. */
  noise?: NoiseKind;
  /** The norm the additive direction is normalised in, and the attack's distance. */
  distance?: "l2" | "linf";
  /**
   * Largest additive scale (the direction has unit norm, so this is the unclipped
   * distance): default the box diameter, (max − min)·√(h·w·c) for l2 and max − min for linf.
   * Salt-and-pepper searches the noise probability in [0, 1] instead.
   */
  maxScale?: number | null;
  /** Salt-and-pepper: one draw per pixel shared by its channels (foolbox `across_channels`). */
  acrossChannels?: boolean;
}

/**
 * A minimization attack adding random noise of growing size until the decision
 * flips. Additive noise: one direction δ per sample with ‖δ‖ = 1 in `distance`,
 * adversarial clip(x + tδ) at the smallest t found by
 * {@linkcode smallestAdversarialScale}. Salt-and-pepper: one uniform draw u per
 * pixel; at probability p the pixels with u < p/2 go to the lower bound and
 * those with u ≥ 1 − p/2 to the upper one, so larger p changes a superset of pixels.
 * foolbox 1 (used by the paper) increases a per-pixel noise scale linearly over
 * 1,000 steps; the grid plus bisection reaches a finer scale in fewer passes.
 * Decision-based: predictions only. ε is not used (it searches the smallest).
 */
export function noiseLineSearch(options: NoiseLineSearchOptions = {}): Attack {
  const { noise = "gaussian", distance = "l2", maxScale = null, acrossChannels = true } = options;
  if (!["gaussian", "uniform", "salt_and_pepper"].includes(noise)) {
    throw new UsageError(`unknown noise "${noise}"; valid: gaussian, uniform, salt_and_pepper`);
  }
  if (distance !== "l2" && distance !== "linf") {
    throw new UsageError(`noise distance must be l2 or linf, got "${distance}"`);
  }
  if (maxScale !== null && !(maxScale > 0)) throw new UsageError(`maxScale must be > 0, got ${maxScale}`);
  checkLineSearchOptions(options);
  return {
    name: `${noise}_noise_${distance}`,
    distance,
    kind: "minimization",
    needsGradient: false,
    async perturb(model, batch, _epsilon, rng) {
      const [low, high] = model.bounds;
      const { n, shape, x } = batch;
      const d = shape[0] * shape[1] * shape[2];
      if (noise === "salt_and_pepper") {
        const u = saltAndPepperDraws(rng, n, shape, acrossChannels);
        const path: ScalePath = (i, p, out) => {
          for (let j = 0; j < d; j++) {
            const v = u[i * d + j];
            out[j] = v < p / 2 ? low : v >= 1 - p / 2 ? high : x[i * d + j];
          }
        };
        return (await smallestAdversarialScale(model, batch, path, 1, options)).adversarial;
      }
      const direction = new Float32Array(n * d);
      for (let j = 0; j < n * d; j++) direction[j] = noise === "gaussian" ? rng.normal() : 2 * rng.uniform() - 1;
      normalizeRows(direction, n, distance);
      const path = clippedRay(x, direction, d, low, high);
      const diameter = distance === "l2" ? (high - low) * Math.sqrt(d) : high - low;
      return (await smallestAdversarialScale(model, batch, path, maxScale ?? diameter, options)).adversarial;
    },
  };
}

/** The path t ↦ clip(x_i + t·δ_i) into [low, high]. */
export function clippedRay(x: Float32Array, direction: Float32Array, d: number, low: number, high: number): ScalePath {
  return (i, t, out) => {
    for (let j = 0; j < d; j++) out[j] = Math.min(high, Math.max(low, x[i * d + j] + t * direction[i * d + j]));
  };
}

/**
 * Scales each of the `n` rows of `v` in place to norm 1 in `distance`; an
 * all-zero row stays zero.
 */
export function normalizeRows(v: Float32Array, n: number, distance: "l2" | "linf"): void {
  const d = v.length / n;
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let j = i * d; j < (i + 1) * d; j++) {
      norm = distance === "l2" ? norm + v[j] * v[j] : Math.max(norm, Math.abs(v[j]));
    }
    if (distance === "l2") norm = Math.sqrt(norm);
    if (norm > 0) { for (let j = i * d; j < (i + 1) * d; j++) v[j] /= norm; }
  }
}

/**
 * One U(0, 1) draw per entry of `[n, h, w, c]`, shared by the channels of a
 * pixel when `acrossChannels` (salt-and-pepper noise flips whole pixels).
 */
export function saltAndPepperDraws(
  rng: Rng,
  n: number,
  shape: [number, number, number],
  acrossChannels: boolean,
): Float32Array {
  const c = shape[2];
  const u = new Float32Array(n * shape[0] * shape[1] * c);
  for (let p = 0; p < u.length; p += c) {
    const shared = rng.uniform();
    for (let k = 0; k < c; k++) u[p + k] = acrossChannels ? shared : k === 0 ? shared : rng.uniform();
  }
  return u;
}
