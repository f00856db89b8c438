/** Unsupervised encoders and readouts on a split's training part: what they see, and what they leave unchanged. */
import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { FactorSpace } from "../../lib/data/ground_truth.ts";
import { loadDataset } from "../../lib/data/registry.ts";
import { makeSplit, type Split } from "../../lib/data/splits.ts";
import { convEncoder } from "../../lib/models/dislib_vae.ts";
import {
  readoutSteps,
  SPLIT_ENCODER_NAMES,
  trainPairsOf,
  trainPartDataset,
  trainPartPairSource,
  trainReadout,
  trainSplitEncoder,
  transitionSampler,
} from "../../lib/train/split_encoders.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");

const dataset = loadDataset("dsprites-rot", { size: 32 });
const space = new FactorSpace(dataset.factorSizes);
const k = dataset.factorSizes.length;

/** Flat grid indices of each row of `[n, k]` factor values. */
const flatIndices = (values: Int32Array) =>
  Array.from({ length: values.length / k }, (_, r) => space.indexOf(values.subarray(r * k, (r + 1) * k)));

/** A hand-made split of the dSprites grid whose training part is `train` (ascending). */
function smallSplit(train: number[]): Split {
  return { name: "extrapolation", sizes: dataset.factorSizes, train: Int32Array.from(train), test: new Int32Array() };
}

for (const splitName of ["extrapolation", "composition"] as const) {
  for (const transitions of ["lap", "one_factor"] as const) {
    Deno.test(`${transitions} pairs of the ${splitName} split's training part: both frames are training points`, () => {
      const split = makeSplit("dsprites", splitName);
      const inTrain = new Set(split.train);
      const draw = transitionSampler(dataset, transitions);
      const { first, second } = trainPairsOf(split, draw, 500, new Rng(3));
      assertEquals([first.n, second.n], [500, 500]);
      for (const index of [...flatIndices(first.values), ...flatIndices(second.values)]) assert(inTrain.has(index));
      const changed = Array.from({ length: 500 }, (_, r) => {
        let count = 0;
        for (let j = 0; j < k; j++) if (first.values[r * k + j] !== second.values[r * k + j]) count++;
        return count;
      });
      assert(changed.every((c) => c >= 1), "every pair moves");
      if (transitions === "one_factor") assert(changed.every((c) => c === 1), "Ada-GVAE pairs differ in one factor");
      else assert(changed.some((c) => c > 1), "LAP moves several factors at a time");

      // The source's images are those of these pairs: the same draws from the same generator.
      const source = trainPartPairSource(dataset, split, transitions);
      const { x0, x1 } = source.pairs(20, new Rng(9));
      const pairs = trainPairsOf(split, draw, 20, new Rng(9));
      assertEquals(x0, dataset.observations(pairs.first, new Rng(0)).values);
      assertEquals(x1, dataset.observations(pairs.second, new Rng(0)).values);
    });
  }
}

Deno.test("the training part's dataset and i.i.d. frames draw training points only", () => {
  const split = makeSplit("dsprites", "extrapolation");
  const inTrain = new Set(split.train);
  const train = trainPartDataset(dataset, split);
  const factors = train.sampleFactors(2_000, new Rng(1));
  assert(flatIndices(factors.values).every((index) => inTrain.has(index)));
  // The frames are the images of the training part's draws.
  const frames = trainPartPairSource(dataset, split, "lap").frames(10, new Rng(2));
  assertEquals(frames, dataset.observations(train.sampleFactors(10, new Rng(2)), new Rng(0)).values);
  assertThrows(() => trainPartDataset(dataset, makeSplit("shapes3d", "random")), Error, "factor grid");
});

Deno.test("a training part no transition stays inside is refused, not sampled forever", () => {
  // One training point: LAP always moves, so no pair has both frames in it.
  const split = smallSplit([space.indexOf([0, 1, 2, 3, 4])]);
  assertThrows(() => trainPairsOf(split, transitionSampler(dataset, "lap"), 4, new Rng(0)), Error, "training part");
});

