import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { convEncoder } from "../../lib/models/dislib_vae.ts";
import {
  addCoordinateChannels,
  cnnRegressor,
  coordConvRegressor,
  mlpRegressor,
  MODEL_NOTES,
  pixelTuples,
  readout,
  regressionLoss,
  regressionStep,
  REGRESSOR_NAMES,
  REGRESSORS,
  setEncoderRegressor,
} from "../../lib/models/regressors.ts";

await selectBackend("wasm");

function images(rng: Rng, n: number, size: number, channels: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from({ length: n * size * size * channels }, () => rng.uniform()), [
    n,
    size,
    size,
    channels,
  ]);
}

/** Weights plus biases of a dense layer. */
const denseCount = (inputs: number, outputs: number) => inputs * outputs + outputs;

Deno.test("every regressor maps 32×32×1 and 64×64×3 images to one finite prediction per factor", async () => {
  const before = tf.memory().numTensors;
  for (const [size, channels] of [[32, 1], [64, 3]] as const) {
    const rng = new Rng(1);
    const x = images(rng, 3, size, channels);
    for (const name of REGRESSOR_NAMES) {
      const model = REGRESSORS[name].build(new Rng(2), { size, channels, outputs: 5 });
      const y = tf.tidy(() => model.predict(x));
      assertEquals(y.shape, [3, 5], `${name} at ${size}×${size}×${channels}`);
      const values = await y.data();
      assert(values.every(Number.isFinite), `${name}: ${values}`);
      // Different images give different predictions: the input reaches the output.
      assert(values.slice(0, 5).some((v, k) => Math.abs(v - values[5 + k]) > 1e-6), `${name} ignores its input`);
      y.dispose();
      model.params.dispose();
      assert(MODEL_NOTES[name].length > 0 && REGRESSORS[name].description.length > 0, name);
    }
    const encoder = convEncoder(new Rng(3), { size, channels, latents: 10 });
    const head = readout(new Rng(4), { outputs: 5, encoder });
    const y = tf.tidy(() => head.predict(x));
    assertEquals(y.shape, [3, 5]);
    tf.dispose([x, y]);
    encoder.params.dispose();
    head.params.dispose();
  }
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("an image of another shape is refused with both shapes named", () => {
  const model = mlpRegressor(new Rng(1), { size: 32, channels: 1, outputs: 5 });
  const x = tf.zeros([2, 64, 64, 3]) as tf.Tensor4D;
  assertThrows(() => model.predict(x), RangeError, "MLP regressor takes [batch, 32, 32, 1] images, got [2,64,64,3]");
  assertThrows(() => readout(new Rng(1), { outputs: 5 }).predict(x), Error, "fromCodes");
  x.dispose();
  model.params.dispose();
});

Deno.test("parameter counts follow the layer lists of App. H.4", () => {
  const count = (build: (typeof REGRESSORS)[keyof typeof REGRESSORS]["build"], size: 32 | 64, channels: number) => {
    const model = build(new Rng(0), { size, channels, outputs: 5 });
    const n = model.params.count();
    model.params.dispose();
    return n;
  };
  for (const [size, channels] of [[32, 1], [64, 3]] as const) {
    const pixels = size * size * channels;
    const mlp = denseCount(pixels, 90) + 3 * denseCount(90, 90) + denseCount(90, 45) + denseCount(45, 5);
    assertEquals(count(mlpRegressor, size, channels), mlp, `MLP ${size}×${size}×${channels}`);
    const setEncoder = denseCount(2 + channels, 40) + denseCount(40, 40) + denseCount(40, 20) + // per pixel
      denseCount(20, 20) + denseCount(20, 20) + denseCount(20, 5); // after the mean
    assertEquals(count(setEncoderRegressor, size, channels), setEncoder, `SetEncoder ${size}×${size}×${channels}`);
    const conv = (kernel: number, inputs: number, outputs: number) => kernel * kernel * inputs * outputs + outputs;
    const coordConv = conv(3, channels + 2, 16) + 5 * conv(3, 16, 16) + denseCount(16, 32) + denseCount(32, 5);
    assertEquals(count(coordConvRegressor, size, channels), coordConv, `CoordConv ${size}×${size}×${channels}`);
  }
  // 32×32: convs to 32, 64, 64 channels down to 4×4, FC 256, linear.
  assertEquals(
    count(cnnRegressor, 32, 1),
    16 * 32 + 32 + 16 * 32 * 64 + 64 + 16 * 64 * 64 + 64 + denseCount(4 * 4 * 64, 256) + denseCount(256, 5),
  );
  assertEquals(count(cnnRegressor, 32, 1), 362_661);
  assertEquals(count(mlpRegressor, 32, 1), 121_145);
  assertEquals(count(setEncoderRegressor, 32, 1), 3_565);
  const head = readout(new Rng(0), { outputs: 5 });
  assertEquals(head.params.count(), denseCount(10, 40) + 2 * denseCount(40, 40) + denseCount(40, 5));
  head.params.dispose();
});

Deno.test("the CNN regressor's body is the conv encoder's, weight for weight from the same seed", async () => {
  const options = { size: 32 as const, channels: 1 };
  const encoder = convEncoder(new Rng(9), { ...options, latents: 10 });
  const cnn = cnnRegressor(new Rng(9), { ...options, outputs: 5 });
  for (const key of ["conv0/w", "conv1/b", "conv2/w", "fc/w", "fc/b"]) {
    assertEquals(await cnn.params.get(key).data(), await encoder.params.get(key).data(), key);
  }
  encoder.params.dispose();
  cnn.params.dispose();
});

Deno.test("CoordConv's extra channels are exactly i/(h−1) and j/(w−1) after the untouched image", async () => {
  const [batch, height, width, channels] = [2, 5, 7, 3];
  const x = tf.tensor4d(new Rng(5).normalArray(batch * height * width * channels), [batch, height, width, channels]);
  const out = addCoordinateChannels(x);
  assertEquals(out.shape, [batch, height, width, channels + 2]);
  const [image, got] = [await x.data(), await out.data()];
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < height; i++) {
      for (let j = 0; j < width; j++) {
        const pixel = (b * height + i) * width + j;
        for (let c = 0; c < channels; c++) assertEquals(got[pixel * (channels + 2) + c], image[pixel * channels + c]);
        assertEquals(got[pixel * (channels + 2) + channels], Math.fround(i / (height - 1)), `row at ${i},${j}`);
        assertEquals(got[pixel * (channels + 2) + channels + 1], Math.fround(j / (width - 1)), `column at ${i},${j}`);
      }
    }
  }
  tf.dispose([x, out]);
});

