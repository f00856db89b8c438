/**
 * The RegCL synthetic data (attribution maps with a known ground truth,
 * thesis §8 and App. G). Latents z = [z₁ (k−2), z₂ (2)] follow a random walk
 * reflected into [−1, 1]; the observations are two blocks of 25 features,
 * x₁ = g₁(z₁) and x₂ = g₂(z₁, z₂), so x₁ carries nothing of z₂. The observed
 * behaviour is c₂ = z₂ (setting a, Table 8.1).
 *
 * The released xCEBRA data set is a pickle without its generator, so the
 * blocks follow the thesis text: each gᵢ is a random 3-layer MLP whose
 * matrices are drawn by the cl-ica rule (U(−1, 1), columns L2-normalised,
 * the best condition number of several draws, leaky-ReLU 0.2 between layers,
 * no bias). g₂ reads the concatenation [z₁, z₂], which is the "block-sparse
 * first layer" of a single generator whose later layers do not mix x₁ with
 * x₂. cl-ica's matrices are square; the first layer here maps the latent
 * block to 25 features, so its condition number is σ_max/σ_min of a
 * rectangular matrix.
 *
 * @module
 */
import type { Matrix } from "../core/matrix.ts";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { symmetricEigen } from "../ml/linalg.ts";

/** Observed features per block (x₁ and x₂ each). */
export const REGCL_BLOCK_FEATURES = 25;
/** Dimension of the observed latent block z₂ (= c₂). */
export const REGCL_OBSERVED_LATENTS = 2;
/** Negative slope of the generator's leaky ReLU (cl-ica). */
const SLOPE = 0.2;

/** Options of {@linkcode regclSynthetic}. */
export interface RegclOptions {
  /** Total latents k (z₁ has k − 2, z₂ has 2); at least 3. */
  latents: number;
  /** Time steps of the random walk (rows of z, x, c₂); at least 2. */
  samples: number;
  /** Standard deviation of each walk increment, default 0.05; in (0, 1]. */
  step?: number;
  /** Matrices drawn per layer, the best-conditioned kept; default 100. */
  draws?: number;
}

/** A random bias-free MLP with leaky-ReLU between its layers, float64. */
export interface BlockMlp {
  /** Layer matrices, each `[in, out]` row-major (y = x·W). */
  weights: Float64Array[];
  /** Layer widths, input first: `[in, hidden, hidden, out]`. */
  widths: number[];
  /** Condition number σ_max/σ_min of each layer matrix. */
  condition: number[];
  /** Applies the MLP to the rows of `z` `[n, widths[0]]` → `[n, widths.at(-1)]`. */
  apply(z: Matrix): Matrix;
}

/** What {@linkcode regclSynthetic} returns. */
export interface RegclData {
  /** Latents `[samples, k]`: columns 0..k−3 are z₁, k−2 and k−1 are z₂. */
  z: Matrix;
  /** Observations `[samples, 50]`: columns 0..24 are x₁ = g₁(z₁), 25..49 are x₂ = g₂(z₁, z₂). */
  x: Matrix;
  /** The observed behaviour c₂ = z₂ `[samples, 2]`. */
  c2: Matrix;
  /** Ground truth `[50, k]` row-major, input feature × latent: 1 where ∂xᵢ/∂zⱼ ≠ 0 for some z. */
  truth: Uint8Array;
  /** The generator z ↦ x `[n, k]` → `[n, 50]` (for Jacobian checks and new samples). */
  generator(z: Matrix): Matrix;
  /** The two block generators, g₁ on z₁ and g₂ on [z₁, z₂]. */
  blocks: [BlockMlp, BlockMlp];
}

/**
 * Draws one RegCL data set: the latent walk, the two mixing MLPs, the
 * observations, the behaviour label and the ground-truth attribution mask.
 */
