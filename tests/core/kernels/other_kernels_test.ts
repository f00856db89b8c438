import * as tf from "@tensorflow/tfjs";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { matchesCpu } from "./cpu_reference.ts";

await selectBackend("wasm");

Deno.test("wasm MaxPoolGrad matches cpu, ties included, for several windows and paddings, SIMD and JS paths", async () => {
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
      1e-4,
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
    1e-4,
  );
  await matchesCpu(
    "int32 unsortedSegmentSum",
    () =>
      tf.unsortedSegmentSum(
        tf.tensor1d(Int32Array.from({ length: 12 }, (_, i) => i), "int32"),
        tf.tensor1d(ids, "int32"),
        6,
      ),
    1e-4,
  );
  const table = rng.normalArray(7 * 3);
  const indices = Int32Array.from({ length: 20 }, () => rng.int(7));
  await matchesCpu(
    "gather gradient",
    () =>
      tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.gather(t, tf.tensor1d(indices, "int32")))))(
        tf.tensor2d(table, [7, 3]),
      ),
    1e-4,
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
      1e-4,
    );
  }
});
