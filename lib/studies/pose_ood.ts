/**
 * The study behind the pose-ood experiment (Schneider2023 Ch. 5, App. D): its phases (the pretraining
 * of a backbone, then each model at each training fraction and shuffle), the evaluation of a keypoint net within and
 * out of domain with and without BN adaptation per identity and per corruption, the final metrics and the tables.
 *
 * @module
 */
import type { RunContext, RunResult } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import type { ResultTable } from "../core/scorecard.ts";
import { corruptAt, type CorruptionName } from "../data/corruptions.ts";
import { imageGrid } from "../data/preview.ts";
import { KEYPOINTS, poseSplit, QUADRUPED_SIDE } from "../data/quadruped.ts";
import { type PoseFrames, renderFrames } from "../data/quadruped_render.ts";
import { shapes3d } from "../data/shapes3d.ts";
import { normalizedError, normalizedErrorPerKeypoint, pck } from "../metrics/pose.ts";
import type { NormStats } from "../models/bn_cnn.ts";
import { PoseNet } from "../models/pose_net.ts";
import { phaseArray, type PhaseArrays, type PhaseCheckpoints, runPhases } from "../train/phases.ts";
import {
  adaptedPoseStats,
  headAccuracies,
  loadPoseNet,
  poseNetArrays,
  predictKeypoints,
  pretrainPoseBackbone,
  trainPoseNet,
} from "../train/pose_training.ts";

const PIXELS = QUADRUPED_SIDE * QUADRUPED_SIDE * 3;
/** Key prefix of the pretrained backbone the pretraining phase hands on (apart from a pose phase's own "net/"). */
const PRETRAINED_PREFIX = "pretrained/";

/** The models: fine-tuned from the pretrained backbone, or trained from scratch. */
export const MODELS = ["pretrained", "scratch"] as const;
/** One of {@linkcode MODELS}. */
export type Model = typeof MODELS[number];

/** The experiment's config as the study reads it (each key is documented where the experiment declares it). */
export type PoseOodConfig =
  & { models: Model[]; fractions: number[]; corruptions: CorruptionName[]; severities: number[] }
  & Record<
    | "identities"
    | "train_identities"
    | "frames"
    | "shuffles"
    | "ood_frames"
    | "pretrain_steps"
    | "pretrain_batch"
    | "pretrain_lr"
    | "steps"
    | "scratch_steps"
    | "batch"
    | "lr"
    | "scratch_lr"
    | "lr_floor"
    | "convs_per_stage"
    | "corruption_frames"
    | "pck_threshold"
    | "curve_frames"
    | "eval_every"
    | "log_every"
    | "checkpoint_every",
    number
  >;
type Cfg = PoseOodConfig;

/** A training fraction as the percentage in phase labels and metric keys (`f50`, `@50%`). */
export const percent = (f: number): string => `${Math.round(f * 1000) / 10}`;
/** Phase label of one model at one setting, the prefix of its logged curves. */
const settingLabel = (model: Model, fraction: number, shuffle: number) => `${model}/f${percent(fraction)}/s${shuffle}`;
/** Whether the run scores Gaussian noise at severity 3, the corruption of a target (and of the learning curves). */
export const gaussianS3 = (cfg: Pick<Cfg, "corruptions" | "severities">): boolean =>
  cfg.corruptions.includes("gaussian_noise") && cfg.severities.includes(3);

/** Frames of `frames` at `index`, as a PoseFrames of their own. */
function pickFrames(frames: PoseFrames, index: readonly number[]): PoseFrames {
  const K = KEYPOINTS.length;
  const out: PoseFrames = {
    n: index.length,
    images: new Float32Array(index.length * PIXELS),
    keypoints: new Float32Array(index.length * K * 2),
    units: new Float32Array(index.length),
    identities: new Int32Array(index.length),
  };
  index.forEach((f, i) => {
    out.images.set(frames.images.subarray(f * PIXELS, (f + 1) * PIXELS), i * PIXELS);
    out.keypoints.set(frames.keypoints.subarray(f * K * 2, (f + 1) * K * 2), i * K * 2);
    out.units[i] = frames.units[f];
    out.identities[i] = frames.identities[f];
  });
  return out;
}

