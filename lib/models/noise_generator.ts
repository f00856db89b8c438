/**
 * The adversarial noise generator of ANT (Rusak2020 §3.2,
 * App. A; bethgelab/game-of-noise `Networks/generators.py`): Gaussian noise z
 * of the image's shape through 1×1 convolutions C→20→20→20→C with ReLU between,
 * plus z (one residual). 1×1 kernels keep the noise independent across pixels
 * (channels may correlate); the `3x3` variant's second convolution is 3×3
 * valid on a z two pixels larger, which limits correlations to 3×3 patches.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";

/** `1x1`: every convolution 1×1 (ANT1x1); `3x3`: the second one 3×3 valid (ANT3x3). */
export type GeneratorKind = "1x1" | "3x3";

/** The generator kinds, for messages and configs. */
export const GENERATOR_KINDS: readonly GeneratorKind[] = ["1x1", "3x3"];

/** Hidden feature maps of every layer (Table 1 of App. A). */
const HIDDEN = 20;

/** A noise generator δ = g(z): trainable parameters and the map from z to noise. */
export interface NoiseGenerator {
  /** Trainable weights of the convolutions. */
  params: Params;
  /** Convolution layout. */
  kind: GeneratorKind;
  /** Channels C of the images the noise is added to. */
  channels: number;
  /**
   * The noise for z `[b, s', s', C]` with s' = {@linkcode generatorInputSide}(kind, s):
   * `[b, s, s, C]`. Records gradients when called inside a gradient scope.
   */
  noise(z: tf.Tensor4D): tf.Tensor4D;
}

/** A generator's weights copied at one moment (ANT's experience replay): frozen, not trainable. */
export interface FrozenNoiseGenerator {
  /** Convolution layout. */
  kind: GeneratorKind;
  /** Channels C of the images the noise is added to. */
  channels: number;
  /** As {@linkcode NoiseGenerator.noise}. */
  noise(z: tf.Tensor4D): tf.Tensor4D;
  /** Frees the copied weights. */
  dispose(): void;
}

/** Side of the z a generator of `kind` needs for images of side `side` (px): side + 2 for `3x3`. */
export function generatorInputSide(kind: GeneratorKind, side: number): number {
  checkKind(kind);
  return kind === "3x3" ? side + 2 : side;
}

/**
 * A fresh generator for `channels`-channel images: weights N(0, 0.01²), biases 0
 * (the reference's `custom_init`), so at initialisation g(z) ≈ z. Parameters:
 * 901 for C = 1 and 983 for C = 3 (`1x1`); 4,101 and 4,183 (`3x3`).
 */
export function noiseGenerator(rng: Rng, channels: number, kind: GeneratorKind): NoiseGenerator {
  checkKind(kind);
  if (!(Number.isInteger(channels) && channels >= 1)) {
    throw new UsageError(`generator channels must be an integer ≥ 1, got ${channels}`);
  }
  const params = new Params();
  const layers: [number, number, number][] = [
    [1, channels, HIDDEN],
    [kind === "3x3" ? 3 : 1, HIDDEN, HIDDEN],
    [1, HIDDEN, HIDDEN],
    [1, HIDDEN, channels],
  ];
  layers.forEach(([k, cin, cout], i) => {
    params.add(`conv${i}/w`, rng.normalArray(k * k * cin * cout, 0.01), [k, k, cin, cout]);
    params.addZeros(`conv${i}/b`, [cout]);
  });
  return { params, kind, channels, noise: (z) => generatorForward(kind, params.list(), z) };
}

/** A frozen copy of `generator`'s current weights; dispose it when done. */
export function freezeGenerator(generator: NoiseGenerator): FrozenNoiseGenerator {
  const weights = generator.params.list().map((v) => tf.keep(tf.clone(v)));
  const { kind, channels } = generator;
  return { kind, channels, noise: (z) => generatorForward(kind, weights, z), dispose: () => tf.dispose(weights) };
}

/** The forward map with weights [w0, b0, …, w3, b3]. */
function generatorForward(kind: GeneratorKind, weights: readonly tf.Tensor[], z: tf.Tensor4D): tf.Tensor4D {
  return tf.tidy(() => {
    let h: tf.Tensor4D = z;
    for (let i = 0; i < 4; i++) {
      h = tf.add(tf.conv2d(h, weights[2 * i] as tf.Tensor4D, 1, "valid"), weights[2 * i + 1]);
      if (i < 3) h = tf.relu(h);
    }
    // The 3×3 valid convolution shrinks the side by 2: the residual is z's centre crop.
    const residual = kind === "3x3" ? tf.slice(z, [0, 1, 1, 0], [-1, z.shape[1] - 2, z.shape[2] - 2, -1]) : z;
    return tf.add(h, residual);
  });
}

function checkKind(kind: GeneratorKind): void {
  if (!GENERATOR_KINDS.includes(kind)) {
    throw new UsageError(`unknown generator kind "${kind}"; valid: ${GENERATOR_KINDS.join(", ")}`);
  }
}
