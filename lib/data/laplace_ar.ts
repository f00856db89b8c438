/**
 * The nonlinear ICA toy data of Klindt2021 App. F.1.2: d-dimensional sources
 * following an AR(1) process with Laplace innovations, log p(s_t | s_{t−1}) = −|s_t − ρ s_{t−1}| / b + const,
 * mixed by an L-layer random MLP with the smooth leaky ReLU
 * s(x) = αx + (1 − α) log(1 + eˣ) between layers (the last layer is linear,
 * so L = 1 is a linear mixture).
 *
 * Two generators: "reference" follows the public PCL code of Hyvärinen &
 * Morioka, whose setting Klindt2021 says it shares (unit-variance sources;
 * U(−1, 1) matrices with unit-norm columns whose condition number is below
 * the 25th percentile of such matrices), which keeps every layer's input at
 * a standard deviation near 1 so the smooth leaky ReLU stays smooth;
 * "legacy" is this toolkit's first generator (innovations of scale 1, no
 * standardisation, U diag(s) Vᵀ with s in [1, 4]), kept for comparison:
 * its layer inputs grow to s.d. ≈ 30 by L = 5, where the nonlinearity acts
 * as the hard leaky ReLU that App. F.1.2 says SlowFlow cannot invert.
 *
 * @module
 */
import { column, meanSd } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import { symmetricEigen } from "../ml/linalg.ts";

/** The two data generators of the toy (see the module's notes). */
export const ICA_GENERATORS = ["reference", "legacy"] as const;
/** A generator name. */
export type IcaGenerator = typeof ICA_GENERATORS[number];

/** Options of {@linkcode laplaceArSources}. */
export interface LaplaceArOptions {
  /** AR coefficient ρ. */
  rho?: number;
  /** Steps discarded before the first sample, so the chain starts near stationarity. */
  burnIn?: number;
  /**
   * "reference" (default): innovations of variance 1 − ρ² (Laplace scale √((1 − ρ²)/2)), so the
   * process has unit variance, then each source standardised; "legacy": innovations of scale 1, raw.
   */
  generator?: IcaGenerator;
}

/** Sources `[n, dim]` (row t is time step t) of the Laplace AR(1) process. */
export function laplaceArSources(rng: Rng, n: number, dim: number, options: LaplaceArOptions = {}): Float32Array {
  const rho = options.rho ?? 0.7;
  const burnIn = options.burnIn ?? 100;
  const reference = (options.generator ?? "reference") === "reference";
  const scale = reference ? Math.sqrt((1 - rho * rho) / 2) : 1;
  const out = new Float32Array(n * dim);
  const state = new Float64Array(dim);
  for (let t = -burnIn; t < n; t++) {
    for (let i = 0; i < dim; i++) {
      state[i] = rho * state[i] + rng.laplace(scale);
      if (t >= 0) out[t * dim + i] = state[i];
    }
  }
  if (reference) standardizeColumns(out, dim);
  return out;
}

/** The smooth leaky ReLU of the mixing network. */
export function smoothLeakyRelu(x: number, alpha: number): number {
  const softplus = x > 30 ? x : Math.log1p(Math.exp(x));
  return alpha * x + (1 - alpha) * softplus;
}

/** A random orthogonal `[dim, dim]` matrix (Gram–Schmidt on a Gaussian matrix), row-major. */
export function randomOrthogonal(rng: Rng, dim: number): Float64Array {
  const q = new Float64Array(dim * dim);
  for (let r = 0; r < dim; r++) {
    const v = Float64Array.from({ length: dim }, () => rng.normal());
    for (let p = 0; p < r; p++) {
      let dot = 0;
      for (let c = 0; c < dim; c++) dot += v[c] * q[p * dim + c];
      for (let c = 0; c < dim; c++) v[c] -= dot * q[p * dim + c];
    }
    const norm = Math.hypot(...v);
    for (let c = 0; c < dim; c++) q[r * dim + c] = v[c] / norm;
  }
  return q;
}

/** Options of {@linkcode randomMixingMlp}. */
export interface MixingOptions {
  /** Slope α of the smooth leaky ReLU. */
  alpha?: number;
  /** "legacy" only: largest condition number of each layer's matrix. */
  maxCondition?: number;
  /** How the matrices are drawn (default "reference"); see the module's notes. */
  generator?: IcaGenerator;
}

/** The condition number σ_max / σ_min of a row-major `[dim, dim]` matrix, from the eigenvalues of AᵀA. */
export function conditionNumber(a: Float64Array, dim: number): number {
  const gram = Array.from({ length: dim }, (_, i) =>
    Array.from({ length: dim }, (_, j) => {
      let sum = 0;
      for (let k = 0; k < dim; k++) sum += a[k * dim + i] * a[k * dim + j];
      return sum;
    }));
  const { values } = symmetricEigen(gram);
  const lo = Math.min(...values), hi = Math.max(...values);
  return lo > 0 ? Math.sqrt(hi / lo) : Infinity;
}

