/**
 * The nonlinear ICA toy data of Paper A App. F.1.2 (000_306f4209a39c5a17.md
 * §3.1, §7.1 item 1): d-dimensional sources following an AR(1) process with
 * Laplace innovations, log p(s_t | s_{t−1}) = −|s_t − ρ s_{t−1}| + const,
 * mixed by an L-layer random MLP with the smooth leaky ReLU
 * s(x) = αx + (1 − α) log(1 + eˣ) between layers (the last layer is linear,
 * so L = 1 is a linear mixture).
 *
 * @module
 */
import { column, meanSd } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";

/** Options of {@linkcode laplaceArSources}. */
export interface LaplaceArOptions {
  /** AR coefficient ρ. */
  rho?: number;
  /** Steps discarded before the first sample, so the chain starts near stationarity. */
  burnIn?: number;
}

/** Sources `[n, dim]` (row t is time step t) of the Laplace AR(1) process. */
export function laplaceArSources(rng: Rng, n: number, dim: number, options: LaplaceArOptions = {}): Float32Array {
  const rho = options.rho ?? 0.7;
  const burnIn = options.burnIn ?? 100;
  const out = new Float32Array(n * dim);
  const state = new Float64Array(dim);
  for (let t = -burnIn; t < n; t++) {
    for (let i = 0; i < dim; i++) {
      state[i] = rho * state[i] + rng.laplace(1);
      if (t >= 0) out[t * dim + i] = state[i];
    }
  }
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
  /** Largest condition number of each layer's matrix. */
  maxCondition?: number;
}

/** A random invertible mixing network. */
export interface MixingMlp {
  dim: number;
  /** Row-major `[dim, dim]` weights, applied as x ← W x. */
  weights: Float64Array[];
  alpha: number;
}

/**
 * A random L-layer mixing MLP. Each layer is U diag(s) Vᵀ with random
 * orthogonal U, V and singular values log-uniform in [1, maxCondition]: an
 * explicit form of the well-conditioned random matrices that Hyvärinen &
 * Morioka obtain by rejection sampling.
 */
export function randomMixingMlp(rng: Rng, dim: number, layers: number, options: MixingOptions = {}): MixingMlp {
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
  return { dim, weights, alpha: options.alpha ?? 0.2 };
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
