/**
 * Pair and sequence samplers for learning from transitions (Klindt2021 §4,
 * "Towards Nonlinear Disentanglement in Natural Data with Temporal Sparse
 * Coding", App. D.1, D.2, D.4, G.1 Tables 11–13; Locatello et al. 2020,
 * "Weakly-Supervised Disentanglement Without Compromises"):
 *
 * - {@linkcode uniPairs}: UNI, k ~ U{1, D−1} factors change to a different value.
 * - {@linkcode lapPairs}: LAP / LAP‑NC, per-factor discrete truncated Laplace moves.
 * - {@linkcode adaPairs}: the Ada-GVAE pairs, a fixed (or random) number of factors resampled.
 * - {@linkcode naturalSequences}: "Synthetic Natural Sprites", continuous (x, y, scale)
 *   random walks with the generalized-Laplace increments fitted in Klindt2021 Tables 11–13.
 *
 * @module
 */
import type { Factors } from "./ground_truth.ts";
import type { Rng } from "../core/rng.ts";
import { gammaVariate } from "./random_variates.ts";

/** The factor structure the samplers need; a dataset gives `{ sizes: factorSizes, categorical }`. */
export interface PairSpace {
  /** Number of values of each factor. */
  readonly sizes: readonly number[];
  /** Indices of categorical factors (no order among their values). */
  readonly categorical: readonly number[];
}

/** `n` pairs of factor tuples; `first.values` and `second.values` are `[n, k]`, row r of each forms pair r. */
export interface FactorPairs {
  /** First elements of the pairs. */
  first: Factors;
  /** Second elements of the pairs. */
  second: Factors;
}

function checkCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

function uniformFactors(sizes: readonly number[], n: number, rng: Rng): Int32Array {
  const k = sizes.length;
  const values = new Int32Array(n * k);
  for (let r = 0; r < n; r++) for (let i = 0; i < k; i++) values[r * k + i] = rng.int(sizes[i]);
  return values;
}

/** A uniformly random value of 0..size−1 other than `current` (size ≥ 2). */
function differentValue(size: number, current: number, rng: Rng): number {
  const v = rng.int(size - 1);
  return v >= current ? v + 1 : v;
}

/** `count` distinct elements of `pool`, uniformly (partial Fisher–Yates on a copy). */
function choose(pool: readonly number[], count: number, rng: Rng): number[] {
  const a = pool.slice();
  for (let i = 0; i < count; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, count);
}

/** Pairs whose second element differs from a uniform first element in `count(r)` factors drawn from `pool`. */
function resamplePairs(
  space: PairSpace,
  n: number,
  rng: Rng,
  pool: readonly number[],
  count: () => number,
): FactorPairs {
  const k = space.sizes.length;
  const first = uniformFactors(space.sizes, n, rng);
  const second = first.slice();
  for (let r = 0; r < n; r++) {
    for (const i of choose(pool, count(), rng)) {
      second[r * k + i] = differentValue(space.sizes[i], first[r * k + i], rng);
    }
  }
  return { first: { values: first, n }, second: { values: second, n } };
}

/**
 * UNI pairs (Klindt2021 App. D.1): the first element is uniform; k ~ U{1, …, min(D−1, C)}
 * factors, chosen uniformly among the C factors with more than one value, change, each to a
 * uniformly random different value, so the pair differs in exactly k factors. D counts all
 * factors. Categorical factors may change: App. D.1 draws over all factors as Locatello's
 * setup does, and only LAP, whose moves need an order, keeps them fixed.
 *
 * @returns `n` pairs, each `[n, D]`.
 * @throws RangeError if fewer than two factors exist or none has two values.
 */
export function uniPairs(space: PairSpace, n: number, rng: Rng): FactorPairs {
  checkCount("n", n);
  const pool = changeable(space.sizes);
  const maxK = Math.min(space.sizes.length - 1, pool.length);
  if (maxK < 1) throw new RangeError(`uniPairs needs ≥ 2 factors, one with ≥ 2 values; sizes ${space.sizes}`);
  return resamplePairs(space, n, rng, pool, () => 1 + rng.int(maxK));
}

