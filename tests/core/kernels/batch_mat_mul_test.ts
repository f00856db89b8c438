import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";

/** Runs `f` on the given backend and returns its values. */
async function on(backend: string, f: () => tf.Tensor): Promise<Float32Array> {
  await tf.setBackend(backend);
  const t = f();
  const values = (await t.data()) as Float32Array;
  t.dispose();
  return values;
}

Deno.test("wasm BatchMatMul with transposed operands matches the cpu backend", async () => {
  await selectBackend("wasm"); // registers latentlab's wasm kernels
  const rng = new Rng(1);
  const shapes: [number[], number[], boolean, boolean][] = [
    [[5, 3], [5, 4], true, false],
    [[3, 7], [4, 7], false, true],
    [[6, 2], [9, 6], true, true],
    [[2, 8, 5], [2, 8, 3], true, false],
    [[3, 4, 9], [3, 6, 9], false, true],
    [[1, 64], [1, 33], true, false],
    [[128, 20], [128, 100], true, false],
  ];
  for (const [shapeA, shapeB, transposeA, transposeB] of shapes) {
    const a = rng.normalArray(shapeA.reduce((x, y) => x * y, 1));
    const b = rng.normalArray(shapeB.reduce((x, y) => x * y, 1));
    const f = () => tf.tidy(() => tf.matMul(tf.tensor(a, shapeA), tf.tensor(b, shapeB), transposeA, transposeB));
    const before = tf.memory().numTensors;
    const wasm = await on("wasm", f);
    assert(tf.memory().numTensors === before, "no tensors left behind");
    const cpu = await on("cpu", f);
    const scale = Math.max(1, ...cpu.map(Math.abs));
    const maxDiff = Math.max(...wasm.map((v, i) => Math.abs(v - cpu[i])));
    assert(maxDiff <= 1e-4 * scale, `${shapeA}ᵀ${transposeA}·${shapeB}ᵀ${transposeB}: diff ${maxDiff}`);
  }
  await tf.setBackend("wasm");
});

Deno.test("gradients through matMul on wasm match the cpu backend", async () => {
  await selectBackend("wasm");
  const rng = new Rng(2);
  const x = rng.normalArray(16 * 5), w = rng.normalArray(5 * 3);
  const grad = (backend: string) =>
    on(backend, () =>
      tf.tidy(() => {
        const g = tf.grad((wt: tf.Tensor) => tf.sum(tf.square(tf.matMul(tf.tensor2d(x, [16, 5]), wt as tf.Tensor2D))));
        return g(tf.tensor2d(w, [5, 3]));
      }));
  const wasm = await grad("wasm");
  const cpu = await grad("cpu");
  const maxDiff = Math.max(...wasm.map((v, i) => Math.abs(v - cpu[i])));
  assert(maxDiff < 1e-3, `diff ${maxDiff}`);
  await tf.setBackend("wasm");
});