/** Frame indices grouped by identity, identities in order of first appearance. */
function byIdentity(frames: PoseFrames): number[][] {
  const groups = new Map<number, number[]>();
  frames.identities.forEach((id, f) => (groups.get(id) ?? groups.set(id, []).get(id)!).push(f));
  return [...groups.values()];
}

/** Values of one frame's predicted keypoints: (x, y) per keypoint. */
const KEYPOINT_VALUES = 2 * KEYPOINTS.length;

/** Predictions with the source statistics and with statistics adapted to each identity of `frames`. */
async function predictions(net: PoseNet, frames: PoseFrames, adapt: boolean) {
  const base = await predictKeypoints(net, frames.images, frames.n);
  if (!adapt) return { base, adapted: null };
  const adapted = new Float32Array(base.length);
  for (const group of byIdentity(frames)) {
    const subset = pickFrames(frames, group);
    const stats: NormStats = await adaptedPoseStats(net, subset.images, subset.n);
    const predicted = await predictKeypoints(net, subset.images, subset.n, { kind: "fixed", stats });
    group.forEach((f, i) =>
      adapted.set(predicted.subarray(i * KEYPOINT_VALUES, (i + 1) * KEYPOINT_VALUES), f * KEYPOINT_VALUES)
    );
  }
  return { base, adapted };
}

const gain = (before: number, after: number) => (before - after) / before;

interface EvalSets {
  within: PoseFrames;
  ood: PoseFrames;
}

/**
 * Errors and PCK within and out of domain, BN adaptation per identity, and each (corruption,
 * severity) of the within-domain frames with and without BN adaptation per identity.
 */
async function evaluateNet(
  net: PoseNet,
  sets: EvalSets,
  cfg: Cfg,
  corruptions: readonly [CorruptionName, number][],
  seed: number,
  adapt: boolean,
): Promise<{ metrics: Record<string, number>; oodPredictions: Float32Array }> {
  const out: Record<string, number> = {};
  let oodPredictions: Float32Array = new Float32Array(0);
  for (const [name, frames] of [["within", sets.within], ["ood", sets.ood]] as const) {
    const { base, adapted } = await predictions(net, frames, adapt);
    if (name === "ood") oodPredictions = base;
    out[`${name}_err`] = normalizedError(base, frames.keypoints, frames.units);
    out[`${name}_pck`] = pck(base, frames.keypoints, frames.units, cfg.pck_threshold);
    if (adapted) {
      out[`bn_${name}_err`] = normalizedError(adapted, frames.keypoints, frames.units);
      out[`bn_${name}_pck`] = pck(adapted, frames.keypoints, frames.units, cfg.pck_threshold);
      out[`bn_identity_gain_${name}`] = gain(out[`${name}_err`], out[`bn_${name}_err`]);
    }
  }
  out.ood_over_within = out.ood_err / out.within_err;
  const clean = curveSubset(sets.within, cfg.corruption_frames);
  for (const [name, severity] of corruptions) {
    const images = corruptAt(
      { values: clean.images, n: clean.n, shape: [QUADRUPED_SIDE, QUADRUPED_SIDE, 3] },
      name,
      severity,
      { seed },
    ).values;
    const { base, adapted } = await predictions(net, { ...clean, images }, true);
    const key = `${name}_s${severity}`;
    out[`${key}_err`] = normalizedError(base, clean.keypoints, clean.units);
    out[`bn_${key}_err`] = normalizedError(adapted!, clean.keypoints, clean.units);
    out[`bn_${key}_gain`] = gain(out[`${key}_err`], out[`bn_${key}_err`]);
  }
  return { metrics: out, oodPredictions };
}

/** The first `count` frames of each identity of `frames` (learning curves, corruptions). */
function curveSubset(frames: PoseFrames, count: number): PoseFrames {
  return pickFrames(frames, byIdentity(frames).flatMap((group) => group.slice(0, count)));
}

/** A grid of frames with the true keypoints (green) and the predicted ones (red) marked. */
function keypointGrid(frames: PoseFrames, predicted: Float32Array, count: number) {
  const values = frames.images.slice(0, count * PIXELS);
  const mark = (f: number, x: number, y: number, rgb: number[]) => {
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        if (dx !== 0 && dy !== 0) continue;
        const px = Math.floor(x) + dx, py = Math.floor(y) + dy;
        if (px < 0 || py < 0 || px >= QUADRUPED_SIDE || py >= QUADRUPED_SIDE) continue;
        values.set(rgb, f * PIXELS + (py * QUADRUPED_SIDE + px) * 3);
      }
    }
  };
  for (let f = 0; f < count; f++) {
    for (let k = 0; k < KEYPOINTS.length; k++) {
      const at = (f * KEYPOINTS.length + k) * 2;
      mark(f, frames.keypoints[at], frames.keypoints[at + 1], [0.1, 0.9, 0.2]);
      mark(f, predicted[at], predicted[at + 1], [1, 0.1, 0.1]);
    }
  }
  return imageGrid(values, count, [QUADRUPED_SIDE, QUADRUPED_SIDE, 3], 8);
}