/** Options of {@linkcode adaPairs}. */
export interface AdaOptions {
  /** Factors that change per pair, or "random" for k ~ U{1, …, D−1} per pair. */
  k: number | "random";
}

/**
 * Ada-GVAE pairs (Locatello et al. 2020): the first element is uniform; k factors (uniform
 * among those with more than one value) are resampled to a uniformly random different value,
 * the rest are shared. Unlike disentanglement_lib's `simple_dynamics`, which changes 1 or k
 * factors with equal odds and may redraw the same value, exactly k factors differ
 * (Klindt2021's results marked "LOC" come from that code).
 *
 * @returns `n` pairs, each `[n, D]`.
 * @throws RangeError if k is not an integer in 1..min(D−1, changeable factors).
 */
export function adaPairs(space: PairSpace, n: number, rng: Rng, options: AdaOptions): FactorPairs {
  checkCount("n", n);
  const pool = changeable(space.sizes);
  const maxK = Math.min(space.sizes.length - 1, pool.length);
  const { k } = options;
  if (k === "random") {
    if (maxK < 1) throw new RangeError(`adaPairs needs ≥ 2 factors, one with ≥ 2 values; sizes ${space.sizes}`);
    return resamplePairs(space, n, rng, pool, () => 1 + rng.int(maxK));
  }
  if (!Number.isInteger(k) || k < 1 || k > maxK) {
    throw new RangeError(`adaPairs: k must be an integer in 1..${maxK} or "random", got ${k}`);
  }
  return resamplePairs(space, n, rng, pool, () => k);
}

/** Options of {@linkcode lapPairs}. */
export interface LapOptions {
  /** Rate λ; the Laplace scale of a factor with n values is ln(n)/λ (Klindt2021 uses λ = 1). */
  rate?: number;
  /** Keep pairs in which nothing changed ("LAP‑NC") instead of forcing one change ("LAP"). */
  keepNoChange?: boolean;
}

/**
 * Unnormalised truncated-Laplace weights `[size, size]`: row s holds
 * exp(−|j − s| / b) for j = 0..size−1, with b = ln(size)/rate.
 */
export function truncatedLaplaceWeights(size: number, rate: number): Float64Array {
  const b = Math.log(size) / rate;
  const w = new Float64Array(size * size);
  for (let s = 0; s < size; s++) for (let j = 0; j < size; j++) w[s * size + j] = Math.exp(-Math.abs(j - s) / b);
  return w;
}

/** An index drawn with probability ∝ `weights[offset + j]`, j = 0..size−1, skipping `exclude`. */
function drawWeighted(weights: Float64Array, offset: number, size: number, rng: Rng, exclude = -1): number {
  let total = 0;
  for (let j = 0; j < size; j++) if (j !== exclude) total += weights[offset + j];
  let u = rng.uniform() * total;
  let last = -1;
  for (let j = 0; j < size; j++) {
    if (j === exclude) continue;
    last = j;
    u -= weights[offset + j];
    if (u < 0) return j;
  }
  return last; // Rounding left u ≥ 0 after the last term.
}

/**
 * LAP pairs (Klindt2021 App. D.2, Eq. 2, and its reference code): the first element is
 * uniform; each non-categorical factor with n values moves independently to j ∈ 0..n−1 with
 * p(j) ∝ exp(−|j − start| / b), b = ln(n)/rate (a discrete Laplace truncated to the grid,
 * i.e. moves outside the range rejected). Categorical factors are kept fixed, as a Laplace
 * move among unordered values has no meaning. With `keepNoChange` false ("LAP"), a pair in
 * which nothing moved gets one uniformly chosen non-categorical factor redrawn from the same
 * truncated Laplace with its current value excluded; with true ("LAP‑NC") it is kept.
 *
 * @returns `n` pairs, each `[n, D]`.
 * @throws RangeError if rate ≤ 0, or if a change must be forced but no non-categorical factor has two values.
 */
