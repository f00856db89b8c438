/**
 * A DeepLabCut-style keypoint network at toy scale (Schneider2023 Ch. 5):
 * a BatchNorm conv backbone of four stages (16, 32, 64, 64 channels, stride 2 except the last,
 * which keeps stride 1 as DeepLabCut changes ResNet's last stride, output stride 8) and a 3×3
 * transposed convolution of stride 2 that predicts, at stride 4, one score-map logit and two
 * location-refinement channels per keypoint. Input `[b, 64, 64, 3]` in [0, 1].
 *
 * For "pretraining" the same backbone feeds classification heads (global average pool, one
 * dense layer per head), trained on a procedural task before the pose head is: the toolkit's
 * stand-in for ImageNet weights, a different intervention (the issue says so; no ImageNet here).
 *
 * BatchNorm follows torch `BatchNorm2d` (ε 1e-5, momentum 0.1 of the running statistics, the
 * biased batch variance normalises, the unbiased one is kept); every norm layer can also use
 * given statistics, which is what BN adaptation swaps in (lib/adapt/bn_adapt.ts
 * `stagedFullStats`). Convolutions before a BatchNorm carry no bias (β plays its part). He
 * initialisation (the paper's from-scratch models).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { applyBatchMoments, type BatchMoments } from "./conv_bn.ts";
import { batchNorm2d, batchNorm2dTrain, type NormStats } from "./bn_cnn.ts";
import { Params } from "./params.ts";

/** Image side the network takes. */
export const POSE_NET_SIDE = 64;
/** Channels of the four backbone stages. */
export const POSE_STAGE_CHANNELS: readonly number[] = [16, 32, 64, 64];
/** Strides of the four stages: the last stays at 1 (DeepLabCut's output-stride change). */
export const POSE_STAGE_STRIDES: readonly number[] = [2, 2, 2, 1];
/** Stride of the score maps: backbone stride 8, halved by the transposed convolution. */
export const POSE_MAP_STRIDE = 4;

/** How the BatchNorm layers normalise in a forward pass. */
export type PoseNormMode =
  /** Training: batch moments normalise; they are recorded for the running statistics. */
  | { kind: "train" }
  /** The stored running statistics (inference). */
  | { kind: "source" }
  /** Given statistics per norm layer (BN adaptation). */
  | { kind: "fixed"; stats: NormStats };

/** Options of a {@linkcode PoseNet}. */
export interface PoseNetOptions {
  /** Keypoints K (≥ 2); the pose head has 3K channels. */
  keypoints: number;
  /** Sizes of the classification heads used for pretraining (none: a scratch-only net). */
  classHeads?: readonly number[];
  /** Convolutions per stage: the first carries the stage's stride (default 2). */
  convsPerStage?: number;
}

/** He-normal conv kernel [k, k, in, out]: N(0, 2/fanIn). */
function addHeConv(params: Params, rng: Rng, key: string, kernel: number, inputs: number, outputs: number): void {
  const fanIn = kernel * kernel * inputs;
  params.add(key, rng.normalArray(kernel * kernel * inputs * outputs, Math.sqrt(2 / fanIn)), [
    kernel,
    kernel,
    inputs,
    outputs,
  ]);
}

/** The keypoint network; dispose it when done. */
export class PoseNet {
  /** Trainable weights: `stage{s}/conv{c}/…`, `head/…` and `class{h}/…`. */
  readonly params = new Params();
  /** Running BatchNorm statistics, moved by assignment only. */
  readonly stats = new Params();
  /** Keypoints K. */
  readonly keypoints: number;
  /** Classes of each pretraining head. */
  readonly classHeads: readonly number[];
  /** Channels of each norm layer in forward order. */
  readonly normChannels: readonly number[];
  readonly #layers: { key: string; stride: number }[] = [];

