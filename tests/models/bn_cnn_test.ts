import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { blobDigits, trainedStatsModel } from "./bn_cnn_fixtures.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { applyBatchMoments, type BatchMoments } from "../../lib/models/conv_bn.ts";
import {
  batchNorm2d,
  batchNorm2dTrain,
  type BnCnn,
  bnCnn,
  groupNorm,
  normInput,
  type NormMode,
} from "../../lib/models/bn_cnn.ts";
import { Params } from "../../lib/models/params.ts";
import { smallCnn } from "../../lib/models/small_cnn.ts";

await selectBackend("wasm");

interface PriorCase {
  N: number | "Infinity";
  n: number;
  out: number[];
  mean: number[][];
  var: number[][];
}

/** tests/adapt/fixtures/bn_reference.json, written by make_bn_reference.py (torch float64). */
const REF: {
  shape: [number, number, number, number];
  x: number[];
  x2: number[];
  gamma: number[];
  beta: number[];
  source_mean: number[];
  source_var: number[];
  source: { out: number[] };
  batch: { out: number[]; mean: number[]; var: number[] };
  train: { out: number[]; running_mean: number[]; running_var: number[] }[];
  prior: PriorCase[];
  group: { shape: [number, number, number, number]; x: number[]; gamma: number[]; beta: number[]; out: number[] };
} = JSON.parse(await Deno.readTextFile(new URL("../adapt/fixtures/bn_reference.json", import.meta.url)));

/** Largest |a − b| over two equal-length arrays. */
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what: string): void {
  const diff = maxAbsDiff(actual, expected);
  assert(diff <= tolerance, `${what}: max |Δ| ${diff} > ${tolerance}`);
}

/** The fixture's layer with its source statistics, as tensors (caller disposes). */
function fixtureLayer() {
  return {
    gamma: tf.tensor1d(REF.gamma),
    beta: tf.tensor1d(REF.beta),
    mean: tf.tensor1d(REF.source_mean),
    variance: tf.tensor1d(REF.source_var),
  };
}

/** Output values of `f` run on fresh fixture tensors, with every tensor disposed. */
function layerOutput(f: (x: tf.Tensor4D, layer: ReturnType<typeof fixtureLayer>) => tf.Tensor): Float32Array {
  return tf.tidy(() => f(tf.tensor4d(REF.x, REF.shape), fixtureLayer()).dataSync() as Float32Array);
}

const priorN = (c: PriorCase) => c.N === "Infinity" ? Infinity : c.N;

Deno.test("batchNorm2d source and batch modes match torch BatchNorm2d eval and train forwards (≤ 1e-5)", () => {
  assertClose(layerOutput((x, l) => batchNorm2d(x, l, { kind: "source" })), REF.source.out, 1e-5, "source");
  assertClose(layerOutput((x, l) => batchNorm2d(x, l, { kind: "batch" })), REF.batch.out, 1e-5, "batch");
});

Deno.test("batchNorm2d prior mode matches robusta BayesianBatchNorm for N ∈ {0, 3, ∞}, n ∈ {4, 2, 3} (≤ 1e-5)", () => {
  assertEquals(REF.prior.length, 9);
  for (const c of REF.prior) {
    const out = layerOutput((x, l) => batchNorm2d(x, l, { kind: "prior", N: priorN(c), n: c.n }));
    assertClose(out, c.out, 1e-5, `prior N ${c.N} n ${c.n}`);
  }
});

Deno.test("prior mode: one grouped call with n = 2 equals two calls on the halves", () => {
  for (const N of [0, 3]) {
    const grouped = layerOutput((x, l) => batchNorm2d(x, l, { kind: "prior", N, n: 2 }));
    const halves = layerOutput((x, l) =>
      tf.concat([0, 2].map((start) => {
        const half = tf.slice(x, [start, 0, 0, 0], [2, 6, 6, 3]);
        return batchNorm2d(half, l, { kind: "prior", N, n: 2 });
      }))
    );
    assertClose(grouped, halves, 1e-6, `N ${N}`);
  }
});

