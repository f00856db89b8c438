/**
 * The encoders and decoders of disentanglement_lib (Locatello2019
 * Table 2): a convolutional pair for 64×64 images (4×4 kernels, stride
 * 2, "same" padding, 64 → 32 → 16 → 8 → 4), a 32×32 variant with one
 * stride-2 stage fewer, and the β-VAE paper's fully connected pair.
 * Glorot-uniform kernels and zero biases, as TensorFlow's defaults.
 *
 * Table 2's 4×4 kernels are used throughout; the released code uses 2×2
 * for encoder conv3 and conv4.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { latentlabWebgpu } from "../core/kernels/webgpu_host.ts";
import type { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";
import type { Decoder, Encoder } from "./vae.ts";

/** Image sizes the architectures are defined for. */
export type ImageSize = 32 | 64;

/** Options shared by the architectures. */
export interface ArchitectureOptions {
  /** Image side, pixels. */
  size: ImageSize;
  /** Image channels. */
  channels: number;
  /** Latent dimension. */
  latents: number;
}

/**
 * Adds a Glorot-uniform `[inputs, outputs]` kernel `${key}/w` and zero bias
 * `${key}/b` to `params`; returns the affine map `[batch, inputs]` → `[batch, outputs]`.
 */
export function dense(
  params: Params,
  rng: Rng,
  key: string,
  inputs: number,
  outputs: number,
): (x: tf.Tensor2D) => tf.Tensor2D {
  params.addGlorotUniform(rng, `${key}/w`, [inputs, outputs], inputs, outputs);
  params.addZeros(`${key}/b`, [outputs]);
  return (x) => {
    const w = params.get(`${key}/w`), b = params.get(`${key}/b`);
    // With latentlab's webgpu kernels the bias goes into the product's kernel: one launch fewer per layer and step.
    return (latentlabWebgpu() ? tf.fused.matMul({ a: x, b: w, bias: b }) : tf.add(tf.matMul(x, w), b)) as tf.Tensor2D;
  };
}

/**
 * Adds a Glorot-uniform `[kernel, kernel, inputs, outputs]` filter `${key}/w`
 * and zero bias `${key}/b` to `params`; returns the convolution with "same"
 * padding at `stride`, `[batch, h, w, inputs]` → `[batch, ⌈h/stride⌉, ⌈w/stride⌉, outputs]`.
 */
export function convLayer(
  params: Params,
  rng: Rng,
  key: string,
  kernel: number,
  inputs: number,
  outputs: number,
  stride: number,
): (x: tf.Tensor4D) => tf.Tensor4D {
  const area = kernel * kernel;
  params.addGlorotUniform(rng, `${key}/w`, [kernel, kernel, inputs, outputs], area * inputs, area * outputs);
  params.addZeros(`${key}/b`, [outputs]);
  return (x) => {
    const filter = params.get(`${key}/w`) as tf.Tensor4D, bias = params.get(`${key}/b`);
    return latentlabWebgpu()
      ? tf.fused.conv2d({ x, filter, strides: stride, pad: "same", bias })
      : tf.add(tf.conv2d(x, filter, stride, "same"), bias);
  };
}

/**
 * Throws unless `x` is `[batch, size, size, channels]`: a mismatched image
 * would otherwise surface as a reshape error deep inside the network.
 * `network` names it in the message ("conv encoder").
 */
export function checkInput(
  x: tf.Tensor4D,
  options: Pick<ArchitectureOptions, "size" | "channels">,
  network: string,
): void {
  const [, h, w, c] = x.shape;
  if (h !== options.size || w !== options.size || c !== options.channels) {
    throw new RangeError(
      `the ${network} takes [batch, ${options.size}, ${options.size}, ${options.channels}] images, ` +
        `got [${x.shape}]`,
    );
  }
}

/** Conv channel plan per size: 64×64 has four stride-2 stages, 32×32 drops the second 32. */
function convChannels(size: ImageSize): number[] {
  return size === 64 ? [32, 32, 64, 64] : [32, 64, 64];
}

/**
 * The body of the convolutional encoder of Table 2: the stride-2 4×4 conv
 * stack down to 4×4 and FC 256, all ReLU, as parameters `conv{i}` and `fc` of
 * `params`. Returns the map `[batch, size, size, channels]` → `[batch, 256]`
 * that heads (Gaussian, regression) read.
 */
export function convFeatures(
  params: Params,
  rng: Rng,
  options: Pick<ArchitectureOptions, "size" | "channels">,
): (x: tf.Tensor4D) => tf.Tensor2D {
  let inputs = options.channels;
  const convs = convChannels(options.size).map((outputs, i) => {
    const layer = convLayer(params, rng, `conv${i}`, 4, inputs, outputs, 2);
    inputs = outputs;
    return layer;
  });
  const flat = 4 * 4 * inputs;
  const hidden = dense(params, rng, "fc", flat, 256);
  return (x) => {
    const h = convs.reduce((acc, conv) => tf.relu(conv(acc)), x);
    return tf.relu(hidden(tf.reshape(h, [x.shape[0], flat])));
  };
}