for (const encodeOnce of [false, true]) {
  Deno.test(`trainReadout (${encodeOnce ? "codes encoded once" : "each batch encoded"}) trains the readout and leaves the encoder's weights as they were`, async () => {
    const encoder = convEncoder(new Rng(5), { size: 32, channels: 1, latents: 6 });
    const before = await Promise.all(encoder.params.list().map((v) => v.data()));
    const split = smallSplit(Array.from({ length: 200 }, (_, i) => 1_000 * i + 7));
    const tensors = tf.memory().numTensors;
    const logged: { step: number; values: Record<string, number> }[] = [];
    const evaluated: number[] = [];
    const { readout, last } = await trainReadout(fakeContext(logged), encoder, dataset, split, {
      label: "readout",
      latents: 6,
      init: new Rng(6),
      batches: new Rng(7),
      epochs: 8,
      batch: 16,
      lr: 5e-3,
      logEvery: 25,
      evaluateEvery: 50,
      evaluate: (_, step) => {
        evaluated.push(step);
        return Promise.resolve({});
      },
      encodeOnce,
    });
    assertEquals(readoutSteps(8, split, 16), 100);
    assertEquals(evaluated, [50, 100]);
    const losses = logged.filter((row) => "readout/total" in row.values).map((row) => row.values["readout/total"]);
    assertEquals(losses.length, 4);
    assert(losses[3] < losses[0], `the readout's loss: ${losses.join(" → ")}`);
    assertEquals(last.total, losses[3]);
    const after = await Promise.all(encoder.params.list().map((v) => v.data()));
    assertEquals(after, before, "the encoder is frozen");
    readout.params.dispose();
    assertEquals(tf.memory().numTensors, tensors, "tensors left");
    encoder.params.dispose();
  });
}

Deno.test("codes encoded once give the readout of codes encoded batch by batch", async () => {
  const encoder = convEncoder(new Rng(5), { size: 32, channels: 1, latents: 6 });
  const split = smallSplit(Array.from({ length: 64 }, (_, i) => 9_000 * i + 11));
  const weights: ArrayLike<number>[][] = [];
  for (const encodeOnce of [false, true]) {
    const { readout } = await trainReadout(fakeContext([]), encoder, dataset, split, {
      label: "readout",
      latents: 6,
      init: new Rng(1),
      batches: new Rng(2),
      epochs: 2,
      batch: 8,
      lr: 5e-3,
      logEvery: 100,
      evaluateEvery: 0,
      evaluate: () => Promise.resolve({}),
      encodeOnce,
    });
    weights.push(await Promise.all(readout.params.list().map((v) => v.data() as Promise<Float32Array>)));
    readout.params.dispose();
  }
  weights[0].forEach((w, i) => Array.from(w).forEach((v, j) => assertAlmostEquals(weights[1][i][j], v, 1e-5)));
  encoder.params.dispose();
});

for (const name of SPLIT_ENCODER_NAMES) {
  Deno.test(`trainSplitEncoder(${name}) trains on the training part, scores DCI at each scored step, frees all`, async () => {
    const split = makeSplit("dsprites", "extrapolation");
    const tensors = tf.memory().numTensors;
    const logged: { step: number; values: Record<string, number> }[] = [];
    const trained = await trainSplitEncoder(fakeContext(logged), name, {
      dataset,
      datasetName: "dsprites-rot",
      split,
    }, {
      latents: 4,
      steps: 4,
      batch: 4,
      lr: 1e-3,
      beta: 4,
      adaBeta: 4,
      gamma: 10,
      rate: 6,
      lapRate: 1,
      logEvery: 2,
      curveEvery: 2,
      curveSamples: 30,
    }, { label: `${name}/encoder`, seed: 1 });
    assertEquals(trained.curve.map((p) => p.step), [2, 4]);
    for (const { scores } of trained.curve) assert(Number.isFinite(scores.dci_disentanglement), JSON.stringify(scores));
    assertEquals(trained.last.dci_disentanglement, trained.curve[1].scores.dci_disentanglement);
    assert(logged.some((row) => Number.isFinite(row.values[`${name}/encoder/total`])), "the loss is logged");
    const codes = tf.tidy(() => trained.encoder.encode(tf.zeros([2, 32, 32, 1])).mean);
    assertEquals(codes.shape, [2, 4]);
    codes.dispose();
    trained.dispose();
    assertEquals(tf.memory().numTensors, tensors, "tensors left");
  });
}
