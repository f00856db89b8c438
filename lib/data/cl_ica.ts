/**
 * The synthetic data of "Contrastive learning inverts the data generating
 * process" (Schneider2023 Ch. 6; brendel-group/cl-ica
 * `main_mlp.py`, `spaces.py`, `invertible_network_utils.py`, `vmf.py`):
 * latents z in a box, on a sphere or in ℝⁿ with a marginal and a positive
 * conditional p(z̃ | z), observed through a random invertible MLP g.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { conditionNumber } from "./laplace_ar.ts";
import { betaVariate } from "./random_variates.ts";

/** Options of {@linkcode invertibleMlp}. */
export interface InvertibleMlpOptions {
  /** Linear layers (default 3, `--n-mixing-layer` of main_mlp.py). */
  layers?: number;
  /** Size of the pool of random matrices that sets the condition-number bound (default 25,000 as main_mlp.py). */
  draws?: number;
  /** Negative slope of the leaky ReLU between layers (default 0.2). */
  slope?: number;
  /** Quantile of the pool's condition numbers used as the bound (default 0: its minimum, as main_mlp.py). */
  ratio?: number;
  /**
   * Rejection draws per layer before the best matrix seen so far is kept
   * (default 100 · draws). With ratio 0 a layer needs about `draws` tries on
   * average but the count is heavy-tailed (P(> k·draws) ≈ 1/(k + 1)).
   */
  maxTries?: number;
}

/** A random invertible mixing network x = g(z). */
export interface InvertibleMlp {
  /** Row-major `[n, n]` weights, each applied as h ← A h (torch `nn.Linear(bias=False)` with weight A). */
  weights: Float64Array[];
  /** σ_max / σ_min of each weight matrix. */
  condition: number[];
  /** The pool's bound every layer's condition number was drawn under. */
  threshold: number;
  /** Maps latents `[rows, n]` to observations `[rows, n]` (float64). */
  apply(z: Matrix): Matrix;
}

/** A `[n, n]` matrix of U(−1, 1) entries with unit-L2 columns, row-major (`l2_normalize(A, axis=0)`). */
function uniformUnitColumns(rng: Rng, n: number): Float64Array {
  const a = new Float64Array(n * n);
  for (let i = 0; i < a.length; i++) a[i] = 2 * rng.uniform() - 1;
  for (let c = 0; c < n; c++) {
    let norm = 0;
    for (let r = 0; r < n; r++) norm += a[r * n + c] ** 2;
    norm = Math.sqrt(norm);
    for (let r = 0; r < n; r++) a[r * n + c] /= norm;
  }
  return a;
}

function checkPositiveInteger(value: number, what: string, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new UsageError(`${what} must be an integer in 1..${max}, got ${value}`);
  }
}

/**
 * The cl-ica mixing network (`construct_invertible_mlp` as main_mlp.py calls
 * it): `layers` bias-free n×n linear maps with a leaky ReLU between them and
 * none after the last. The bound is the `ratio` quantile of the condition
 * numbers of `draws` random U(−1, 1) unit-column matrices (their minimum by
 * default); each layer's matrix is then redrawn until its condition number
 * is at most the bound.
 */
export function invertibleMlp(rng: Rng, n: number, options: InvertibleMlpOptions = {}): InvertibleMlp {
  const layers = options.layers ?? 3;
  const draws = options.draws ?? 25_000;
  const slope = options.slope ?? 0.2;
  const ratio = options.ratio ?? 0;
  const maxTries = options.maxTries ?? 100 * draws;
  checkPositiveInteger(n, "n (latent dimensions)", 4_096);
  checkPositiveInteger(layers, "layers");
  checkPositiveInteger(draws, "draws");
  checkPositiveInteger(maxTries, "maxTries");
  if (!(slope >= 0 && slope <= 1)) throw new UsageError(`slope must be in [0, 1], got ${slope}`);
  if (!(ratio >= 0 && ratio < 1)) throw new UsageError(`ratio must be in [0, 1), got ${ratio}`);

  const pool = new Float64Array(draws);
  for (let i = 0; i < draws; i++) pool[i] = conditionNumber(uniformUnitColumns(rng, n), n);
  pool.sort();
  const threshold = pool[Math.floor(draws * ratio)];

  const weights: Float64Array[] = [];
  const condition: number[] = [];
  for (let l = 0; l < layers; l++) {
    let best: Float64Array | null = null;
    let bestCondition = Infinity;
    for (let tries = 0; tries < maxTries && bestCondition > threshold; tries++) {
      const a = uniformUnitColumns(rng, n);
      const c = conditionNumber(a, n);
      if (c < bestCondition) [best, bestCondition] = [a, c];
    }
    weights.push(best!);
    condition.push(bestCondition);
  }

  const apply = (z: Matrix): Matrix => {
    if (z.cols !== n || z.data.length !== z.rows * n) {
      throw new UsageError(`g expects latents of shape [rows, ${n}], got [${z.rows}, ${z.cols}]`);
    }
    const out = new Float64Array(z.rows * n);
    let h = new Float64Array(n);
    let next = new Float64Array(n);
    for (let t = 0; t < z.rows; t++) {
      for (let i = 0; i < n; i++) h[i] = z.data[t * n + i];
      weights.forEach((a, l) => {
        if (l > 0) { for (let i = 0; i < n; i++) if (h[i] < 0) h[i] *= slope; }
        for (let r = 0; r < n; r++) {
          let sum = 0;
          for (let c = 0; c < n; c++) sum += a[r * n + c] * h[c];
          next[r] = sum;
        }
        [h, next] = [next, h];
      });
      out.set(h, t * n);
    }
    return { data: out, rows: z.rows, cols: n };
  };
  return { weights, condition, threshold, apply };
}