  /** He-normal kernels from `rng`; throws a UsageError on bad options. */
  constructor(rng: Rng, options: PoseNetOptions) {
    const { keypoints } = options;
    const classHeads = options.classHeads ?? [];
    const convsPerStage = options.convsPerStage ?? 2;
    if (!Number.isInteger(keypoints) || keypoints < 2) {
      throw new UsageError(`a pose net needs an integer number of keypoints ≥ 2, got ${keypoints}`);
    }
    if (!Number.isInteger(convsPerStage) || convsPerStage < 1 || convsPerStage > 8) {
      throw new UsageError(`convsPerStage must be an integer in 1..8, got ${convsPerStage}`);
    }
    for (const size of classHeads) {
      if (!Number.isInteger(size) || size < 2) throw new UsageError(`class heads need ≥ 2 classes, got ${size}`);
    }
    this.keypoints = keypoints;
    this.classHeads = [...classHeads];
    const channels: number[] = [];
    let inputs = 3;
    POSE_STAGE_CHANNELS.forEach((outputs, stage) => {
      for (let c = 0; c < convsPerStage; c++) {
        const key = `stage${stage}/conv${c}`;
        addHeConv(this.params, rng, `${key}/w`, 3, inputs, outputs);
        this.params.add(`${key}/gamma`, new Float32Array(outputs).fill(1), [outputs]);
        this.params.addZeros(`${key}/beta`, [outputs]);
        this.stats.addZeros(`${key}/mean`, [outputs]).trainable = false;
        this.stats.add(`${key}/var`, new Float32Array(outputs).fill(1), [outputs]).trainable = false;
        this.#layers.push({ key, stride: c === 0 ? POSE_STAGE_STRIDES[stage] : 1 });
        channels.push(outputs);
        inputs = outputs;
      }
    });
    this.normChannels = channels;
    // conv2dTranspose filters are [k, k, out, in]; He scale over all 9·in taps (each output sees about a quarter of
    // them at stride 2), so the head starts with smaller outputs than a full He init would give.
    const out = 3 * keypoints;
    this.params.add("head/w", rng.normalArray(9 * out * inputs, Math.sqrt(2 / (9 * inputs))), [3, 3, out, inputs]);
    this.params.addZeros("head/b", [out]);
    classHeads.forEach((size, h) => {
      this.params.add(`class${h}/w`, rng.normalArray(inputs * size, Math.sqrt(1 / inputs)), [inputs, size]);
      this.params.addZeros(`class${h}/b`, [size]);
    });
  }

