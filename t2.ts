import * as tf from "@tensorflow/tfjs";
import { selectBackend } from "./lib/core/backend.ts";
await selectBackend("wasm");
const shapes: [number[], number[]][] = [[[64,64,64,1],[4,4,1,32]],[[64,32,32,32],[4,4,32,32]],[[64,16,16,32],[4,4,32,64]],[[64,8,8,64],[4,4,64,64]]];
for (const [xs, ws] of shapes) {
  const x = tf.randomNormal(xs) as tf.Tensor4D; const w = tf.randomNormal(ws) as tf.Tensor4D;
  const y = tf.conv2d(x, w, 2, "same");
  const dy = tf.randomNormal(y.shape);
  const f = () => tf.engine().runKernel("Conv2DBackpropFilter", { x, dy }, { strides: 2, pad: "same", dataFormat: "NHWC", filterShape: ws }) as tf.Tensor;
  const g = () => tf.conv2d(x, w, 2, "same");
  const bi = () => tf.engine().runKernel("Conv2DBackpropInput", { dy, filter: w }, { strides: 2, pad: "same", dataFormat: "NHWC", inputShape: xs }) as tf.Tensor;
  for (const [name, fn] of [["filter", f], ["forward", g], ["input", bi]] as const) {
    for (let i = 0; i < 2; i++) { const r = fn(); await r.data(); r.dispose(); }
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) { const r = fn(); await r.data(); r.dispose(); }
    console.log(xs.join("x"), ws.join("x"), name, ((performance.now() - t0) / 5).toFixed(1), "ms");
  }
}
