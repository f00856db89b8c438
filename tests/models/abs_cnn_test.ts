import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { absCnn, absCnnModel, absCnnTraining } from "../../lib/models/abs_cnn.ts";
import { trainClassifier } from "../../lib/train/classifier.ts";

await selectBackend("wasm");

/** Three "classes" of blurred vertical strokes at columns 8, 14 and 20, with jitter. */
function strokes(n: number, rng: Rng): { images: Float32Array; labels: Int32Array } {
  const images = new Float32Array(n * 784), labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = i % 3;
    const col = 8 + 6 * labels[i] + rng.uniform() - 0.5;
    for (let r = 4; r < 24; r++) {
      for (let c = 0; c < 28; c++) images[i * 784 + r * 28 + c] = Math.exp(-((c - col) ** 2) / 3);
    }
  }
  return { images, labels };
}

Deno.test("ABS CNN: valid convs 28→24→11→5→1 with maps [20,70,256,10]", () => {
  const cnn = absCnn(new Rng(1));
  const before = tf.memory().numTensors;
  const trace: tf.Tensor4D[] = [];
  const shapes = tf.tidy(() => {
    const logits = cnn.logits(tf.zeros([2, 28, 28, 1]), { trace });
    assertEquals(logits.shape, [2, 10]);
    return trace.map((t) => t.shape.slice(1));
  });
  assertEquals(shapes, [[24, 24, 20], [11, 11, 70], [5, 5, 256], [1, 1, 10]]);
  assertEquals(tf.memory().numTensors, before);
  cnn.dispose();
});

Deno.test("the ABS CNN trained by trainClassifier fits separable strokes; tensors flat across steps", async () => {
  const rng = new Rng(2);
  const { images, labels } = strokes(24, rng);
  const steps: { loss: number; tensors: number }[] = [];
  const cnn = absCnn(rng);
  const training = absCnnTraining(cnn);
  const optimizer = tf.train.adam(3e-3);
  await trainClassifier({
    images,
    labels,
    shape: [28, 28, 1],
    logits: training.logits,
    variables: cnn.params.list(),
    optimizer,
    rng,
    batch: 8,
    epochs: 5,
    minRows: 2,
    afterStep: async (_step, loss) => {
      training.update();
      steps.push({ loss: (await loss.data())[0], tensors: tf.memory().numTensors });
    },
  });
  optimizer.dispose();
  assertEquals(steps.length, 15);
  assertEquals(new Set(steps.slice(1).map((s) => s.tensors)).size, 1);
  assert(steps.at(-1)!.loss < 0.5 * steps[0].loss, `${steps[0].loss} → ${steps.at(-1)!.loss}`);
  const model = absCnnModel(cnn);
  const logits = model.logits(tf.tensor4d(images, [24, 28, 28, 1]));
  const predicted = await tf.argMax(logits, 1).data();
  assertEquals([...predicted], [...labels]);
  logits.dispose();
  cnn.dispose();
});

Deno.test("the CNN model's input gradient matches central finite differences (eval mode)", async () => {
  const rng = new Rng(3);
  const cnn = absCnn(rng);
  // Non-trivial running statistics, as after training.
  for (const v of cnn.stats.list()) {
    const values = v.name.includes("/var")
      ? rng.normalArray(v.size).map((e) => 1 + 0.3 * e * e)
      : rng.normalArray(v.size, 0.1);
    v.assign(tf.tensor(values, v.shape));
  }
  const model = absCnnModel(cnn);
  assertEquals(model.bounds, [0, 1]);
  assertEquals(model.gradient, true);
  const { images } = strokes(2, rng);
  const x = tf.tensor4d(images, [2, 28, 28, 1]);
  const w = tf.tensor2d(rng.normalArray(20), [2, 10]);
  const direction = tf.tensor4d(rng.normalArray(2 * 784, 1 / 28), [2, 28, 28, 1]);
  const before = tf.memory().numTensors;
  const grad = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(model.logits(v as tf.Tensor4D), w)))(x);
  const product = tf.tidy(() => tf.sum(tf.mul(grad, direction)));
  const analytic = (await product.data())[0];
  tf.dispose([grad, product]);
  const h = 1e-2;
  const f = async (s: number) => {
    const t = tf.tidy(() => tf.sum(tf.mul(model.logits(tf.add(x, tf.mul(s, direction)) as tf.Tensor4D), w)));
    const v = (await t.data())[0];
    t.dispose();
    return v;
  };
  const fd = (await f(h) - await f(-h)) / (2 * h);
  assertAlmostEquals(analytic, fd, 1e-2 * Math.abs(fd), `${analytic} vs ${fd}`);
  assertEquals(tf.memory().numTensors, before);
  tf.dispose([x, w, direction]);
  cnn.dispose();
});

Deno.test("the Binary CNN classifies the binarized input", async () => {
  const binary = absCnn(new Rng(4), { binary: true }), plain = absCnn(new Rng(4));
  const values = new Rng(5).normalArray(2 * 784).map((v) => 0.5 + 0.3 * v);
  const a = await tf.tidy(() => binary.logits(tf.tensor4d(values, [2, 28, 28, 1]))).data();
  const b = await tf.tidy(() => plain.logits(tf.tensor4d(values.map((v) => v >= 0.5 ? 1 : 0), [2, 28, 28, 1]))).data();
  assertEquals([...a], [...b]);
  binary.dispose();
  plain.dispose();
});
