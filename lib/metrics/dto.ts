/**
 * Distance to Orthogonality (DtO, Zietlow2022 §3.2.6, eq. 3.25): how far the
 * right singular vectors V of a decoder's Jacobians are from a signed permutation, i.e. how far the decoder
 * is from being locally orthogonal in the latent axes. A diagonal-posterior
 * VAE pushes it to 0 (Thm. 1); a plain autoencoder has no such pressure.
 *
 * The thesis finds the closest signed permutation (in the L¹ sense) with a
 * MILP (3.26–3.29). For orthogonal V that MILP has a closed form: every
 * |V_kl| ≤ 1, so Σ|V − P| = Σ|V| + d − 2Σ_k|V[k, π(k)]| and
 * ‖V − P‖²_F = 2d − 2Σ_k s_k V[k, π(k)]; both are minimised by the
 * maximum-weight assignment π on |V| with signs s_k = sign V[k, π(k)].
 * Hence DtO = √max(0, 2d − 2·max_π Σ_k |V[k, π(k)]|), one Hungarian
 * assignment per sample.
 *
 * @module
 */
import { munkres } from "munkres";
import { symmetricEigen } from "../ml/linalg.ts";

/**
 * Mean DtO over Haar-random 2×2 orthogonal V, (16√2/π)(1 − cos π/8) = 0.54826: that of untrained Gaussian decoders
 * with 2 latents, whose right singular vectors are Haar (ours; not the 0.79 of Zietlow2022 Table 3.3).
 */
export const HAAR_DTO_2 = (16 * Math.SQRT2 / Math.PI) * (1 - Math.cos(Math.PI / 8));

/** The result of {@linkcode distanceToOrthogonality}. */
export interface DtoResult {
  /** Mean of `perSample`: the thesis's DtO. */
  dto: number;
  /** ‖V_i − P(V_i)‖_F per sample `[n]`. */
  perSample: Float64Array;
  /**
   * Median over samples of (s₁ − s₂)/s₁ (singular values in descending
   * order; 1 for a single latent, 0 for an all-zero Jacobian). V, and so
   * DtO, is ill-defined where singular values coincide (Prop. 1): a small
   * gap flags a noisy DtO (Table 3.4).
   */
  svGap: number;
}

/**
 * DtO of one orthogonal d×d matrix `v` (rows: latents, columns: singular
 * vectors; the value is the same for the transpose): √max(0, 2d − 2·max_π
 * Σ_k |V[k, π(k)]|), the Frobenius distance to the signed permutation
 * closest in L¹. 0 exactly for a signed permutation, √(4 − 2√2) for a 45°
 * rotation in 2-D. The caller vouches for orthogonality; a non-square `v`
 * throws.
 */
export function dtoOfOrthogonal(v: number[][]): number {
  const d = v.length;
  if (d === 0 || v.some((row) => row.length !== d)) {
    throw new Error(
      `dtoOfOrthogonal needs a non-empty square matrix, got ${d} rows of lengths ${v.map((r) => r.length)}`,
    );
  }
  if (d === 1) return Math.sqrt(Math.max(0, 2 - 2 * Math.abs(v[0][0])));
  const pairs = munkres(v.map((row) => row.map((x) => -Math.abs(x))));
  let matched = 0;
  for (const [k, l] of pairs) matched += Math.abs(v[k][l]);
  return Math.sqrt(Math.max(0, 2 * d - 2 * matched));
}

/** Median of `values` (mean of the two middle values for an even count, as numpy). */
function median(values: Float64Array): number {
  const sorted = values.slice().sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * DtO over `n` decoder Jacobians `jac` `[n, rows = outputs, cols = latents]`
 * row-major per sample (`jac[i*rows*cols + r*cols + c]` = ∂out_r/∂z_c at
 * sample i). V_i are the eigenvectors of J_iᵀJ_i (cols×cols, no SVD of the
 * tall J needed), singular values √eigenvalues. DtO is invariant to the sign
 * and order of J's columns, as a disentanglement measure should be. Throws
 * on rows < cols, a length other than n·rows·cols, or a non-finite entry
 * (naming the sample).
 */
export function distanceToOrthogonality(jac: ArrayLike<number>, n: number, rows: number, cols: number): DtoResult {
  for (const [name, value] of [["n", n], ["rows", rows], ["cols", cols]] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`distanceToOrthogonality: ${name} must be a positive integer, got ${value}`);
    }
  }
  if (rows < cols) {
    throw new Error(`distanceToOrthogonality: needs rows (outputs) ≥ cols (latents), got ${rows} < ${cols}`);
  }
  const size = rows * cols;
  if (jac.length !== n * size) {
    throw new Error(
      `distanceToOrthogonality: jac holds ${jac.length} values, expected n·rows·cols = ${n}·${rows}·${cols}`,
    );
  }
  const perSample = new Float64Array(n);
  const gaps = new Float64Array(n);
  const gram: number[][] = Array.from({ length: cols }, () => new Array(cols).fill(0));
  for (let i = 0; i < n; i++) {
    const base = i * size;
    for (let e = base; e < base + size; e++) {
      if (!Number.isFinite(jac[e])) {
        const r = Math.floor((e - base) / cols);
        throw new Error(
          `distanceToOrthogonality: sample ${i} has a non-finite entry ${jac[e]} at output ${r}, latent ${
            (e - base) % cols
          }`,
        );
      }
    }
    // G = JᵀJ, upper triangle then mirrored.
    for (let a = 0; a < cols; a++) {
      for (let b = a; b < cols; b++) {
        let s = 0;
        for (let r = 0; r < rows; r++) s += jac[base + r * cols + a] * jac[base + r * cols + b];
        gram[a][b] = s;
        gram[b][a] = s;
      }
    }
    const { values, vectors } = symmetricEigen(gram);
    perSample[i] = dtoOfOrthogonal(vectors);
    const s = values.map((v) => Math.sqrt(Math.max(0, v))).sort((x, y) => y - x);
    gaps[i] = cols === 1 ? 1 : s[0] > 0 ? (s[0] - s[1]) / s[0] : 0;
  }
  let total = 0;
  for (const v of perSample) total += v;
  return { dto: total / n, perSample, svGap: median(gaps) };
}
