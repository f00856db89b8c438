/**
 * The `firevnet` group (`--only firevnet`) times the fully invertible classifiers of lib/models/firevnet.ts. Three
 * training steps (lib/train/firevnet_training.ts `fiRevNetLoss` with cross-entropy alone and `fiRevNetOptimizer`,
 * as training takes them: forward, the mean softmax cross-entropy of the logits z_s, backward, the optimizer's step,
 * the loss read back), each beside the same network in PyTorch (bench/firevnet_reference.py) on our weights,
 * permutations and inputs, whose z_s and z_n before any step and first two losses are compared with ours before
 * timing: `firevnet-dense-196` (`DenseFiRevNet` d 196, 10 classes, 8 blocks, h 128, Adamax 1e-3, batch
 * {@linkcode FIREVNET_196_BATCH}, uniform pixels; goal ≤ {@linkcode FIREVNET_196_GOAL_MS} ms), `firevnet-dense-100`
 * (d 100, 2 classes, 4 blocks, h 128, Adam 1e-3, batch {@linkcode FIREVNET_100_BATCH} sphere points; goal ≤
 * {@linkcode FIREVNET_100_GOAL_MS} ms) and `firevnet-conv-32` (`ConvFiRevNet` side 32, 2 levels × 4 steps, 64
 * filters, dropout 0.1, BatchNorm logits, Adamax 1e-3, batch {@linkcode FIREVNET_CONV_BATCH}; no time goal; also
 * timed on WebGPU when a GPU adapter is found, and the report says why not otherwise). The zero-initialised weights
 * get small random values first, so the checks compare more than permutations. PyTorch permutes the dense net's
 * coordinates by indexing, as torch code does; ours multiplies by 0/1 matrices (gather has no gradient on wasm), a
 * cost the ratios include. Ours only: `firevnet-inverse-196`, the inverse of 128 rows at d 196 paired round by round
 * with the forward of the same rows (goal: the ratio of their medians ≤ {@linkcode FIREVNET_INVERSE_RATIO_GOAL};
 * check: the round trip), and `firevnet-metamers-196`, `metamers` of {@linkcode FIREVNET_METAMER_PAIRS} pairs at d
 * 196 (goal ≥ {@linkcode FIREVNET_METAMERS_GOAL_PER_S} images/s; check: the metamers' z_s and z_n against their
 * sources'). The dense steps and the inverse raise the warm-up and the steps per round (`Workload.minimum`), as the
 * `vae-pca` group's short steps do.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { Rng } from "../../lib/core/rng.ts";
import { sampleSpheres } from "../../lib/data/spheres.ts";
import { ConvFiRevNet, DenseFiRevNet, type FiRevNet, firevnetMnistInput, metamers } from "../../lib/models/firevnet.ts";
import { Mlp } from "../../lib/models/mlp.ts";
import { Params } from "../../lib/models/params.ts";
import { fiRevNetLoss, fiRevNetOptimizer } from "../../lib/train/firevnet_training.ts";
import {
  compareParts,
  firstLosses,
  largestDifference,
  readLoss,
  relativeDifference,
  writeTensors,
} from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload, WorkloadState } from "../harness/rounds.ts";

/** Images per training step of `firevnet-dense-196`, and per forward and inverse of `firevnet-inverse-196`. */
export const FIREVNET_196_BATCH = 128;
/** Ceiling in ms on a training step of the dense fiRevNet at d 196, batch 128, on wasm. */
export const FIREVNET_196_GOAL_MS = 200;
/** Points per training step of `firevnet-dense-100` (the spheres' quick batch). */
export const FIREVNET_100_BATCH = 256;
/** Ceiling in ms on a training step of the dense fiRevNet at d 100, batch 256, on wasm. */
export const FIREVNET_100_GOAL_MS = 130;
/** Images per training step of `firevnet-conv-32`. */
export const FIREVNET_CONV_BATCH = 32;
/** Ceiling on the median inverse over the median forward of the dense fiRevNet at d 196. */
export const FIREVNET_INVERSE_RATIO_GOAL = 1.2;
/** Metamer pairs per call of `firevnet-metamers-196`. */
export const FIREVNET_METAMER_PAIRS = 2000;
/** Floor on metamers per second of the dense fiRevNet at d 196. */
export const FIREVNET_METAMERS_GOAL_PER_S = 2000;

/** A `firevnet` group dense net and its training step: width, classes, blocks, the optimizer and the inputs. */
interface DenseFiRevNetSpec {
  dim: number;
  classes: number;
  blocks: number;
  /** Width of each bottleneck's two hidden layers. */
  hidden: number;
  optimizer: "adam" | "adamax";
  /** "pixels": uniform values in [0, 1] with random classes (pooled digits); "spheres": lib/data/spheres.ts points. */
  inputs: "pixels" | "spheres";
}