Deno.test("batchNorm2dTrain + applyBatchMoments: two steps' outputs and running statistics match torch (≤ 1e-5)", () => {
  const stats = new Params();
  stats.add("bn/mean", Float32Array.from(REF.source_mean), [3]);
  stats.add("bn/var", Float32Array.from(REF.source_var), [3]);
  const before = tf.memory().numTensors;
  [REF.x, REF.x2].forEach((values, step) => {
    const moments: BatchMoments[] = [];
    const out = tf.tidy(() => {
      const layer = fixtureLayer();
      return batchNorm2dTrain(tf.tensor4d(values, REF.shape), layer.gamma, layer.beta, moments, "bn").dataSync();
    });
    applyBatchMoments(stats, moments);
    const expected = REF.train[step];
    assertClose(out, expected.out, 1e-5, `out ${step}`);
    assertClose(stats.get("bn/mean").dataSync(), expected.running_mean, 1e-6, `running mean ${step}`);
    assertClose(stats.get("bn/var").dataSync(), expected.running_var, 1e-5, `running var ${step}`);
  });
  assertEquals(tf.memory().numTensors, before);
  stats.dispose();
});

Deno.test("groupNorm matches torch GroupNorm(8, 16) (≤ 1e-5)", () => {
  const g = REF.group;
  const out = tf.tidy(() =>
    groupNorm(tf.tensor4d(g.x, g.shape), tf.tensor1d(g.gamma), tf.tensor1d(g.beta), 8).dataSync()
  );
  assertClose(out, g.out, 1e-5, "group norm");
});

/** {@linkcode blobDigits} as a `[b, 28, 28, 1]` tensor. */
function images(b: number, seed: number): tf.Tensor4D {
  return tf.tensor4d(blobDigits(b, seed), [b, 28, 28, 1]);
}

Deno.test("bnCnn keys per norm kind; norm 'none' has smallCnn's weights and logits", () => {
  const keys = (m: BnCnn) => [...Object.keys(m.params.entries("")), "|", ...Object.keys(m.stats.entries(""))];
  const batch = bnCnn(new Rng(5), { norm: "batch" });
  assertEquals(keys(batch), [
    "conv0/w",
    "conv0/b",
    "bn0/gamma",
    "bn0/beta",
    "conv1/w",
    "conv1/b",
    "bn1/gamma",
    "bn1/beta",
    "fc0/w",
    "fc0/b",
    "fc1/w",
    "fc1/b",
    "|",
    "bn0/mean",
    "bn0/var",
    "bn1/mean",
    "bn1/var",
  ]);
  assert(batch.stats.list().every((v) => !v.trainable), "statistics are not trainable");
  assertEquals(batch.affineParams().map((v) => v.shape[0]), [32, 32, 64, 64]);
  assertEquals(batch.lastLayerParams().map((v) => v.shape), [[128, 10], [10]]);
  const group = bnCnn(new Rng(5), { norm: "group", classes: 4 });
  assertEquals(group.stats.list().length, 0);
  assertEquals(group.affineParams().length, 4);
  assertEquals(group.lastLayerParams()[1].shape, [4]);
  const none = bnCnn(new Rng(5), { norm: "none" });
  const reference = smallCnn(new Rng(5));
  assertEquals(none.affineParams(), []);
  const [ours, theirs] = tf.tidy(() => {
    const x = images(3, 1);
    return [none.logits(x).dataSync(), reference.logits(x).dataSync()];
  });
  assertEquals(ours, theirs);
  for (const m of [batch, group, none]) m.dispose();
  reference.params.dispose();
});

