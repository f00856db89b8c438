/**
 * Noise attacks as a line search (foolbox's additive-noise and
 * salt-and-pepper baselines, Schott2019 §5): one random direction per sample,
 * then the smallest scale along it at which the decision flips, found on a
 * coarse grid and refined by bisection. The search itself,
 * {@linkcode smallestAdversarialScale}, is shared with the transfer attack.
 * Also Rusak2020's noise robustness ε*, the L2 size at which a random direction
 * flips the decision ({@linkcode zeroAccuracyPerturbation}).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { misclassified } from "./attack.ts";
import { type Attack, type AttackBatch, type AttackModel, decisionAttack } from "./types.ts";

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

/** How {@linkcode directionLineSearch} searches along unit directions. */
export interface DirectionSearchOptions extends LineSearchOptions {
  /** The norm each direction is normalised to unit length in, and the attack's distance. */
  distance?: "l2" | "linf";
  /**
   * Largest scale (the direction has unit norm, so this is the unclipped distance): default
   * the box diameter, (max − min)·√(h·w·c) for l2 and max − min for linf.
   */
  maxScale?: number | null;
}

/** Checks `distance`, `maxScale` and the line-search options; the message names the attack `kind`. */
export function checkDirectionSearchOptions(kind: string, options: DirectionSearchOptions): void {
  const { distance = "l2", maxScale = null } = options;
  if (distance !== "l2" && distance !== "linf") {
    throw new UsageError(`${kind} distance must be l2 or linf, got "${distance}"`);
  }
  if (maxScale !== null && !(maxScale > 0)) throw new UsageError(`maxScale must be > 0, got ${maxScale}`);
  checkLineSearchOptions(options);
}

/**
 * Per sample the smallest adversarial clip(x + t·δ) along its row δ of `direction`
 * `[n, h·w·c]`, which is first scaled in place to unit norm in `distance` (a zero row stays
 * zero and fails); t is searched by {@linkcode smallestAdversarialScale} up to `maxScale` or
 * the box diameter.
 */
export function directionLineSearch(
  model: AttackModel,
  batch: AttackBatch,
  direction: Float32Array,
  options: DirectionSearchOptions,
): Promise<LineSearchResult> {
  const { distance = "l2", maxScale = null } = options;
  const [low, high] = model.bounds;
  const { n, shape, x } = batch;
  const d = shape[0] * shape[1] * shape[2];
  normalizeRows(direction, n, distance);
  const diameter = distance === "l2" ? (high - low) * Math.sqrt(d) : high - low;
  return smallestAdversarialScale(model, batch, clippedRay(x, direction, d, low, high), maxScale ?? diameter, options);
}

/** Options of {@linkcode noiseLineSearch}; salt-and-pepper searches the noise probability in [0, 1], not `maxScale`. */
export interface NoiseLineSearchOptions extends DirectionSearchOptions {
  /** gaussian: N(0, I) direction; uniform: U(−1, 1) direction; salt_and_pepper: pixels set to the bounds. */
  noise?: NoiseKind;
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
  const { noise = "gaussian", distance = "l2", acrossChannels = true } = options;
  if (!["gaussian", "uniform", "salt_and_pepper"].includes(noise)) {
    throw new UsageError(`unknown noise "${noise}"; valid: gaussian, uniform, salt_and_pepper`);
  }
  checkDirectionSearchOptions("noise", options);
  return decisionAttack(`${noise}_noise_${distance}`, distance, async (model, batch, _epsilon, rng) => {
    const { n, shape, x, d, low, high } = batch;
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
    const direction = noise === "gaussian" ? gaussianDirections(n, d, rng) : uniformDirections(n, d, rng);
    return (await directionLineSearch(model, batch, direction, options)).adversarial;
  });
}

/** `[n, d]` row-major draws of N(0, 1), one per entry: random noise directions. */
export function gaussianDirections(n: number, d: number, rng: Rng): Float32Array {
  return rng.normalArray(n * d);
}

/** `[n, d]` row-major draws of U(−1, 1), one per entry: random noise directions. */
export function uniformDirections(n: number, d: number, rng: Rng): Float32Array {
  return Float32Array.from({ length: n * d }, () => 2 * rng.uniform() - 1);
}