export function regclSynthetic(rng: Rng, options: RegclOptions): RegclData {
  const { latents: k, samples, step = 0.05, draws = 100 } = options;
  if (!Number.isInteger(k) || k < REGCL_OBSERVED_LATENTS + 1) {
    throw new UsageError(`regclSynthetic: latents must be an integer ≥ ${REGCL_OBSERVED_LATENTS + 1}, got ${k}`);
  }
  if (!Number.isInteger(samples) || samples < 2) {
    throw new UsageError(`regclSynthetic: samples must be an integer ≥ 2, got ${samples}`);
  }
  if (!(step > 0 && step <= 1)) throw new UsageError(`regclSynthetic: step must lie in (0, 1], got ${step}`);
  if (!Number.isInteger(draws) || draws < 1) {
    throw new UsageError(`regclSynthetic: draws must be an integer ≥ 1, got ${draws}`);
  }
  const k1 = k - REGCL_OBSERVED_LATENTS;
  const h = REGCL_BLOCK_FEATURES;
  const z = reflectedWalk(rng, samples, k, step);
  const g1 = blockMlp(rng, [k1, h, h, h], draws);
  const g2 = blockMlp(rng, [k, h, h, h], draws);

  const generator = (zIn: Matrix): Matrix => {
    if (zIn.cols !== k) throw new UsageError(`regclSynthetic generator: z needs ${k} columns, got ${zIn.cols}`);
    const n = zIn.rows;
    const z1 = new Float64Array(n * k1);
    for (let r = 0; r < n; r++) {
      for (let j = 0; j < k1; j++) z1[r * k1 + j] = zIn.data[r * k + j];
    }
    const x1 = g1.apply({ data: z1, rows: n, cols: k1 });
    const x2 = g2.apply(zIn);
    const out = new Float64Array(n * 2 * h);
    for (let r = 0; r < n; r++) {
      for (let j = 0; j < h; j++) {
        out[r * 2 * h + j] = x1.data[r * h + j];
        out[r * 2 * h + h + j] = x2.data[r * h + j];
      }
    }
    return { data: out, rows: n, cols: 2 * h };
  };

  const c2 = new Float64Array(samples * REGCL_OBSERVED_LATENTS);
  for (let t = 0; t < samples; t++) {
    for (let j = 0; j < REGCL_OBSERVED_LATENTS; j++) c2[t * REGCL_OBSERVED_LATENTS + j] = z.data[t * k + k1 + j];
  }
  const truth = new Uint8Array(2 * h * k).fill(1);
  for (let i = 0; i < h; i++) {
    for (let j = k1; j < k; j++) truth[i * k + j] = 0;
  }
  return {
    z,
    x: generator(z),
    c2: { data: c2, rows: samples, cols: REGCL_OBSERVED_LATENTS },
    truth,
    generator,
    blocks: [g1, g2],
  };
}

/**
 * A walk z_t = reflect(z_{t−1} + step·ε), ε ~ N(0, I), started uniformly in
 * [−1, 1]^dims; reflection folds a coordinate back at ±1 so that the walk
 * stays in the box without piling up on its faces.
 */
export function reflectedWalk(rng: Rng, samples: number, dims: number, step: number): Matrix {
  const z = new Float64Array(samples * dims);
  for (let j = 0; j < dims; j++) z[j] = 2 * rng.uniform() - 1;
  for (let t = 1; t < samples; t++) {
    for (let j = 0; j < dims; j++) z[t * dims + j] = reflect(z[(t - 1) * dims + j] + step * rng.normal());
  }
  return { data: z, rows: samples, cols: dims };
}

/** Folds v into [−1, 1] by mirroring at the faces (repeatedly, for large steps). */
export function reflect(v: number): number {
  while (v > 1 || v < -1) v = v > 1 ? 2 - v : -2 - v;
  return v;
}

