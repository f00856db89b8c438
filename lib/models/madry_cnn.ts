/**
 * The MNIST classifier of Madry et al. (2018; MadryLab/mnist_challenge
 * `model.py`), used by Rusak2020's MNIST experiments (App. B): conv 5×5 32 "same"
 * ReLU, max-pool 2, conv 5×5 64 "same" ReLU, max-pool 2, dense 1024 ReLU,
 * dense 10 (logits). Input `[batch, 28, 28, 1]` in [0, 1]; 3,274,634 parameters.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { Rng } from "../core/rng.ts";
import { Params } from "./params.ts";
import type { Classifier } from "./small_cnn.ts";

/**
 * Builds the classifier with the reference's initialisation: every weight from
 * a normal of s.d. 0.1 truncated at 2 s.d. (TensorFlow's `truncated_normal`),
 * every bias 0.1.
 */
export function madryCnn(rng: Rng, classes = 10): Classifier {
  const params = new Params();
  const weights = (key: string, shape: number[]) => {
    params.add(`${key}/w`, truncatedNormal(rng, shape.reduce((a, b) => a * b, 1), 0.1), shape);
    params.add(`${key}/b`, new Float32Array(shape.at(-1)!).fill(0.1), [shape.at(-1)!]);
  };
  weights("conv0", [5, 5, 1, 32]);
  weights("conv1", [5, 5, 32, 64]);
  weights("fc0", [7 * 7 * 64, 1024]);
  weights("fc1", [1024, classes]);
  const p = (key: string) => params.get(key);
  return {
    params,
    logits: (x) =>
      tf.tidy(() => {
        let h = tf.relu(tf.add(tf.conv2d(x, p("conv0/w") as tf.Tensor4D, 1, "same"), p("conv0/b"))) as tf.Tensor4D;
        h = tf.maxPool(h, 2, 2, "same");
        h = tf.relu(tf.add(tf.conv2d(h, p("conv1/w") as tf.Tensor4D, 1, "same"), p("conv1/b"))) as tf.Tensor4D;
        h = tf.maxPool(h, 2, 2, "same");
        const flat = tf.reshape(h, [x.shape[0], 7 * 7 * 64]);
        const hidden = tf.relu(tf.add(tf.matMul(flat, p("fc0/w")), p("fc0/b")));
        return tf.add(tf.matMul(hidden, p("fc1/w")), p("fc1/b")) as tf.Tensor2D;
      }),
  };
}

/** `n` draws of N(0, sd²) redrawn until within 2 s.d. */
function truncatedNormal(rng: Rng, n: number, sd: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let v = rng.normal();
    while (Math.abs(v) > 2) v = rng.normal();
    out[i] = v * sd;
  }
  return out;
}
