/**
 * Multilayer perceptrons on `[batch, features]` inputs.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import type { Decoder, Encoder } from "./vae.ts";
import { Params } from "./params.ts";

/** Hidden-layer nonlinearities ("tanh" for the smooth MLPs of the VAE–PCA experiments). */
export type Activation = "relu" | "leaky_relu" | "tanh";

/** Options of an {@linkcode Mlp}. */
export interface MlpOptions {
  /** Hidden-layer nonlinearity (default "relu"). */
  activation?: Activation;
  /** Initialise the last layer to zero (the MLP starts as the zero map). */
  zeroLast?: boolean;
}

/** A fully connected network: sizes[0] → … → sizes[n], activation between layers, linear output. */
export class Mlp {
  /** Layer widths, input first. */
  readonly sizes: readonly number[];
  #params: Params;
  #prefix: string;
  #activation: Activation;

  /**
   * Adds `${prefix}w{i}` (He-normal; the last layer gain 1, or zero with `zeroLast`) and zero `${prefix}b{i}` to
   * `params`.
   */
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
      if (i + 1 < layers) h = activate(h, this.#activation);
    }
    return h;
  }
}

function activate(h: tf.Tensor2D, activation: Activation): tf.Tensor2D {
  switch (activation) {
    case "relu":
      return tf.relu(h);
    case "leaky_relu":
      return tf.leakyRelu(h, 0.2);
    case "tanh":
      return tf.tanh(h);
  }
}

/**
 * A Gaussian encoder (mean and log-variance heads as one output layer) and a
 * decoder, each an {@linkcode Mlp} over the flattened `shape`: the small VAEs
 * of the toy experiments and tests, in the same interface as the image VAEs.
 */
export function mlpVae(
  rng: Rng,
  shape: [number, number, number],
  latents: number,
  hidden: number[],
  options: MlpOptions = {},
): { encoder: Encoder; decoder: Decoder; dispose(): void } {
  const size = shape[0] * shape[1] * shape[2];
  const encoderParams = new Params(), decoderParams = new Params();
  const enc = new Mlp(rng, encoderParams, "enc/", [size, ...hidden, 2 * latents], options);
  const dec = new Mlp(rng, decoderParams, "dec/", [latents, ...hidden, size], options);
  const encoder: Encoder = {
    params: encoderParams,
    encode: (x) => {
      const out = enc.apply(tf.reshape(x, [x.shape[0], size]) as tf.Tensor2D);
      return { mean: tf.slice(out, [0, 0], [-1, latents]), logVar: tf.slice(out, [0, latents], [-1, latents]) };
    },
  };
  const decoder: Decoder = {
    params: decoderParams,
    decode: (z) => tf.reshape(dec.apply(z), [z.shape[0], ...shape]) as tf.Tensor4D,
  };
  return { encoder, decoder, dispose: () => (encoderParams.dispose(), decoderParams.dispose()) };
}
