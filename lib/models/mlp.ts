/**
 * Multilayer perceptrons on `[batch, features]` inputs.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";

/** Hidden-layer nonlinearities. */
export type Activation = "relu" | "leaky_relu";

/** Options of an {@linkcode Mlp}. */
export interface MlpOptions {
  activation?: Activation;
  /** Initialise the last layer to zero (the MLP starts as the zero map). */
  zeroLast?: boolean;
}

/** A fully connected network: sizes[0] → … → sizes[n], activation between layers, linear output. */
export class Mlp {
  readonly sizes: readonly number[];
  #params: Params;
  #prefix: string;
  #activation: Activation;

  constructor(rng: Rng, params: Params, prefix: string, sizes: number[], options: MlpOptions = {}) {
    this.sizes = sizes;
    this.#params = params;
    this.#prefix = prefix;
    this.#activation = options.activation ?? "relu";
    for (let i = 0; i + 1 < sizes.length; i++) {
      const last = i + 2 === sizes.length;
      if (last && options.zeroLast) params.addZeros(`${prefix}w${i}`, [sizes[i], sizes[i + 1]]);
      else params.addNormal(rng, `${prefix}w${i}`, sizes[i], sizes[i + 1], last ? 1 : Math.SQRT2);
      params.addZeros(`${prefix}b${i}`, [sizes[i + 1]]);
    }
  }

  /** Maps `[batch, sizes[0]]` to `[batch, sizes.at(-1)]`. */
  apply(x: tf.Tensor2D): tf.Tensor2D {
    let h = x;
    const layers = this.sizes.length - 1;
    for (let i = 0; i < layers; i++) {
      h = tf.add(tf.matMul(h, this.#params.get(`${this.#prefix}w${i}`)), this.#params.get(`${this.#prefix}b${i}`));
      if (i + 1 < layers) h = this.#activation === "relu" ? tf.relu(h) : tf.leakyRelu(h, 0.2);
    }
    return h;
  }
}
