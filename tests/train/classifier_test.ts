/**
 * trainClassifier: a pass per permutation of the seeded generator, batches in
 * that order (a short last one skipped below `minRows`), fractional epochs
 * finishing their pass, `steps` ending training mid-pass, the hooks in step
 * order; each step is one plain softmax cross-entropy step on its rows.
 */
import * as tf from "@tensorflow/tfjs";
import { assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { trainClassifier } from "../../lib/train/classifier.ts";

await selectBackend("wasm");

const N = 10, PIXELS = 4, CLASSES = 3;
/** Image k holds the value k in every pixel, so a batch shows which rows it took. */
const IMAGES = Float32Array.from({ length: N * PIXELS }, (_, i) => Math.floor(i / PIXELS));
const LABELS = Int32Array.from({ length: N }, (_, k) => (k * 7) % CLASSES);

/** A linear classifier `[b, 2, 2, 1]` → `[b, 3]` with fixed initial weights. */
function linear() {
  const [w, b] = tf.tidy(() => [
    tf.variable(tf.tensor2d(Array.from({ length: PIXELS * CLASSES }, (_, i) => 0.1 * Math.sin(i)), [4, 3])),
    tf.variable(tf.zeros([CLASSES])),
  ]);
  return {
    variables: [w, b],
    logits: (x: tf.Tensor4D) => tf.add(tf.matMul(tf.reshape(x, [x.shape[0], PIXELS]), w), b) as tf.Tensor2D,
    dispose: () => tf.dispose([w, b]),
  };
}

/** The rows of each step, from the images it was given, and the steps seen by each hook. */
async function run(options: { epochs: number; batch: number; minRows?: number; steps?: number }) {
  const model = linear();
  const optimizer = tf.train.sgd(0.5);
  const batches: number[][] = [];
  const before: number[] = [], after: number[] = [], epochs: [number, number][] = [];
  const taken = await trainClassifier({
    images: IMAGES,
    labels: LABELS,
    shape: [2, 2, 1],
    logits: model.logits,
    variables: model.variables,
    optimizer,
    rng: new Rng(7),
    ...options,
    beforeStep: (step) => void before.push(step),
    input: async (x, _labels, step) => {
      const values = await x.data();
      batches.push(Array.from({ length: x.shape[0] }, (_, i) => values[i * PIXELS]));
      assertEquals(step, batches.length - 1);
      return x;
    },
    afterStep: (step) => void after.push(step),
    afterEpoch: (epoch, steps) => void epochs.push([epoch, steps]),
  });
  const weights = await Promise.all(model.variables.map(async (v) => Array.from(await v.data())));
  model.dispose();
  optimizer.dispose();
  return { taken, batches, before, after, epochs, weights };
}

/** The batches a pass of `batch` rows over permutations of Rng(7) gives, without a loop under test. */
function expectedBatches(passes: number, batch: number, minRows: number): number[][] {
  const rng = new Rng(7), out: number[][] = [];
  for (let p = 0; p < passes; p++) {
    const order = Array.from(rng.permutation(N));
    for (let start = 0; start < N; start += batch) {
      if (Math.min(batch, N - start) >= minRows) out.push(order.slice(start, start + batch));
    }
  }
  return out;
}

Deno.test("trainClassifier: passes, batches in the permutation's order, short batches skipped, hooks in order", async () => {
  const tensors = tf.memory().numTensors;
  // 2.5 epochs finish the third pass; batches of 4, 4, 2 rows, the 2-row one skipped under minRows 3.
  const three = await run({ epochs: 2.5, batch: 4, minRows: 3 });
  assertEquals(three.batches, expectedBatches(3, 4, 3));
  assertEquals(three.taken, 6);
  assertEquals(three.before, [0, 1, 2, 3, 4, 5]);
  assertEquals(three.after, [1, 2, 3, 4, 5, 6]);
  assertEquals(three.epochs, [[0, 2], [1, 2], [2, 2]]);
  const kept = await run({ epochs: 1, batch: 4 });
  assertEquals(kept.batches, expectedBatches(1, 4, 1));
  // `steps` ends training inside the second pass.
  const capped = await run({ epochs: 5, batch: 4, steps: 4 });
  assertEquals(capped.batches, expectedBatches(2, 4, 1).slice(0, 4));
  assertEquals(capped.epochs, [[0, 3], [1, 1]]);
  assertEquals(tf.memory().numTensors, tensors);
});

Deno.test("trainClassifier: each step is one softmax cross-entropy step on its rows, bit for bit", async () => {
  const { batches, weights } = await run({ epochs: 2, batch: 3, minRows: 2 });
  const model = linear();
  const optimizer = tf.train.sgd(0.5);
  for (const rows of batches) {
    const x = tf.tensor4d(rows.flatMap((k) => Array.from(IMAGES.subarray(k * PIXELS, (k + 1) * PIXELS))), [
      rows.length,
      2,
      2,
      1,
    ]);
    const y = tf.oneHot(tf.tensor1d(rows.map((k) => LABELS[k]), "int32"), CLASSES);
    optimizer.minimize(() => tf.losses.softmaxCrossEntropy(y, model.logits(x)) as tf.Scalar, false, model.variables);
    tf.dispose([x, y]);
  }
  const replayed = await Promise.all(model.variables.map(async (v) => Array.from(await v.data())));
  assertEquals(replayed, weights);
  model.dispose();
  optimizer.dispose();
});

Deno.test("trainClassifier refuses images that do not match the labels", async () => {
  const model = linear();
  await assertRejects(
    () =>
      trainClassifier({
        images: IMAGES.subarray(1),
        labels: LABELS,
        shape: [2, 2, 1],
        logits: model.logits,
        variables: model.variables,
        optimizer: tf.train.sgd(0.1),
        rng: new Rng(1),
        batch: 4,
        epochs: 1,
      }),
    RangeError,
  );
  model.dispose();
});
