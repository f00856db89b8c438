/** The wasm kernel tests' reference: the same ops run on tfjs's cpu backend. */
import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";

/** Shape and values of each output of `f`, run in a tidy and disposed once read. */
async function outputs(f: () => tf.Tensor | tf.Tensor[]): Promise<{ shape: string; data: ArrayLike<number> }[]> {
  const out = tf.tidy(f);
  const list = Array.isArray(out) ? out : [out];
  const values = await Promise.all(
    list.map(async (t) => ({ shape: t.shape.join(), data: await t.data() as ArrayLike<number> })),
  );
  tf.dispose(list);
  return values;
}

/**
 * Runs `f` on cpu and then on wasm, which stays the backend: every output has cpu's shape and its values within
 * `tol` × max(1, largest finite |cpu value|) (0: exactly equal; infinities must be equal, NaN never matches), and
 * wasm leaves no tensors behind.
 */
export async function matchesCpu(what: string, f: () => tf.Tensor | tf.Tensor[], tol = 0): Promise<void> {
  await tf.setBackend("cpu");
  const expected = await outputs(f);
  await tf.setBackend("wasm");
  const before = tf.memory().numTensors;
  const actual = await outputs(f);
  assert(tf.memory().numTensors === before, `${what} leaked tensors`);
  assert(actual.length === expected.length, `${what}: ${actual.length} outputs, expected ${expected.length}`);
  expected.forEach((e, k) => {
    const a = actual[k];
    assert(e.shape === a.shape, `${what}[${k}]: shape ${a.shape}, expected ${e.shape}`);
    let scale = 1, diff = 0, worst = -1;
    for (let i = 0; i < e.data.length; i++) {
      const v = Number(e.data[i]), w = Number(a.data[i]);
      if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
      const d = v === w ? 0 : Number.isNaN(v - w) ? Infinity : Math.abs(v - w);
      if (d > diff) [diff, worst] = [d, i];
    }
    assert(
      diff <= tol * scale,
      `${what}[${k}]: element ${worst} is ${a.data[worst]}, expected ${e.data[worst]} (diff ${diff}, scale ${scale})`,
    );
  });
}
