/**
 * Training and evaluation of the toy DeepLabCut network (Schneider2023 Ch. 5):
 * backbone pretraining on a procedural classification task, pose training (score maps and
 * location refinement, Adam, batch 8, cosine decay), prediction with given BatchNorm
 * statistics, and BN adaptation's statistics of a set of frames. Both trainings checkpoint
 * weights, running statistics, optimizer and batch stream, so a stopped phase resumes to the
 * same numbers.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng, type RngState } from "../core/rng.ts";
import { stagedFullStats } from "../adapt/bn_adapt.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import type { NormStats } from "../models/bn_cnn.ts";
import { POSE_NET_SIDE, type PoseNet, type PoseNormMode } from "../models/pose_net.ts";
import { cosineDecay, type LossTerms, optimizerState, restoreOptimizer, scheduleOf, trainPhase } from "./loop.ts";
import type { PhaseArrays, PhaseCheckpoints } from "./phases.ts";
import { decodePose, POSE_TARGETS_64, poseLoss, poseTargets, scoreMapSize } from "./pose_loss.ts";

const PIXELS = POSE_NET_SIDE * POSE_NET_SIDE * 3;

/** Frames with their keypoints: images `[n, 64, 64, 3]`, keypoints `[n, K, 2]` px. */
export interface KeypointFrames {
  /** Number of frames. */
  n: number;
  /** Images `[n, 64, 64, 3]`, row-major. */
  images: Float32Array;
  /** Keypoints `[n, K, 2]` as (x, y) pixels. */
  keypoints: Float32Array;
}

/** Schedule and bookkeeping shared by both trainings. */
export interface PoseSchedule {
  /** Metric prefix of the phase. */
  label: string;
  /** Optimizer steps. */
  steps: number;
  /** Frames per step. */
  batch: number;
  /** Adam's initial rate; cosine decay to `lr · lrFloor` at the last step. */
  lr: number;
  /** The final rate as a fraction of `lr`, in [0, 1]. */
  lrFloor: number;
  /** Seed of the batches. */
  seed: number;
  /** Steps between logged loss terms. */
  logEvery: number;
  /** Evaluation every `evaluateEvery` steps and at the end (0: only at the end). */
  evaluateEvery: number;
  /** The values to log at an evaluation step; none when absent. */
  evaluate?(step: number): Promise<Record<string, number>>;
  /** Steps between checkpoints (0: none). */
  checkpointEvery: number;
}

interface StreamState {
  batches: RngState;
}

/** The net's weights and running statistics as named arrays under `prefix` (for a later phase or a kept model). */
export async function poseNetArrays(net: PoseNet, prefix = ""): Promise<PhaseArrays> {
  const out: PhaseArrays = {};
  for (const [kind, store] of [[`${prefix}net/`, net.params], [`${prefix}stats/`, net.stats]] as const) {
    for (const [key, tensor] of Object.entries(store.entries(kind))) {
      out[key] = { data: await tensor.data() as Float32Array, shape: tensor.shape };
    }
  }
  return out;
}

/** Loads weights and statistics saved by {@linkcode poseNetArrays} under `prefix`; every key must be present. */
export function loadPoseNet(
  net: PoseNet,
  arrays: Record<string, { data: unknown; shape: number[] }>,
  prefix = "",
): void {
  const assign = (variables: Record<string, tf.Tensor>) => {
    for (const [key, variable] of Object.entries(variables)) {
      const saved = arrays[key];
      if (!saved) throw new Error(`the saved pose net lacks "${key}"`);
      tf.tidy(() => (variable as tf.Variable).assign(tf.tensor(saved.data as Float32Array, saved.shape)));
    }
  };
  assign(net.params.entries(`${prefix}net/`));
  assign(net.stats.entries(`${prefix}stats/`));
}

