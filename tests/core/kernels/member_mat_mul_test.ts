import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { memberProduct } from "../../../lib/core/kernels/member_mat_mul.ts";
import { Rng } from "../../../lib/core/rng.ts";

Deno.test("wasm memberProduct equals the cpu backend's batched matMul, with and without transposes", async () => {
  await selectBackend("wasm");
  const rng = new Rng(1);
  const cases: [number[], number[], boolean, boolean][] = [
    [[3, 5, 4], [3, 4, 6], false, false],
    [[9, 100, 60], [9, 60, 40], false, false],
    [[2, 7, 5], [2, 7, 3], true, false],
    [[4, 6, 8], [4, 5, 8], false, true],
    [[1, 3, 2], [1, 4, 3], true, true],
  ];
  for (const [shapeA, shapeB, transposeA, transposeB] of cases) {
    const a = rng.normalArray(shapeA.reduce((x, y) => x * y)), b = rng.normalArray(shapeB.reduce((x, y) => x * y));
    const run = async (backend: string) => {
      await tf.setBackend(backend);
      const before = tf.memory().numTensors;
      const out = tf.tidy(() => memberProduct(tf.tensor(a, shapeA), tf.tensor(b, shapeB), transposeA, transposeB));
      const values = await out.data();
      const shape = out.shape;
      out.dispose();
      assertEquals(tf.memory().numTensors, before, `${backend}: tensors left behind`);
      return { values, shape };
    };
    const wasm = await run("wasm"), cpu = await run("cpu");
    assertEquals(wasm.shape, cpu.shape);
    const scale = Math.max(1, ...cpu.values.map(Math.abs));
    let diff = 0;
    for (let i = 0; i < cpu.values.length; i++) diff = Math.max(diff, Math.abs(wasm.values[i] - cpu.values[i]));
    assert(diff <= 1e-5 * scale, `[${shapeA}]ᵀ${transposeA}·[${shapeB}]ᵀ${transposeB}: diff ${diff}`);
  }
  await tf.setBackend("wasm");
});

Deno.test("memberProduct gives every member its own right operand (XNNPACK's per-tensor weight cache)", async () => {
  await selectBackend("wasm");
  // Identical member inputs and different weights: a stale cached operand would repeat member 0's product.
  const out = tf.tidy(() =>
    memberProduct(tf.ones([3, 2, 2]), tf.tensor3d([1, 0, 0, 1, 2, 0, 0, 2, 3, 0, 0, 3], [3, 2, 2]))
  );
  assertEquals(Array.from(await out.data()), [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
  out.dispose();
  assert(tf.getKernel("LatentlabMemberMatMul", "wasm") !== undefined);
});
