/**
 * Reading tensors back from the device in one transfer. On WebGPU every
 * `data()` drains the queue and waits for a buffer mapping (≥ 10 ms), so the
 * loss terms of a logged step, or the losses of the steps since the last
 * read, are packed on the device and read together. Packing copies the
 * float32 values as they are: the numbers equal those of one read per tensor.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";

/** The values of float32 `tensors`, flattened and concatenated in order, in one readback. */
async function readPacked(tensors: readonly tf.Tensor[]): Promise<Float32Array> {
  if (tensors.length === 0) return new Float32Array(0);
  const packed = tf.tidy(() => tf.concat(tensors.map((t) => tf.reshape(t, [-1]))));
  try {
    return await packed.data() as Float32Array;
  } finally {
    packed.dispose();
  }
}

/**
 * The values of float32 `tensors` (any shapes, row-major) in one readback, one array per tensor in
 * order (views of one buffer); the tensors stay the caller's.
 */
export async function readTogether(tensors: readonly tf.Tensor[]): Promise<Float32Array[]> {
  const values = await readPacked(tensors);
  let at = 0;
  return tensors.map((t) => values.subarray(at, at += t.size));
}

/** The values of float32 `scalars`, in order, in one readback; the tensors stay the caller's. */
export function readScalars(scalars: readonly tf.Scalar[]): Promise<Float32Array> {
  return readPacked(scalars);
}

/** The values of named float32 scalars in one readback, under the same names; the tensors stay the caller's. */
export async function readScalarRecord(scalars: Record<string, tf.Scalar>): Promise<Record<string, number>> {
  const keys = Object.keys(scalars);
  const values = await readScalars(keys.map((key) => scalars[key]));
  return Object.fromEntries(keys.map((key, i) => [key, values[i]]));
}
