/**
 * Training steps read nothing back from the device except at logged steps, and there once: reads of the
 * active backend are counted while a few steps run, and the logged values are compared with one read per
 * term.
 */
import * as tf from "@tensorflow/tfjs";
import { assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { Eta } from "../../lib/adapt/eta.ts";
import { Cebra } from "../../lib/contrastive/cebra.ts";
import { trainClassVae } from "../../lib/models/abs_vae.ts";
import { bnCnn } from "../../lib/models/bn_cnn.ts";
import { type LossTerms, trainPhase } from "../../lib/train/loop.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");

type Reads = { read(dataId: object): Promise<unknown>; readSync(dataId: object): unknown };

/**
 * Runs `body` with the active backend's `read` and `readSync` counted (then restored): only reads asked for
 * outside a kernel (`data()`, `dataSync()`, `array()`...), not those a kernel makes of its inputs (the wasm
 * backend's slice and concat read their inputs through `readSync`), and a `data()` once (wasm's `read` calls
 * its own `readSync`).
 */
async function countingReads<T>(body: (reads: () => number) => Promise<T>): Promise<{ result: T; reads: number }> {
  const backend = tf.backend() as unknown as Reads;
  const engine = tf.engine() as unknown as { state: { kernelDepth: number } };
  const own = { read: Object.hasOwn(backend, "read"), readSync: Object.hasOwn(backend, "readSync") };
  const { read, readSync } = backend;
  let reads = 0, inRead = false;
  backend.read = async function (this: Reads, dataId) {
    if (engine.state.kernelDepth === 0) reads++;
    inRead = true;
    try {
      return await read.call(this, dataId);
    } finally {
      inRead = false;
    }
  };
  backend.readSync = function (this: Reads, dataId) {
    if (engine.state.kernelDepth === 0 && !inRead) reads++;
    return readSync.call(this, dataId);
  };
  try {
    const result = await body(() => reads);
    return { result, reads };
  } finally {
    for (const key of ["read", "readSync"] as const) {
      if (own[key]) backend[key] = key === "read" ? read : readSync as never;
      else delete (backend as Partial<Reads>)[key];
    }
  }
}

/** A quadratic with two logged terms; the variable starts at `start` each time. */
function quadraticTerms(w: tf.Variable): LossTerms {
  const target = tf.tensor1d([1, -2, 0.5]);
  const fit = tf.sum(tf.square(tf.sub(w, target))) as tf.Scalar;
  const size = tf.mean(tf.abs(w)) as tf.Scalar;
  return { total: tf.add(fit, tf.mul(0.1, size)) as tf.Scalar, fit, size };
}

Deno.test("the counter sees data(), dataSync() and array() once each, and is removed afterwards", async () => {
  const t = tf.tensor1d([1, 2, 3]);
  const { reads } = await countingReads(async () => {
    await t.data();
    t.dataSync();
    await t.array();
    // A kernel's own reads of its inputs are not reads of the caller.
    tf.tidy(() => tf.concat([tf.slice(t, [1], [2]), t]));
  });
  assertEquals(reads, 3);
  assertEquals(Object.hasOwn(tf.backend(), "read") || Object.hasOwn(tf.backend(), "readSync"), false);
  t.dispose();
});

