/**
 * What every VAE-style model shares, whatever its architecture: the encoder
 * and decoder interfaces, the reparameterized posterior, and encoding many
 * inputs in chunks.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { reparameterizedSample } from "../core/kernels/fused_terms.ts";
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import type { Params } from "./params.ts";
import { stopPoint } from "../core/run_guard.ts";

/** A Gaussian encoder: inputs `[batch, h, w, c]` → mean and log-variance `[batch, latents]`. */
export interface Encoder {
  /** Its trainable parameters. */
  params: Params;
  /** Mean and log-variance of the posterior of each input. */
  encode(x: tf.Tensor4D): { mean: tf.Tensor2D; logVar: tf.Tensor2D };
}

/** A decoder: latents `[batch, latents]` → Bernoulli logits (or Gaussian means) `[batch, h, w, c]`. */
export interface Decoder {
  /** Its trainable parameters. */
  params: Params;
  /** Latents `[batch, latents]` → logits (or means) `[batch, h, w, c]`. */
  decode(z: tf.Tensor2D): tf.Tensor4D;
}

/** Encoder outputs and the sampled latents of one batch. */
export interface Posterior {
  /** Posterior mean μ `[batch, latents]`. */
  mean: tf.Tensor2D;
  /** Posterior log-variance log σ² `[batch, latents]`. */
  logVar: tf.Tensor2D;
  /** Sampled latents z = μ + σ·ε `[batch, latents]`. */
  z: tf.Tensor2D;
}

/** Encodes and draws z = μ + σ·ε with ε given (drawn by the caller from the run's seed). */
export function posterior(encoder: Encoder, x: tf.Tensor4D, noise: tf.Tensor2D): Posterior {
  const { mean, logVar } = encoder.encode(x);
  return { mean, logVar, z: reparameterize(mean, logVar, noise) };
}

/** z = μ + σ·ε, the reparameterized sample of N(μ, exp(logVar)). */
export function reparameterize(mean: tf.Tensor2D, logVar: tf.Tensor2D, noise: tf.Tensor2D): tf.Tensor2D {
  return reparameterizedSample(mean, logVar, noise) as tf.Tensor2D;
}

/**
 * Applies `f` to rows [start, start + rows) of `n` inputs, `chunk` rows at a
 * time, and returns each of its outputs read back and concatenated in chunk
 * order: an output with one row per input comes back as `[n, ...]`
 * row-major, a per-chunk reduction as one entry per chunk. Chunks bound the
 * memory of one forward pass; the tensors `f` makes are disposed.
 */
export async function mapInChunks(
  n: number,
  chunk: number,
  f: (start: number, rows: number) => tf.Tensor[],
): Promise<Float32Array[]> {
  const parts: Float32Array[][] = [];
  for (let start = 0; start < n; start += chunk) {
    stopPoint();
    const tensors = tf.tidy(() => f(start, Math.min(chunk, n - start)));
    const values = await Promise.all(tensors.map((t) => t.data() as Promise<Float32Array>));
    tf.dispose(tensors);
    values.forEach((v, i) => (parts[i] ??= []).push(v));
  }
  return parts.map((chunks) => {
    const out = new Float32Array(chunks.reduce((a, c) => a + c.length, 0));
    let offset = 0;
    for (const c of chunks) {
      out.set(c, offset);
      offset += c.length;
    }
    return out;
  });
}

/** Codes of a set of images: the mean code, a sampled code when asked, and each code's average KL to N(0, 1). */
export interface ImageCodes {
  /** The posterior mean μ per image, `[n, latents]`. */
  mean: Matrix;
  /** z = μ + σ·ε, present when {@linkcode encodeImages} was given a noise generator. */
  sampled: Matrix | null;
  /** Average KL(q(z_i|x) ‖ N(0, 1)) per code (UDR's informativeness test). */
  klPerCode: Float64Array;
}

/**
 * Encodes `images` `[n, h, w, c]` in chunks of 256. With `noise`, also draws
 * one sampled code per image, ε from `noise` chunk by chunk.
 */
export async function encodeImages(
  encoder: Encoder,
  images: Float32Array,
  n: number,
  shape: [number, number, number],
  noise?: Rng,
): Promise<ImageCodes> {
  const size = shape[0] * shape[1] * shape[2];
  const [mean, klPerChunk, sampled] = await mapInChunks(n, 256, (start, rows) => {
    const q = encoder.encode(tf.tensor4d(images.subarray(start * size, (start + rows) * size), [rows, ...shape]));
    const d = q.mean.shape[1];
    const perCode = tf.mul(0.5, tf.sub(tf.add(tf.square(q.mean), tf.exp(q.logVar)), tf.add(q.logVar, 1)));
    const out = [q.mean, tf.sum(perCode, 0)];
    if (noise) out.push(reparameterize(q.mean, q.logVar, tf.tensor2d(noise.normalArray(rows * d), [rows, d])));
    return out;
  });
  const d = mean.length / n;
  const klPerCode = new Float64Array(d);
  klPerChunk.forEach((v, i) => (klPerCode[i % d] += v / n));
  return {
    mean: { data: Float64Array.from(mean), rows: n, cols: d },
    sampled: sampled ? { data: Float64Array.from(sampled), rows: n, cols: d } : null,
    klPerCode,
  };
}
