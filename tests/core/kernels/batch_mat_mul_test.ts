import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { batchMatMulPlan } from "../../../lib/core/kernels/batch_mat_mul.ts";

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
    // Products that transpose the other operand and the output instead of the flagged operand.
    [[8, 40], [50, 40], false, true],
    [[40, 50], [40, 3], true, false],
    [[30, 40], [2, 30], true, true],
    [[1, 5, 40], [3, 50, 40], false, true],
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

Deno.test("BatchMatMul moves the fewer elements, and both ways give the same bits on wasm", async () => {
  await selectBackend("wasm");
  // dy·Wᵀ of a 1200 → 4096 layer at batch 64: 64·(1200 + 4096) values moved instead of 4096·1200.
  assert(batchMatMulPlan([64, 1200], [4096, 1200], false, true) === "swapped", "dense input gradient swaps");
  // xᵀ·dy, the weight gradient: transposing the batch-sized x is cheaper than the output.
  assert(batchMatMulPlan([64, 4096], [64, 1200], true, false) === "operands", "dense weight gradient transposes x");
  assert(batchMatMulPlan([3, 4], [4, 5], false, false) === "plain", "no flags, no transposes");
  const rng = new Rng(3);
  const a = tf.tensor2d(rng.normalArray(64 * 300), [64, 300]), w = tf.tensor2d(rng.normalArray(500 * 300), [500, 300]);
  const flagged = await tf.tidy(() => tf.matMul(a, w, false, true)).data();
  // The same product with the transpose materialised: the plain kernel on stored operands.
  const materialised = await tf.tidy(() => tf.matMul(a, tf.transpose(w))).data();
  const differing = flagged.filter((v, i) => v !== materialised[i]).length;
  assert(differing === 0, `${differing} of ${flagged.length} values differ in their bits`);
  tf.dispose([a, w]);
});