Deno.test("SetEncoder is a function of the set of (i, j, value) tuples, not of where the pixels sit", async () => {
  const rng = new Rng(6);
  const model = setEncoderRegressor(rng, { size: 32, channels: 3, outputs: 4 });
  const x = images(rng, 2, 32, 3);
  const tuples = pixelTuples(x);
  assertEquals(tuples.shape, [2, 1024, 5]);
  // Tuple of pixel (i, j) = (i/31, j/31, its three values), row-major.
  const [t, image] = [await tuples.data(), await x.data()];
  const k = 1024 + 3 * 32 + 17; // second image, row 3, column 17
  assertEquals([...t.slice(5 * k, 5 * k + 5)], [
    Math.fround(3 / 31),
    Math.fround(17 / 31),
    ...image.slice(3 * k, 3 * k + 3),
  ]);

  const order = tf.tensor1d(rng.permutation(1024), "int32");
  const [direct, fromTuples, permuted, shuffledImage] = tf.tidy(() => [
    model.predict(x),
    model.predictSet(tuples),
    // Each tuple moves with its coordinates: the same set, listed in another order.
    model.predictSet(tf.gather(tuples, order, 1)),
    // The values alone move, so each lands at other coordinates: another set.
    model.predict(tf.reshape(tf.gather(tf.reshape(x, [2, 1024, 3]), order, 1), [2, 32, 32, 3])),
  ]);
  const reference = await direct.data();
  assertEquals(await fromTuples.data(), reference);
  const [p, s] = [await permuted.data(), await shuffledImage.data()];
  reference.forEach((v, i) => assertAlmostEquals(p[i], v, 1e-5 * Math.max(1, Math.abs(v))));
  assert(reference.some((v, i) => Math.abs(s[i] - v) > 1e-4), "moving values to other coordinates changed nothing");
  tf.dispose([x, tuples, order, direct, fromTuples, permuted, shuffledImage]);
  model.params.dispose();
});

Deno.test("regressionLoss is Σ_j (y − f)² / batch", async () => {
  const f = tf.tensor2d([[1, 2, 3], [0, 0, 0]]), y = tf.tensor2d([[1, 0, 1], [1, 1, -1]]);
  const loss = regressionLoss(f, y);
  assertAlmostEquals((await loss.data())[0], (0 + 4 + 4 + 1 + 1 + 1) / 2, 1e-6);
  tf.dispose([f, y, loss]);
});