/** A `[dim, dim]` matrix of U(−1, 1) entries with each column scaled to unit norm, row-major. */
function uniformUnitColumns(rng: Rng, dim: number): Float64Array {
  const a = Float64Array.from({ length: dim * dim }, () => 2 * rng.uniform() - 1);
  for (let c = 0; c < dim; c++) {
    let norm = 0;
    for (let r = 0; r < dim; r++) norm += a[r * dim + c] ** 2;
    norm = Math.sqrt(norm);
    for (let r = 0; r < dim; r++) a[r * dim + c] /= norm;
  }
  return a;
}

const thresholds = new Map<string, number>();

/**
 * The reference code's bound on a mixing matrix's condition number: the
 * 25th percentile (`quantile`) of the condition numbers of `draws` matrices
 * of U(−1, 1) entries with unit-norm columns. A property of the dimension,
 * drawn once from a fixed stream (not the run's seed) and cached, so every
 * run and phase of a dimension uses the same bound.
 */
export function conditionThreshold(dim: number, { draws = 10_000, quantile = 0.25 } = {}): number {
  const key = `${dim}/${draws}/${quantile}`;
  const cached = thresholds.get(key);
  if (cached !== undefined) return cached;
  const rng = Rng.derive(0, "condition-threshold", dim);
  const conditions = Float64Array.from({ length: draws }, () => conditionNumber(uniformUnitColumns(rng, dim), dim))
    .sort();
  const threshold = conditions[Math.floor(draws * quantile)];
  thresholds.set(key, threshold);
  return threshold;
}

/** A random invertible mixing network. */
export interface MixingMlp {
  /** Dimension of the sources and the observations. */
  dim: number;
  /** Row-major `[dim, dim]` weights, applied as x ← W x. */
  weights: Float64Array[];
  /** Slope of the smooth leaky ReLU between layers for large negative inputs. */
  alpha: number;
}

/**
 * A random L-layer mixing MLP. "reference": each layer's matrix has U(−1, 1)
 * entries and unit-norm columns, redrawn until its condition number is
 * below {@linkcode conditionThreshold} (Hyvärinen & Morioka's rejection
 * sampling). "legacy": U diag(s) Vᵀ with random orthogonal U, V and singular
 * values log-uniform in [1, maxCondition].
 */
export function randomMixingMlp(rng: Rng, dim: number, layers: number, options: MixingOptions = {}): MixingMlp {
  const alpha = options.alpha ?? 0.2;
  if ((options.generator ?? "reference") === "reference") {
    const threshold = conditionThreshold(dim);
    const weights = Array.from({ length: layers }, () => {
      for (;;) {
        const a = uniformUnitColumns(rng, dim);
        if (conditionNumber(a, dim) <= threshold) return a;
      }
    });
    return { dim, weights, alpha };
  }
  const maxCondition = options.maxCondition ?? 4;
  const weights: Float64Array[] = [];
  for (let l = 0; l < layers; l++) {
    const u = randomOrthogonal(rng, dim);
    const v = randomOrthogonal(rng, dim);
    const s = Float64Array.from({ length: dim }, () => Math.exp(rng.uniform() * Math.log(maxCondition)));
    const w = new Float64Array(dim * dim);
    for (let r = 0; r < dim; r++) {
      for (let c = 0; c < dim; c++) {
        let sum = 0;
        for (let k = 0; k < dim; k++) sum += u[r * dim + k] * s[k] * v[c * dim + k];
        w[r * dim + c] = sum;
      }
    }
    weights.push(w);
  }
  return { dim, weights, alpha };
}

/**
 * Mixes sources `[n, dim]` into observations `[n, dim]`, then standardises
 * each observed dimension to zero mean and unit variance (an invertible
 * per-dimension affine map, so identifiability is unaffected).
 */
export function mix(mixing: MixingMlp, sources: Float32Array): Float32Array {
  const { dim, weights, alpha } = mixing;
  const n = sources.length / dim;
  const out = new Float32Array(sources.length);
  let h = new Float64Array(dim);
  let next = new Float64Array(dim);
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < dim; i++) h[i] = sources[t * dim + i];
    weights.forEach((w, l) => {
      if (l > 0) { for (let i = 0; i < dim; i++) h[i] = smoothLeakyRelu(h[i], alpha); }
      for (let r = 0; r < dim; r++) {
        let sum = 0;
        for (let c = 0; c < dim; c++) sum += w[r * dim + c] * h[c];
        next[r] = sum;
      }
      [h, next] = [next, h];
    });
    for (let i = 0; i < dim; i++) out[t * dim + i] = h[i];
  }
  standardizeColumns(out, dim);
  return out;
}

/**
 * Standardises the columns of a row-major `[n, dim]` matrix in place to zero
 * mean and unit population variance (each column's mean square becomes 1).
 */
export function standardizeColumns(values: Float32Array, dim: number): void {
  const n = values.length / dim;
  for (let c = 0; c < dim; c++) {
    const { mean, sd } = meanSd(column(values, n, dim, c), { ddof: 0 });
    const std = sd || 1;
    for (let t = 0; t < n; t++) values[t * dim + c] = (values[t * dim + c] - mean) / std;
  }
}
