import * as tf from "@tensorflow/tfjs";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { matchesCpu } from "./cpu_reference.ts";

await selectBackend("wasm");

Deno.test("wasm Transpose matches cpu exactly for ranks 1 to 5, unit axes, merged axes and int32", async () => {
  const rng = new Rng(51);
  const cases: [number[], number[]][] = [
    [[7], [0]],
    [[130, 70], [1, 0]],
    [[1, 33, 5], [0, 2, 1]],
    [[4, 1, 6], [2, 1, 0]],
    [[3, 4, 5], [1, 2, 0]],
    [[3, 4, 5], [2, 0, 1]],
    [[2, 3, 4, 5], [3, 1, 0, 2]],
    [[2, 3, 4, 5], [0, 1, 3, 2]],
    [[2, 3, 1, 4, 5], [4, 2, 0, 3, 1]],
    [[6, 1], [1, 0]],
  ];
  for (const [shape, perm] of cases) {
    const x = rng.normalArray(shape.reduce((a, b) => a * b));
    await matchesCpu(`transpose ${shape} by ${perm}`, () => tf.transpose(tf.tensor(x, shape), perm));
  }
  await matchesCpu(
    "int32 transpose",
    () => tf.transpose(tf.tensor3d(Int32Array.from({ length: 24 }, (_, i) => i - 9), [2, 3, 4], "int32"), [2, 0, 1]),
  );
});

Deno.test("wasm Sum and Mean over leading axes match cpu; other axes, keepDims and int32 too", async () => {
  const rng = new Rng(52);
  const x = rng.normalArray(300 * 4 * 5);
  const cases: [number[], number | number[], boolean][] = [
    [[300, 20], 0, false],
    [[300, 4, 5], [0, 1], false],
    [[300, 4, 5], [1, 0], true],
    [[300, 4, 5], 0, true],
    [[300, 4, 5], [0, 1, 2], false],
    [[300, 4, 5], -1, false],
    [[300, 4, 5], [0, 2], false],
  ];
  for (const [shape, axis, keepDims] of cases) {
    await matchesCpu(
      `sum ${shape} over ${axis}${keepDims ? " keepDims" : ""}`,
      () => tf.sum(tf.tensor(x, shape), axis, keepDims),
      1e-5,
    );
    await matchesCpu(
      `mean ${shape} over ${axis}${keepDims ? " keepDims" : ""}`,
      () => tf.mean(tf.tensor(x, shape), axis, keepDims),
      1e-5,
    );
  }
  await matchesCpu(
    "int32 sum",
    () => tf.sum(tf.tensor2d(Int32Array.from({ length: 12 }, (_, i) => i), [4, 3], "int32"), 0),
  );
});

Deno.test("wasm Sum over leading axes is the sequential float32 sum of each column, to the bit", async () => {
  const rng = new Rng(53);
  for (const cols of [8, 7]) {
    const rows = 501, x = rng.normalArray(rows * cols);
    const expected = new Float32Array(cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) expected[c] += x[r * cols + c];
    const sum = tf.sum(tf.tensor2d(x, [rows, cols]), 0);
    const actual = await sum.data();
    sum.dispose();
    for (let c = 0; c < cols; c++) {
      if (actual[c] !== expected[c]) throw new Error(`column ${c} of ${cols}: ${actual[c]} vs ${expected[c]}`);
    }
  }
});