Deno.test("trainLogits: batch-mode forward; running stats move 0.1 toward batch mean and unbiased variance", () => {
  const model = bnCnn(new Rng(6), { norm: "batch" });
  const x = images(6, 2);
  // Inputs of bn0 and bn1 under batch statistics, before the update (batch mode does not read them).
  const inputs = [0, 1].map((layer) => tf.tidy(() => normInput(model, x, layer, { kind: "batch" }).dataSync()));
  const expected = tf.tidy(() => model.logits(x, { kind: "batch" }).dataSync());
  const trained = tf.tidy(() => model.trainLogits(x).dataSync());
  assertEquals(trained, expected);
  inputs.forEach((values, layer) => {
    const channels = layer === 0 ? 32 : 64, count = values.length / channels;
    const mean = new Float64Array(channels), m2 = new Float64Array(channels);
    for (let i = 0; i < values.length; i++) mean[i % channels] += values[i] / count;
    for (let i = 0; i < values.length; i++) m2[i % channels] += (values[i] - mean[i % channels]) ** 2;
    const running = model.stats.get(`bn${layer}/mean`).dataSync();
    const runningVar = model.stats.get(`bn${layer}/var`).dataSync();
    assertClose(running, mean.map((m) => 0.1 * m), 1e-6, `bn${layer} mean`);
    assertClose(runningVar, m2.map((s) => 0.9 + 0.1 * s / (count - 1)), 1e-5, `bn${layer} var`);
  });
  x.dispose();
  model.dispose();
});

Deno.test("bnCnn modes: prior N = ∞ is source; prior groups equal separate calls; a short last group is on its own", () => {
  const model = trainedStatsModel(7);
  const x = images(5, 3);
  const run = (input: tf.Tensor4D, mode: NormMode) => tf.tidy(() => model.logits(input, mode).dataSync());
  const part = (start: number, size: number, mode: NormMode) =>
    tf.tidy(() => model.logits(tf.slice(x, [start, 0, 0, 0], [size, 28, 28, 1]), mode).dataSync());
  assertEquals(run(x, { kind: "prior", N: Infinity, n: 1 }), run(x, { kind: "source" }));
  assertEquals(run(x, { kind: "source" }), run(x, { kind: "fixed", stats: sourceStatsSync(model) }));
  for (const N of [0, 16]) {
    const ones = run(x, { kind: "prior", N, n: 1 });
    const separate = [0, 1, 2, 3, 4].flatMap((i) => [...part(i, 1, { kind: "prior", N, n: 1 })]);
    assertClose(ones, separate, 1e-5, `n 1 N ${N}`);
    const pairs = run(x, { kind: "prior", N, n: 2 });
    const pairParts = [[0, 2], [2, 2], [4, 1]].flatMap(([s, k]) => [...part(s, k, { kind: "prior", N, n: 2 })]);
    assertClose(pairs, pairParts, 1e-5, `n 2 N ${N}`);
    // A different image in another group leaves a group's logits unchanged.
    const changed = tf.tidy(() => tf.concat([tf.slice(x, 0, 2), images(3, 9)]));
    assertClose(run(changed, { kind: "prior", N, n: 2 }).slice(0, 20), pairs.slice(0, 20), 1e-6, "independent");
    changed.dispose();
  }
  // Statistics differ from the source, so every adapted mode changes the logits.
  const source = run(x, { kind: "source" });
  for (const mode of [{ kind: "batch" }, { kind: "prior", N: 0, n: 5 }] as NormMode[]) {
    assert(maxAbsDiff(run(x, mode), source) > 1e-3, mode.kind);
  }
  x.dispose();
  model.dispose();
});

/** The model's source statistics read synchronously (tests run on wasm). */
function sourceStatsSync(model: BnCnn) {
  const read = (key: string) => model.stats.get(key).dataSync() as Float32Array;
  return { mean: [read("bn0/mean"), read("bn1/mean")], variance: [read("bn0/var"), read("bn1/var")] };
}

Deno.test("gradients: batch mode removes the conv bias's gradient; prior-mode target statistics carry none", () => {
  const model = trainedStatsModel(8);
  const x = images(8, 4);
  const biasGrad = (mode: NormMode) =>
    tf.tidy(() => {
      const f = () => tf.sum(tf.square(model.logits(x, mode))) as tf.Scalar;
      const { grads } = tf.variableGrads(f, [model.params.get("conv0/b")]);
      return tf.max(tf.abs(Object.values(grads)[0])).dataSync()[0];
    });
  // A per-channel constant before batch-statistics BN cancels exactly, so its gradient is zero up
  // to float rounding. The prior mode with N = 0 and n = b normalises the same way (up to the
  // unbiased factor) but its target statistics are detached (robusta's buffers): the direct term
  // stays, and sets the scale.
  const batch = biasGrad({ kind: "batch" }), prior = biasGrad({ kind: "prior", N: 0, n: 8 });
  assert(batch < 1e-4 * prior, `batch ${batch} vs prior ${prior}`);
  x.dispose();
  model.dispose();
});

