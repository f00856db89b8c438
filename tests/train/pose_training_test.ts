/**
 * Pose training helpers: BN adaptation's one-pass statistics equal the layer-by-layer estimate, saved nets load back
 * to the same outputs, and the predictions of a net equal the argmax decode of its own maps.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { renderFrames } from "../../lib/data/quadruped_render.ts";
import { PoseNet } from "../../lib/models/pose_net.ts";
import { decodePose, POSE_TARGETS_64 } from "../../lib/train/pose_loss.ts";
import { adaptedPoseStats, loadPoseNet, poseNetArrays, predictKeypoints } from "../../lib/train/pose_training.ts";

await selectBackend("wasm");

const frames = renderFrames(Array.from({ length: 6 }, (_, f) => ({ identity: f % 3, frame: f })), 5);

/** Moves the running statistics away from 0 / 1 so that "source" and adapted statistics differ. */
function trainedStats(net: PoseNet) {
  for (let i = 0; i < 3; i++) {
    tf.tidy(() => net.pose(tf.tensor4d(frames.images, [frames.n, 64, 64, 3]), { kind: "train" }));
  }
}

Deno.test("adaptedPoseStats: one pass over the set equals the layer-by-layer estimate in batches", async () => {
  const net = new PoseNet(new Rng(1), { keypoints: 8, convsPerStage: 1 });
  trainedStats(net);
  const tensors = tf.memory().numTensors;
  const onePass = await adaptedPoseStats(net, frames.images, frames.n);
  const staged = await adaptedPoseStats(net, frames.images, frames.n, 4);
  assertEquals(tf.memory().numTensors, tensors);
  let worst = 0;
  for (let layer = 0; layer < net.normChannels.length; layer++) {
    for (const key of ["mean", "variance"] as const) {
      const [a, b] = [onePass[key][layer], staged[key][layer]];
      const scale = Math.max(...b.map(Math.abs));
      a.forEach((v, c) => (worst = Math.max(worst, Math.abs(v - b[c]) / scale)));
    }
  }
  // float32 moments of one batch vs batches of 4 merged in float64: 2.7e-6 measured.
  assert(worst < 1e-5, `worst relative difference ${worst}`);
  net.dispose();
});

Deno.test("poseNetArrays / loadPoseNet: a fresh net with the saved arrays predicts the same keypoints", async () => {
  const net = new PoseNet(new Rng(2), { keypoints: 8, convsPerStage: 1, classHeads: [4] });
  trainedStats(net);
  const saved = await poseNetArrays(net, "pretrained/");
  const copy = new PoseNet(new Rng(3), { keypoints: 8, convsPerStage: 1, classHeads: [4] });
  loadPoseNet(copy, saved, "pretrained/");
  const tensors = tf.memory().numTensors;
  const [a, b] = [await predictKeypoints(net, frames.images, frames.n), await predictKeypoints(copy, frames.images, 6)];
  assertEquals(tf.memory().numTensors, tensors);
  assertEquals(b, a);
  net.dispose();
  copy.dispose();
});

Deno.test("predictKeypoints in batches equals the decode of the whole set's maps", async () => {
  const net = new PoseNet(new Rng(4), { keypoints: 8, convsPerStage: 1 });
  const { scores, locref } = tf.tidy(() => net.pose(tf.tensor4d(frames.images, [frames.n, 64, 64, 3])));
  const whole = decodePose(
    await scores.data() as Float32Array,
    await locref.data() as Float32Array,
    frames.n,
    16,
    8,
    POSE_TARGETS_64,
  );
  tf.dispose([scores, locref]);
  assertEquals(await predictKeypoints(net, frames.images, frames.n, { kind: "source" }, 4), whole.keypoints);
  net.dispose();
});
