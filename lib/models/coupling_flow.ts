/**
 * Volume-preserving normalizing flow x ↦ z made of additive coupling blocks
 * (NICE, Dinh et al. 2015), the SlowFlow encoder of Klindt2021 App. F.1.2:
 * 6 blocks, each a 2-layer MLP.
 *
 * Block k permutes the coordinates with a fixed random permutation,
 * optionally applies a learned linear map W = (I + L)(I + U) with strictly
 * lower/upper triangular L, U, then shifts the second half by an MLP of the
 * first half. All three have Jacobian determinant 1, so the flow stays
 * volume-preserving; the linear map (an addition to the paper's blocks)
 * lets a short run undo linear mixing directly instead of composing it from
 * many additive shears. A final elementwise scale exp(s) lets the flow match
 * the prior's scale; it mixes no coordinates (identifiability is
 * unaffected) and contributes Σ s to log|det J|.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { Mlp } from "./mlp.ts";
import { Params } from "./params.ts";

/** Options of a {@linkcode CouplingFlow}. */
export interface CouplingFlowOptions {
  /** Dimension d of x and z. */
  dim: number;
  /** Coupling blocks, each after its own random permutation. */
  blocks: number;
  /** Width of each coupling MLP's hidden layers. */
  hidden: number;
  /** Hidden layers of each coupling MLP (default 1). */
  hiddenLayers?: number;
  /** Add the learned unit-determinant linear map to each block. */
  linear?: boolean;
  /**
   * "additive" (volume-preserving, the paper's) or "affine" (RealNVP: the
   * shift comes with a bounded log-scale, so log|det J| varies with x).
   */
  coupling?: "additive" | "affine";
}

/** Latents and the per-sample log|det ∂z/∂x|. */
export interface FlowOutput {
  /** Latents `[batch, dim]`. */
  z: tf.Tensor2D;
  /** log|det ∂z/∂x| per sample `[batch]`. */
  logDet: tf.Tensor1D;
}

/** Bound on each affine log-scale, through tanh, for stable training. */
const AFFINE_SCALE_BOUND = 2;

function triangularMask(dim: number, lower: boolean): tf.Tensor2D {
  const values = new Float32Array(dim * dim);
  for (let r = 0; r < dim; r++) for (let c = 0; c < dim; c++) values[r * dim + c] = (lower ? r > c : r < c) ? 1 : 0;
  return tf.tensor2d(values, [dim, dim]);
}

/** The permutation q with q[p[i]] = i. */
function inversePermutation(permutation: Int32Array): Int32Array {
  const inverse = new Int32Array(permutation.length);
  permutation.forEach((target, i) => (inverse[target] = i));
  return inverse;
}

function permutationMatrix(permutation: Int32Array): tf.Tensor2D {
  const n = permutation.length;
  const values = new Float32Array(n * n);
  for (let i = 0; i < n; i++) values[permutation[i] * n + i] = 1;
  return tf.tensor2d(values, [n, n]);
}

/** A coupling flow with an elementwise output scale. */
export class CouplingFlow {
  /** Trainable weights: `block{k}/…`, `linear{k}/lower|upper` and `log_scale`. */
  readonly params = new Params();
  /** Dimension d of x and z. */
  readonly dim: number;
  #couplings: Mlp[] = [];
  /** Permutations as matrices: a matmul's gradient is available on every backend, gather's is not on wasm. */
  #permutations: tf.Tensor2D[] = [];
  /** Their transposes, kept: a transposed matMul costs the inverse ~0.9 ms more per block on wasm (d 196). */
  #inversePermutations: tf.Tensor2D[] = [];
  #masks: { lower: tf.Tensor2D; upper: tf.Tensor2D; eye: tf.Tensor2D } | null;
  #half: number;
  #affine: boolean;

  /** A flow whose couplings start at zero, so it starts as a product of permutations. */
  constructor(rng: Rng, options: CouplingFlowOptions) {
    this.dim = options.dim;
    this.#half = Math.floor(options.dim / 2);
    this.#affine = options.coupling === "affine";
    const outputs = (options.dim - this.#half) * (this.#affine ? 2 : 1);
    this.#masks = options.linear
      ? {
        lower: triangularMask(options.dim, true),
        upper: triangularMask(options.dim, false),
        eye: tf.eye(options.dim),
      }
      : null;
    for (let k = 0; k < options.blocks; k++) {
      const permutation = rng.permutation(options.dim);
      this.#permutations.push(permutationMatrix(permutation));
      this.#inversePermutations.push(permutationMatrix(inversePermutation(permutation)));
      if (options.linear) {
        this.params.addZeros(`linear${k}/lower`, [options.dim, options.dim]);
        this.params.addZeros(`linear${k}/upper`, [options.dim, options.dim]);
      }
      // Zero last layer: the flow starts as a permutation, a stable starting point.
      this.#couplings.push(
        new Mlp(rng, this.params, `block${k}/`, [
          this.#half,
          ...Array(options.hiddenLayers ?? 1).fill(options.hidden),
          outputs,
        ], {
          zeroLast: true,
        }),
      );
    }
    this.params.addZeros("log_scale", [options.dim]);
  }

