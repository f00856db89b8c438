/**
 * Training and evaluating a dense fiRevNet classifier (Jacobsen2019 §2.2,
 * §3, App. B): the logits are z_s of a bijection, so
 * everything the classifier ignores stays in z_n. One phase trains the net
 * with plain cross-entropy or with iCE (its nuisance classifier D_nc updated
 * after each encoder step on that step's z_n); afterwards a fresh post-hoc
 * classifier on the frozen z_n measures how much label information z_n
 * still holds (Table 2's nuisance columns).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng, type RngState } from "../core/rng.ts";
import type { FiRevNet } from "../models/firevnet.ts";
import type { ForwardOptions } from "../models/invertible.ts";
import {
  FactorialGaussianPrior,
  iceLosses,
  type IceLossTerms,
  type IceObjective,
  type IceOptions,
  type IceVariant,
  NuisanceClassifier,
} from "./ice.ts";
import { type LossTerms, optimizerState, restoreOptimizer, scheduleOf, trainPhase } from "./loop.ts";
import type { PhaseCheckpoints } from "./phases.ts";
import { Adamax } from "./adamax.ts";

/** Labelled rows: `x` row-major `[rows, dim]`. */
export interface LabelledRows {
  /** Inputs, row-major `[rows, dim]`. */
  x: Float32Array;
  /** Class of each row `[rows]`, 0-based. */
  labels: Int32Array;
  /** Number of rows. */
  rows: number;
  /** Input width. */
  dim: number;
}

/** Rows `index` of a labelled set. */
export function pickRows(data: LabelledRows, index: ArrayLike<number>): LabelledRows {
  const x = new Float32Array(index.length * data.dim), labels = new Int32Array(index.length);
  for (let i = 0; i < index.length; i++) {
    const r = index[i];
    x.set(data.x.subarray(r * data.dim, (r + 1) * data.dim), i * data.dim);
    labels[i] = data.labels[r];
  }
  return { x, labels, rows: index.length, dim: data.dim };
}

