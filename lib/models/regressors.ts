/**
 * The supervised regressors of the in-domain generalization benchmark
 * (Schott2022 App. H.3–H.4) and the
 * readout MLP on a frozen encoder: each maps images `[batch, size, size,
 * channels]` in [0, 1] to factor predictions `[batch, outputs]`, and is
 * trained with the per-batch MSE Σ_j ‖y_j − f(x_j)‖² / b.
 *
 * Where the paper leaves a choice open or cannot be followed offline, the
 * choice is said at the builder and collected in {@linkcode MODEL_NOTES} for
 * the run's JSON. Convolutions are Glorot-uniform (as the disentanglement_lib
 * networks they sit beside), fully connected stacks are {@linkcode Mlp}s
 * (He-normal); the paper's PyTorch defaults are not reproduced.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { checkInput, convFeatures, convLayer, dense, type ImageSize } from "./dislib_vae.ts";
import { Mlp } from "./mlp.ts";
import { Params } from "./params.ts";
import type { Encoder } from "./vae.ts";

/** A regressor: its parameters and its forward map (call it inside `tf.tidy`). */
export interface Regressor {
  /** Its trainable parameters. */
  params: Params;
  /** Images `[batch, size, size, channels]` in [0, 1] → predictions `[batch, outputs]`. */
  predict(x: tf.Tensor4D): tf.Tensor2D;
}

/** The input image and the number of factors a regressor predicts. */
export interface RegressorOptions {
  /** Image side, pixels. */
  size: ImageSize;
  /** Image channels. */
  channels: number;
  /** Factors predicted, the width of the output. */
  outputs: number;
}

/** Hidden widths of the MLP regressor (App. H.4; the printed "Linear(22, n)" is read as 45). */
export const MLP_HIDDEN = [90, 90, 90, 90, 45] as const;

/** MLP: the flattened image through 90-90-90-90-45 ReLU layers to a linear output. */
export function mlpRegressor(rng: Rng, options: RegressorOptions): Regressor {
  const params = new Params();
  const pixels = options.size * options.size * options.channels;
  const mlp = new Mlp(rng, params, "mlp/", [pixels, ...MLP_HIDDEN, options.outputs]);
  return {
    params,
    predict: (x) => {
      checkInput(x, options, "MLP regressor");
      return mlp.apply(tf.reshape(x, [x.shape[0], pixels]));
    },
  };
}

/**
 * CNN: the disentanglement_lib conv encoder's body (4×4 stride-2 convs, FC
 * 256) with a linear head. The reference `VanillaCNN`'s final 4×4 "valid"
 * conv on a 4×4 map is the same map as our FC 256.
 */
export function cnnRegressor(rng: Rng, options: RegressorOptions): Regressor {
  const params = new Params();
  const features = convFeatures(params, rng, options);
  const head = dense(params, rng, "out", 256, options.outputs);
  return {
    params,
    predict: (x) => {
      checkInput(x, options, "CNN regressor");
      return head(features(x));
    },
  };
}

/** Rows then columns of a `height × width` image as `[1, height, width, 2]`: (i/(h−1), j/(w−1)). */
function coordinateGrid(height: number, width: number): tf.Tensor4D {
  const values = new Float32Array(height * width * 2);
  for (let i = 0; i < height; i++) {
    for (let j = 0; j < width; j++) {
      values[2 * (i * width + j)] = height > 1 ? i / (height - 1) : 0;
      values[2 * (i * width + j) + 1] = width > 1 ? j / (width - 1) : 0;
    }
  }
  return tf.tensor4d(values, [1, height, width, 2]);
}

/** The grid of {@linkcode coordinateGrid} repeated over the batch of `x`. */
function batchCoordinates(x: tf.Tensor4D): tf.Tensor4D {
  const [batch, height, width] = x.shape;
  return tf.tile(coordinateGrid(height, width), [batch, 1, 1, 1]);
}

/**
 * CoordConv's input: `[batch, h, w, c]` → `[batch, h, w, c + 2]`, the image's
 * channels followed by the row i/(h−1) and the column j/(w−1) of each pixel.
 */
export function addCoordinateChannels(x: tf.Tensor4D): tf.Tensor4D {
  return tf.concat([x, batchCoordinates(x)], 3);
}

/** CoordConv's strides after its coordinate layer: three halvings, then two layers at the last resolution. */
const COORD_CONV_STRIDES = [2, 2, 2, 1, 1];

