/**
 * What the bench's workloads share besides the rounds: the synthetic inputs they run on, handing tensors to the
 * reference as .npy, reading results back, and comparing the reference's results with ours before timing.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { formatNpy } from "../../lib/core/npy.ts";
import type { Rng } from "../../lib/core/rng.ts";

/** `[n, size, size, 1]` binary images, each pixel on with probability 0.2. */
export function binaryImages(rng: Rng, n: number, size: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from({ length: n * size * size }, () => rng.uniform() < 0.2 ? 1 : 0), [
    n,
    size,
    size,
    1,
  ]);
}

/** `[n, 28, 28, 1]` uniform pixels in [0, 1] standing in for digits (the weights are untrained, so content does not matter). */
export function uniformDigits(rng: Rng, n: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from({ length: n * 784 }, () => rng.uniform()), [n, 28, 28, 1]);
}

/** `[n]` int32 random classes of 10. */
export const randomClasses = (rng: Rng, n: number) =>
  tf.tensor1d(Int32Array.from({ length: n }, () => rng.int(10)), "int32");

/** Waits for a loss to be computed and read back, then frees it. */
export async function readLoss(loss: tf.Scalar): Promise<void> {
  await loss.data();
  loss.dispose();
}

/** `count` steps of `minimize`, their losses read back. */
export async function firstLosses(minimize: () => tf.Scalar, count = 2): Promise<Float32Array> {
  const losses = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const loss = minimize();
    losses[i] = (await loss.data())[0];
    loss.dispose();
  }
  return losses;
}

/** The variables' values, concatenated in order. */
export async function readFlat(variables: tf.Tensor[]): Promise<Float32Array> {
  const parts = await Promise.all(variables.map((v) => v.data() as Promise<Float32Array>));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** `after − before`, elementwise. */
export const difference = (after: Float32Array, before: Float32Array) => after.map((v, i) => v - before[i]);

/** Writes each tensor as `<dir>/<key with "/" as "_">.npy` for the reference to load. */
export async function writeTensors(dir: string, tensors: Record<string, tf.Tensor>): Promise<void> {
  for (const [key, t] of Object.entries(tensors)) {
    const data = await t.data();
    Deno.writeFileSync(`${dir}/${key.replaceAll("/", "_")}.npy`, formatNpy(data as Float32Array | Int32Array, t.shape));
  }
}

/** Largest |a − b| over max |a|: how far the reference's result is from ours. */
export function relativeDifference(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  let diff = 0, scale = 0;
  for (let i = 0; i < ours.length; i++) {
    diff = Math.max(diff, Math.abs(ours[i] - theirs[i]));
    scale = Math.max(scale, Math.abs(ours[i]));
  }
  return diff / Math.max(scale, 1e-30);
}

/** Compares a reference's flat result `{values, shape}` with ours to a relative tolerance. */
export function compareValues(
  what: string,
  ours: Float32Array,
  reference: unknown,
  tolerance: number,
): { ok: boolean; detail: string } {
  if (!reference) return { ok: true, detail: `${what} computed (no PyTorch to compare)` };
  const theirs = (reference as { values?: number[] }).values;
  if (!theirs || theirs.length !== ours.length) {
    return { ok: false, detail: `PyTorch's ${what} has ${theirs?.length} values, ours ${ours.length}` };
  }
  const worst = relativeDifference(ours, theirs);
  return {
    ok: worst <= tolerance,
    detail: `${what}: largest difference to PyTorch ${worst.toExponential(1)} of the largest value (tolerance ${
      tolerance.toExponential(0)
    })`,
  };
}

/** `record`'s keys with `prefix` in front. */
export function prefixed(prefix: string, record: Record<string, tf.Tensor>): Record<string, tf.Tensor> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [`${prefix}${k}`, v]));
}

/** Compares several named results with the reference's (`{name: values}`), each to its own relative tolerance. */
export function compareParts(
  ours: Record<string, Float32Array>,
  reference: unknown,
  tolerances: Record<string, number>,
): { ok: boolean; detail: string } {
  const names = Object.keys(ours);
  if (!reference) {
    return {
      ok: true,
      detail: `${names.map((name) => name.replaceAll("_", " ")).join(", ")} computed (no PyTorch to compare)`,
    };
  }
  const theirs = reference as Record<string, number[] | undefined>;
  const parts = names.map((name) =>
    compareValues(name.replaceAll("_", " "), ours[name], { values: theirs[name] }, tolerances[name])
  );
  return { ok: parts.every((part) => part.ok), detail: parts.map((part) => part.detail).join("; ") };
}

/** Largest |a − b| over the pairs of `ours` and `theirs`. */
export function largestDifference(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i] - theirs[i]));
  return worst;
}
