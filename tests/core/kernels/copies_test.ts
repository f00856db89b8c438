import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { matchesCpu } from "./cpu_reference.ts";

await selectBackend("wasm");

Deno.test("wasm GatherV2 matches cpu on every axis, long and short rows, int32, and its gradient", async () => {
  const rng = new Rng(31);
  const shape = [6, 5, 40];
  const x = rng.normalArray(6 * 5 * 40);
  const ids = Int32Array.from({ length: 14 }, () => rng.int(5));
  for (const axis of [0, 1, 2]) {
    const index = ids.map((i) => i % shape[axis]);
    await matchesCpu(`gather axis ${axis}`, () => tf.gather(tf.tensor(x, shape), tf.tensor1d(index, "int32"), axis));
  }
  await matchesCpu("gather 2-D indices", () => tf.gather(tf.tensor(x, [30, 40]), tf.tensor2d(ids, [7, 2], "int32")));
  await matchesCpu(
    "gather int32",
    () => tf.gather(tf.tensor1d(Int32Array.from(ids, (i) => 3 * i - 7), "int32"), tf.tensor1d([3, 0, 3, 13], "int32")),
  );
  await matchesCpu(
    "gather batchDims 1 (built-in kernel)",
    () => tf.gather(tf.tensor(x, [6, 200]), tf.tensor2d(ids.slice(0, 12), [6, 2], "int32"), 1, 1),
  );
  await matchesCpu("gather of nothing", () => tf.gather(tf.tensor(x, [30, 40]), tf.tensor1d([], "int32")));
  await matchesCpu(
    "gather gradient",
    () =>
      tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.gather(t, tf.tensor1d(ids, "int32")))))(tf.tensor(x, [6, 5, 40])),
  );
  let message = "";
  try {
    tf.tidy(() => tf.gather(tf.tensor(x, [30, 40]), tf.tensor1d([2, 30], "int32")));
  } catch (e) {
    message = (e as Error).message;
  }
  assert(message.includes("30 is not in [0, 29]"), `out-of-range index: "${message}"`);
});

Deno.test("wasm Slice matches cpu for partial, whole and single axes at ranks 1 to 5", async () => {
  const rng = new Rng(32);
  const cases: [number[], number[], number[]][] = [
    [[50], [3], [40]],
    [[7, 30], [2, 0], [3, -1]],
    [[7, 30], [0, 5], [-1, 20]],
    [[1536, 9, 32], [0, 1, 0], [-1, 7, -1]],
    [[4, 9, 3], [1, 2, 1], [2, 5, 2]],
    [[3, 4, 5, 6], [1, 0, 0, 0], [2, -1, -1, -1]],
    [[3, 4, 5, 6], [0, 1, 2, 3], [3, 2, 3, 3]],
    [[2, 3, 2, 3, 20], [1, 1, 0, 1, 0], [1, 2, 2, 2, -1]],
    [[5, 6], [2, 3], [0, 2]],
  ];
  for (const [shape, begin, size] of cases) {
    const x = rng.normalArray(shape.reduce((a, b) => a * b));
    await matchesCpu(`slice ${shape} from ${begin} size ${size}`, () => tf.slice(tf.tensor(x, shape), begin, size));
  }
  await matchesCpu(
    "int32 slice",
    () => tf.slice(tf.tensor2d(Int32Array.from({ length: 60 }, (_, i) => i - 30), [6, 10], "int32"), [1, 2], [4, 5]),
  );
  const y = rng.normalArray(40);
  await matchesCpu(
    "slice gradient",
    () =>
      tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.slice(t, [0, 1, 0], [-1, 3, -1]))))(
        tf.tensor(y, [2, 5, 4]),
      ),
  );
});

Deno.test("wasm Identity shares data: clones and saved gradient inputs read right after their sources go", async () => {
  const before = tf.memory().numTensors;
  const x = tf.tensor2d([1, -2, 3, 4], [2, 2]);
  const copy = tf.clone(x);
  x.dispose();
  const values = Array.from(await copy.data());
  copy.dispose();
  assert(values.join() === "1,-2,3,4", `clone read ${values}`);
  const v = tf.tidy(() => tf.variable(tf.tensor1d([1, 2, 3])));
  const g = tf.grad((t: tf.Tensor) => tf.sum(tf.mul(t, t)))(v);
  tf.tidy(() => v.assign(tf.tensor1d([7, 7, 7])));
  const grad = Array.from(await g.data());
  tf.dispose([g, v]);
  assert(grad.join() === "2,4,6", `gradient read ${grad}`);
  assert(tf.memory().numTensors === before, "Identity test leaked tensors");
});