/** The MNIST quick preset's dense fiRevNet: 2×2-pooled digits (d 196), 10 classes, 8 blocks, h 128, Adamax. */
const FIREVNET_196: DenseFiRevNetSpec = {
  dim: 196,
  classes: 10,
  blocks: 8,
  hidden: 128,
  optimizer: "adamax",
  inputs: "pixels",
};
/** The spheres network (App. B.1): d 100, 2 classes, 4 blocks, h 128, Adam (the quick preset's). */
const FIREVNET_100: DenseFiRevNetSpec = {
  dim: 100,
  classes: 2,
  blocks: 4,
  hidden: 128,
  optimizer: "adam",
  inputs: "spheres",
};
/** Learning rate of every `firevnet` training step (Adam 1e-3 and Adamax 1e-3, as the experiments train). */
const FIREVNET_LR = 1e-3;

/**
 * A dense fiRevNet with its blocks' permutations. CouplingFlow keeps them private, so a copy of `rng`'s stream
 * replays its draws (per block a permutation, then the block's MLP). A replay that drifts from the flow gives
 * PyTorch other permutations, which the forward check against it then reports.
 */
function denseFiRevNet(rng: Rng, spec: DenseFiRevNetSpec): { net: DenseFiRevNet; permutations: Int32Array[] } {
  const replay = Rng.fromState(rng.state());
  const net = new DenseFiRevNet(rng, {
    dim: spec.dim,
    classes: spec.classes,
    blocks: spec.blocks,
    hidden: spec.hidden,
  });
  const scratch = new Params(), half = Math.floor(spec.dim / 2);
  const permutations: Int32Array[] = [];
  for (let k = 0; k < spec.blocks; k++) {
    permutations.push(replay.permutation(spec.dim));
    new Mlp(replay, scratch, `block${k}/`, [half, spec.hidden, spec.hidden, spec.dim - half], { zeroLast: true });
  }
  scratch.dispose();
  return { net, permutations };
}

/**
 * Gives every all-zero variable N(0, 0.02²) values (the zero-initialised last layers, biases and scales): at the
 * initial point the couplings are identities and a check would compare little more than permutations.
 */
async function perturbZeros(params: Params, rng: Rng): Promise<void> {
  for (const variable of params.list()) {
    const values = await variable.data();
    if (values.every((v) => v === 0)) {
      tf.tidy(() => variable.assign(tf.tensor(rng.normalArray(variable.size, 0.02), variable.shape)));
    }
  }
}

/** `[rows, dim]` uniform values in [0, 1]. */
const uniformRows = (rng: Rng, rows: number, dim: number) =>
  tf.tensor2d(Float32Array.from({ length: rows * dim }, () => rng.uniform()), [rows, dim]);

/** z_s and z_n of `x` in inference mode, read back. */
async function readLatents(net: FiRevNet, x: tf.Tensor) {
  const { zs, zn, logDet } = net.forward(x);
  const out = { zs: await zs.data() as Float32Array, zn: await zn.data() as Float32Array };
  tf.dispose([zs, zn, logDet]);
  return out;
}

/** The training flags of a step: the forward's (dropout) and the logits' (BatchNorm on the batch). */
type StepMode = Parameters<typeof fiRevNetLoss>[4];

/**
 * A training step's state as lib/train/firevnet_training.ts trains (cross-entropy alone, `fiRevNetOptimizer` at lr
 * 1e-3): `net` on `x` with `labels`, its weights and `saved` written to `directory` for the reference first. The
 * check compares z_s and z_n in inference mode and the first two steps' losses (taken under `checked`) with the
 * reference's; the timed step runs under `timed`.
 */
async function trainingStepState(
  net: FiRevNet,
  x: tf.Tensor,
  labels: Int32Array,
  optimizerKind: "adam" | "adamax",
  directory: string,
  saved: Record<string, tf.Tensor>,
  referenceArgs: Record<string, unknown>,
  modes: { timed?: StepMode; checked?: StepMode } = {},
): Promise<WorkloadState> {
  await writeTensors(directory, { ...net.params.entries(""), ...saved });
  const optimizer = fiRevNetOptimizer(optimizerKind, FIREVNET_LR);
  const variables = net.params.list();
  const minimize = (mode: StepMode) =>
    optimizer.minimize(() => fiRevNetLoss(net, x, labels, { objective: "ce" }, mode).terms.total, true, variables)!;
  const { zs, zn } = await readLatents(net, x);
  const losses = await firstLosses(() => minimize(modes.checked));
  return {
    parameters: net.params.count(),
    step: () => readLoss(minimize(modes.timed)),
    dispose() {
      optimizer.dispose();
      net.dispose();
      x.dispose();
      Deno.removeSync(directory, { recursive: true });
    },
    referenceArgs: { directory, ...referenceArgs, lr: FIREVNET_LR },
    check: (reference) => compareParts({ zs, zn, losses }, reference, { zs: 1e-5, zn: 1e-5, losses: 1e-5 }),
  };
}