/**
 * A bias-free MLP with the given widths, leaky-ReLU 0.2 between layers and
 * none after the last; each matrix is the best-conditioned of `draws` draws
 * of U(−1, 1) with L2-normalised columns (cl-ica `construct_invertible_mlp`,
 * "pcl" init, where a column of torch's [out, in] matrix holds one input
 * unit's weights to every output).
 */
export function blockMlp(rng: Rng, widths: number[], draws: number): BlockMlp {
  const weights: Float64Array[] = [];
  const condition: number[] = [];
  for (let l = 0; l + 1 < widths.length; l++) {
    let best: Float64Array | null = null;
    let bestCond = Infinity;
    for (let d = 0; d < draws; d++) {
      const w = normalisedUniform(rng, widths[l], widths[l + 1]);
      const c = conditionNumber(w, widths[l], widths[l + 1]);
      if (c < bestCond) {
        bestCond = c;
        best = w;
      }
    }
    weights.push(best!);
    condition.push(bestCond);
  }
  const apply = (z: Matrix): Matrix => {
    if (z.cols !== widths[0]) throw new UsageError(`blockMlp: input needs ${widths[0]} columns, got ${z.cols}`);
    let h = Float64Array.from(z.data);
    for (let l = 0; l < weights.length; l++) {
      const inW = widths[l], outW = widths[l + 1], w = weights[l];
      const next = new Float64Array(z.rows * outW);
      for (let r = 0; r < z.rows; r++) {
        for (let i = 0; i < inW; i++) {
          const hv = h[r * inW + i];
          if (hv === 0) continue;
          for (let o = 0; o < outW; o++) next[r * outW + o] += hv * w[i * outW + o];
        }
        if (l + 1 < weights.length) {
          for (let o = 0; o < outW; o++) {
            const v = next[r * outW + o];
            if (v < 0) next[r * outW + o] = SLOPE * v;
          }
        }
      }
      h = next;
    }
    return { data: h, rows: z.rows, cols: widths.at(-1)! };
  };
  return { weights, widths: widths.slice(), condition, apply };
}

/**
 * U(−1, 1) matrix `[inW, outW]` (y = x·W) whose torch-layout columns, i.e.
 * the rows of W here (one input unit's weights to every output), have unit
 * L2 norm, as numpy's `l2_normalize(A, axis=0)` on A `[out, in]`.
 */
function normalisedUniform(rng: Rng, inW: number, outW: number): Float64Array {
  const w = new Float64Array(inW * outW);
  for (let i = 0; i < w.length; i++) w[i] = 2 * rng.uniform() - 1;
  for (let i = 0; i < inW; i++) {
    let s = 0;
    for (let o = 0; o < outW; o++) s += w[i * outW + o] ** 2;
    const norm = Math.sqrt(s);
    for (let o = 0; o < outW; o++) w[i * outW + o] /= norm;
  }
  return w;
}

/** σ_max/σ_min of W `[inW, outW]` from the eigenvalues of its smaller Gram matrix (∞ when rank-deficient). */
function conditionNumber(w: Float64Array, inW: number, outW: number): number {
  const n = Math.min(inW, outW);
  const gram: number[][] = Array.from({ length: n }, () => new Array(n).fill(0));
  if (inW <= outW) {
    for (let a = 0; a < n; a++) {
      for (let b = a; b < n; b++) {
        let s = 0;
        for (let o = 0; o < outW; o++) s += w[a * outW + o] * w[b * outW + o];
        gram[a][b] = gram[b][a] = s;
      }
    }
  } else {
    for (let a = 0; a < n; a++) {
      for (let b = a; b < n; b++) {
        let s = 0;
        for (let i = 0; i < inW; i++) s += w[i * outW + a] * w[i * outW + b];
        gram[a][b] = gram[b][a] = s;
      }
    }
  }
  const values = symmetricEigen(gram).values;
  const max = Math.max(...values), min = Math.min(...values);
  return min > 0 ? Math.sqrt(max / min) : Infinity;
}
