/**
 * PoseNet (lib/models/pose_net.ts; Schneider2023 Ch. 5) against torch modules in float64
 * (tests/models/fixtures/pose_net.py → pose_net.json) on weights both sides generate bit for bit: forward in
 * "source" and "train" mode, the running statistics after a train forward, "fixed" mode on the source statistics,
 * and the staged full statistics of BN adaptation against a float64 convolution written here.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { stagedFullStats } from "../../lib/adapt/bn_adapt.ts";
import { POSE_STAGE_CHANNELS, PoseNet } from "../../lib/models/pose_net.ts";

await selectBackend("wasm");

interface TensorSpec {
  key: string;
  shape: number[];
  lo: number;
  hi: number;
  in: "params" | "stats";
  seed: number;
}

const REF: {
  keypoints: number;
  class_heads: number[];
  convs_per_stage: number;
  modulus: number;
  multiplier: number;
  tensors: TensorSpec[];
  images: { shape: [number, number, number, number]; lo: number; hi: number; seed: number };
  map_side: number;
  source: { scores: number[]; locref: number[]; logits: number[][] };
  train: {
    scores: number[];
    locref: number[];
    running_mean: Record<string, number[]>;
    running_var: Record<string, number[]>;
  };
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/pose_net.json", import.meta.url)));

/**
 * Forward outputs against torch's float64, relative to the output's largest |value|: float32 rounding through five
 * convolutions and four BatchNorms. Source mode measured ≤ 9e-7; train mode ≤ 1.7e-6 (batch moments of 2 images,
 * 128 values per channel at the last stage, amplify the rounding).
 */
const SOURCE_TOLERANCE = 2e-6;
const TRAIN_TOLERANCE = 4e-6;
/** Running statistics after one train forward, relative to the largest |value| (measured ≤ 2.3e-7). */
const STATS_TOLERANCE = 5e-7;
/** Staged full statistics against the float64 convolution, relative to the largest |value| (measured ≤ 9e-7). */
const FULL_STATS_TOLERANCE = 2e-6;

/** The fixture's Park-Miller stream: lo + (hi − lo)·state/(2³¹ − 1) in float64, rounded to float32. */
function parkMiller(seed: number, n: number, lo: number, hi: number): Float32Array {
  const out = new Float32Array(n);
  let state = seed;
  for (let i = 0; i < n; i++) {
    // state · 48271 < 2⁴⁷: exact in float64, as Python's integers.
    state = (state * REF.multiplier) % REF.modulus;
    out[i] = lo + (hi - lo) * (state / REF.modulus);
  }
  return out;
}

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** The fixture's net: every variable and running statistic set from its spec. */
function fixtureNet(): PoseNet {
  const net = new PoseNet(new Rng(0), {
    keypoints: REF.keypoints,
    classHeads: REF.class_heads,
    convsPerStage: REF.convs_per_stage,
  });
  const owned = new Set([...net.params.list(), ...net.stats.list()]);
  for (const spec of REF.tensors) {
    const variable = (spec.in === "params" ? net.params : net.stats).get(spec.key);
    assertEquals(variable.shape, spec.shape, spec.key);
    tf.tidy(() => variable.assign(tf.tensor(parkMiller(spec.seed, size(spec.shape), spec.lo, spec.hi), spec.shape)));
    owned.delete(variable);
  }
  assertEquals(owned.size, 0, "the fixture sets every variable");
  return net;
}

function fixtureImages(): tf.Tensor4D {
  const { shape, lo, hi, seed } = REF.images;
  return tf.tensor4d(parkMiller(seed, size(shape), lo, hi), shape);
}

/** Largest |ours − theirs| over the largest |theirs|. */
function relativeError(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  assertEquals(ours.length, theirs.length);
  let diff = 0, scale = 0;
  for (let i = 0; i < ours.length; i++) {
    diff = Math.max(diff, Math.abs(ours[i] - theirs[i]));
    scale = Math.max(scale, Math.abs(theirs[i]));
  }
  return diff / scale;
}

async function readAndDispose(t: tf.Tensor): Promise<Float32Array> {
  const values = await t.data() as Float32Array;
  t.dispose();
  return values;
}

function assertClose(ours: ArrayLike<number>, theirs: ArrayLike<number>, tolerance: number, what: string): void {
  const error = relativeError(ours, theirs);
  assert(error <= tolerance, `${what}: relative error ${error.toExponential(2)} > ${tolerance}`);
}