/** Latent spaces of cl-ica's `spaces.py`. */
export const SPACES = ["box", "sphere", "unbounded"] as const;
/** A latent space: the box [0, 1]ⁿ, the unit sphere Sⁿ⁻¹, or ℝⁿ. */
export type Space = typeof SPACES[number];

/** Conditionals p(z̃ | z) of cl-ica. */
export const CONDITIONALS = ["laplace", "normal", "vmf"] as const;
/** A conditional: Laplace (scale λ), Normal (s.d. σ) or von Mises–Fisher (concentration κ). */
export type Conditional = typeof CONDITIONALS[number];

function checkSpace(space: Space): void {
  if (!SPACES.includes(space)) throw new UsageError(`unknown space "${space}"; allowed: ${SPACES.join(", ")}`);
}

/**
 * `count` latents `[count, n]` from the marginal main_mlp.py pairs with each
 * space: uniform on the box [0, 1]ⁿ (`--box-min 0 --box-max 1`), uniform on
 * the unit sphere (normalised Gaussians), standard normal on ℝⁿ (`--m-p 2`,
 * m_param 1: ℝⁿ has no uniform marginal).
 */
export function sampleMarginal(rng: Rng, space: Space, n: number, count: number): Matrix {
  checkSpace(space);
  checkPositiveInteger(n, "n (latent dimensions)", 4_096);
  if (!Number.isSafeInteger(count) || count < 0) throw new UsageError(`count must be an integer ≥ 0, got ${count}`);
  const data = new Float64Array(count * n);
  if (space === "box") {
    for (let i = 0; i < data.length; i++) data[i] = rng.uniform();
  } else {
    for (let i = 0; i < data.length; i++) data[i] = rng.normal();
    if (space === "sphere") { for (let t = 0; t < count; t++) normalizeRow(data, t, n); }
  }
  return { data, rows: count, cols: n };
}

function normalizeRow(data: Float64Array, t: number, n: number): void {
  let norm = 0;
  for (let i = 0; i < n; i++) norm += data[t * n + i] ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < n; i++) data[t * n + i] /= norm;
}

/** Options of {@linkcode sampleConditional}. */
export interface ConditionalOptions {
  /** Family of p(z̃ | z). */
  kind: Conditional;
  /** Laplace scale λ, Normal s.d. σ or vMF concentration κ (main_mlp.py `--c-param`). */
  scale: number;
}

/**
 * One positive z̃ ~ p(· | z) per row of `z` `[rows, n]`, as `spaces.py`
 * draws them. Box: Laplace or Normal noise around z, each coordinate redrawn
 * until it lies in [0, 1] (`truncated_rejection_resampling`). Sphere: vMF
 * around z (z must have unit norm), or Laplace/Normal noise projected back
 * onto the sphere. Unbounded: Laplace or Normal noise. vMF is defined on the
 * sphere only.
 */
