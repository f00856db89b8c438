/**
 * A small MNIST classifier: conv 3×3 32 ReLU, max-pool 2, conv 3×3 64 ReLU,
 * max-pool 2, dense 128 ReLU, dense 10 (logits). Input `[batch, 28, 28, 1]`.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";

/** The classifier's parameters and its forward map to logits `[batch, 10]`. */
export interface Classifier {
  /** Its trainable parameters. */
  params: Params;
  /** Images `[batch, 28, 28, 1]` → logits `[batch, classes]`. */
  logits(x: tf.Tensor4D): tf.Tensor2D;
}

/** Builds the classifier with He-normal dense layers and Glorot-uniform convolutions. */
export function smallCnn(rng: Rng, classes = 10): Classifier {
  const params = new Params();
  params.addGlorotUniform(rng, "conv0/w", [3, 3, 1, 32], 9, 9 * 32);
  params.addZeros("conv0/b", [32]);
  params.addGlorotUniform(rng, "conv1/w", [3, 3, 32, 64], 9 * 32, 9 * 64);
  params.addZeros("conv1/b", [64]);
  params.addNormal(rng, "fc0/w", 7 * 7 * 64, 128, Math.SQRT2);
  params.addZeros("fc0/b", [128]);
  params.addNormal(rng, "fc1/w", 128, classes, 1);
  params.addZeros("fc1/b", [classes]);
  const p = (key: string) => params.get(key);
  return {
    params,
    logits: (x) => {
      let h = tf.relu(tf.add(tf.conv2d(x, p("conv0/w") as tf.Tensor4D, 1, "same"), p("conv0/b"))) as tf.Tensor4D;
      h = tf.maxPool(h, 2, 2, "valid");
      h = tf.relu(tf.add(tf.conv2d(h, p("conv1/w") as tf.Tensor4D, 1, "same"), p("conv1/b"))) as tf.Tensor4D;
      h = tf.maxPool(h, 2, 2, "valid");
      const flat = tf.reshape(h, [x.shape[0], 7 * 7 * 64]) as tf.Tensor2D;
      const hidden = tf.relu(tf.add(tf.matMul(flat, p("fc0/w")), p("fc0/b"))) as tf.Tensor2D;
      return tf.add(tf.matMul(hidden, p("fc1/w")), p("fc1/b")) as tf.Tensor2D;
    },
  };
}