/**
 * A training step of the dense fiRevNet with the CE objective: the forward (z_s, z_n and the log-det, as the net
 * computes them), the mean softmax cross-entropy of the logits z_s, backward, an Adam or Adamax step (lr 1e-3,
 * betas 0.9, 0.999, ε 1e-8), the loss read back. The weights (the zero-initialised ones perturbed), permutations,
 * inputs and labels go to bench/firevnet_reference.py as .npy.
 */
function denseFiRevNetStepWorkload(
  name: ModelName,
  spec: DenseFiRevNetSpec,
  batch: number,
  goalMs: number,
): Workload {
  return {
    name,
    batch,
    goal: {
      ms: goalMs,
      source: `a dense fiRevNet training step (d ${spec.dim}, batch ${batch}) ≤ ${goalMs} ms on wasm`,
    },
    minimum: { warmup: 10, steps: 5 },
    async build(rng) {
      const { net, permutations } = denseFiRevNet(rng, spec);
      await perturbZeros(net.params, rng);
      let x: tf.Tensor2D, labels: Int32Array;
      if (spec.inputs === "spheres") {
        const points = sampleSpheres(batch, spec.dim, rng);
        x = tf.tensor2d(points.x, [batch, spec.dim]);
        labels = points.y;
      } else {
        x = uniformRows(rng, batch, spec.dim);
        labels = Int32Array.from({ length: batch }, () => rng.int(spec.classes));
      }
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      const saved = {
        labels: tf.tensor1d(labels, "int32"),
        ...Object.fromEntries(permutations.map((p, k) => [`perm${k}`, tf.tensor1d(p, "int32")])),
      };
      const state = await trainingStepState(net, x, labels, spec.optimizer, directory, { x, ...saved }, {
        dim: spec.dim,
        classes: spec.classes,
        blocks: spec.blocks,
        hidden: spec.hidden,
        hidden_layers: 2,
        optimizer: spec.optimizer,
      });
      tf.dispose(Object.values(saved));
      return state;
    },
  };
}

/**
 * `firevnet-conv-32`: a training step of the convolutional fiRevNet (lib/models/firevnet.ts `ConvFiRevNet`: side
 * 32, 3 channels, 2 levels × 4 steps of ActNorm → reverse → additive coupling with 64 filters, dropout 0.1, 10
 * classes) at batch {@linkcode FIREVNET_CONV_BATCH} on uniform digits in the reference's input layout
 * (`firevnetMnistInput`): a training-mode forward (dropout on), the logits through the BatchNorm on the batch, the
 * mean softmax cross-entropy, backward, Adamax 1e-3, the loss read back. The ActNorms initialise on the batch first;
 * the weights (the zero-initialised ones perturbed) and running statistics go to bench/firevnet_reference.py. The
 * check's two steps are taken without dropout (the two sides draw different masks).
 */
function convFiRevNetStepWorkload(): Workload {
  const shape = { side: 32, levels: 2, steps: 4, filters: 64 };
  return {
    name: "firevnet-conv-32",
    batch: FIREVNET_CONV_BATCH,
    alsoWebgpu: true,
    async build(rng) {
      const net = new ConvFiRevNet(rng, shape);
      const batch = FIREVNET_CONV_BATCH;
      const x = firevnetMnistInput(Float32Array.from({ length: batch * 784 }, () => rng.uniform()), rng);
      const labels = Int32Array.from({ length: batch }, () => rng.int(net.classes));
      tf.dispose(Object.values(net.forward(x)));
      await perturbZeros(net.params, rng);
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-firevnet-conv-" });
      const labelTensor = tf.tensor1d(labels, "int32");
      const state = await trainingStepState(
        net,
        x,
        labels,
        "adamax",
        directory,
        { ...net.stats.entries(""), x, labels: labelTensor },
        { levels: shape.levels, steps: shape.steps, classes: net.classes, dropout: 0.1 },
        {
          timed: { forward: { training: true }, logits: { training: true } },
          checked: { forward: { training: false }, logits: { training: true } },
        },
      );
      labelTensor.dispose();
      return state;
    },
  };
}

