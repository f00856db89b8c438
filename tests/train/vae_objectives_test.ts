import * as tf from "@tensorflow/tfjs";
import { assertAlmostEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { dipPenalty, gaussianKl, minibatchTotalCorrelation, vaeLoss } from "../../lib/train/vae_objectives.ts";
import type { Decoder } from "../../lib/models/dislib_vae.ts";
import { Params } from "../../lib/models/params.ts";

await selectBackend("wasm");

const value = async (t: tf.Tensor) => (await t.data())[0];

Deno.test("KL to N(0, I) matches disentanglement_lib's oracles", async () => {
  const zeros = tf.zeros([4, 10]) as tf.Tensor2D, ones = tf.ones([4, 10]) as tf.Tensor2D;
  assertAlmostEquals(await value(gaussianKl(zeros, zeros)), 0, 1e-6);
  assertAlmostEquals(await value(gaussianKl(ones, zeros)), 5, 1e-5);
  assertAlmostEquals(await value(gaussianKl(ones, ones)), 5 * (Math.E - 1), 1e-4); // ∈ [8.58, 8.6]
});

Deno.test("the DIP-VAE penalty matches disentanglement_lib's oracles", async () => {
  const penalty = async (m: tf.Tensor2D) => await value(dipPenalty(m, 1, 1));
  assertAlmostEquals(await penalty(tf.ones([10, 10]) as tf.Tensor2D), 90, 1e-4);
  assertAlmostEquals(await penalty(tf.zeros([10, 10]) as tf.Tensor2D), 10, 1e-4);
  assertAlmostEquals(await penalty(tf.eye(10) as tf.Tensor2D), 0, 1e-6);
  assertAlmostEquals(await penalty(tf.mul(2, tf.eye(10)) as tf.Tensor2D), 10, 1e-4);
});

Deno.test("β-TCVAE's minibatch TC is −(L − 1)·log B when every posterior is N(0, I)", async () => {
  const rng = new Rng(1);
  const batch = 100, latents = 10;
  const z = tf.tensor2d(rng.normalArray(batch * latents), [batch, latents]);
  const zeros = tf.zeros([batch, latents]) as tf.Tensor2D;
  const tc = await value(minibatchTotalCorrelation({ mean: zeros, logVar: zeros, z }));
  assertAlmostEquals(tc, -(latents - 1) * Math.log(batch), 1e-3);
});

Deno.test("AnnealedVAE's capacity grows linearly to c_max, then stays", async () => {
  // A decoder that returns fixed logits isolates the regularizer.
  const params = new Params();
  const decoder: Decoder = { params, decode: (z) => tf.zeros([z.shape[0], 2, 2, 1]) as tf.Tensor4D };
  const x = tf.zeros([2, 2, 2, 1]) as tf.Tensor4D;
  const q = {
    mean: tf.zeros([2, 3]) as tf.Tensor2D,
    logVar: tf.zeros([2, 3]) as tf.Tensor2D,
    z: tf.zeros([2, 3]) as tf.Tensor2D,
  };
  for (const [step, expected] of [[0, 0], [10, 10], [100, 100], [101, 100]]) {
    const terms = vaeLoss(decoder, x, q, { method: "annealed_vae", value: 100, step, iterationThreshold: 100 });
    assertAlmostEquals(await value(terms.capacity), expected, 1e-6);
    // KL is 0 here, so the penalty is γ·C with γ = 1000 on top of the reconstruction (8·ln 2 / 2 per image).
    assertAlmostEquals(await value(terms.total), 4 * Math.log(2) * 2 / 2 + 1000 * expected, 1e-2);
  }
});
