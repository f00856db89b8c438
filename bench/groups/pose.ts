/**
 * The `pose` group (`--only pose`) times the DeepLabCut-style keypoint network of lib/models/pose_net.ts and the
 * frames it trains on. `pose-step` is one training step of `PoseNet` ({@linkcode POSE_KEYPOINTS} keypoints,
 * {@linkcode POSE_CONVS_PER_STAGE} convolutions per stage, no classification heads) at batch
 * {@linkcode POSE_STEP_BATCH} on 64×64×3 quadruped frames (lib/data/quadruped.ts), lib/train/pose_training.ts
 * `poseBatchLoss` as training takes it: a train-mode forward (BatchNorm on the batch, running statistics moved),
 * DeepLabCut's loss (lib/train/pose_loss.ts: sigmoid cross-entropy of the score maps plus 0.05 × the masked Huber
 * loss of locref, on the frames' `poseTargets`), backward, Adam 1e-3, the loss read back; beside the same network
 * and loss in PyTorch (bench/pose_reference.py) on our weights, running statistics, frames and targets, whose
 * eval-mode scores and locref before any step and first two losses are compared with ours before timing. Goal: ≤
 * {@linkcode POSE_TORCH_RATIO_GOAL}× PyTorch on the median paired ratio. `pose-render` is plain JS, ours only:
 * lib/data/quadruped_render.ts `renderFrames` of {@linkcode POSE_RENDER_FRAMES} frames (every identity, distinct frames)
 * on one core; goal ≥ {@linkcode POSE_RENDER_GOAL_PER_S} frames/s; check: the keypoints inside the frame and every
 * normalising unit positive. Both raise the warm-up and steps per round (`Workload.minimum`).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { IDENTITY_COUNT, KEYPOINTS, QUADRUPED_SIDE } from "../../lib/data/quadruped.ts";
import { renderFrames } from "../../lib/data/quadruped_render.ts";
import { POSE_NET_SIDE, PoseNet } from "../../lib/models/pose_net.ts";
import { POSE_TARGETS_64, poseTargets } from "../../lib/train/pose_loss.ts";
import { poseBatchLoss } from "../../lib/train/pose_training.ts";
import { compareParts, firstLosses, readLoss, writeTensors } from "../harness/checks.ts";
import type { Workload } from "../harness/rounds.ts";

/** Frames per training step of `pose-step` (the pose experiment's batch, the paper's 8). */
export const POSE_STEP_BATCH = 8;
/** Keypoints of `pose-step`: the quadruped's nose, eye, withers, tail base and four hooves. */
export const POSE_KEYPOINTS = KEYPOINTS.length;
/** Convolutions per backbone stage of `pose-step` (PoseNet's default). */
export const POSE_CONVS_PER_STAGE = 2;
/** Adam rate of `pose-step` (the pose experiment's). */
export const POSE_LR = 1e-3;
/** Ceiling on a pose-net step over PyTorch's, median paired ratio. */
export const POSE_TORCH_RATIO_GOAL = 2;
/** Frames per `renderFrames` call of `pose-render`. */
export const POSE_RENDER_FRAMES = 240;
/** Floor on quadruped frames rendered per second on one core. */
export const POSE_RENDER_GOAL_PER_S = 2000;

/** `count` distinct quadruped frames: identities in turn, each frame index once. */
const poseItems = (count: number) =>
  Array.from({ length: count }, (_, k) => ({ identity: k % IDENTITY_COUNT, frame: k }));

/**
 * `pose-step`: one training step of a {@linkcode PoseNet} ({@linkcode POSE_KEYPOINTS} keypoints,
 * {@linkcode POSE_CONVS_PER_STAGE} convolutions per stage) at batch {@linkcode POSE_STEP_BATCH} on quadruped frames:
 * train-mode forward, DeepLabCut's loss on the frames' targets, backward, Adam, the loss read back. The weights,
 * running statistics, frames and targets go to bench/pose_reference.py as .npy; the check compares eval-mode scores
 * and locref before any step and the first two steps' losses.
 */