/**
 * A Gaussian encoder over `features` (images → `[batch, width]`, already in `params`): dense
 * mean and log-variance heads `[batch, latents]`, initialised from `rng` after the features.
 * `what` names the encoder in input errors.
 */
function gaussianEncoder(
  params: Params,
  rng: Rng,
  options: ArchitectureOptions,
  what: string,
  width: number,
  features: (x: tf.Tensor4D) => tf.Tensor2D,
): Encoder {
  const mean = dense(params, rng, "mean", width, options.latents);
  const logVar = dense(params, rng, "log_var", width, options.latents);
  return {
    params,
    encode: (x) => {
      checkInput(x, options, what);
      const h = features(x);
      return { mean: mean(h), logVar: logVar(h) };
    },
  };
}

/** The convolutional encoder of Table 2. */
export function convEncoder(rng: Rng, options: ArchitectureOptions): Encoder {
  const params = new Params();
  const features = convFeatures(params, rng, options);
  return gaussianEncoder(params, rng, options, "conv encoder", 256, features);
}

/** The transposed-convolution decoder of Table 2, mirrored for 32×32. */
export function convDecoder(rng: Rng, options: ArchitectureOptions): Decoder {
  const params = new Params();
  const fc1 = dense(params, rng, "fc1", options.latents, 256);
  const fc2 = dense(params, rng, "fc2", 256, 4 * 4 * 64);
  // Up-convolutions: 64 → 32 → 32 → channels (64×64) or 64 → 32 → channels (32×32).
  const plan = [...convChannels(options.size).slice(0, -1).reverse(), options.channels];
  let inputs = 64;
  plan.forEach((outputs, i) => {
    // conv2dTranspose filters are [h, w, outputs, inputs].
    params.addGlorotUniform(rng, `upconv${i}/w`, [4, 4, outputs, inputs], 16 * inputs, 16 * outputs);
    params.addZeros(`upconv${i}/b`, [outputs]);
    inputs = outputs;
  });
  return {
    params,
    decode: (z) => {
      const batch = z.shape[0];
      let h = tf.reshape(tf.relu(fc2(tf.relu(fc1(z)))), [batch, 4, 4, 64]) as tf.Tensor4D;
      let side = 4;
      plan.forEach((outputs, i) => {
        side *= 2;
        const w = params.get(`upconv${i}/w`) as tf.Tensor4D;
        h = tf.add(tf.conv2dTranspose(h, w, [batch, side, side, outputs], 2, "same"), params.get(`upconv${i}/b`));
        if (i + 1 < plan.length) h = tf.relu(h);
      });
      return h;
    },
  };
}

/** The β-VAE paper's fully connected encoder: FC 1200 ReLU, FC 1200 ReLU, mean and log-variance heads. */
export function mlpEncoder(rng: Rng, options: ArchitectureOptions): Encoder {
  const params = new Params();
  const pixels = options.size * options.size * options.channels;
  const fc1 = dense(params, rng, "fc1", pixels, 1200);
  const fc2 = dense(params, rng, "fc2", 1200, 1200);
  const features = (x: tf.Tensor4D) => tf.relu(fc2(tf.relu(fc1(tf.reshape(x, [x.shape[0], pixels])))));
  return gaussianEncoder(params, rng, options, "MLP encoder", 1200, features);
}

/** The β-VAE paper's fully connected decoder: FC 1200 tanh ×3, FC to pixels (logits). */
export function mlpDecoder(rng: Rng, options: ArchitectureOptions): Decoder {
  const params = new Params();
  const pixels = options.size * options.size * options.channels;
  const layers = [
    dense(params, rng, "fc1", options.latents, 1200),
    dense(params, rng, "fc2", 1200, 1200),
    dense(params, rng, "fc3", 1200, 1200),
  ];
  const out = dense(params, rng, "out", 1200, pixels);
  return {
    params,
    decode: (z) => {
      const h = layers.reduce((acc, layer) => tf.tanh(layer(acc)), z);
      return tf.reshape(out(h), [z.shape[0], options.size, options.size, options.channels]) as tf.Tensor4D;
    },
  };
}

/** The two architectures of disentanglement_lib. */
export type Architecture = "conv" | "mlp";

/** An encoder and a decoder of the given architecture (encoder initialised first, from the same `rng`). */
export function vaeNetworks(rng: Rng, architecture: Architecture, options: ArchitectureOptions): {
  encoder: Encoder;
  decoder: Decoder;
} {
  const encoder = architecture === "conv" ? convEncoder(rng, options) : mlpEncoder(rng, options);
  const decoder = architecture === "conv" ? convDecoder(rng, options) : mlpDecoder(rng, options);
  return { encoder, decoder };
}