/**
 * CoordConv: a 3×3 conv to 16 channels on the image with coordinate
 * channels, five (ReLU, 3×3 conv 16→16) of which the first three have stride
 * 2, a global max-pool, and Linear(16, 32), ReLU, Linear(32, outputs).
 * App. H.4 gives neither kernels, strides nor the pooled size, and prints
 * Linear(32, 32) after 16 channels; a 1×1 pool makes that 16 inputs.
 */
export function coordConvRegressor(rng: Rng, options: RegressorOptions): Regressor {
  const params = new Params();
  const coordConv = convLayer(params, rng, "coord_conv", 3, options.channels + 2, 16, 1);
  const convs = COORD_CONV_STRIDES.map((stride, i) => convLayer(params, rng, `conv${i}`, 3, 16, 16, stride));
  const head = new Mlp(rng, params, "head/", [16, 32, options.outputs]);
  return {
    params,
    predict: (x) => {
      checkInput(x, options, "CoordConv regressor");
      const h = convs.reduce((acc, conv) => conv(tf.relu(acc)), coordConv(addCoordinateChannels(x)));
      return head.apply(tf.max(h, [1, 2]) as tf.Tensor2D);
    },
  };
}

/**
 * Each pixel of `x` as the tuple (i/(h−1), j/(w−1), channel values):
 * `[batch, h, w, c]` → `[batch, h·w, 2 + c]`, pixels in row-major order.
 */
export function pixelTuples(x: tf.Tensor4D): tf.Tensor3D {
  const [batch, height, width, channels] = x.shape;
  return tf.reshape(tf.concat([batchCoordinates(x), x], 3), [batch, height * width, 2 + channels]);
}

/** A SetEncoder, which also reads pixel tuples directly (in any order). */
export interface SetEncoderRegressor extends Regressor {
  /** Tuples `[batch, pixels, 2 + channels]` as {@linkcode pixelTuples} makes them → `[batch, outputs]`. */
  predictSet(tuples: tf.Tensor3D): tf.Tensor2D;
}

/**
 * SetEncoder: a shared per-pixel network [2+c → 40 → 40 → 20] (ReLU after
 * each layer) on {@linkcode pixelTuples}, the mean over pixels, and
 * [20 → 20 → 20 → outputs]. The mean makes it a function of the set of
 * tuples. The first layer's width, not printed in App. H.4, is 40.
 */
export function setEncoderRegressor(rng: Rng, options: RegressorOptions): SetEncoderRegressor {
  const params = new Params();
  const features = 2 + options.channels;
  const pixelNet = new Mlp(rng, params, "pixel/", [features, 40, 40, 20]);
  const head = new Mlp(rng, params, "head/", [20, 20, 20, options.outputs]);
  const predictSet = (tuples: tf.Tensor3D): tf.Tensor2D => {
    const [batch, pixels] = tuples.shape;
    const perPixel = tf.relu(pixelNet.apply(tf.reshape(tuples, [batch * pixels, features])));
    return head.apply(tf.mean(tf.reshape(perPixel, [batch, pixels, 20]), 1) as tf.Tensor2D);
  };
  return {
    params,
    predictSet,
    predict: (x) => {
      checkInput(x, options, "SetEncoder regressor");
      return predictSet(pixelTuples(x));
    },
  };
}

/** Channels of the ResNet stand-in's three stages (two basic blocks each). */
export const RESNET_STAGES = [16, 32, 64] as const;
const GROUP_NORM_GROUPS = 8;

/**
 * Group normalization (Wu & He 2018) over `groups` channel groups with a
 * learned per-channel scale `${key}/gamma` (ones) and offset `${key}/beta`
 * (zeros); BiT's ResNets normalise so, and it needs no batch statistics.
 */
function groupNorm(params: Params, key: string, channels: number): (x: tf.Tensor4D) => tf.Tensor4D {
  params.add(`${key}/gamma`, new Float32Array(channels).fill(1), [channels]);
  params.addZeros(`${key}/beta`, [channels]);
  return (x) => {
    const [batch, height, width] = x.shape;
    const grouped = tf.reshape(x, [batch, height, width, GROUP_NORM_GROUPS, channels / GROUP_NORM_GROUPS]);
    const { mean, variance } = tf.moments(grouped, [1, 2, 4], true);
    const normalised = tf.reshape(tf.div(tf.sub(grouped, mean), tf.sqrt(tf.add(variance, 1e-5))), x.shape);
    return tf.add(tf.mul(normalised, params.get(`${key}/gamma`)), params.get(`${key}/beta`));
  };
}