// ---------------------------------------------------------------------------------------------------------------
// Phases

type Phase = { kind: "pretrain" } | { kind: "pose"; model: Model; fraction: number; shuffle: number };
type PhaseResult = Record<string, number>;

function phasesOf(cfg: Cfg): Phase[] {
  const phases: Phase[] = cfg.models.includes("pretrained") ? [{ kind: "pretrain" }] : [];
  for (const fraction of cfg.fractions) {
    for (let shuffle = 0; shuffle < cfg.shuffles; shuffle++) {
      for (const model of cfg.models) phases.push({ kind: "pose", model, fraction, shuffle });
    }
  }
  return phases;
}

/** Train, within-domain and OOD frames of one setting. */
function settingData(cfg: Cfg, seed: number, fraction: number, shuffle: number) {
  const split = poseSplit({
    identities: cfg.identities,
    trainIdentities: cfg.train_identities,
    framesPerIdentity: cfg.frames,
    trainFraction: fraction,
    oodFramesPerIdentity: cfg.ood_frames,
    shuffle,
    seed,
  });
  return {
    split,
    train: renderFrames(split.train, seed),
    within: renderFrames(split.within, seed),
    ood: renderFrames(split.ood, seed),
  };
}

function headAndCurveCorruptions(cfg: Cfg): [CorruptionName, number][] {
  return gaussianS3(cfg) ? [["gaussian_noise", 3]] : [];
}

async function pretrainPhase(ctx: RunContext, cfg: Cfg, checkpoints: PhaseCheckpoints) {
  const dataset = shapes3d();
  const net = new PoseNet(Rng.derive(ctx.seed, "pretrain"), {
    keypoints: KEYPOINTS.length,
    classHeads: dataset.factorSizes,
    convsPerStage: cfg.convs_per_stage,
  });
  try {
    await pretrainPoseBackbone(ctx, net, dataset, {
      label: "pretrain",
      steps: cfg.pretrain_steps,
      batch: cfg.pretrain_batch,
      lr: cfg.pretrain_lr,
      lrFloor: cfg.lr_floor,
      seed: ctx.seed,
      logEvery: cfg.log_every,
      evaluateEvery: cfg.eval_every,
      evaluate: () => headAccuracies(net, dataset, 256, ctx.seed),
      checkpointEvery: cfg.checkpoint_every,
    }, checkpoints);
    const accuracies = await headAccuracies(net, dataset, 1_024, ctx.seed);
    const result = Object.fromEntries(Object.entries(accuracies).map(([k, v]) => [`pretrain/${k}`, v]));
    return { result, arrays: await poseNetArrays(net, PRETRAINED_PREFIX) };
  } finally {
    net.dispose();
  }
}

