import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  decodePose,
  POSE_TARGETS_64,
  poseLoss,
  type PoseTargetConfig,
  poseTargets,
  scoreMapSize,
} from "../../lib/train/pose_loss.ts";

await selectBackend("wasm");

interface TargetCase {
  name: string;
  imageSide: number;
  stride: number;
  posDistThresh: number;
  locrefStdev: number;
  n: number;
  keypoints: number;
  keypointsXY: (number | null)[];
  size: number;
  scmap: [number, number][];
  locref: [number, number][];
  mask: [number, number][];
}

/** NumPy port of DeepLabCut's target generator and TF1 losses (tests/train/fixtures/pose_targets.py). */
const REFERENCE: {
  cases: TargetCase[];
  loss: {
    imageSide: number;
    stride: number;
    posDistThresh: number;
    locrefStdev: number;
    keypointsXY: (number | null)[];
    shapeScore: number[];
    shapeLocref: number[];
    logits: number[];
    locrefPred: number[];
    locrefLossWeight: number;
    score: number;
    locref: number;
    total: number;
    maskNonzero: number;
  };
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/pose_targets.json", import.meta.url)));

const configOf = (c: { stride: number; posDistThresh: number; locrefStdev: number }): PoseTargetConfig => ({
  ...POSE_TARGETS_64,
  stride: c.stride,
  posDistThresh: c.posDistThresh,
  locrefStdev: c.locrefStdev,
});

const keypointArray = (xy: (number | null)[]) => Float32Array.from(xy, (v) => v ?? NaN);

function dense(entries: [number, number][], length: number): Float32Array {
  const out = new Float32Array(length);
  for (const [index, value] of entries) out[index] = value;
  return out;
}

/** Number of entries where `actual` differs from `expected` (exact comparison). */
function mismatches(actual: Float32Array, expected: Float32Array): number {
  assertEquals(actual.length, expected.length);
  let count = 0;
  for (let i = 0; i < actual.length; i++) if (actual[i] !== expected[i]) count++;
  return count;
}

const value = async (t: tf.Tensor) => (await t.data())[0];

Deno.test("score-map size is ceil(side / (2·stride))·2", () => {
  assertEquals(scoreMapSize(64, 4), 16);
  assertEquals(scoreMapSize(65, 4), 18);
  assertEquals(scoreMapSize(50, 8), 8);
  assertEquals(scoreMapSize(288, 8), 36);
  assertThrows(() => scoreMapSize(0, 4), UsageError, "image side");
  assertThrows(() => scoreMapSize(64, -1), UsageError, "stride");
});

Deno.test("targets equal the NumPy port of DeepLabCut's generator exactly", () => {
  for (const c of REFERENCE.cases) {
    const targets = poseTargets(keypointArray(c.keypointsXY), c.n, c.keypoints, c.imageSide, configOf(c));
    assertEquals(targets.size, c.size, c.name);
    assertEquals(targets.keypoints, c.keypoints);
    const cells = c.n * c.size * c.size;
    assertEquals(mismatches(targets.scmap, dense(c.scmap, cells * c.keypoints)), 0, `${c.name}: scmap`);
    assertEquals(mismatches(targets.locref, dense(c.locref, cells * 2 * c.keypoints)), 0, `${c.name}: locref`);
    assertEquals(mismatches(targets.mask, dense(c.mask, cells * 2 * c.keypoints)), 0, `${c.name}: mask`);
    assert(c.scmap.length > 0);
  }
});

Deno.test("a keypoint on the first cell's centre has three positives, each exactly 4 px or closer", () => {
  // (2, 2) is cell (0, 0)'s centre; cells (0, 1) and (1, 0) lie exactly pos_dist_thresh away, (1, 1) at 4√2.
  const { scmap, locref, size } = poseTargets(Float32Array.of(2, 2, 40, 40), 1, 2, 64);
  const positives: number[] = [];
  for (let c = 0; c < size * size; c++) if (scmap[c * 2] === 1) positives.push(c);
  assertEquals(positives, [0, 1, size]);
  // Locref of keypoint 0 at cell (0, 1): dx = 2 − 6 = −4 px, dy = 0, divided by 1.6.
  assertEquals(locref[1 * 4 + 0], Math.fround(-4 / 1.6));
  assertEquals(locref[1 * 4 + 1], 0);
});

Deno.test("decoding the exact target maps returns every visible keypoint within 0.05 px", () => {
  let worst = 0, decoded = 0;
  for (const c of REFERENCE.cases) {
    const cfg = configOf(c);
    const truth = keypointArray(c.keypointsXY);
    const targets = poseTargets(truth, c.n, c.keypoints, c.imageSide, cfg);
    const { keypoints, confidence } = decodePose(targets.scmap, targets.locref, c.n, targets.size, c.keypoints, cfg);
    for (let i = 0; i < c.n * c.keypoints; i++) {
      const x = truth[2 * i], y = truth[2 * i + 1];
      const visible = x > 0 && x < c.imageSide && y > 0 && y < c.imageSide;
      assertEquals(confidence[i], visible ? 1 : 0, `${c.name}: confidence of keypoint ${i}`);
      if (!visible) continue;
      const error = Math.hypot(keypoints[2 * i] - x, keypoints[2 * i + 1] - y);
      assert(error < 0.05, `${c.name}: keypoint ${i} decoded ${error} px away`);
      worst = Math.max(worst, error);
      decoded++;
    }
  }
  assertEquals(decoded, 6 + 2 + 6 + 18 + 12);
  // Float32 locref targets times the stdev and float32 outputs: rounding only (1.2e-7 px measured).
  assert(worst < 1e-5, `worst decode error ${worst} px`);
});

Deno.test("decode takes the first cell on ties and adds locref · stdev to its centre", () => {
  const size = 2, K = 2;
  // Keypoint 0: cells 1 and 3 tie at 0.9 → cell 1 = (i 0, j 1). Keypoint 1: cell 2 = (i 1, j 0).
  const scores = Float32Array.of(0.1, 0.2, 0.9, 0.3, 0.5, 0.8, 0.9, 0.7);
  const locref = new Float32Array(size * size * 2 * K);
  locref.set([0.5, -0.25], (1 * 2 * K) + 0);
  locref.set([-1, 2], (2 * 2 * K) + 2);
  const { keypoints, confidence } = decodePose(scores, locref, 1, size, K);
  // x = j·4 + 2 + locref_x·1.6, y = i·4 + 2 + locref_y·1.6.
  assertAlmostEquals(keypoints[0], 6 + 0.8, 1e-6);
  assertAlmostEquals(keypoints[1], 2 - 0.4, 1e-6);
  assertAlmostEquals(keypoints[2], 2 - 1.6, 1e-6);
  assertAlmostEquals(keypoints[3], 6 + 3.2, 1e-6);
  assertEquals(Array.from(confidence), [Math.fround(0.9), Math.fround(0.8)]);
});

Deno.test("pose loss matches TF1's sigmoid cross-entropy mean and mask-normalised Huber", async () => {
  const ref = REFERENCE.loss;
  const [n, s, , k] = ref.shapeScore;
  const targets = poseTargets(keypointArray(ref.keypointsXY), n, k, ref.imageSide, configOf(ref));
  assertEquals(targets.size, s);
  const before = tf.memory().numTensors;
  const logits = tf.tensor4d(ref.logits, ref.shapeScore as [number, number, number, number]);
  const pred = tf.tensor4d(ref.locrefPred, ref.shapeLocref as [number, number, number, number]);
  const t = {
    scmap: tf.tensor4d(targets.scmap, ref.shapeScore as [number, number, number, number]),
    locref: tf.tensor4d(targets.locref, ref.shapeLocref as [number, number, number, number]),
    mask: tf.tensor4d(targets.mask, ref.shapeLocref as [number, number, number, number]),
  };
  assertEquals(targets.mask.reduce((a, v) => a + (v !== 0 ? 1 : 0), 0), ref.maskNonzero);
  const loss = poseLoss(logits, pred, t);
  const score = await value(loss.score), locref = await value(loss.locref), total = await value(loss.total);
  assertAlmostEquals(score, ref.score, 5e-7 * ref.score);
  assertAlmostEquals(locref, ref.locref, 5e-7 * ref.locref);
  assertAlmostEquals(total, ref.total, 5e-7 * ref.total);
  tf.dispose([logits, pred, t.scmap, t.locref, t.mask, loss.total, loss.score, loss.locref]);
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("pose loss gradients are (σ(x) − z)/N and weight·mask·clip(d, ±k)/#mask", async () => {
  const rng = new Rng(7);
  const kp = Float32Array.of(5, 7.5, 20, 3.3, 12, 12, NaN, NaN);
  const targets = poseTargets(kp, 2, 2, 24);
  const shapeS: [number, number, number, number] = [2, targets.size, targets.size, 2];
  const shapeL: [number, number, number, number] = [2, targets.size, targets.size, 4];
  const x = Float32Array.from(targets.scmap, () => 6 * rng.uniform() - 3);
  const p = Float32Array.from(targets.locref, () => 8 * rng.uniform() - 4);
  const before = tf.memory().numTensors;
  const t = {
    scmap: tf.tensor4d(targets.scmap, shapeS),
    locref: tf.tensor4d(targets.locref, shapeL),
    mask: tf.tensor4d(targets.mask, shapeL),
  };
  const logits = tf.tensor4d(x, shapeS), pred = tf.tensor4d(p, shapeL);
  const grads = tf.grads((a: tf.Tensor, b: tf.Tensor) => poseLoss(a as tf.Tensor4D, b as tf.Tensor4D, t).total);
  const [gx, gp] = grads([logits, pred]);
  const dx = await gx.data(), dp = await gp.data();
  const count = targets.mask.reduce((a, v) => a + v, 0);
  let worst = 0;
  for (let i = 0; i < x.length; i++) {
    const expected = (1 / (1 + Math.exp(-x[i])) - targets.scmap[i]) / x.length;
    worst = Math.max(worst, Math.abs(dx[i] - expected));
  }
  for (let i = 0; i < p.length; i++) {
    const d = p[i] - targets.locref[i];
    const expected = 0.05 * targets.mask[i] * Math.max(-1, Math.min(1, d)) / count;
    worst = Math.max(worst, Math.abs(dp[i] - expected));
  }
  assert(worst < 1e-8, `largest gradient difference ${worst}`);
  tf.dispose([gx, gp, logits, pred, t.scmap, t.locref, t.mask]);
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("without visible keypoints the locref term is 0 and the total is the score term", async () => {
  const targets = poseTargets(Float32Array.of(NaN, NaN, -3, 70), 1, 2, 64);
  assertEquals(targets.mask.every((v) => v === 0), true);
  const shapeS: [number, number, number, number] = [1, 16, 16, 2];
  const shapeL: [number, number, number, number] = [1, 16, 16, 4];
  const before = tf.memory().numTensors;
  const tensors = {
    scmap: tf.tensor4d(targets.scmap, shapeS),
    locref: tf.tensor4d(targets.locref, shapeL),
    mask: tf.tensor4d(targets.mask, shapeL),
  };
  const logits = tf.fill(shapeS, 0) as tf.Tensor4D, pred = tf.ones(shapeL) as tf.Tensor4D;
  const loss = poseLoss(logits, pred, tensors);
  assertEquals(await value(loss.locref), 0);
  assertAlmostEquals(await value(loss.score), Math.LN2, 1e-6 * Math.LN2); // float32 sums of 512 terms
  assertAlmostEquals(await value(loss.total), Math.LN2, 1e-6 * Math.LN2);
  tf.dispose([logits, pred, tensors.scmap, tensors.locref, tensors.mask, loss.total, loss.score, loss.locref]);
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("pose targets, loss and decode reject bad input", () => {
  assertThrows(() => poseTargets(new Float32Array(6), 1, 2, 64), UsageError, "n·K·2 = 4");
  assertThrows(() => poseTargets(new Float32Array(4), 0, 2, 64), UsageError, "frame count");
  assertThrows(() => poseTargets(new Float32Array(4), 1, 2, 64, { ...POSE_TARGETS_64, locrefStdev: 0 }), UsageError);
  assertThrows(() => decodePose(new Float32Array(8), new Float32Array(15), 1, 2, 2), UsageError, "n·S·S·2K = 16");
  assertThrows(() => decodePose(new Float32Array(7), new Float32Array(16), 1, 2, 2), UsageError, "n·S·S·K = 8");
  const nan = new Float32Array(8);
  nan[3] = NaN;
  assertThrows(() => decodePose(nan, new Float32Array(16), 1, 2, 2), UsageError, "NaN");
  const before = tf.memory().numTensors;
  const s = tf.zeros([1, 4, 4, 2]) as tf.Tensor4D, l = tf.zeros([1, 4, 4, 4]) as tf.Tensor4D;
  const wrong = tf.zeros([1, 4, 4, 3]) as tf.Tensor4D;
  assertThrows(() => poseLoss(s, wrong, { scmap: s, locref: l, mask: l }), UsageError, "locref predictions");
  assertThrows(() => poseLoss(s, l, { scmap: l, locref: l, mask: l }), UsageError, "score targets");
  assertThrows(() => poseLoss(s, l, { scmap: s, locref: l, mask: wrong }), UsageError, "locref mask");
  tf.dispose([s, l, wrong]);
  assertEquals(tf.memory().numTensors, before);
});