async function runTraining(
  ctx: RunContext,
  net: PoseNet,
  schedule: PoseSchedule,
  checkpoints: PhaseCheckpoints,
  variables: tf.Variable[],
  loss: (batches: Rng) => LossTerms,
): Promise<void> {
  const optimizer = tf.train.adam(schedule.lr, 0.9, 0.999, 1e-8);
  const resumed = checkpoints.resumed;
  const state = resumed?.state as StreamState | undefined;
  try {
    if (resumed && state) {
      loadPoseNet(net, resumed.arrays);
      await restoreOptimizer(optimizer, resumed.arrays);
    }
    const batches = state ? Rng.fromState(state.batches) : Rng.derive(schedule.seed, "batches", schedule.label);
    await trainPhase(ctx, {
      ...scheduleOf(schedule),
      startStep: resumed?.step ?? 0,
      variables,
      optimizer,
      learningRate: cosineDecay(schedule.lr, schedule.steps, schedule.lrFloor),
      loss: () => loss(batches),
      checkpoint: async (step) => {
        await checkpoints.save(
          step,
          { ...net.params.entries("net/"), ...net.stats.entries("stats/"), ...(await optimizerState(optimizer)) },
          { batches: batches.state() } satisfies StreamState,
        );
      },
    });
  } finally {
    optimizer.dispose();
  }
}

/**
 * Pretrains the backbone and classification heads on `dataset`'s factors: one softmax head per
 * factor (the net's `classHeads` must equal `dataset.factorSizes`), the loss the sum of their mean
 * cross-entropies; each step draws `batch` fresh factor tuples.
 */
export async function pretrainPoseBackbone(
  ctx: RunContext,
  net: PoseNet,
  dataset: GroundTruthDataset,
  schedule: PoseSchedule,
  checkpoints: PhaseCheckpoints,
): Promise<void> {
  const sizes = dataset.factorSizes;
  if (net.classHeads.length !== sizes.length || net.classHeads.some((s, i) => s !== sizes[i])) {
    throw new Error(`the net's class heads [${net.classHeads}] do not match the factors [${sizes}]`);
  }
  await runTraining(ctx, net, schedule, checkpoints, net.classVariables(), (batches) => {
    const factors = dataset.sampleFactors(schedule.batch, batches);
    const images = dataset.observations(factors, batches);
    const logits = net.classify(tf.tensor4d(images.values, [schedule.batch, ...images.shape]), { kind: "train" });
    const terms: LossTerms = { total: tf.scalar(0) };
    logits.forEach((l, h) => {
      const labels = Int32Array.from({ length: schedule.batch }, (_, i) => factors.values[i * sizes.length + h]);
      const ce = tf.losses.softmaxCrossEntropy(tf.oneHot(labels, sizes[h]), l) as tf.Scalar;
      terms[`ce_${dataset.factorNames[h]}`] = ce;
      terms.total = tf.add(terms.total, ce) as tf.Scalar;
    });
    return terms;
  });
}

/** Accuracy of every classification head on `n` fixed images of `dataset` (seeded by `seed`). */
export async function headAccuracies(
  net: PoseNet,
  dataset: GroundTruthDataset,
  n: number,
  seed: number,
): Promise<Record<string, number>> {
  const rng = Rng.derive(seed, "pretrain-eval");
  const factors = dataset.sampleFactors(n, rng);
  const images = dataset.observations(factors, rng);
  const k = dataset.factorSizes.length;
  const right = new Array(k).fill(0);
  for (let start = 0; start < n; start += 64) {
    const size = Math.min(64, n - start);
    const predicted = tf.tidy(() => {
      const x = tf.tensor4d(images.values.subarray(start * PIXELS, (start + size) * PIXELS), [size, 64, 64, 3]);
      return net.classify(x).map((l) => tf.argMax(l, 1));
    });
    for (let h = 0; h < k; h++) {
      const labels = await predicted[h].data();
      for (let i = 0; i < size; i++) if (labels[i] === factors.values[(start + i) * k + h]) right[h]++;
    }
    tf.dispose(predicted);
  }
  return Object.fromEntries(dataset.factorNames.map((name, h) => [`acc_${name}`, right[h] / n]));
}

/**
 * Trains backbone and pose head on `frames` (batches drawn uniformly with replacement): the
 * DeepLabCut loss of lib/train/pose_loss.ts on targets computed once for every frame.
 */