/**
 * A pre-activation basic block (ResNet v2, as BiT): GN, ReLU, 3×3 conv at
 * `stride`, GN, ReLU, 3×3 conv, plus the input, through a 1×1 projection of
 * the pre-activated input where the shape changes.
 */
function basicBlock(
  params: Params,
  rng: Rng,
  key: string,
  inputs: number,
  outputs: number,
  stride: number,
): (x: tf.Tensor4D) => tf.Tensor4D {
  const norm1 = groupNorm(params, `${key}/gn1`, inputs);
  const conv1 = convLayer(params, rng, `${key}/conv1`, 3, inputs, outputs, stride);
  const norm2 = groupNorm(params, `${key}/gn2`, outputs);
  const conv2 = convLayer(params, rng, `${key}/conv2`, 3, outputs, outputs, 1);
  const projection = stride !== 1 || inputs !== outputs
    ? convLayer(params, rng, `${key}/projection`, 1, inputs, outputs, stride)
    : null;
  return (x) => {
    const activated = tf.relu(norm1(x));
    const shortcut = projection ? projection(activated) : x;
    return tf.add(shortcut, conv2(tf.relu(norm2(conv1(activated)))));
  };
}

/**
 * ResNet: a 3×3 stem conv to 16 channels, three stages of two pre-activation
 * basic blocks with 16, 32 and 64 channels (the second and third halve the
 * resolution), GN, ReLU, global average pool and a linear head. It stands in
 * for the paper's random-init and BiT-pretrained ResNet-50: BiT's weights
 * cannot be fetched offline and ResNet-50 is beyond a CPU budget. GroupNorm
 * follows BiT; its weight standardisation is left out.
 */
export function resnetRegressor(rng: Rng, options: RegressorOptions): Regressor {
  const params = new Params();
  const stem = convLayer(params, rng, "stem", 3, options.channels, RESNET_STAGES[0], 1);
  const blocks: ((x: tf.Tensor4D) => tf.Tensor4D)[] = [];
  let inputs: number = RESNET_STAGES[0];
  RESNET_STAGES.forEach((outputs, stage) => {
    for (let b = 0; b < 2; b++) {
      const stride = stage > 0 && b === 0 ? 2 : 1;
      blocks.push(basicBlock(params, rng, `stage${stage}/block${b}`, inputs, outputs, stride));
      inputs = outputs;
    }
  });
  const finalNorm = groupNorm(params, "final_gn", inputs);
  const head = dense(params, rng, "out", inputs, options.outputs);
  return {
    params,
    predict: (x) => {
      checkInput(x, options, "ResNet regressor");
      const h = blocks.reduce((acc, block) => block(acc), stem(x));
      return head(tf.mean(tf.relu(finalNorm(h)), [1, 2]) as tf.Tensor2D);
    },
  };
}

/** Options of a {@linkcode readout}. */
export interface ReadoutOptions {
  /** Factors predicted, the width of the output. */
  outputs: number;
  /** Width of the codes read (the encoder's latent size). */
  inputs?: number;
  /** The frozen encoder whose mean `predict` reads; without it only `fromCodes` applies. */
  encoder?: Encoder;
}

/** A readout MLP: `predict` reads the frozen encoder's mean, `fromCodes` any codes (ground truth for the oracle). */
export interface Readout extends Regressor {
  /** Codes `[batch, inputs]` → `[batch, outputs]`. */
  fromCodes(codes: tf.Tensor2D): tf.Tensor2D;
}

/**
 * The readout of App. H.3: [inputs → 40 → 40 → 40 → outputs] with ReLU on
 * the encoder's mean. Only the readout's own `params` are trained, which is
 * what keeps the encoder frozen.
 */
export function readout(rng: Rng, options: ReadoutOptions): Readout {
  const params = new Params();
  const mlp = new Mlp(rng, params, "readout/", [options.inputs ?? 10, 40, 40, 40, options.outputs]);
  const fromCodes = (codes: tf.Tensor2D) => mlp.apply(codes);
  return {
    params,
    fromCodes,
    predict: (x) => {
      if (!options.encoder) throw new Error("this readout has no encoder: give it codes through fromCodes");
      return fromCodes(options.encoder.encode(x).mean);
    },
  };
}

/** A regressor builder with what it is, for listings and run records. */
export interface RegressorSpec {
  /** One line on the architecture. */
  description: string;
  /** A fresh regressor initialised from `rng`. */
  build(rng: Rng, options: RegressorOptions): Regressor;
}