Deno.test("Adam steps on a fixed batch lower every regressor's loss, with no tensor left behind", async () => {
  const rng = new Rng(7);
  const x = images(rng, 8, 32, 1);
  const y = tf.tensor2d(Float32Array.from({ length: 8 * 3 }, () => rng.uniform()), [8, 3]);
  const encoder = convEncoder(new Rng(8), { size: 32, channels: 1, latents: 10 });
  // Each regressor's loss is below 0.36 of its first by step 10 (the ResNet's, which takes most of the time, 0.12);
  // the readout's small head falls steadily and passes 0.5 at step 17.
  const models = [
    ...REGRESSOR_NAMES.map((name) => ({
      name,
      model: REGRESSORS[name].build(new Rng(8), { size: 32, channels: 1, outputs: 3 }),
      steps: 10,
    })),
    { name: "readout", model: readout(new Rng(8), { outputs: 3, encoder }), steps: 20 },
  ];
  const encoderBefore = await encoder.params.get("mean/w").data();
  for (const { name, model, steps } of models) {
    const optimizer = tf.train.adam(2e-3);
    const losses: number[] = [];
    let tensors = 0;
    for (let step = 0; step < steps; step++) {
      losses.push(await regressionStep(model, optimizer, x, y));
      const prediction = tf.tidy(() => model.predict(x));
      prediction.dispose();
      if (step === 1) tensors = tf.memory().numTensors;
    }
    assertEquals(tf.memory().numTensors, tensors, `${name} leaks`);
    assert(losses.at(-1)! < 0.5 * losses[0], `${name}: ${losses[0]} → ${losses.at(-1)}`);
    optimizer.dispose();
    model.params.dispose();
  }
  // The readout trains its own parameters only.
  assertEquals(await encoder.params.get("mean/w").data(), encoderBefore);
  encoder.params.dispose();
  tf.dispose([x, y]);
});

Deno.test("a readout trained on the factors themselves (the oracle) drives the loss toward zero", async () => {
  const rng = new Rng(11);
  const factors = tf.tensor2d(Float32Array.from({ length: 64 * 4 }, () => rng.uniform()), [64, 4]);
  const head = readout(new Rng(12), { inputs: 4, outputs: 4 });
  const optimizer = tf.train.adam(5e-3);
  const oracle = { params: head.params, predict: head.fromCodes };
  const first = await regressionStep(oracle, optimizer, factors, factors);
  let last = first;
  for (let step = 0; step < 150; step++) last = await regressionStep(oracle, optimizer, factors, factors);
  assert(last < 0.05 * first, `${first} → ${last}`);
  factors.dispose();
  optimizer.dispose();
  head.params.dispose();
});

Deno.test("SetEncoder loss gradients match central finite differences", async () => {
  const rng = new Rng(10);
  const model = setEncoderRegressor(rng, { size: 32, channels: 1, outputs: 3 });
  const x = images(rng, 2, 32, 1);
  const y = tf.tensor2d(rng.normalArray(6), [2, 3]);
  const loss = () => tf.tidy(() => regressionLoss(model.predict(x), y));
  const variables = model.params.list();
  const { value, grads } = tf.variableGrads(loss, variables);
  for (const variable of variables) {
    const analytic = await grads[variable.name].data();
    const values = Float32Array.from(await variable.data());
    for (const index of [0, Math.floor(values.length / 2), values.length - 1]) {
      const eps = 3e-3;
      const at = async (delta: number) => {
        const moved = Float32Array.from(values);
        moved[index] += delta;
        tf.tidy(() => variable.assign(tf.tensor(moved, variable.shape)));
        const out = loss();
        const v = (await out.data())[0];
        out.dispose();
        return v;
      };
      const numeric = (await at(eps) - await at(-eps)) / (2 * eps);
      tf.tidy(() => variable.assign(tf.tensor(values, variable.shape)));
      // A step of 3e-3 crosses few ReLU kinks yet stays above float32 round-off; gradients here are 1e-3 to 1.
      assertAlmostEquals(analytic[index], numeric, 1e-3 + 1e-2 * Math.abs(numeric), `${variable.name}[${index}]`);
    }
  }
  tf.dispose([value, ...Object.values(grads), x, y]);
  model.params.dispose();
});