export function lapPairs(space: PairSpace, n: number, rng: Rng, options: LapOptions = {}): FactorPairs {
  checkCount("n", n);
  const { rate = 1, keepNoChange = false } = options;
  if (!(rate > 0 && Number.isFinite(rate))) throw new RangeError(`lapPairs: rate must be positive, got ${rate}`);
  const { sizes } = space;
  const k = sizes.length;
  const moving = changeable(sizes).filter((i) => !space.categorical.includes(i));
  if (!keepNoChange && moving.length === 0) {
    throw new RangeError(`lapPairs: no non-categorical factor with ≥ 2 values to change; sizes ${sizes}`);
  }
  const weights = new Map(moving.map((i) => [i, truncatedLaplaceWeights(sizes[i], rate)]));
  const first = uniformFactors(sizes, n, rng);
  const second = first.slice();
  for (let r = 0; r < n; r++) {
    let changed = false;
    for (const i of moving) {
      const start = first[r * k + i];
      const next = drawWeighted(weights.get(i)!, start * sizes[i], sizes[i], rng);
      second[r * k + i] = next;
      if (next !== start) changed = true;
    }
    if (!changed && !keepNoChange) {
      const i = moving[rng.int(moving.length)];
      const start = first[r * k + i];
      second[r * k + i] = drawWeighted(weights.get(i)!, start * sizes[i], sizes[i], rng, start);
    }
  }
  return { first: { values: first, n }, second: { values: second, n } };
}

/** Factors that can take another value (size > 1). */
function changeable(sizes: readonly number[]): number[] {
  return sizes.flatMap((size, i) => (size > 1 ? [i] : []));
}

/**
 * A generalized-Laplace (generalized normal; scipy `gennorm`) variate with
 * density ∝ exp(−(|x − loc| / scale)^alpha): sign · scale · G^(1/alpha) + loc
 * with G ~ Gamma(1/alpha, 1), since |z|^alpha is Gamma(1/alpha)-distributed.
 */
export function genLaplace(rng: Rng, alpha: number, loc: number, scale: number): number {
  const sign = rng.uniform() < 0.5 ? -1 : 1;
  return sign * scale * Math.pow(gammaVariate(rng, 1 / alpha), 1 / alpha) + loc;
}

/** Fitted generalized-Laplace parameters of one increment: shape α, location, scale. */
export interface GenLaplaceParams {
  /** Shape α (1 Laplace, 2 Gaussian; below 1 heavier tails). */
  alpha: number;
  /** Location. */
  loc: number;
  /** Scale. */
  scale: number;
}

/** Increment statistics of one source: Δx, Δy in pixels of a 64-px frame, Δarea in pixel counts. */
export interface TransitionStats {
  /** Δarea, pixel counts. */
  area: GenLaplaceParams;
  /** Δx, pixels of a 64-px frame. */
  x: GenLaplaceParams;
  /** Δy, pixels of a 64-px frame. */
  y: GenLaplaceParams;
}

/**
 * Generalized-Laplace fits to mask transitions of adjacent frames (Klindt2021
 * App. G.1 Tables 11–13). YouTube locations are reported as ≈ 0.
 */
export const NATURAL_TRANSITIONS: Readonly<Record<"youtube" | "kitti", TransitionStats>> = {
  youtube: {
    area: { alpha: 0.444, loc: 0, scale: 5.04 },
    x: { alpha: 0.515, loc: 0, scale: 0.257 },
    y: { alpha: 0.548, loc: 0, scale: 0.308 },
  },
  kitti: {
    area: { alpha: 0.455, loc: 1.00, scale: 1.01 },
    x: { alpha: 0.587, loc: 0.0476, scale: 0.169 },
    y: { alpha: 0.694, loc: 0.0102, scale: 0.232 },
  },
};