/**
 * `firevnet-inverse-196`: F⁻¹(z_s, z_n) of {@linkcode FIREVNET_196_BATCH} rows through the MNIST quick preset's
 * dense fiRevNet, read back, paired round by round with its forward of the same rows (z_s and z_n read back); goal:
 * the ratio of their medians ≤ {@linkcode FIREVNET_INVERSE_RATIO_GOAL}. Ours only. The check: the round trip's
 * largest |F⁻¹(F(x)) − x|.
 */
function firevnetInverseWorkload(): Workload {
  return {
    name: "firevnet-inverse-196",
    batch: FIREVNET_196_BATCH,
    minimum: { warmup: 30, steps: 10 },
    baseline: {
      model: "firevnet-forward-196",
      ratio: FIREVNET_INVERSE_RATIO_GOAL,
      source: `a dense fiRevNet's inverse (d 196, batch ${FIREVNET_196_BATCH}) ≤ ` +
        `${FIREVNET_INVERSE_RATIO_GOAL}× its forward`,
    },
    async build(rng) {
      const { net } = denseFiRevNet(rng, FIREVNET_196);
      await perturbZeros(net.params, rng);
      const x = uniformRows(rng, FIREVNET_196_BATCH, FIREVNET_196.dim);
      const { zs, zn, logDet } = net.forward(x);
      logDet.dispose();
      const inverse = async () => {
        const back = await net.inverse(zs, zn);
        const values = await back.data() as Float32Array;
        back.dispose();
        return values;
      };
      const error = largestDifference(await inverse(), await x.data() as Float32Array);
      return {
        parameters: net.params.count(),
        async step() {
          await inverse();
        },
        async baselineStep() {
          const out = net.forward(x);
          await out.zs.data();
          await out.zn.data();
          tf.dispose([out.zs, out.zn, out.logDet]);
        },
        dispose() {
          net.dispose();
          tf.dispose([x, zs, zn]);
        },
        check: () => ({
          ok: error <= 1e-4,
          detail: `round trip: largest |F⁻¹(F(x)) − x| ${error.toExponential(1)} (tolerance 1e-4)`,
        }),
      };
    },
  };
}

/**
 * `firevnet-metamers-196`: lib/models/firevnet.ts `metamers` of {@linkcode FIREVNET_METAMER_PAIRS} pairs of
 * uniform rows through the MNIST quick preset's dense fiRevNet (two forwards, one inverse), read back; goal ≥
 * {@linkcode FIREVNET_METAMERS_GOAL_PER_S} metamers per second. Ours only. The check: the metamers' z_s against
 * z_s(A) and z_n against z_n(B).
 */
function firevnetMetamersWorkload(): Workload {
  const pairs = FIREVNET_METAMER_PAIRS;
  return {
    name: "firevnet-metamers-196",
    batch: pairs,
    oursOnly: true,
    goal: {
      imagesPerS: FIREVNET_METAMERS_GOAL_PER_S,
      source: `metamers of the dense fiRevNet (d 196) ≥ ${
        FIREVNET_METAMERS_GOAL_PER_S.toLocaleString("en-US")
      } images/s, timed on ${pairs.toLocaleString("en-US")} pairs`,
    },
    async build(rng) {
      const { net } = denseFiRevNet(rng, FIREVNET_196);
      await perturbZeros(net.params, rng);
      const xA = uniformRows(rng, pairs, FIREVNET_196.dim), xB = uniformRows(rng, pairs, FIREVNET_196.dim);
      const first = await metamers(net, xA, xB);
      const [met, a, b] = await Promise.all([readLatents(net, first), readLatents(net, xA), readLatents(net, xB)]);
      first.dispose();
      const zsError = relativeDifference(a.zs, met.zs), znError = relativeDifference(b.zn, met.zn);
      return {
        parameters: net.params.count(),
        async step() {
          const out = await metamers(net, xA, xB);
          await out.data();
          out.dispose();
        },
        dispose() {
          net.dispose();
          tf.dispose([xA, xB]);
        },
        check: () => ({
          ok: Math.max(zsError, znError) <= 1e-4,
          detail: `metamers' z_s vs z_s(A) ${zsError.toExponential(1)}, z_n vs z_n(B) ${
            znError.toExponential(1)
          } of the largest value (tolerance 1e-4)`,
        }),
      };
    },
  };
}

/** The group's entries, in the order they are timed. */
export const FIREVNET_WORKLOADS: Workload[] = [
  denseFiRevNetStepWorkload("firevnet-dense-196", FIREVNET_196, FIREVNET_196_BATCH, FIREVNET_196_GOAL_MS),
  denseFiRevNetStepWorkload("firevnet-dense-100", FIREVNET_100, FIREVNET_100_BATCH, FIREVNET_100_GOAL_MS),
  convFiRevNetStepWorkload(),
  firevnetInverseWorkload(),
  firevnetMetamersWorkload(),
];