function poseStepWorkload(): Workload {
  const batch = POSE_STEP_BATCH, K = POSE_KEYPOINTS;
  return {
    name: "pose-step",
    batch,
    goal: {
      ratio: POSE_TORCH_RATIO_GOAL,
      source: `one pose-net step at batch ${batch} (64×64) ≤ ${POSE_TORCH_RATIO_GOAL}× PyTorch`,
    },
    minimum: { warmup: 5, steps: 5 },
    async build(rng) {
      const net = new PoseNet(rng, { keypoints: K, convsPerStage: POSE_CONVS_PER_STAGE });
      const frames = renderFrames(poseItems(batch), 0);
      const side = POSE_NET_SIDE;
      const x = tf.tensor4d(frames.images, [batch, side, side, 3]);
      const t = poseTargets(frames.keypoints, batch, K, QUADRUPED_SIDE, POSE_TARGETS_64);
      const S = t.size;
      const targets = {
        scmap: tf.tensor4d(t.scmap, [batch, S, S, K]),
        locref: tf.tensor4d(t.locref, [batch, S, S, 2 * K]),
        mask: tf.tensor4d(t.mask, [batch, S, S, 2 * K]),
      };
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-pose-" });
      await writeTensors(directory, {
        ...net.params.entries(""),
        ...net.stats.entries(""),
        x,
        target_scmap: targets.scmap,
        target_locref: targets.locref,
        target_mask: targets.mask,
      });
      const before = net.pose(x, { kind: "source" });
      const scores = await before.scores.data() as Float32Array, locref = await before.locref.data() as Float32Array;
      tf.dispose([before.scores, before.locref]);
      const optimizer = tf.train.adam(POSE_LR, 0.9, 0.999, 1e-8);
      const variables = net.poseVariables();
      const minimize = () => optimizer.minimize(() => poseBatchLoss(net, x, targets).total, true, variables)!;
      const losses = await firstLosses(minimize);
      return {
        parameters: variables.reduce((n, v) => n + v.size, 0),
        step: () => readLoss(minimize()),
        dispose() {
          optimizer.dispose();
          net.dispose();
          tf.dispose([x, ...Object.values(targets)]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          keypoints: K,
          convs_per_stage: POSE_CONVS_PER_STAGE,
          lr: POSE_LR,
          locref_weight: POSE_TARGETS_64.locrefLossWeight,
        },
        check: (reference) =>
          compareParts({ scores, locref, losses }, reference, { scores: 1e-5, locref: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/**
 * `pose-render`: lib/data/quadruped_render.ts `renderFrames` of {@linkcode POSE_RENDER_FRAMES} frames (every identity,
 * distinct frame indices), plain JS on one core; goal ≥ {@linkcode POSE_RENDER_GOAL_PER_S} frames/s. Ours only. The
 * check: every keypoint inside the frame and every normalising unit (nose–eye length) positive.
 */
function poseRenderWorkload(): Workload {
  const items = poseItems(POSE_RENDER_FRAMES);
  return {
    name: "pose-render",
    batch: POSE_RENDER_FRAMES,
    plain: {},
    oursOnly: true,
    goal: {
      imagesPerS: POSE_RENDER_GOAL_PER_S,
      source: `rendering ≥ ${POSE_RENDER_GOAL_PER_S.toLocaleString("en-US")} frames/s, timed on ` +
        `${POSE_RENDER_FRAMES} frames of all 30 identities`,
    },
    minimum: { warmup: 10, steps: 5 },
    build() {
      const frames = renderFrames(items, 0);
      const inside = frames.keypoints.every((v) => v >= 0 && v <= QUADRUPED_SIDE);
      const positive = frames.units.every((u) => u > 0);
      return {
        parameters: 0,
        step() {
          renderFrames(items, 0);
          return Promise.resolve();
        },
        dispose() {},
        check: () => ({
          ok: inside && positive,
          detail: `${frames.n} frames: keypoints inside [0, ${QUADRUPED_SIDE}] ${inside ? "yes" : "NO"}, ` +
            `nose–eye units > 0 ${positive ? "yes" : "NO"}`,
        }),
      };
    },
  };
}

/** The group's entries, in the order they are timed. */
export const POSE_WORKLOADS: Workload[] = [poseStepWorkload(), poseRenderWorkload()];