Deno.test("source mode: scores, locref and class logits equal torch's eval-mode net (2e-6 of the largest value)", async () => {
  const net = fixtureNet();
  const x = fixtureImages();
  const before = tf.memory().numTensors;
  const { scores, locref } = net.pose(x, { kind: "source" });
  const side = REF.map_side, K = REF.keypoints;
  assertEquals(scores.shape, [2, side, side, K]);
  assertEquals(locref.shape, [2, side, side, 2 * K]);
  assertClose(await readAndDispose(scores), REF.source.scores, SOURCE_TOLERANCE, "source scores");
  assertClose(await readAndDispose(locref), REF.source.locref, SOURCE_TOLERANCE, "source locref");
  const logits = net.classify(x, { kind: "source" });
  assertEquals(logits.map((l) => l.shape), REF.class_heads.map((c) => [2, c]));
  for (let h = 0; h < logits.length; h++) {
    assertClose(await readAndDispose(logits[h]), REF.source.logits[h], SOURCE_TOLERANCE, `logits of head ${h}`);
  }
  assertEquals(tf.memory().numTensors, before);
  x.dispose();
  net.dispose();
});

Deno.test("train mode: batch-moment outputs (4e-6) and running statistics after one forward (5e-7) equal torch's", async () => {
  const net = fixtureNet();
  const x = fixtureImages();
  const before = tf.memory().numTensors;
  const { scores, locref } = net.pose(x, { kind: "train" });
  assertClose(await readAndDispose(scores), REF.train.scores, TRAIN_TOLERANCE, "train scores");
  assertClose(await readAndDispose(locref), REF.train.locref, TRAIN_TOLERANCE, "train locref");
  // The moments were applied and freed: the only tensors left are the ones there before.
  assertEquals(tf.memory().numTensors, before);
  const keys = Object.keys(REF.train.running_mean);
  assertEquals(keys.length, net.normChannels.length);
  for (const key of keys) {
    const mean = await net.stats.get(`${key}/mean`).data();
    const variance = await net.stats.get(`${key}/var`).data();
    assertClose(mean, REF.train.running_mean[key], STATS_TOLERANCE, `${key} running mean`);
    assertClose(variance, REF.train.running_var[key], STATS_TOLERANCE, `${key} running var`);
  }
  x.dispose();
  net.dispose();
});

Deno.test("fixed mode on sourceStats() gives source mode's outputs exactly", async () => {
  const net = fixtureNet();
  const x = fixtureImages();
  const stats = await net.sourceStats();
  assertEquals(stats.mean.map((m) => m.length), [...net.normChannels]);
  const before = tf.memory().numTensors;
  const source = net.pose(x, { kind: "source" }), fixed = net.pose(x, { kind: "fixed", stats });
  assertEquals(await readAndDispose(fixed.scores), await readAndDispose(source.scores));
  assertEquals(await readAndDispose(fixed.locref), await readAndDispose(source.locref));
  const a = net.classify(x, { kind: "fixed", stats }), b = net.classify(x, { kind: "source" });
  for (let h = 0; h < a.length; h++) assertEquals(await readAndDispose(a[h]), await readAndDispose(b[h]));
  assertEquals(tf.memory().numTensors, before);
  x.dispose();
  net.dispose();
});

/** TF "same" 3×3 convolution in float64: x [n, h, h, c] → [n, h/s, h/s, o], w [3, 3, c, o]. */
function conv3x3Same(x: Float64Array, n: number, side: number, c: number, w: Float32Array, o: number, stride: number) {
  const out = Math.ceil(side / stride);
  // TF pads max((out − 1)·s + k − in, 0) in total, the smaller half before.
  const before = Math.floor(Math.max((out - 1) * stride + 3 - side, 0) / 2);
  const y = new Float64Array(n * out * out * o);
  for (let b = 0; b < n; b++) {
    for (let i = 0; i < out; i++) {
      for (let j = 0; j < out; j++) {
        const at = ((b * out + i) * out + j) * o;
        for (let di = 0; di < 3; di++) {
          const r = i * stride + di - before;
          if (r < 0 || r >= side) continue;
          for (let dj = 0; dj < 3; dj++) {
            const q = j * stride + dj - before;
            if (q < 0 || q >= side) continue;
            const from = ((b * side + r) * side + q) * c;
            for (let ci = 0; ci < c; ci++) {
              const v = x[from + ci], wAt = ((di * 3 + dj) * c + ci) * o;
              for (let co = 0; co < o; co++) y[at + co] += v * w[wAt + co];
            }
          }
        }
      }
    }
  }
  return { y, side: out };
}

