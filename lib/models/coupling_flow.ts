/**
 * Volume-preserving normalizing flow x ↦ z made of additive coupling blocks
 * (NICE, Dinh et al. 2015), the SlowFlow encoder of Paper A App. F.1.2
 * (000_306f4209a39c5a17.md §2.2): 6 blocks, each a 2-layer MLP.
 *
 * Block k permutes the coordinates with a fixed random permutation, then
 * shifts the second half by an MLP of the first half; both have Jacobian
 * determinant 1. A final elementwise scale exp(s) lets the flow match the
 * prior's scale; it mixes no coordinates (identifiability is unaffected)
 * and contributes Σ s to log|det J|.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { Mlp } from "./mlp.ts";
import { Params } from "./params.ts";

/** Options of a {@linkcode CouplingFlow}. */
export interface CouplingFlowOptions {
  dim: number;
  blocks: number;
  hidden: number;
}

function permutationMatrix(permutation: Int32Array): tf.Tensor2D {
  const n = permutation.length;
  const values = new Float32Array(n * n);
  for (let i = 0; i < n; i++) values[permutation[i] * n + i] = 1;
  return tf.tensor2d(values, [n, n]);
}

/** An additive-coupling flow with an elementwise output scale. */
export class CouplingFlow {
  readonly params = new Params();
  readonly dim: number;
  #couplings: Mlp[] = [];
  /** Permutations as matrices: a matmul's gradient is available on every backend, gather's is not on wasm. */
  #permutations: tf.Tensor2D[] = [];
  #half: number;

  constructor(rng: Rng, options: CouplingFlowOptions) {
    this.dim = options.dim;
    this.#half = Math.floor(options.dim / 2);
    for (let k = 0; k < options.blocks; k++) {
      this.#permutations.push(permutationMatrix(rng.permutation(options.dim)));
      // Zero last layer: the flow starts as a permutation, a stable starting point.
      this.#couplings.push(
        new Mlp(rng, this.params, `block${k}/`, [this.#half, options.hidden, options.dim - this.#half], {
          zeroLast: true,
        }),
      );
    }
    this.params.addZeros("log_scale", [options.dim]);
  }

  /** Maps `[batch, dim]` data to `[batch, dim]` latents. */
  forward(x: tf.Tensor2D): tf.Tensor2D {
    let h = x;
    for (let k = 0; k < this.#couplings.length; k++) {
      h = tf.matMul(h, this.#permutations[k]);
      const a = tf.slice(h, [0, 0], [-1, this.#half]);
      const b = tf.slice(h, [0, this.#half], [-1, this.dim - this.#half]);
      h = tf.concat([a, tf.add(b, this.#couplings[k].apply(a))], 1);
    }
    return tf.mul(h, tf.exp(this.params.get("log_scale")));
  }

  /** Maps latents back to data: the exact inverse of {@linkcode forward}. */
  inverse(z: tf.Tensor2D): tf.Tensor2D {
    let h = tf.div(z, tf.exp(this.params.get("log_scale"))) as tf.Tensor2D;
    for (let k = this.#couplings.length - 1; k >= 0; k--) {
      const a = tf.slice(h, [0, 0], [-1, this.#half]);
      const b = tf.slice(h, [0, this.#half], [-1, this.dim - this.#half]);
      h = tf.concat([a, tf.sub(b, this.#couplings[k].apply(a))], 1);
      h = tf.matMul(h, this.#permutations[k], false, true);
    }
    return h;
  }

  /** log|det ∂z/∂x|, the same for every input (a scalar). */
  logDetJacobian(): tf.Scalar {
    return tf.sum(this.params.get("log_scale"));
  }

  /** Frees the parameters and the fixed permutations. */
  dispose(): void {
    this.params.dispose();
    tf.dispose(this.#permutations);
  }
}