  #check(x: tf.Tensor4D): void {
    const [b, h, w, c] = x.shape;
    if (x.rank !== 4 || !(b >= 1) || h !== POSE_NET_SIDE || w !== POSE_NET_SIDE || c !== 3) {
      throw new UsageError(`the pose net takes images [n, 64, 64, 3], got [${x.shape.join(", ")}]`);
    }
  }

  /**
   * Backbone features `[b, 8, 8, 64]`; with `stopAt` the input of norm layer `stopAt` (its conv
   * output). In "train" mode the batch moments are pushed to `moments`.
   */
  #backbone(
    x: tf.Tensor4D,
    mode: PoseNormMode | { kind: "set" },
    moments: BatchMoments[],
    stopAt?: number,
  ): tf.Tensor4D {
    let h = x;
    for (let i = 0; i < this.#layers.length; i++) {
      const { key, stride } = this.#layers[i];
      h = tf.conv2d(h, this.params.get(`${key}/w`) as tf.Tensor4D, stride, "same");
      if (stopAt === i) return h;
      const gamma = this.params.get(`${key}/gamma`) as tf.Tensor1D;
      const beta = this.params.get(`${key}/beta`) as tf.Tensor1D;
      if (mode.kind === "train") h = batchNorm2dTrain(h, gamma, beta, moments, key);
      else if (mode.kind === "set") {
        // The set's own statistics with the unbiased variance, as the layer-by-layer estimate normalises with them.
        const { mean, variance: biased } = tf.moments(h, [0, 1, 2]);
        const count = h.shape[0] * h.shape[1] * h.shape[2];
        const variance = tf.mul(biased, count / (count - 1)) as tf.Tensor1D;
        moments.push({ key, mean: tf.keep(mean) as tf.Tensor1D, variance: tf.keep(variance), count });
        h = batchNorm2d(h, { gamma, beta, mean: mean as tf.Tensor1D, variance }, { kind: "source" });
      } else {
        const [mean, variance] = mode.kind === "fixed"
          ? [tf.tensor1d(mode.stats.mean[i]), tf.tensor1d(mode.stats.variance[i])]
          : [this.stats.get(`${key}/mean`) as tf.Tensor1D, this.stats.get(`${key}/var`) as tf.Tensor1D];
        h = batchNorm2d(h, { gamma, beta, mean, variance }, { kind: "source" });
      }
      h = tf.relu(h);
    }
    return h;
  }

  /** Runs `body` and, in "train" mode, moves the running statistics toward the recorded batch moments. */
  #withMoments<T extends tf.TensorContainer>(mode: PoseNormMode, body: (moments: BatchMoments[]) => T): T {
    if (mode.kind === "fixed") this.#checkStats(mode.stats);
    const moments: BatchMoments[] = [];
    const out = tf.tidy(() => body(moments));
    if (moments.length > 0) applyBatchMoments(this.stats, moments);
    return out;
  }

  #checkStats(stats: NormStats): void {
    const layers = this.normChannels.length;
    if (stats.mean.length !== layers || stats.variance.length !== layers) {
      throw new UsageError(`norm statistics need ${layers} layers, got ${stats.mean.length}`);
    }
    this.normChannels.forEach((c, i) => {
      if (stats.mean[i].length !== c || stats.variance[i].length !== c) {
        throw new UsageError(`norm statistics of layer ${i} need ${c} channels`);
      }
    });
  }

  /**
   * Score-map logits `[b, 16, 16, K]` and location refinement `[b, 16, 16, 2K]` (per keypoint
   * (dx, dy) in units of the locref stdev). Differentiable; "train" mode updates the running
   * statistics after the forward pass (inside `tf.grad`, the update sees the batch moments).
   */
  pose(x: tf.Tensor4D, mode: PoseNormMode = { kind: "source" }): { scores: tf.Tensor4D; locref: tf.Tensor4D } {
    this.#check(x);
    return this.#withMoments(mode, (moments) => {
      const h = this.#backbone(x, mode, moments);
      const [b, side] = [x.shape[0], h.shape[1] * 2];
      const out = tf.add(
        tf.conv2dTranspose(h, this.params.get("head/w") as tf.Tensor4D, [b, side, side, 3 * this.keypoints], 2, "same"),
        this.params.get("head/b"),
      ) as tf.Tensor4D;
      const K = this.keypoints;
      return {
        scores: tf.slice(out, [0, 0, 0, 0], [b, side, side, K]),
        locref: tf.slice(out, [0, 0, 0, K], [b, side, side, 2 * K]),
      };
    });
  }

  /** Logits `[b, size]` of every classification head (global average pool of the backbone, one dense layer). */
  classify(x: tf.Tensor4D, mode: PoseNormMode = { kind: "source" }): tf.Tensor2D[] {
    this.#check(x);
    if (this.classHeads.length === 0) throw new UsageError("this pose net has no classification heads");
    return this.#withMoments(mode, (moments) => {
      const pooled = tf.mean(this.#backbone(x, mode, moments), [1, 2]) as tf.Tensor2D;
      return this.classHeads.map((_, h) =>
        tf.add(tf.matMul(pooled, this.params.get(`class${h}/w`)), this.params.get(`class${h}/b`)) as tf.Tensor2D
      );
    });
  }

  /** The input of norm layer `layer` (its conv output) with the layers before it normalised by `stats`. */
  normInput(x: tf.Tensor4D, layer: number, stats: NormStats): tf.Tensor4D {
    this.#check(x);
    if (!Number.isInteger(layer) || layer < 0 || layer >= this.normChannels.length) {
      throw new UsageError(`norm layer must be an integer in 0..${this.normChannels.length - 1}, got ${layer}`);
    }
    return this.#withMoments({ kind: "fixed", stats }, (m) => this.#backbone(x, { kind: "fixed", stats }, m, layer));
  }

  /**
   * Each norm layer's mean and unbiased variance over all images of `x` at once, every layer
   * normalised by its own (unbiased) statistics: in one pass, the statistics `stagedFullStats`
   * estimates layer by layer, when the whole set fits one batch.
   */
  async setMoments(x: tf.Tensor4D): Promise<NormStats> {
    this.#check(x);
    const moments: BatchMoments[] = [];
    tf.tidy(() => {
      this.#backbone(x, { kind: "set" }, moments);
    });
    const mean: Float32Array[] = [], variance: Float32Array[] = [];
    try {
      for (const m of moments) {
        mean.push(await m.mean.data() as Float32Array);
        variance.push(await m.variance.data() as Float32Array);
      }
    } finally {
      tf.dispose(moments.flatMap((m) => [m.mean, m.variance]));
    }
    return { mean, variance };
  }

  /** The running statistics as arrays (read asynchronously). */
  async sourceStats(): Promise<NormStats> {
    const mean: Float32Array[] = [], variance: Float32Array[] = [];
    for (const { key } of this.#layers) {
      mean.push(await this.stats.get(`${key}/mean`).data() as Float32Array);
      variance.push(await this.stats.get(`${key}/var`).data() as Float32Array);
    }
    return { mean, variance };
  }

  /** Variables of the backbone (convolutions and BatchNorm affine maps). */
  backboneVariables(): tf.Variable[] {
    return this.#layers.flatMap(({ key }) => ["w", "gamma", "beta"].map((p) => this.params.get(`${key}/${p}`)));
  }

  /** Variables the pose objective trains: backbone and pose head. */
  poseVariables(): tf.Variable[] {
    return [...this.backboneVariables(), this.params.get("head/w"), this.params.get("head/b")];
  }

  /** Variables the pretraining objective trains: backbone and classification heads. */
  classVariables(): tf.Variable[] {
    return [
      ...this.backboneVariables(),
      ...this.classHeads.flatMap((_, h) => [this.params.get(`class${h}/w`), this.params.get(`class${h}/b`)]),
    ];
  }

  /** Frees its parameters and statistics. */
  dispose(): void {
    this.params.dispose();
    this.stats.dispose();
  }
}
