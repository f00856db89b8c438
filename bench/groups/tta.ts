/**
 * The `tta` group (`--only tta`, or by name with `--models`) times lib/models/bn_cnn.ts `bnCnn({norm: "batch"})` on
 * uniform-pixel digits, each entry beside the same network in bench/torch_reference.py on our weights, whose first
 * results are compared with ours before timing: `tent-step-128` is one Tent step at batch 128 (lib/adapt/
 * self_learning.ts `adaptStep` with `entropy` on the "affine" parameters: BN on the batch's own statistics,
 * gradients on γ, β only, SGD 1e-3 momentum 0.9), paired round by round with PyTorch's Tent step (DequanWang/tent)
 * and with a plain training step of a second bnCnn (`bncnn-train-step-128`: lib/models/cross_entropy_step.ts on
 * `trainLogits`, every parameter, the same SGD) in the same process; goals: ≤ 1.2× the training step and ≤ 2.5×
 * PyTorch, each on the median paired ratio. `prior-forward-n1` is a forward of 256 digits in prior mode (N 16, n 1:
 * every image on its own statistics mixed with the source's, one pass) beside PyTorch's BayesianBatchNorm
 * (bethgelab/robustness `robusta/batchnorm/bn.py`, the runs of n normalised in one pass too) and paired with a
 * source-mode forward of the same model and digits (`source-forward`); goal: its throughput ≥ 0.7× the source
 * forward's, on the median paired ratio. `bncnn-train-step-128` and `source-forward` are also timed alone beside
 * PyTorch.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../../lib/core/rng.ts";
import { adaptedParams, adaptStep, entropy } from "../../lib/adapt/self_learning.ts";
import { type BnCnn, bnCnn, type NormMode, priorWeight } from "../../lib/models/bn_cnn.ts";
import { crossEntropyStep } from "../../lib/models/cross_entropy_step.ts";
import {
  compareParts,
  difference,
  randomClasses,
  readFlat,
  readLoss,
  uniformDigits,
  writeTensors,
} from "../harness/checks.ts";
import type { Workload } from "../harness/rounds.ts";

/** Images per Tent step and training step of the `tta` group (Tent's batch in the comparison). */
export const TTA_STEP_BATCH = 128;
/** Images per forward of `prior-forward-n1` and `source-forward`. */
export const TTA_FORWARD_BATCH = 256;
/** SGD learning rate and momentum of the `tta` steps, both sides (Tent's optimizer). */
export const TTA_SGD = { lr: 1e-3, momentum: 0.9 };
/** The prior mode of `prior-forward-n1`: each image on its own statistics (n 1), N 16. */
export const TTA_PRIOR_MODE: NormMode = { kind: "prior", N: 16, n: 1 };
/** Ceiling on a Tent step over a bnCnn training step, median paired ratio. */
export const TENT_STEP_RATIO_GOAL = 1.2;
/** Ceiling on a Tent step over PyTorch's, median paired ratio. */
export const TENT_TORCH_RATIO_GOAL = 2.5;
/** Floor on the prior-mode forward's throughput over the source-mode forward's, median paired ratio. */
export const PRIOR_THROUGHPUT_GOAL = 0.7;

/** bnCnn's one-dimensional parameters, whose layout is the same in PyTorch: biases and BN γ, β, in key order. */
const BN_CNN_VECTORS = ["conv0/b", "bn0/gamma", "bn0/beta", "conv1/b", "bn1/gamma", "bn1/beta", "fc0/b", "fc1/b"];
const BN_CNN_STATS = ["bn0/mean", "bn0/var", "bn1/mean", "bn1/var"];

/**
 * A bnCnn (norm "batch") and `batch` uniform-pixel digits, with its weights, statistics, the digits and `extra`
 * written as .npy into a new folder for the reference. Five training-mode forwards of the digits first move the
 * source statistics off 0 and 1, so that a wrong mixing or variance would show in the check.
 */