Deno.test("trainPhase reads nothing at steps it does not log and once at a logged step, the values of per-term reads", async () => {
  const start = [0.3, 0.7, -1.1];
  const w = tf.variable(tf.tensor1d(start), true, "readback/w");
  const optimizer = tf.train.sgd(0.05);
  const logged: { step: number; values: Record<string, number> }[] = [];
  const perStep: number[] = [];
  const { reads } = await countingReads(async (count) => {
    let before = 0;
    await trainPhase(fakeContext(logged), {
      label: "q",
      steps: 5,
      startStep: 0,
      variables: [w],
      optimizer,
      logEvery: 10,
      loss: () => quadraticTerms(w),
      afterStep: () => (perStep.push(count() - before), before = count()),
    });
  });
  assertEquals(perStep, [0, 0, 0, 0, 1]);
  assertEquals(reads, 1);
  assertEquals(logged.map((l) => l.step), [5]);
  // The same steps again, each term read on its own at step 5.
  w.assign(tf.tensor1d(start));
  let expected: Record<string, number> = {};
  for (let step = 1; step <= 5; step++) {
    const kept: Record<string, tf.Scalar> = {};
    const cost = optimizer.minimize(
      () => {
        const terms = quadraticTerms(w);
        for (const [key, value] of Object.entries(terms)) kept[key] = tf.keep(value);
        return terms.total;
      },
      true,
      [w],
    )!;
    expected = {};
    for (const [key, tensor] of Object.entries(kept)) expected[`q/${key}`] = (await tensor.data())[0];
    // `cost` is the kept total itself.
    tf.dispose([...new Set([cost, ...Object.values(kept)])]);
  }
  assertEquals(logged[0].values, expected);
  optimizer.dispose();
  w.dispose();
});

Deno.test("a CEBRA fit reads its losses every lossReadEvery steps, the values of one read per step", async () => {
  const rng = new Rng(4);
  const x = { data: Float32Array.from({ length: 60 * 5 }, () => rng.normal()), rows: 60, cols: 5 };
  const options = { batchSize: 16, outputDimension: 2, numHiddenUnits: 4, maxIterations: 6, seed: 2 };
  const afterStep: number[] = [];
  const delivered: number[] = [];
  let count = () => 0;
  const batched = new Cebra({
    ...options,
    lossReadEvery: 3,
    afterStep: () => afterStep.push(count()),
    onStep: (step) => delivered.push(step),
  });
  const { reads } = await countingReads((reads) => (count = reads, batched.fit(x)));
  assertEquals(afterStep, [0, 0, 0, 1, 1, 1]);
  assertEquals(reads, 2);
  assertEquals(delivered, [0, 1, 2, 3, 4, 5]);
  const single = new Cebra({ ...options, lossReadEvery: 1 });
  await single.fit(x);
  assertEquals(batched.lossHistory, single.lossHistory);
  batched.dispose();
  single.dispose();
  assertThrows(() => new Cebra({ lossReadEvery: 0 }), UsageError, "lossReadEvery");
});

Deno.test("trainClassVae reads its terms once per logged step, the values logged at every step", async () => {
  const rng = new Rng(6);
  const images = Float32Array.from({ length: 4 * 784 }, () => rng.uniform());
  const settings = { epochs: 2, batch: 2, lr: 1e-3, betaEpochs: 1 };
  const sparse: number[][] = [], every: number[][] = [];
  const { reads } = await countingReads(async () =>
    (await trainClassVae(images, {
      ...settings,
      rng: new Rng(7),
      logEvery: 10,
      onStep: (s) => void sparse.push([s.step, s.loss, s.reconstruction, s.kl]),
    })).dispose()
  );
  assertEquals(reads, 1);
  (await trainClassVae(images, {
    ...settings,
    rng: new Rng(7),
    onStep: (s) => void every.push([s.step, s.loss, s.reconstruction, s.kl]),
  })).dispose();
  assertEquals(every.length, 4);
  assertEquals(sparse, [every[3]]);
});

Deno.test("an ETA step reads its predictions and filter masks in one readback", async () => {
  const model = bnCnn(new Rng(8), { norm: "batch" });
  const eta = new Eta(model, { e0Rule: "thesis" });
  const x = tf.tensor4d(new Rng(9).normalArray(8 * 784, 1).map(Math.abs), [8, 28, 28, 1]);
  const reference = model.logits(x, { kind: "batch" });
  const expected = await reference.data();
  reference.dispose();
  const { result, reads } = await countingReads(() => eta.step(x));
  assertEquals(reads, 1);
  assertEquals(Array.from(result), Array.from(expected));
  x.dispose();
  eta.dispose();
  model.dispose();
});