export async function trainPoseNet(
  ctx: RunContext,
  net: PoseNet,
  frames: KeypointFrames,
  schedule: PoseSchedule,
  checkpoints: PhaseCheckpoints,
): Promise<void> {
  const K = net.keypoints;
  const targets = poseTargets(frames.keypoints, frames.n, K, POSE_NET_SIDE, POSE_TARGETS_64);
  const S = targets.size, mapCells = S * S;
  const batch = schedule.batch;
  const x = new Float32Array(batch * PIXELS);
  const scmap = new Float32Array(batch * mapCells * K);
  const locref = new Float32Array(batch * mapCells * 2 * K);
  const mask = new Float32Array(batch * mapCells * 2 * K);
  await runTraining(ctx, net, schedule, checkpoints, net.poseVariables(), (batches) => {
    for (let b = 0; b < batch; b++) {
      const f = batches.int(frames.n);
      x.set(frames.images.subarray(f * PIXELS, (f + 1) * PIXELS), b * PIXELS);
      scmap.set(targets.scmap.subarray(f * mapCells * K, (f + 1) * mapCells * K), b * mapCells * K);
      const span = mapCells * 2 * K;
      locref.set(targets.locref.subarray(f * span, (f + 1) * span), b * span);
      mask.set(targets.mask.subarray(f * span, (f + 1) * span), b * span);
    }
    return poseBatchLoss(net, tf.tensor4d(x, [batch, 64, 64, 3]), {
      scmap: tf.tensor4d(scmap, [batch, S, S, K]),
      locref: tf.tensor4d(locref, [batch, S, S, 2 * K]),
      mask: tf.tensor4d(mask, [batch, S, S, 2 * K]),
    });
  });
}

/**
 * The loss terms of a pose-training batch `x` `[batch, 64, 64, 3]`: a train-mode forward (BatchNorm on the batch,
 * running statistics moved) and DeepLabCut's loss on `targets` (score maps `[batch, S, S, K]`, locref and its mask
 * `[batch, S, S, 2K]`).
 */
export function poseBatchLoss(net: PoseNet, x: tf.Tensor4D, targets: Parameters<typeof poseLoss>[2]): LossTerms {
  const out = net.pose(x, { kind: "train" });
  const loss = poseLoss(out.scores, out.locref, targets, POSE_TARGETS_64);
  return { total: loss.total, score: loss.score, locref: loss.locref };
}

/** Predicted keypoints `[n, K, 2]` px of `images` `[n, 64, 64, 3]` under `mode`, in batches of `batch`. */
export async function predictKeypoints(
  net: PoseNet,
  images: Float32Array,
  n: number,
  mode: PoseNormMode = { kind: "source" },
  batch = 64,
): Promise<Float32Array> {
  const K = net.keypoints, S = scoreMapSize(POSE_NET_SIDE, 4);
  const out = new Float32Array(n * K * 2);
  for (let start = 0; start < n; start += batch) {
    const size = Math.min(batch, n - start);
    const { scores, locref } = tf.tidy(() =>
      net.pose(tf.tensor4d(images.subarray(start * PIXELS, (start + size) * PIXELS), [size, 64, 64, 3]), mode)
    );
    const decoded = decodePose(
      await scores.data() as Float32Array,
      await locref.data() as Float32Array,
      size,
      S,
      K,
      POSE_TARGETS_64,
    );
    tf.dispose([scores, locref]);
    out.set(decoded.keypoints, start * K * 2);
  }
  return out;
}

/**
 * BN adaptation's statistics of a set of frames (Schneider2023 Ch. 5, Horse-C: "BN statistics are
 * re-estimated separately for each horse identity and each corruption"): the full per-channel
 * statistics of every norm layer over all `n` images (App. A's estimate, layer after layer). A
 * set of at most `batch` images is one forward pass that normalises every layer by its own
 * moments, which gives the same statistics as the layer-by-layer estimate in one pass.
 */
export async function adaptedPoseStats(net: PoseNet, images: Float32Array, n: number, batch = 256): Promise<NormStats> {
  const slice = (start: number, size: number) =>
    tf.tensor4d(images.subarray(start * PIXELS, (start + size) * PIXELS), [size, 64, 64, 3]);
  if (n <= batch) {
    const x = slice(0, n);
    try {
      return await net.setMoments(x);
    } finally {
      x.dispose();
    }
  }
  return stagedFullStats(net, slice, n, batch);
}