  /** The unit-determinant linear map of block k, as a matrix acting on row vectors. */
  #linear(k: number): tf.Tensor2D {
    const { lower, upper, eye } = this.#masks!;
    const l = tf.add(eye, tf.mul(lower, this.params.get(`linear${k}/lower`)));
    const u = tf.add(eye, tf.mul(upper, this.params.get(`linear${k}/upper`)));
    return tf.matMul(l, u);
  }

  /** Shift and log-scale (zero for additive coupling) of block k given the conditioning half. */
  #shiftAndLogScale(k: number, a: tf.Tensor2D): { shift: tf.Tensor2D; logScale: tf.Tensor2D | null } {
    const out = this.#couplings[k].apply(a);
    if (!this.#affine) return { shift: out, logScale: null };
    const [shift, raw] = tf.split(out, 2, 1) as tf.Tensor2D[];
    return { shift, logScale: tf.mul(AFFINE_SCALE_BOUND, tf.tanh(tf.div(raw, AFFINE_SCALE_BOUND))) };
  }

  /** Maps `[batch, dim]` data to latents, with log|det ∂z/∂x| per sample. */
  forwardWithLogDet(x: tf.Tensor2D): FlowOutput {
    let h = x;
    let logDet: tf.Tensor1D = tf.zeros([x.shape[0]]);
    for (let k = 0; k < this.#couplings.length; k++) {
      h = tf.matMul(h, this.#permutations[k]);
      if (this.#masks) h = tf.matMul(h, this.#linear(k));
      const a = tf.slice(h, [0, 0], [-1, this.#half]);
      let b = tf.slice(h, [0, this.#half], [-1, this.dim - this.#half]);
      const { shift, logScale } = this.#shiftAndLogScale(k, a);
      if (logScale) {
        b = tf.mul(b, tf.exp(logScale));
        logDet = tf.add(logDet, tf.sum(logScale, 1));
      }
      h = tf.concat([a, tf.add(b, shift)], 1);
    }
    const logScale = this.params.get("log_scale");
    return { z: tf.mul(h, tf.exp(logScale)), logDet: tf.add(logDet, tf.sum(logScale)) };
  }

  /** Maps `[batch, dim]` data to `[batch, dim]` latents. */
  forward(x: tf.Tensor2D): tf.Tensor2D {
    return this.forwardWithLogDet(x).z;
  }

  /**
   * Maps latents back to data: the inverse of {@linkcode forward}. Async
   * because the linear maps are inverted on the JS side (tfjs has no
   * triangular solve).
   */
  async inverse(z: tf.Tensor2D): Promise<tf.Tensor2D> {
    const inverses = this.#masks ? await Promise.all(this.#couplings.map((_, k) => this.#inverseLinear(k))) : null;
    const result = tf.tidy(() => this.#inverseWith(z, inverses));
    tf.dispose(inverses ?? []);
    return result;
  }

  async #inverseLinear(k: number): Promise<tf.Tensor2D> {
    const w = tf.tidy(() => this.#linear(k));
    const values = Float64Array.from(await w.data());
    w.dispose();
    return tf.tensor2d(Float32Array.from(invertMatrix(values, this.dim)), [this.dim, this.dim]);
  }

  #inverseWith(z: tf.Tensor2D, inverses: tf.Tensor2D[] | null): tf.Tensor2D {
    let h = tf.div(z, tf.exp(this.params.get("log_scale"))) as tf.Tensor2D;
    for (let k = this.#couplings.length - 1; k >= 0; k--) {
      const a = tf.slice(h, [0, 0], [-1, this.#half]);
      const b = tf.slice(h, [0, this.#half], [-1, this.dim - this.#half]);
      const { shift, logScale } = this.#shiftAndLogScale(k, a);
      const unshifted = tf.sub(b, shift);
      const b0 = logScale ? tf.mul(unshifted, tf.exp(tf.neg(logScale))) as tf.Tensor2D : unshifted;
      h = tf.concat([a, b0], 1) as tf.Tensor2D;
      if (inverses) h = tf.matMul(h, inverses[k]);
      h = tf.matMul(h, this.#inversePermutations[k]);
    }
    return h;
  }

  /** Frees the parameters and the fixed permutations. */
  dispose(): void {
    this.params.dispose();
    tf.dispose([...this.#permutations, ...this.#inversePermutations]);
    if (this.#masks) tf.dispose(Object.values(this.#masks));
  }
}

/** Inverse of a row-major `[n, n]` matrix by Gauss–Jordan elimination with partial pivoting. */
export function invertMatrix(values: Float64Array, n: number): Float64Array {
  const a = Float64Array.from(values);
  const inv = new Float64Array(n * n);
  for (let i = 0; i < n; i++) inv[i * n + i] = 1;
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r * n + col]) > Math.abs(a[pivot * n + col])) pivot = r;
    if (a[pivot * n + col] === 0) throw new Error("matrix is singular");
    for (let c = 0; c < n; c++) {
      [a[col * n + c], a[pivot * n + c]] = [a[pivot * n + c], a[col * n + c]];
      [inv[col * n + c], inv[pivot * n + c]] = [inv[pivot * n + c], inv[col * n + c]];
    }
    const scale = a[col * n + col];
    for (let c = 0; c < n; c++) {
      a[col * n + c] /= scale;
      inv[col * n + c] /= scale;
    }
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = a[r * n + col];
      if (factor === 0) continue;
      for (let c = 0; c < n; c++) {
        a[r * n + c] -= factor * a[col * n + c];
        inv[r * n + c] -= factor * inv[col * n + c];
      }
    }
  }
  return inv;
}