/** Frame side in pixels of the natural statistics. */
export const NATURAL_FRAME = 64;
/**
 * Default area range in pixels: KITTI Masks drops masks under 30 px (Klindt2021), and
 * half the frame keeps a sprite from filling it.
 */
export const NATURAL_AREA_RANGE: readonly [number, number] = [30, NATURAL_FRAME * NATURAL_FRAME / 2];

/** Options of {@linkcode naturalSequences}. */
export interface NaturalOptions {
  /** Which fitted increment statistics to use. */
  source: "youtube" | "kitti";
  /** Area range in pixels, [min, max] (default {@linkcode NATURAL_AREA_RANGE}). */
  areaRange?: readonly [number, number];
}

/**
 * Folds `v` into [lo, hi] by reflecting at the borders as often as needed
 * (a heavy-tailed step may cross the whole range): the walk stays inside
 * without piling mass on the borders as clipping would.
 */
export function reflect(v: number, lo: number, hi: number): number {
  const span = hi - lo;
  let t = (v - lo) % (2 * span);
  if (t < 0) t += 2 * span;
  return lo + (t > span ? 2 * span - t : t);
}

/** Largest position kept, so that x/64 stays below 1 even in float32. */
const POSITION_MAX = NATURAL_FRAME - 2 ** -10;

/**
 * "Synthetic Natural Sprites" sequences (Klindt2021 App. D.4 with our
 * independence substitute): each sequence starts at x, y ~ U[0, 64)
 * and area ~ U[areaRange]; each step adds independent generalized-Laplace
 * Δx, Δy, Δarea with the fitted constants of {@linkcode NATURAL_TRANSITIONS}.
 * Positions are reflected into [0, 64) and areas into `areaRange` (see
 * {@linkcode reflect}); the natural dependencies between the increments are
 * lost, which Klindt2021 found does not hurt SlowVAE (Tables 21–22).
 *
 * @returns `[n, length, 3]` of (x/64, y/64, √area/64), Natural Sprites' conversion.
 */
export function naturalSequences(n: number, length: number, rng: Rng, options: NaturalOptions): Float32Array {
  checkCount("n", n);
  if (!Number.isInteger(length) || length < 1) throw new RangeError(`length must be a positive integer, got ${length}`);
  const stats = NATURAL_TRANSITIONS[options.source];
  if (!stats) throw new RangeError(`source must be "youtube" or "kitti", got ${options.source}`);
  const [areaMin, areaMax] = options.areaRange ?? NATURAL_AREA_RANGE;
  if (!(areaMin > 0 && areaMax > areaMin)) {
    throw new RangeError(`areaRange must satisfy 0 < min < max, got [${areaMin}, ${areaMax}]`);
  }
  const step = (p: GenLaplaceParams) => genLaplace(rng, p.alpha, p.loc, p.scale);
  const out = new Float32Array(n * length * 3);
  for (let s = 0; s < n; s++) {
    let x = rng.uniform() * NATURAL_FRAME;
    let y = rng.uniform() * NATURAL_FRAME;
    let area = areaMin + rng.uniform() * (areaMax - areaMin);
    for (let t = 0; t < length; t++) {
      if (t > 0) {
        x = Math.min(reflect(x + step(stats.x), 0, NATURAL_FRAME), POSITION_MAX);
        y = Math.min(reflect(y + step(stats.y), 0, NATURAL_FRAME), POSITION_MAX);
        area = reflect(area + step(stats.area), areaMin, areaMax);
      }
      const o = (s * length + t) * 3;
      out[o] = x / NATURAL_FRAME;
      out[o + 1] = y / NATURAL_FRAME;
      out[o + 2] = Math.sqrt(area) / NATURAL_FRAME;
    }
  }
  return out;
}