/** Per-channel mean and unbiased variance of [count, c] values in float64. */
function channelMoments(y: Float64Array, c: number): { mean: Float64Array; variance: Float64Array } {
  const count = y.length / c;
  const mean = new Float64Array(c), variance = new Float64Array(c);
  for (let k = 0; k < y.length; k++) mean[k % c] += y[k] / count;
  for (let k = 0; k < y.length; k++) variance[k % c] += (y[k] - mean[k % c]) ** 2 / (count - 1);
  return { mean, variance };
}

Deno.test("stagedFullStats: layer 0 and 1 means and unbiased variances equal a float64 convolution's over all images (2e-6)", async () => {
  const net = fixtureNet();
  const n = 5, side = 64, pixels = side * side * 3;
  const images = parkMiller(4242, n * pixels, 0, 1);
  const before = tf.memory().numTensors;
  // Batches of 2: three batches (2, 2, 1) merge, so the per-batch moments must combine exactly.
  const stats = await stagedFullStats(
    net,
    (start, count) => tf.tensor4d(images.subarray(start * pixels, (start + count) * pixels), [count, side, side, 3]),
    n,
    2,
  );
  assertEquals(tf.memory().numTensors, before);
  assertEquals(stats.mean.map((m) => m.length), [...net.normChannels]);

  const [c0, c1] = POSE_STAGE_CHANNELS;
  const w0 = await net.params.get("stage0/conv0/w").data() as Float32Array;
  const first = conv3x3Same(Float64Array.from(images), n, side, 3, w0, c0, 2);
  const layer0 = channelMoments(first.y, c0);
  assertClose(stats.mean[0], layer0.mean, FULL_STATS_TOLERANCE, "layer 0 mean");
  assertClose(stats.variance[0], layer0.variance, FULL_STATS_TOLERANCE, "layer 0 variance");

  // Layer 1's input: layer 0 normalised by its full statistics (the float64 ones: their float32 rounding is within
  // the tolerance), γ, β, ReLU.
  const gamma = await net.params.get("stage0/conv0/gamma").data(),
    beta = await net.params.get("stage0/conv0/beta").data();
  const hidden = first.y.map((v, k) => {
    const ch = k % c0;
    return Math.max(0, gamma[ch] * (v - layer0.mean[ch]) / Math.sqrt(layer0.variance[ch] + 1e-5) + beta[ch]);
  });
  const w1 = await net.params.get("stage1/conv0/w").data() as Float32Array;
  const layer1 = channelMoments(conv3x3Same(hidden, n, first.side, c0, w1, c1, 2).y, c1);
  assertClose(stats.mean[1], layer1.mean, FULL_STATS_TOLERANCE, "layer 1 mean");
  assertClose(stats.variance[1], layer1.variance, FULL_STATS_TOLERANCE, "layer 1 variance");
  net.dispose();
});

Deno.test("bad input throws UsageError before any work", () => {
  assertThrows(() => new PoseNet(new Rng(0), { keypoints: 1 }), UsageError, "keypoints ≥ 2");
  assertThrows(() => new PoseNet(new Rng(0), { keypoints: 2.5 }), UsageError, "keypoints ≥ 2");
  assertThrows(() => new PoseNet(new Rng(0), { keypoints: 3, convsPerStage: 0 }), UsageError, "convsPerStage");
  assertThrows(() => new PoseNet(new Rng(0), { keypoints: 3, classHeads: [1] }), UsageError, "≥ 2 classes");
  const net = new PoseNet(new Rng(0), { keypoints: 3, convsPerStage: 1 });
  const before = tf.memory().numTensors;
  for (const shape of [[1, 32, 32, 3], [1, 64, 64, 1], [1, 64, 48, 3]] as [number, number, number, number][]) {
    const x = tf.zeros(shape) as tf.Tensor4D;
    assertThrows(() => net.pose(x), UsageError, "[n, 64, 64, 3]");
    x.dispose();
  }
  const x = tf.zeros([1, 64, 64, 3]) as tf.Tensor4D;
  assertThrows(() => net.classify(x), UsageError, "no classification heads");
  const wrongLayers = { mean: [new Float32Array(16)], variance: [new Float32Array(16)] };
  assertThrows(() => net.pose(x, { kind: "fixed", stats: wrongLayers }), UsageError, "4 layers");
  assertThrows(() => net.normInput(x, 4, wrongLayers), UsageError, "norm layer");
  x.dispose();
  assertEquals(tf.memory().numTensors, before);
  net.dispose();
});