async function ttaModel(rng: Rng, batch: number, prefix: string, extra: Record<string, tf.Tensor> = {}) {
  const model = bnCnn(rng, { norm: "batch" });
  const x = uniformDigits(rng, batch);
  for (let i = 0; i < 5; i++) tf.dispose(model.trainLogits(x));
  const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${prefix}-` });
  await writeTensors(directory, { ...model.params.entries(""), ...model.stats.entries(""), x, ...extra });
  return { model, x, directory };
}

/** A training step of `model` on `x` and `classes`: `trainLogits`, softmax cross-entropy, every parameter, SGD. */
function bnCnnTrainer(model: BnCnn, x: tf.Tensor4D, classes: tf.Tensor1D) {
  const optimizer = tf.train.momentum(TTA_SGD.lr, TTA_SGD.momentum);
  return {
    /** One step; returns the loss (the caller disposes it). */
    minimize: (): tf.Scalar => crossEntropyStep(optimizer, model.allParams(), () => model.trainLogits(x), classes),
    dispose: () => optimizer.dispose(),
  };
}

/**
 * `bncnn-train-step-128`: one training step of bnCnn at batch {@linkcode TTA_STEP_BATCH}; the check compares the
 * first step's logits (batch statistics), the update of the biases and BN affine parameters and the running
 * statistics after it with PyTorch's.
 */
function bnCnnTrainWorkload(): Workload {
  return {
    name: "bncnn-train-step-128",
    batch: TTA_STEP_BATCH,
    async build(rng) {
      const classes = randomClasses(rng, TTA_STEP_BATCH);
      const { model, x, directory } = await ttaModel(rng, TTA_STEP_BATCH, "bncnn-train", { labels: classes });
      const trainer = bnCnnTrainer(model, x, classes);
      const vectors = () => BN_CNN_VECTORS.map((key) => model.params.get(key));
      // The training forward normalises with the batch's statistics: its logits are the batch-mode ones.
      const first = model.logits(x, { kind: "batch" });
      const logits = await first.data() as Float32Array;
      first.dispose();
      const before = await readFlat(vectors());
      await readLoss(trainer.minimize());
      const update = difference(await readFlat(vectors()), before);
      const stats = await readFlat(BN_CNN_STATS.map((key) => model.stats.get(key)));
      return {
        parameters: model.params.count(),
        step: () => readLoss(trainer.minimize()),
        record: () => trainer.minimize(),
        dispose() {
          trainer.dispose();
          model.dispose();
          tf.dispose([x, classes]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory },
        check: (reference) =>
          compareParts(
            { logits, bias_affine_update: update, running_stats: stats },
            reference,
            { logits: 1e-4, bias_affine_update: 1e-3, running_stats: 1e-4 },
          ),
      };
    },
  };
}

/**
 * `tent-step-128`: one Tent step (`adaptStep`, entropy, "affine") at batch {@linkcode TTA_STEP_BATCH}, paired with
 * PyTorch's and with a `bncnn-train-step-128` step of a second bnCnn on the same digits. The check compares the
 * first step's logits and its update of γ, β with PyTorch's.
 */
function tentStepWorkload(): Workload {
  return {
    name: "tent-step-128",
    batch: TTA_STEP_BATCH,
    alsoReference: true,
    goal: { ratio: TENT_TORCH_RATIO_GOAL, source: "a Tent step (batch 128) ≤ 2.5× PyTorch's" },
    baseline: {
      model: "bncnn-train-step-128",
      ratio: TENT_STEP_RATIO_GOAL,
      paired: true,
      source: "a Tent step (batch 128) ≤ 1.2× a bnCnn training step",
    },
    async build(rng) {
      const { model, x, directory } = await ttaModel(rng, TTA_STEP_BATCH, "tent");
      const optimizer = tf.train.momentum(TTA_SGD.lr, TTA_SGD.momentum);
      const plain = bnCnn(rng, { norm: "batch" }), classes = randomClasses(rng, TTA_STEP_BATCH);
      const trainer = bnCnnTrainer(plain, x, classes);
      const affine = adaptedParams(model, "affine");
      const before = await readFlat(affine);
      const logits = await adaptStep(model, x, entropy, optimizer, "affine");
      const update = difference(await readFlat(affine), before);
      return {
        parameters: model.params.count(),
        async step() {
          await adaptStep(model, x, entropy, optimizer, "affine");
        },
        baselineStep: () => readLoss(trainer.minimize()),
        dispose() {
          optimizer.dispose();
          trainer.dispose();
          model.dispose();
          plain.dispose();
          tf.dispose([x, classes]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory },
        check: (reference) =>
          compareParts({ logits, affine_update: update }, reference, { logits: 1e-4, affine_update: 1e-3 }),
      };
    },
  };
}

/**
 * A forward of {@linkcode TTA_FORWARD_BATCH} digits under `mode`, logits read back. The prior mode's entry is
 * paired with the source-mode forward of the same model and digits, its goal a floor on the throughput ratio.
 */
function forwardWorkload(name: "prior-forward-n1" | "source-forward", mode: NormMode): Workload {
  const prior = mode.kind === "prior" ? mode : null;
  return {
    name,
    batch: TTA_FORWARD_BATCH,
    alsoReference: true,
    ...(prior
      ? {
        baseline: {
          model: "source-forward" as const,
          throughputFloor: PRIOR_THROUGHPUT_GOAL,
          paired: true,
          source: `the n = 1 prior forward (N ${prior.N}) ≥ 0.7× the throughput of a source-mode ` +
            "forward, no per-image loop",
        },
      }
      : {}),
    async build(rng) {
      const { model, x, directory } = await ttaModel(rng, TTA_FORWARD_BATCH, name);
      const forward = async (m: NormMode) => {
        const out = model.logits(x, m);
        const values = await out.data() as Float32Array;
        out.dispose();
        return values;
      };
      const logits = await forward(mode);
      return {
        parameters: model.params.count(),
        async step() {
          await forward(mode);
        },
        ...(prior ? { baselineStep: async () => void await forward({ kind: "source" }) } : {}),
        dispose() {
          model.dispose();
          x.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory, ...(prior ? { prior: priorWeight(prior.N, prior.n), n: prior.n } : {}) },
        check: (reference) => compareParts({ logits }, reference, { logits: 1e-4 }),
      };
    },
  };
}

/** The group's entries, in the order they are timed. */
export const TTA_WORKLOADS: Workload[] = [
  tentStepWorkload(),
  bnCnnTrainWorkload(),
  forwardWorkload("prior-forward-n1", TTA_PRIOR_MODE),
  forwardWorkload("source-forward", { kind: "source" }),
];