/** The supervised regressors by name. */
export const REGRESSORS = {
  cnn: {
    description: "disentanglement_lib conv encoder body (4×4 stride-2 convs, FC 256) + linear",
    build: cnnRegressor,
  },
  mlp: { description: "MLP 90-90-90-90-45 ReLU on the flattened image", build: mlpRegressor },
  coordconv: {
    description: "CoordConv: coordinate channels, 6 convs of 16 (3×3), global max-pool, 32 ReLU, linear",
    build: coordConvRegressor,
  },
  set_encoder: {
    description: "SetEncoder: per-pixel (i, j, values) MLP 40-40-20, mean over pixels, 20-20 ReLU, linear",
    build: setEncoderRegressor,
  },
  resnet: {
    description: "ResNet-v2 stand-in: 3 stages × 2 GroupNorm basic blocks (16/32/64), average pool, linear",
    build: resnetRegressor,
  },
} as const satisfies Record<string, RegressorSpec>;

/** A regressor's name. */
export type RegressorName = keyof typeof REGRESSORS;

/** The names of {@linkcode REGRESSORS}, in listing order. */
export const REGRESSOR_NAMES = Object.keys(REGRESSORS) as RegressorName[];

/** Where each model departs from, or fills in, App. H.4; an experiment copies it into its run JSON. */
export const MODEL_NOTES: Readonly<Record<RegressorName | "readout", readonly string[]>> = {
  cnn: [
    "disentanglement_lib encoder body (Table 2 4×4 kernels; at 32×32 one stride-2 stage fewer) + FC 256 + Linear(256, n)",
    "the reference VanillaCNN's last 4×4 valid conv on a 4×4 map equals the FC 256 layer",
    "Glorot-uniform kernels, zero biases (TensorFlow defaults), not PyTorch's",
  ],
  mlp: [
    "[h·w·c→90→90→90→90→45→n] ReLU; the printed Linear(22, n) is read as Linear(45, n)",
    "He-normal weights, zero biases",
  ],
  coordconv: [
    "coordinate channels i/(h−1), j/(w−1) in [0, 1] appended after the image channels",
    "kernels 3×3 (not given in the paper); CoordConv layer at stride 1, then 5 × (ReLU, conv 16→16) with strides 2, 2, 2, 1, 1",
    "max-pool to 1×1 (global), so the head is Linear(16, 32), ReLU, Linear(32, n) (paper prints Linear(32, 32))",
    "Glorot-uniform conv kernels, He-normal head",
  ],
  set_encoder: [
    "pixel tuples (i/(h−1), j/(w−1), values), per-pixel [2+c→40→40→20] ReLU (first width 40, not printed), mean-pool",
    "head [20→20→20→n] ReLU; He-normal weights",
  ],
  resnet: [
    "stand-in for random-init ResNet-50 / BiT-M-R50x1: BiT weights are unreachable offline",
    "3×3 stem to 16, 3 stages × 2 pre-activation basic blocks (16/32/64 channels, stride 2 at stages 2 and 3)",
    "GroupNorm (8 groups) as BiT, without weight standardisation; global average pool, Linear(64, n)",
    "random init (no pretraining): Glorot-uniform convs, zero biases",
  ],
  readout: [
    "[latents→40→40→40→n] ReLU on the frozen encoder's mean (latents = 10 by default); He-normal weights",
  ],
};

/** The benchmark's loss: Σ_j ‖y_j − f_j‖² / b, squared errors summed over factors and averaged over the batch. */
export function regressionLoss(predictions: tf.Tensor2D, targets: tf.Tensor2D): tf.Scalar {
  return tf.div(tf.sum(tf.squaredDifference(targets, predictions)), predictions.shape[0]);
}

/**
 * One optimizer step of {@linkcode regressionLoss} on `(x, y)` (App. H.3 uses
 * Adam 5e-4 and batches of 64) over `model.params`, inside a tidy scope.
 * `x` is whatever `model.predict` takes (codes for a readout's `fromCodes`);
 * `y` is `[batch, outputs]`. Resolves to the loss before the step.
 */
export async function regressionStep<X extends tf.Tensor>(
  model: { params: Params; predict(x: X): tf.Tensor2D },
  optimizer: tf.Optimizer,
  x: X,
  y: tf.Tensor2D,
): Promise<number> {
  const loss = tf.tidy(() => optimizer.minimize(() => regressionLoss(model.predict(x), y), true, model.params.list())!);
  const value = (await loss.data())[0];
  loss.dispose();
  return value;
}