async function posePhase(
  ctx: RunContext,
  cfg: Cfg,
  phase: Extract<Phase, { kind: "pose" }>,
  pretrained: PhaseArrays | null,
  pretrainedCurveOod: Map<string, number>,
  checkpoints: PhaseCheckpoints,
): Promise<PhaseResult> {
  const { model, fraction, shuffle } = phase;
  const label = settingLabel(model, fraction, shuffle);
  const data = settingData(cfg, ctx.seed, fraction, shuffle);
  const curveSets = {
    within: curveSubset(data.within, cfg.curve_frames),
    ood: curveSubset(data.ood, cfg.curve_frames),
  };
  const dataset = model === "pretrained" ? shapes3d() : null;
  const net = new PoseNet(Rng.derive(ctx.seed, model, percent(fraction), shuffle), {
    keypoints: KEYPOINTS.length,
    classHeads: dataset?.factorSizes,
    convsPerStage: cfg.convs_per_stage,
  });
  const settingKey = `${percent(fraction)}/${shuffle}`;
  try {
    if (model === "pretrained") loadPoseNet(net, pretrained!, PRETRAINED_PREFIX);
    const steps = model === "pretrained" ? cfg.steps : cfg.scratch_steps;
    await trainPoseNet(ctx, net, data.train, {
      label,
      steps,
      batch: cfg.batch,
      lr: model === "pretrained" ? cfg.lr : cfg.scratch_lr,
      lrFloor: cfg.lr_floor,
      seed: ctx.seed,
      logEvery: cfg.log_every,
      evaluateEvery: cfg.eval_every,
      evaluate: async (step) => {
        const { metrics: m } = await evaluateNet(
          net,
          curveSets,
          cfg,
          headAndCurveCorruptions(cfg),
          ctx.seed,
          model === "pretrained",
        );
        if (model === "pretrained" && step === steps) pretrainedCurveOod.set(settingKey, m.ood_err);
        const reference = pretrainedCurveOod.get(settingKey);
        if (model === "scratch" && reference !== undefined) m.scratch_over_pretrained_ood = m.ood_err / reference;
        return m;
      },
      checkpointEvery: cfg.checkpoint_every,
    }, checkpoints);
    const { metrics: final, oodPredictions } = await evaluateNet(
      net,
      data,
      cfg,
      cfg.corruptions.flatMap((c) => cfg.severities.map((s) => [c, s] as [CorruptionName, number])),
      ctx.seed,
      true,
    );
    // The OOD predictions of the evaluation serve the per-keypoint errors and the grid: no second forward pass.
    const perKeypoint = normalizedErrorPerKeypoint(
      oodPredictions,
      data.ood.keypoints,
      data.ood.units,
      KEYPOINTS.length,
    );
    KEYPOINTS.forEach((k, i) => (final[`ood_err_${k}`] = perKeypoint[i]));
    if (shuffle === 0 && fraction === cfg.fractions[0]) {
      const count = Math.min(16, data.ood.n);
      const index = Array.from({ length: count }, (_, i) => Math.floor(i * data.ood.n / count));
      const shownPredictions = new Float32Array(count * KEYPOINT_VALUES);
      index.forEach((f, i) =>
        shownPredictions.set(
          oodPredictions.subarray(f * KEYPOINT_VALUES, (f + 1) * KEYPOINT_VALUES),
          i * KEYPOINT_VALUES,
        )
      );
      ctx.image(`${model}_ood`, steps, keypointGrid(pickFrames(data.ood, index), shownPredictions, count));
    }
    return final;
  } finally {
    net.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Metrics and tables

/** Final metrics: per setting with "@f/s" suffixes, the headline fraction's mean over shuffles without. */
function finalMetrics(cfg: Cfg, phases: Phase[], results: PhaseResult[]): Record<string, number> {
  const metrics: Record<string, number> = {};
  const headline = new Map<string, number[]>();
  phases.forEach((phase, i) => {
    if (phase.kind === "pretrain") return Object.assign(metrics, results[i]);
    const prefix = (key: string) => {
      if (!key.startsWith("bn_") || key.startsWith("bn_within") || key.startsWith("bn_ood")) {
        return `pose/${phase.model}/${key}`;
      }
      // BN adaptation's headline numbers are the pretrained net's (Table D.9's pretrained ResNet-50).
      const rest = key.slice(3);
      return phase.model === "pretrained" ? `bn/${rest}` : `bn/${phase.model}/${rest}`;
    };
    for (const [key, value] of Object.entries(results[i])) {
      const name = prefix(key);
      metrics[`${name}@${percent(phase.fraction)}%/s${phase.shuffle}`] = value;
      if (phase.fraction === cfg.fractions[0]) (headline.get(name) ?? headline.set(name, []).get(name)!).push(value);
    }
  });
  for (const [name, values] of headline) metrics[name] = values.reduce((a, b) => a + b, 0) / values.length;
  if (metrics["pose/pretrained/ood_err"] !== undefined && metrics["pose/scratch/ood_err"] !== undefined) {
    metrics["pose/scratch_over_pretrained_ood"] = metrics["pose/scratch/ood_err"] / metrics["pose/pretrained/ood_err"];
  }
  return metrics;
}

function resultTables(m: Record<string, number>, cfg: Cfg): ResultTable[] {
  const tables: ResultTable[] = [{
    title: `Normalised error and PCK@${cfg.pck_threshold} (headline ${percent(cfg.fractions[0])}% of frames, ` +
      `mean of ${cfg.shuffles} shuffle(s)); Table 5.1 ResNet-50: PCK 99.8 within / 81.3 OOD (not a target here)`,
    rows: cfg.models.map((model) => ({
      model,
      "within err": m[`pose/${model}/within_err`] ?? null,
      "OOD err": m[`pose/${model}/ood_err`] ?? null,
      "OOD / within": m[`pose/${model}/ood_over_within`] ?? null,
      "within PCK": m[`pose/${model}/within_pck`] ?? null,
      "OOD PCK": m[`pose/${model}/ood_pck`] ?? null,
    })),
  }];
  const bnModels = cfg.models.map((model) => ({ model, prefix: model === "pretrained" ? "bn/" : `bn/${model}/` }));
  tables.push({
    title: "BN adaptation per identity (Table D.9, pretrained ResNet-50: within 0.115 → 0.086, gain 0.252; " +
      "OOD 0.271 → 0.247, gain 0.089)",
    rows: bnModels.flatMap(({ model, prefix }) =>
      (["within", "ood"] as const).map((set) => ({
        model,
        set,
        base: m[`pose/${model}/${set}_err`] ?? null,
        adapted: m[`pose/${model}/bn_${set}_err`] ?? null,
        gain: m[`${prefix}identity_gain_${set}`] ?? null,
      }))
    ),
  });
  tables.push({
    title: `Corruptions of ${cfg.corruption_frames} within-domain frames per identity with BN adaptation per ` +
      "identity (Tables D.5–D.8: Gaussian noise " +
      "s3 5.556 → 0.314; contrast s5 6.406 → 0.103; elastic, JPEG, pixelate gain 10–25%)",
    rows: bnModels.flatMap(({ model, prefix }) =>
      cfg.corruptions.flatMap((c) =>
        cfg.severities.map((s) => ({
          model,
          corruption: c,
          severity: s,
          base: m[`pose/${model}/${c}_s${s}_err`] ?? null,
          adapted: m[`${prefix}${c}_s${s}_err`] ?? null,
          gain: m[`${prefix}${c}_s${s}_gain`] ?? null,
        }))
      )
    ),
  });
  return tables;
}

/**
 * The study's run: the pretraining (or its arrays from a resumed checkpoint), then every pose phase, checkpointed
 * inside; the final metrics, and the details with the tables and `cannotReproduce`, what the stand-in cannot show.
 */
export async function runPoseOod(ctx: RunContext, cfg: Cfg, cannotReproduce: readonly string[]): Promise<RunResult> {
  const phases = phasesOf(cfg);
  const pretrainedCurveOod = new Map<string, number>();
  // A resumed run finds the finished pretraining's arrays in its checkpoint.
  const saved = Object.entries(ctx.resumed?.arrays ?? {}).filter(([key]) => key.startsWith(PRETRAINED_PREFIX));
  let pretrained: PhaseArrays | null = saved.length > 0
    ? Object.fromEntries(saved.map(([key, value]) => [key, phaseArray(value)]))
    : null;
  const maxSteps = Math.max(cfg.pretrain_steps, cfg.steps, cfg.scratch_steps);
  const { results } = await runPhases<Phase, PhaseResult>(
    ctx,
    phases,
    async (phase, _, checkpoints) => {
      if (phase.kind === "pretrain") {
        const { result, arrays } = await pretrainPhase(ctx, cfg, checkpoints);
        pretrained = arrays;
        return { result, arrays };
      }
      return { result: await posePhase(ctx, cfg, phase, pretrained, pretrainedCurveOod, checkpoints) };
    },
    { stride: maxSteps + 1 },
  );
  const metrics = finalMetrics(cfg, phases, results);
  return {
    metrics,
    details: {
      results: resultTables(metrics, cfg),
      cannotReproduce,
      deviations: {
        pretraining: "a procedural classification task (six Shapes3D factor heads) stands in for ImageNet",
        schedule: "Adam 1e-3 for both nets with cosine decay to 1% (the paper cross-validated per backbone)",
        augmentation: "none besides the renderer's ±4 px camera jitter (the paper: imgaug crops and rotations)",
        bn_adaptation: "full per-layer statistics of an identity's (or corruption's) frames, estimated layer by layer",
      },
    },
  };
}
