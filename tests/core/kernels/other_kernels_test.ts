import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";

await selectBackend("wasm");

/** Runs `f` on cpu and on wasm and checks max |diff| ≤ 1e-4 × magnitude, and that wasm leaves no tensors. */
async function matchesCpu(what: string, f: () => tf.Tensor | tf.Tensor[]): Promise<void> {
  const read = async () => {
    const out = tf.tidy(f);
    const list = Array.isArray(out) ? out : [out];
    const values = await Promise.all(list.map((t) => t.data()));
    tf.dispose(list);
    return values;
  };
  await tf.setBackend("cpu");
  const expected = await read();
  await tf.setBackend("wasm");
  const before = tf.memory().numTensors;
  const actual = await read();
  assert(tf.memory().numTensors === before, `${what} leaked tensors`);
  expected.forEach((e, k) => {
    const scale = Math.max(1, ...Array.from(e, (v) => Math.abs(Number(v))));
    const diff = Math.max(0, ...Array.from(e, (v, i) => Math.abs(Number(v) - Number(actual[k][i]))));
    assert(diff <= 1e-4 * scale, `${what}[${k}]: diff ${diff} at scale ${scale}`);
  });
}

Deno.test("wasm MaxPoolGrad matches cpu, ties included, for several windows and paddings", async () => {
  const rng = new Rng(21);
  const cases: [number[], number, number, "same" | "valid"][] = [
    [[4, 28, 28, 8], 2, 2, "valid"],
    [[2, 7, 9, 3], 3, 2, "same"],
    [[3, 5, 5, 2], 2, 1, "valid"],
    [[1, 6, 6, 4], 3, 3, "same"],
  ];
  for (const [shape, size, stride, pad] of cases) {
    // ReLU makes many zeros: windows with tied maxima.
    const x = rng.normalArray(shape.reduce((a, b) => a * b));
    await matchesCpu(
      `max pool ${shape} ${size}/${stride} ${pad}`,
      () =>
        tf.grad((t: tf.Tensor) => tf.sum(tf.mul(tf.maxPool(tf.relu(t) as tf.Tensor4D, size, stride, pad), 1.5)))(
          tf.tensor(x, shape),
        ),
    );
  }
});

Deno.test("wasm UnsortedSegmentSum and the gather gradient match cpu", async () => {
  const rng = new Rng(22);
  const x = rng.normalArray(12 * 5);
  const ids = Int32Array.from({ length: 12 }, () => rng.int(4));
  await matchesCpu(
    "unsortedSegmentSum",
    () => tf.unsortedSegmentSum(tf.tensor2d(x, [12, 5]), tf.tensor1d(ids, "int32"), 4),
  );
  await matchesCpu(
    "int32 unsortedSegmentSum",
    () =>
      tf.unsortedSegmentSum(
        tf.tensor1d(Int32Array.from({ length: 12 }, (_, i) => i), "int32"),
        tf.tensor1d(ids, "int32"),
        6,
      ),
  );
  const table = rng.normalArray(7 * 3);
  const indices = Int32Array.from({ length: 20 }, () => rng.int(7));
  await matchesCpu(
    "gather gradient",
    () =>
      tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.gather(t, tf.tensor1d(indices, "int32")))))(
        tf.tensor2d(table, [7, 3]),
      ),
  );
});

Deno.test("wasm depthwise convolution gradients match cpu", async () => {
  const rng = new Rng(23);
  const cases: [number[], number[], number, "same" | "valid", number][] = [
    [[2, 9, 9, 3], [3, 3, 3, 2], 1, "same", 1],
    [[3, 8, 7, 4], [2, 2, 4, 1], 2, "valid", 1],
    [[1, 10, 10, 2], [3, 3, 2, 3], 2, "same", 1], // tfjs has no depthwise gradient for dilation > 1
  ];
  for (const [xShape, wShape, stride, pad, dilation] of cases) {
    const x = rng.normalArray(xShape.reduce((a, b) => a * b)), w = rng.normalArray(wShape.reduce((a, b) => a * b));
    await matchesCpu(
      `depthwise ${xShape} ${wShape}`,
      () =>
        tf.grads((a: tf.Tensor, b: tf.Tensor) =>
          tf.sum(tf.square(tf.depthwiseConv2d(a as tf.Tensor4D, b as tf.Tensor4D, stride, pad, "NHWC", dilation)))
        )([tf.tensor(x, xShape), tf.tensor(w, wShape)]),
    );
  }
});
