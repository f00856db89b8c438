import * as tf from "@tensorflow/tfjs";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { matchesCpu } from "./cpu_reference.ts";

await selectBackend("wasm");

Deno.test("wasm conv1d gradients (the row-conv filter gradient and its fallbacks) match cpu", async () => {
  const rng = new Rng(41);
  // [batch, width, in, kernel, out, stride, padding]; stride 2 and "same" take the general kernel.
  const cases: [number, number, number, number, number, number, "valid" | "same"][] = [
    [7, 10, 12, 2, 5, 1, "valid"],
    [64, 9, 32, 3, 32, 1, "valid"],
    [3, 5, 4, 5, 2, 1, "valid"],
    [1, 4, 3, 1, 2, 1, "valid"],
    [5, 11, 6, 3, 4, 2, "valid"],
    [5, 8, 6, 3, 4, 1, "same"],
  ];
  for (const [n, w, c, k, o, stride, pad] of cases) {
    const x = rng.normalArray(n * w * c), f = rng.normalArray(k * c * o);
    const run = () =>
      tf.grads((a: tf.Tensor, b: tf.Tensor) =>
        tf.sum(tf.square(tf.conv1d(a as tf.Tensor3D, b as tf.Tensor3D, stride, pad)))
      )([tf.tensor(x, [n, w, c]), tf.tensor(f, [k, c, o])]);
    await matchesCpu(`conv1d ${[n, w, c, k, o, stride, pad]} gradients`, run, 1e-5);
  }
});
