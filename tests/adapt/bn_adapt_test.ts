import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { blobDigits, trainedStatsModel } from "../models/bn_cnn_fixtures.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { fullStats, priorStats } from "../../lib/adapt/bn_adapt.ts";
import { bnCnn, normInput, type NormMode, type NormStats, sourceStats } from "../../lib/models/bn_cnn.ts";

await selectBackend("wasm");

/** tests/adapt/fixtures/bn_reference.json, written by make_bn_reference.py (torch float64). */
const REF: {
  shape: [number, number, number, number];
  x: number[];
  source_mean: number[];
  source_var: number[];
  prior: { N: number | "Infinity"; n: number; mean: number[][]; var: number[][] }[];
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/bn_reference.json", import.meta.url)));

/** Largest |a − b| / max(1, |b|). */
function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return max;
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what: string): void {
  const diff = maxRelDiff(actual, expected);
  assert(diff <= tolerance, `${what}: max relative |Δ| ${diff} > ${tolerance}`);
}

/** Per-channel mean and unbiased variance, float64, of `values` laid out `[..., channels]`. */
function channelMoments(values: ArrayLike<number>, channels: number): { mean: Float32Array; variance: Float32Array } {
  const count = values.length / channels;
  const mean = new Float64Array(channels), m2 = new Float64Array(channels);
  for (let i = 0; i < values.length; i++) mean[i % channels] += values[i] / count;
  for (let i = 0; i < values.length; i++) m2[i % channels] += (values[i] - mean[i % channels]) ** 2;
  return { mean: Float32Array.from(mean), variance: Float32Array.from(m2, (s) => s / (count - 1)) };
}

Deno.test("priorStats: the λ mix of robusta BayesianBatchNorm for N ∈ {0, 3, ∞}, n ∈ {4, 2, 3} (≤ 1e-5)", () => {
  const [b, h, w, c] = REF.shape, perImage = h * w * c;
  const source: NormStats = {
    mean: [Float32Array.from(REF.source_mean)],
    variance: [Float32Array.from(REF.source_var)],
  };
  assertEquals(REF.prior.length, 9);
  for (const ref of REF.prior) {
    const N = ref.N === "Infinity" ? Infinity : ref.N;
    for (let group = 0; group * ref.n < b; group++) {
      const images = REF.x.slice(group * ref.n * perImage, Math.min(b, (group + 1) * ref.n) * perImage);
      const target = channelMoments(images, c);
      const mixed = priorStats(source, { mean: [target.mean], variance: [target.variance] }, N, ref.n);
      assertClose(mixed.mean[0], ref.mean[group], 1e-5, `mean N ${ref.N} n ${ref.n} group ${group}`);
      assertClose(mixed.variance[0], ref.var[group], 1e-5, `var N ${ref.N} n ${ref.n} group ${group}`);
    }
  }
});

Deno.test("priorStats: N = ∞ gives the source, N = 0 the target, exactly; bad N, n, layers throw", () => {
  const source: NormStats = { mean: [new Float32Array([1, 2])], variance: [new Float32Array([3, 4])] };
  const target: NormStats = { mean: [new Float32Array([-1, 0.5])], variance: [new Float32Array([0.25, 9])] };
  assertEquals(priorStats(source, target, Infinity, 8), source);
  assertEquals(priorStats(source, target, 0, 8), target);
  const half = priorStats(source, target, 8, 8);
  assertEquals([...half.mean[0]], [0, 1.25]);
  assertEquals([...half.variance[0]], [1.625, 6.5]);
  assertThrows(() => priorStats(source, target, -1, 8), UsageError, "N must be");
  assertThrows(() => priorStats(source, target, 4, 0), UsageError, "n must be");
  assertThrows(() => priorStats(source, { mean: [], variance: [] }, 4, 2), UsageError, "same layers");
  const narrow = { mean: [new Float32Array(1)], variance: [new Float32Array(1)] };
  assertThrows(() => priorStats(source, narrow, 4, 2), UsageError, "channels");
});

Deno.test("fullStats: stage-wise float64 statistics; batched = one batch = the prior forward with N 0, n all", async () => {
  const model = trainedStatsModel(1);
  const n = 8, values = blobDigits(n, 2);
  const x = tf.tensor4d(values, [n, 28, 28, 1]);
  const before = tf.memory().numTensors;
  const whole = await fullStats(model, values, n, n);
  const batched = await fullStats(model, values, n, 3);
  assertEquals(tf.memory().numTensors, before);
  // Independent float64 moments of each norm input, the earlier layer under the full statistics.
  const source = await sourceStats(model);
  const layer0 = channelMoments(tf.tidy(() => normInput(model, x, 0).dataSync()), 32);
  const fixed0: NormMode = {
    kind: "fixed",
    stats: { mean: [layer0.mean, source.mean[1]], variance: [layer0.variance, source.variance[1]] },
  };
  const layer1 = channelMoments(tf.tidy(() => normInput(model, x, 1, fixed0).dataSync()), 64);
  [layer0, layer1].forEach((expected, layer) => {
    for (const [name, stats] of [["one batch", whole], ["batches of 3", batched]] as const) {
      assertClose(stats.mean[layer], expected.mean, 1e-5, `${name} layer ${layer} mean`);
      assertClose(stats.variance[layer], expected.variance, 1e-5, `${name} layer ${layer} var`);
    }
  });
  // One batch of all images: the prior mode with N = 0 normalises each layer the same way.
  const [adapted, prior, sourceLogits] = tf.tidy(() => [
    model.logits(x, { kind: "fixed", stats: whole }).dataSync(),
    model.logits(x, { kind: "prior", N: 0, n }).dataSync(),
    model.logits(x).dataSync(),
  ]);
  assertClose(adapted, prior, 1e-5, "logits");
  assert(maxRelDiff(adapted, sourceLogits) > 1e-2, "adapted statistics differ from the source");
  // The prior's target statistics carry no gradient: the same gradient as with fixed statistics.
  const biasGrad = (mode: NormMode) =>
    tf.tidy(() => {
      const { grads } = tf.variableGrads(
        () => tf.sum(tf.square(model.logits(x, mode))) as tf.Scalar,
        [model.params.get("conv0/b")],
      );
      return Object.values(grads)[0].dataSync();
    });
  const fixedGrad = biasGrad({ kind: "fixed", stats: whole });
  const scale = Math.max(...fixedGrad.map(Math.abs));
  const priorGrad = biasGrad({ kind: "prior", N: 0, n });
  assert(maxRelDiff(priorGrad.map((g) => g / scale), fixedGrad.map((g) => g / scale)) < 1e-4, "gradients");
  x.dispose();
  model.dispose();
});

Deno.test("fullStats: bad model, images, counts and batch sizes throw UsageError", async () => {
  const model = bnCnn(new Rng(3), { norm: "batch" });
  const group = bnCnn(new Rng(3), { norm: "group" });
  const values = blobDigits(2, 4);
  const cases: [() => Promise<unknown>, string][] = [
    [() => fullStats(group, values, 2), "BatchNorm model"],
    [() => fullStats(model, values, 3), "[3, 28, 28, 1]"],
    [() => fullStats(model, values, 0), "integer ≥ 1"],
    [() => fullStats(model, values, 2, 0), "batch must be"],
    [() => fullStats(model, values.map((v, i) => i === 5 ? 1.5 : v), 2), "[0, 1]"],
    [() => fullStats(model, values.map((v, i) => i === 7 ? NaN : v), 2), "[0, 1]"],
  ];
  for (const [run, message] of cases) await assertRejects(run, UsageError, message);
  model.dispose();
  group.dispose();
});