/** How {@linkcode zeroAccuracyPerturbation} searches. */
export interface ZeroAccuracyOptions {
  /** Growth factor of the coarse search (default 1.8). */
  base?: number;
  /** Bisection steps after it (default 40). */
  bisections?: number;
  /**
   * D of the coarse search's round(ln D / ln base) steps (default h·w·c). The
   * reference hardcodes 784 (MNIST's h·w·c, equal to the default there): 11
   * steps up to a scale of 1.8¹⁰ ≈ 357.
   */
  dimension?: number;
}

/**
 * ε* of Rusak2020 (Eq. 4; game-of-noise `zero_accuracy_perturbation`): per
 * sample, the L2 size ‖clip(x + η·d̂) − x‖₂ at which the decision flips along
 * the unit direction d̂ = d/‖d‖₂. Coarse search: η starts at 0 and becomes
 * base^b (b = 0, 1, …, round(ln D / ln base) − 1) while the sample is still
 * classified correctly; then `bisections` steps from Δ = η/2: η −= Δ where
 * misclassified, += Δ where not, Δ /= 2. The result is the size at the last
 * misclassified point visited: 0 for a clean error, ∞ where no point was
 * misclassified (the reference writes D there; ∞ follows the issue and the
 * median convention of `summarizeDistances` in lib/metrics/adversarial.ts). Sizes are computed in
 * float64; the model sees float32 inputs. ε* is the median of the returned
 * values (`summarizeDistances(values, ε).median`).
 *
 * @param directions `[n, h·w·c]` row-major, no all-zero row (e.g. {@linkcode gaussianDirections}
 *   or a noise generator's output)
 * @returns `[n]` the L2 size per sample
 */
export async function zeroAccuracyPerturbation(
  model: AttackModel,
  batch: AttackBatch,
  directions: Float32Array,
  options: ZeroAccuracyOptions = {},
): Promise<Float64Array> {
  const { n, shape, x, labels } = batch;
  const d = shape[0] * shape[1] * shape[2];
  const { base = 1.8, bisections = 40, dimension = d } = options;
  if (!(Number.isFinite(base) && base > 1)) throw new UsageError(`base must be finite and > 1, got ${base}`);
  if (!(Number.isInteger(bisections) && bisections >= 0)) {
    throw new UsageError(`bisections must be an integer ≥ 0, got ${bisections}`);
  }
  if (!(Number.isFinite(dimension) && dimension >= 1)) throw new UsageError(`dimension must be ≥ 1, got ${dimension}`);
  if (directions.length !== n * d) {
    throw new UsageError(`directions must hold n·h·w·c = ${n * d} values, got ${directions.length}`);
  }
  const unit = Float64Array.from(directions);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let j = i * d; j < (i + 1) * d; j++) norm += unit[j] * unit[j];
    if (!(norm > 0 && Number.isFinite(norm))) throw new UsageError(`direction ${i} is zero or not finite`);
    norm = Math.sqrt(norm);
    for (let j = i * d; j < (i + 1) * d; j++) unit[j] /= norm;
  }
  const [low, high] = model.bounds;
  const eta = new Float64Array(n);
  const clipped = (i: number, j: number, t: number) =>
    Math.min(high, Math.max(low, x[i * d + j] + t * unit[i * d + j]));
  const write = (i: number, out: Float32Array) => {
    for (let j = 0; j < d; j++) out[j] = clipped(i, j, eta[i]);
  };
  // A sample misclassified at some η stays misclassified there, so only still-correct samples need evaluating.
  let searching = Array.from({ length: n }, (_, i) => i);
  const coarseSteps = Math.round(Math.log(dimension) / Math.log(base));
  for (let b = 0; b < coarseSteps && searching.length; b++) {
    const wrong = await adversarialAt(model, shape, searching, labels, write);
    searching = searching.filter((i, k) => {
      if (!wrong[k]) eta[i] = base ** b;
      return !wrong[k];
    });
  }
  const size = new Float64Array(n).fill(Infinity);
  const step = eta.map((e) => e / 2);
  const all = Array.from({ length: n }, (_, i) => i);
  for (let it = 0; it < bisections; it++) {
    const wrong = await adversarialAt(model, shape, all, labels, write);
    for (let i = 0; i < n; i++) {
      if (wrong[i]) {
        let s = 0;
        for (let j = 0; j < d; j++) s += (clipped(i, j, eta[i]) - x[i * d + j]) ** 2;
        size[i] = Math.sqrt(s);
        eta[i] -= step[i];
      } else eta[i] += step[i];
      step[i] /= 2;
    }
  }
  return size;
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