export function sampleConditional(rng: Rng, space: Space, z: Matrix, options: ConditionalOptions): Matrix {
  checkSpace(space);
  const { kind, scale } = options;
  if (!CONDITIONALS.includes(kind)) {
    throw new UsageError(`unknown conditional "${kind}"; allowed: ${CONDITIONALS.join(", ")}`);
  }
  if (!(scale > 0) || !Number.isFinite(scale)) {
    throw new UsageError(`the ${kind} conditional's scale must be a finite number > 0, got ${scale}`);
  }
  if (kind === "vmf" && space !== "sphere") {
    throw new UsageError(`the vmf conditional is defined on the sphere only, not on "${space}"`);
  }
  const n = z.cols;
  if (!Number.isSafeInteger(n) || n < 1 || z.data.length !== z.rows * n) {
    throw new UsageError(`z must be a [rows, n] matrix, got data of length ${z.data.length} for [${z.rows}, ${n}]`);
  }
  if (space === "box") {
    for (let i = 0; i < z.data.length; i++) {
      if (!(z.data[i] >= 0 && z.data[i] <= 1)) throw new UsageError(`box latents must lie in [0, 1], got ${z.data[i]}`);
    }
  }
  if (space === "sphere") {
    for (let t = 0; t < z.rows; t++) {
      let norm = 0;
      for (let i = 0; i < n; i++) norm += z.data[t * n + i] ** 2;
      if (!(Math.abs(Math.sqrt(norm) - 1) < 1e-6)) {
        throw new UsageError(`sphere latents must have norm 1, row ${t} has ${Math.sqrt(norm)}`);
      }
    }
  }
  const out = new Float64Array(z.rows * n);
  if (kind === "vmf") {
    const mu = new Float64Array(n);
    for (let t = 0; t < z.rows; t++) {
      for (let i = 0; i < n; i++) mu[i] = z.data[t * n + i];
      out.set(sampleVmf(rng, mu, scale), t * n);
    }
    return { data: out, rows: z.rows, cols: n };
  }
  const noise = kind === "laplace" ? () => rng.laplace(scale) : () => scale * rng.normal();
  for (let i = 0; i < out.length; i++) {
    let value = z.data[i] + noise();
    if (space === "box") { while (!(value >= 0 && value <= 1)) value = z.data[i] + noise(); }
    out[i] = value;
  }
  if (space === "sphere") { for (let t = 0; t < z.rows; t++) normalizeRow(out, t, n); }
  return { data: out, rows: z.rows, cols: n };
}

/**
 * One draw from the von Mises–Fisher distribution on Sⁿ⁻¹ with unit mean
 * direction `mu` and concentration κ > 0, density ∝ exp(κ μᵀx): Wood's
 * (1994) rejection sampler for w = μᵀx, as cl-ica's `vmf.py`, then a
 * uniform direction orthogonal to μ.
 */
export function sampleVmf(rng: Rng, mu: Float64Array, kappa: number): Float64Array {
  const n = mu.length;
  if (n < 2) throw new UsageError(`vMF needs at least 2 dimensions, got ${n}`);
  if (!(kappa > 0) || !Number.isFinite(kappa)) throw new UsageError(`kappa must be a finite number > 0, got ${kappa}`);
  let muNorm = 0;
  for (let i = 0; i < n; i++) muNorm += mu[i] * mu[i];
  muNorm = Math.sqrt(muNorm);
  if (!(Math.abs(muNorm - 1) < 1e-6)) throw new UsageError(`vMF mean direction must have norm 1, got ${muNorm}`);

  const dim = n - 1;
  const b = dim / (Math.sqrt(4 * kappa * kappa + dim * dim) + 2 * kappa);
  const x0 = (1 - b) / (1 + b);
  const c = kappa * x0 + dim * Math.log(1 - x0 * x0);
  let w: number;
  for (;;) {
    const z = betaVariate(rng, dim / 2, dim / 2);
    w = (1 - (1 + b) * z) / (1 - (1 - b) * z);
    const u = rng.uniform();
    if (kappa * w + dim * Math.log(1 - x0 * w) - c >= Math.log(u)) break;
  }

  const v = new Float64Array(n);
  let norm = 0;
  // A Gaussian minus its projection on μ is uniform on the great sphere orthogonal to μ; retry the null event.
  while (!(norm > 1e-12)) {
    let dot = 0;
    for (let i = 0; i < n; i++) {
      v[i] = rng.normal();
      dot += v[i] * mu[i];
    }
    for (let i = 0; i < n; i++) v[i] -= dot * mu[i];
    // A second projection ("twice is enough"): when v was nearly parallel to μ, the first leaves a residual
    // along μ of rounding size relative to |v| that would show in the sample's norm.
    dot = 0;
    for (let i = 0; i < n; i++) dot += v[i] * mu[i];
    norm = 0;
    for (let i = 0; i < n; i++) {
      v[i] -= dot * mu[i];
      norm += v[i] * v[i];
    }
    norm = Math.sqrt(norm);
  }
  const radial = Math.sqrt(Math.max(0, 1 - w * w));
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = v[i] / norm * radial + w * mu[i];
  return out;
}