/** How one fiRevNet is trained. */
export interface FiRevNetTraining {
  /** Metric prefix of the logged terms. */
  label: string;
  /** The network to train (in place). */
  net: FiRevNet;
  /** The training rows. */
  train: LabelledRows;
  /** Optimizer steps. */
  steps: number;
  /** Rows per step. */
  batch: number;
  /** Adamax or Adam, both with ε 1e-8. */
  optimizer: "adam" | "adamax";
  /** Learning rate. */
  lr: number;
  /** Cross-entropy on the logits alone, or iCE's full objective. */
  objective: IceObjective;
  /** iCE's nuisance classifier (widths; k updates per step) and loss weights. */
  ice: { hidden: readonly number[]; updates: number; variant: IceVariant; lambdaN: number; lambdaM: number };
  /** Uniform noise U(0, dequantize) added to each training input (0: none). */
  dequantize: number;
  /** Seed of the batches, the dequantisation noise, D_nc and y_perm. */
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

interface TrainingState {
  batches: RngState;
  permutations: RngState;
  nuisanceRng: RngState;
}

/** A fiRevNet training's optimizer: Adamax (whose state can be saved, lib/train/adamax.ts) or Adam, ε 1e-8. */
export function fiRevNetOptimizer(kind: "adam" | "adamax", lr: number): tf.Optimizer {
  return kind === "adamax" ? new Adamax(lr) : tf.train.adam(lr, 0.9, 0.999, 1e-8);
}

/**
 * The loss terms of one batch `x` with its `labels`: the net's forward, the logits of z_s and iCE's terms under
 * `options` (`{ objective: "ce" }`: cross-entropy alone); z_n comes back too, for D_nc's update. `mode` sets the
 * forward's and the logits' training flags of a net that has them (the conv net's dropout and BatchNorm).
 */
export function fiRevNetLoss(
  net: FiRevNet,
  x: tf.Tensor,
  labels: Int32Array,
  options: IceOptions,
  mode: { forward?: ForwardOptions; logits?: { training?: boolean } } = {},
): { terms: IceLossTerms; zn: tf.Tensor2D } {
  const { zs, zn, logDet } = net.forward(x, mode.forward);
  return { terms: iceLosses({ zs: net.logits(zs, mode.logits), zn, logDet, labels }, options), zn };
}

/**
 * Trains `training.net` from scratch or from `checkpoints.resumed` (weights,
 * optimizers, D_nc, the prior and every stream), so a stopped phase resumes
 * to the same numbers. The net's weights are saved under "net/".
 */
export async function trainFiRevNet(
  ctx: RunContext,
  training: FiRevNetTraining,
  checkpoints: PhaseCheckpoints,
): Promise<void> {
  const { net, train, batch } = training;
  const dim = train.dim, classes = net.classes;
  const optimizer = fiRevNetOptimizer(training.optimizer, training.lr);
  const ice = training.objective === "ice";
  const nuisance = ice
    ? new NuisanceClassifier(Rng.derive(training.seed, "nuisance", training.label), {
      inputs: dim - classes,
      classes,
      hidden: training.ice.hidden,
      updates: training.ice.updates,
    })
    : null;
  const prior = ice ? new FactorialGaussianPrior(dim - classes) : null;
  const resumed = checkpoints.resumed;
  const state = resumed?.state as TrainingState | undefined;
  if (resumed && state) {
    net.params.load(resumed.arrays, "net/");
    await restoreOptimizer(optimizer, resumed.arrays);
    if (nuisance && prior) {
      nuisance.params.load(resumed.arrays, "nuisance/");
      await restoreOptimizer(nuisance.optimizer, resumed.arrays, "nuisance_optimizer/");
      prior.params.load(resumed.arrays, "prior/");
      nuisance.rng.restore(state.nuisanceRng);
    }
  }
  const batches = state ? Rng.fromState(state.batches) : Rng.derive(training.seed, "batches", training.label);
  const permutations = state
    ? Rng.fromState(state.permutations)
    : Rng.derive(training.seed, "permutations", training.label);
  const x = new Float32Array(batch * dim), labels = new Int32Array(batch);
  let keptZn: tf.Tensor2D | null = null;
  let keptLabels: Int32Array | null = null;
  const variables = [...net.params.list(), ...(prior ? prior.params.list() : [])];

  try {
    await trainPhase(ctx, {
      ...scheduleOf(training),
      startStep: resumed?.step ?? 0,
      variables,
      optimizer,
      loss: (): LossTerms => {
        for (let b = 0; b < batch; b++) {
          const r = batches.int(train.rows);
          labels[b] = train.labels[r];
          for (let j = 0; j < dim; j++) {
            x[b * dim + j] = train.x[r * dim + j] +
              (training.dequantize > 0 ? batches.uniform() * training.dequantize : 0);
          }
        }
        const { terms, zn } = fiRevNetLoss(
          net,
          tf.tensor2d(x, [batch, dim]),
          labels.slice(),
          ice
            ? {
              objective: "ice",
              variant: training.ice.variant,
              lambdaN: training.ice.lambdaN,
              lambdaM: training.ice.lambdaM,
              nuisance: nuisance!,
              prior: prior!,
              rng: permutations,
            }
            : { objective: "ce" },
        );
        // D_nc's k updates follow the encoder step on this step's z_n (one batch behind the reference's order).
        if (ice) (keptZn = tf.keep(tf.clone(zn)), keptLabels = labels.slice());
        return terms;
      },
      afterStep: ice
        ? () => {
          tf.tidy(() => nuisance!.update(keptZn!, keptLabels!));
          keptZn!.dispose();
          keptZn = null;
        }
        : undefined,
      checkpoint: async (step) => {
        await checkpoints.save(
          step,
          {
            ...net.params.entries("net/"),
            ...(await optimizerState(optimizer)),
            ...(nuisance ? nuisance.params.entries("nuisance/") : {}),
            ...(nuisance ? await optimizerState(nuisance.optimizer, "nuisance_optimizer/") : {}),
            ...(prior ? prior.params.entries("prior/") : {}),
          },
          {
            batches: batches.state(),
            permutations: permutations.state(),
            nuisanceRng: nuisance ? nuisance.rng.state() : batches.state(),
          } satisfies TrainingState,
        );
      },
    });
  } finally {
    (keptZn as tf.Tensor2D | null)?.dispose();
    optimizer.dispose();
    nuisance?.dispose();
    prior?.dispose();
  }
}

/** z_s (as logits) and z_n of every row, in chunks: `[rows, C]` and `[rows, d − C]`. */
export async function encodeRows(
  net: FiRevNet,
  data: LabelledRows,
  chunk = 1_000,
): Promise<{ logits: Float32Array; zn: Float32Array }> {
  const classes = net.classes, rest = data.dim - classes;
  const logits = new Float32Array(data.rows * classes), zn = new Float32Array(data.rows * rest);
  for (let start = 0; start < data.rows; start += chunk) {
    const count = Math.min(chunk, data.rows - start);
    const [l, n] = tf.tidy(() => {
      const out = net.forward(tf.tensor2d(data.x.subarray(start * data.dim, (start + count) * data.dim), [
        count,
        data.dim,
      ]));
      return [net.logits(out.zs), out.zn];
    });
    logits.set(await l.data() as Float32Array, start * classes);
    zn.set(await n.data() as Float32Array, start * rest);
    tf.dispose([l, n]);
  }
  return { logits, zn };
}

/** Share of rows whose largest of `classes` scores is not the label. */
export function errorRate(scores: Float32Array, labels: Int32Array, classes: number): number {
  let wrong = 0;
  for (let i = 0; i < labels.length; i++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (scores[i * classes + c] > scores[i * classes + best]) best = c;
    if (best !== labels[i]) wrong++;
  }
  return wrong / labels.length;
}

/** Settings of the post-hoc nuisance classifier. */
export interface PosthocOptions {
  /** Widths of the hidden layers. */
  hidden: readonly number[];
  /** Passes over the training rows. */
  epochs: number;
  /** Rows per update; a pass's incomplete last batch is skipped. */
  batch: number;
  /** Adamax learning rate. */
  lr: number;
  /** Seed of the weights and of each pass's order. */
  seed: number;
}

/**
 * A fresh classifier on frozen z_n (Table 2's nuisance columns): `epochs`
 * passes of shuffled batches with Adamax, without dropout. The caller
 * disposes it.
 */
export async function trainPosthocClassifier(
  train: { zn: Float32Array; labels: Int32Array },
  classes: number,
  options: PosthocOptions,
): Promise<NuisanceClassifier> {
  const inputs = train.zn.length / train.labels.length;
  const rng = Rng.derive(options.seed, "posthoc");
  const classifier = new NuisanceClassifier(rng, {
    inputs,
    classes,
    hidden: options.hidden,
    dropout: 0,
    learningRate: options.lr,
    updates: 1,
  });
  const rows = train.labels.length;
  const zn = new Float32Array(options.batch * inputs), labels = new Int32Array(options.batch);
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = rng.permutation(rows);
    for (let start = 0; start + options.batch <= rows; start += options.batch) {
      for (let i = 0; i < options.batch; i++) {
        const r = order[start + i];
        zn.set(train.zn.subarray(r * inputs, (r + 1) * inputs), i * inputs);
        labels[i] = train.labels[r];
      }
      tf.tidy(() => classifier.update(tf.tensor2d(zn, [options.batch, inputs]), labels));
    }
    // Between epochs: signal handlers run.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return classifier;
}

/** The classifier's scores `[rows, classes]` for z_n rows, in chunks. */
export async function classifierScores(
  classifier: NuisanceClassifier,
  zn: Float32Array,
  chunk = 5_000,
): Promise<Float32Array> {
  const inputs = classifier.inputs, rows = zn.length / inputs;
  const out = new Float32Array(rows * classifier.classes);
  for (let start = 0; start < rows; start += chunk) {
    const count = Math.min(chunk, rows - start);
    const scores = tf.tidy(() =>
      classifier.logits(tf.tensor2d(zn.subarray(start * inputs, (start + count) * inputs), [count, inputs]))
    );
    out.set(await scores.data() as Float32Array, start * classifier.classes);
    scores.dispose();
  }
  return out;
}

/** max |F⁻¹(F(x)) − x| over the rows of `x` `[rows, dim]` (float32 round-off of an exact inverse). */
export async function roundTripError(net: FiRevNet, x: Float32Array, dim: number): Promise<number> {
  const input = tf.tensor2d(x, [x.length / dim, dim]);
  const { zs, zn, logDet } = net.forward(input);
  const back = await net.inverse(zs, zn);
  const values = await back.data();
  tf.dispose([input, zs, zn, logDet, back]);
  let err = 0;
  for (let i = 0; i < values.length; i++) err = Math.max(err, Math.abs(values[i] - x[i]));
  return err;
}

/** max |z_s(x_met) − z_s(x_A)|: how exactly metamers keep their logit source's z_s. */
export async function logitMatchError(net: FiRevNet, xA: tf.Tensor2D, metamers: tf.Tensor): Promise<number> {
  const gap = tf.tidy(() => tf.max(tf.abs(tf.sub(net.forward(metamers).zs, net.forward(xA).zs))));
  const value = (await gap.data())[0];
  gap.dispose();
  return value;
}