Deno.test("snapshot/restore is bit-exact after optimizer steps and statistic updates; tensors flat", () => {
  const model = trainedStatsModel(9);
  const read = () => [...model.params.list(), ...model.stats.list()].map((v) => v.dataSync().slice());
  const original = read();
  const before = tf.memory().numTensors;
  const snapshot = model.snapshot();
  // Plain SGD: tfjs 4.22's momentum optimizer keeps its learning-rate scalar after dispose().
  const optimizer = tf.train.sgd(0.1);
  const x = images(8, 5);
  for (let step = 0; step < 2; step++) {
    optimizer.minimize(() => tf.mean(tf.square(model.trainLogits(x))) as tf.Scalar, false, model.allParams());
  }
  assert(read().every((values, i) => maxAbsDiff(values, original[i]) > 0), "every tensor moved");
  model.restore(snapshot);
  assertEquals(read(), original);
  model.restore(snapshot);
  assertEquals(read(), original);
  snapshot.dispose();
  optimizer.dispose();
  x.dispose();
  assertEquals(tf.memory().numTensors, before);
  model.dispose();
});

Deno.test("forwards in every mode and kind leave tf.memory flat", () => {
  const models = [trainedStatsModel(10), bnCnn(new Rng(10), { norm: "group" }), bnCnn(new Rng(10), { norm: "none" })];
  const x = images(6, 6);
  const stats = sourceStatsSync(models[0]);
  const modes: NormMode[] = [
    { kind: "source" },
    { kind: "batch" },
    { kind: "prior", N: 16, n: 4 },
    { kind: "prior", N: Infinity, n: 1 },
    { kind: "fixed", stats },
  ];
  const before = tf.memory().numTensors;
  for (const model of models) {
    for (const mode of modes) model.logits(x, mode).dispose();
    model.trainLogits(x).dispose();
    normInput(model, x, 1, { kind: "prior", N: 0, n: 3 }).dispose();
  }
  assertEquals(tf.memory().numTensors, before);
  x.dispose();
  for (const model of models) model.dispose();
});

Deno.test("bad modes, statistics and inputs throw UsageError", () => {
  const model = bnCnn(new Rng(11), { norm: "batch" });
  const x = images(2, 7);
  const stats = sourceStatsSync(model);
  const cases: [NormMode, string][] = [
    [{ kind: "prior", N: -1, n: 2 }, "N must be"],
    [{ kind: "prior", N: NaN, n: 2 }, "N must be"],
    [{ kind: "prior", N: 4, n: 0 }, "n must be"],
    [{ kind: "prior", N: 4, n: 1.5 }, "n must be"],
    [{ kind: "fixed", stats: { mean: stats.mean.slice(0, 1), variance: stats.variance } }, "2 layers"],
    [{ kind: "fixed", stats: { mean: [stats.mean[1], stats.mean[1]], variance: stats.variance } }, "32 channels"],
    [
      { kind: "fixed", stats: { mean: stats.mean, variance: [new Float32Array(32).fill(-1), stats.variance[1]] } },
      "≥ 0",
    ],
    [{ kind: "other" } as unknown as NormMode, "unknown norm mode"],
  ];
  for (const [mode, message] of cases) assertThrows(() => model.logits(x, mode), UsageError, message);
  assertThrows(() => tf.tidy(() => model.logits(tf.zeros([2, 14, 14, 1]))), UsageError, "[n, 28, 28, 1]");
  assertThrows(() => normInput(model, x, 2), UsageError, "0 or 1");
  assertThrows(() => bnCnn(new Rng(1), { norm: "layer" as "batch" }), UsageError, "batch, group, none");
  x.dispose();
  model.dispose();
});
