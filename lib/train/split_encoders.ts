/**
 * Unsupervised encoders and readouts on the training part of a benchmark
 * split (Schott2022 §3, App.
 * H.3): the β-VAE on i.i.d. training images, SlowVAE and PCL on LAP pairs
 * and Ada-GVAE on pairs differing in one factor, each pair redrawn until both
 * frames are training points; then the readout MLP on the frozen encoder's
 * mean, trained by the benchmark's regression loss on the same part. The
 * test part is never seen before scoring.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import { type Factors, FactorSpace, type GroundTruthDataset, sampleBatch } from "../data/ground_truth.ts";
import { adaPairs, type FactorPairs, lapPairs } from "../data/pair_samplers.ts";
import type { DatasetName } from "../data/registry.ts";
import { factorsOf, sampleSplit, type Split } from "../data/splits.ts";
import { curveScores } from "../metrics/score.ts";
import { type Readout, readout, regressionLoss, type Regressor } from "../models/regressors.ts";
import { type Encoder, mapInChunks } from "../models/vae.ts";
import { batchInputsOf, DataParallel, type DataParallelPlan } from "./data_parallel.ts";
import { trainPhase } from "./loop.ts";
import { type PairModelMethod, type PairSource, trainPairModel } from "./pair_model.ts";
import { regressionShardLoss } from "./supervised_replicas.ts";
import { trainVae } from "./vae.ts";

/** Normalized factor values y_j = index / (n_j − 1), `[n, k]`: the benchmark's regression targets. */
export function normalizedFactors(factors: Factors, sizes: readonly number[]): Float32Array {
  const k = sizes.length;
  return Float32Array.from(factors.values, (v, i) => v / (sizes[i % k] - 1));
}

function checkGrid(dataset: GroundTruthDataset, split: Split): void {
  const same = dataset.factorSizes.length === split.sizes.length &&
    dataset.factorSizes.every((n, i) => n === split.sizes[i]);
  if (!same) {
    throw new Error(
      `the split's grid [${split.sizes}] is not ${dataset.name}'s factor grid [${dataset.factorSizes}]`,
    );
  }
}

const membership = new WeakMap<Split, Uint8Array>();

/** `inTrain[flatIndex]` = 1 for the split's training points, built once per split. */
function trainMask(split: Split): Uint8Array {
  let mask = membership.get(split);
  if (!mask) {
    mask = new Uint8Array(split.sizes.reduce((a, b) => a * b, 1));
    for (const index of split.train) mask[index] = 1;
    membership.set(split, mask);
  }
  return mask;
}

/**
 * `dataset` with its `sampleFactors` drawing uniformly (with replacement)
 * from the split's training part: every sampler built on it (trainVae's
 * batches, its media, the curve scores) sees training points only.
 */
export function trainPartDataset(dataset: GroundTruthDataset, split: Split): GroundTruthDataset {
  checkGrid(dataset, split);
  return {
    name: dataset.name,
    description: `${dataset.description}; the training part of the ${split.name} split`,
    factorNames: dataset.factorNames,
    factorSizes: dataset.factorSizes,
    imageShape: dataset.imageShape,
    categorical: dataset.categorical,
    sampleFactors: (n, rng) => sampleSplit(split, "train", n, rng),
    observations: (factors, rng) => dataset.observations(factors, rng),
  };
}

/** The images of `factors` as one `[n, height, width, channels]` tensor (`rng` drives the noisy variants' noise). */
export function observationsTensor(dataset: GroundTruthDataset, factors: Factors, rng: Rng): tf.Tensor4D {
  const { values, shape } = dataset.observations(factors, rng);
  return tf.tensor4d(values, [factors.n, ...shape]);
}

/** Rounds of candidate pairs without a single training pair before {@linkcode trainPairsOf} gives up. */
const MAX_EMPTY_ROUNDS = 1_000;

/**
 * `n` pairs from `draw` whose first and second frame are both training
 * points of `split`: candidates are drawn `n` at a time and kept in order
 * until `n` are found. The first frame is thus uniform over the training
 * points whose transition stays inside the training part.
 */
export function trainPairsOf(
  split: Split,
  draw: (n: number, rng: Rng) => FactorPairs,
  n: number,
  rng: Rng,
): FactorPairs {
  const inTrain = trainMask(split), space = new FactorSpace(split.sizes), k = split.sizes.length;
  const first = new Int32Array(n * k), second = new Int32Array(n * k);
  let found = 0, empty = 0;
  while (found < n) {
    const candidates = draw(n, rng);
    let kept = 0;
    for (let r = 0; r < n && found < n; r++) {
      const a = candidates.first.values.subarray(r * k, (r + 1) * k);
      const b = candidates.second.values.subarray(r * k, (r + 1) * k);
      if (inTrain[space.indexOf(a)] && inTrain[space.indexOf(b)]) {
        first.set(a, found * k);
        second.set(b, found * k);
        found++;
        kept++;
      }
    }
    if (kept > 0) empty = 0;
    else if (++empty >= MAX_EMPTY_ROUNDS) {
      throw new Error(`no pair of the sampler fell inside the ${split.name} split's training part`);
    }
  }
  return { first: { values: first, n }, second: { values: second, n } };
}

/** The pair transitions of the unsupervised encoders: LAP (Klindt2021 App. D.2) or one uniformly changed factor. */
export type SplitTransitions = "lap" | "one_factor";

/** Pairs of factor tuples of `dataset` over its whole grid, moved by the given transitions. */
export function transitionSampler(
  dataset: GroundTruthDataset,
  transitions: SplitTransitions,
  lapRate = 1,
): (n: number, rng: Rng) => FactorPairs {
  const space = { sizes: dataset.factorSizes, categorical: dataset.categorical };
  return (n, rng) =>
    transitions === "lap" ? lapPairs(space, n, rng, { rate: lapRate }) : adaPairs(space, n, rng, { k: 1 });
}

/**
 * A {@linkcode PairSource} of the split's training part: pairs of the given
 * transitions redrawn until both frames are training points (see
 * {@linkcode trainPairsOf}), and i.i.d. training frames.
 */
export function trainPartPairSource(
  dataset: GroundTruthDataset,
  split: Split,
  transitions: SplitTransitions,
  lapRate = 1,
): PairSource {
  const train = trainPartDataset(dataset, split);
  const draw = transitionSampler(dataset, transitions, lapRate);
  return {
    imageShape: dataset.imageShape,
    pairs: (n, rng) => {
      const { first, second } = trainPairsOf(split, draw, n, rng);
      return { x0: dataset.observations(first, rng).values, x1: dataset.observations(second, rng).values };
    },
    frames: (n, rng) => sampleBatch(train, n, rng).observations.values,
  };
}

/** The unsupervised encoders of the benchmark (Schott2022 §3 item 1) and what each trains on. */
export const SPLIT_ENCODERS = {
  beta_vae: { description: "β-VAE on i.i.d. training images (trainVae)", transitions: null },
  slow_vae: { description: "SlowVAE on LAP pairs of training images", transitions: "lap" },
  pcl: { description: "PCL on LAP pairs of training images", transitions: "lap" },
  ada_gvae: { description: "Ada-GVAE on pairs of training images differing in one factor", transitions: "one_factor" },
} as const satisfies Record<string, { description: string; transitions: SplitTransitions | null }>;

/** An unsupervised encoder's name. */
export type SplitEncoderName = keyof typeof SPLIT_ENCODERS;

/** The names of {@linkcode SPLIT_ENCODERS}, in listing order. */
export const SPLIT_ENCODER_NAMES = Object.keys(SPLIT_ENCODERS) as SplitEncoderName[];

/** How an unsupervised encoder trains (App. H.3: Adam 1e-4, batches of 64 images or 64 pairs, 500,000 steps). */
export interface SplitEncoderConfig {
  /** Code dimensions. */
  latents: number;
  /** Optimizer steps. */
  steps: number;
  /** Images per step of the β-VAE, pairs per step of the pair models. */
  batch: number;
  /** Adam learning rate. */
  lr: number;
  /** KL weight of the β-VAE. */
  beta: number;
  /** KL weight of Ada-GVAE. */
  adaBeta: number;
  /** SlowVAE's transition-prior weight γ and Laplace rate λ. */
  gamma: number;
  /** SlowVAE's Laplace rate λ. */
  rate: number;
  /** LAP data rate: a factor with n values moves with scale ln(n)/lapRate. */
  lapRate: number;
  /** Steps between logged loss terms. */
  logEvery: number;
  /** Steps between disentanglement scores of the encoder (0: the end only). */
  curveEvery: number;
  /** Training-part images each score reads (the same ones at every point). */
  curveSamples: number;
}

/** An encoder's scores at one step (MCC, MIG, DCI, SAP, modularity, and the terms logged with them), without the label. */
export interface EncoderScores {
  /** Training step at which the scores were taken. */
  step: number;
  /** Scores by name. */
  scores: Record<string, number>;
}

/**
 * Trains encoder `name` on the training part of `split` and scores it at
 * every curve point and at the end with {@linkcode curveScores} on training
 * images (MCC, MIG, DCI, SAP, modularity; Schott2022 selects models by DCI on
 * the training split). The β-VAE runs through trainVae, the pair models
 * through trainPairModel. Returns the encoder, the last logged terms and
 * scores (keyed without `label`), the scores at each point in step order,
 * and `dispose`, which frees the encoder and whatever else training kept.
 */
export async function trainSplitEncoder(
  ctx: RunContext,
  name: SplitEncoderName,
  data: { dataset: GroundTruthDataset; datasetName: DatasetName; split: Split },
  cfg: SplitEncoderConfig,
  training: { label: string; seed: number },
): Promise<{ encoder: Encoder; last: Record<string, number>; curve: EncoderScores[]; dispose(): void }> {
  const { dataset, split } = data;
  const train = trainPartDataset(dataset, split);
  // The scores come at the last step in any case; 0 asks for nothing before it.
  const every = cfg.curveEvery > 0 ? cfg.curveEvery : cfg.steps;
  // The training loops log the scores with the losses; the points are read off what they log.
  const curve: EncoderScores[] = [];
  const prefix = `${training.label}/`, marker = `${prefix}dci_disentanglement`;
  const recording: RunContext = {
    ...ctx,
    log: (step, values) => {
      if (marker in values) {
        const scores = Object.entries(values).filter(([key]) => key.startsWith(prefix) && key !== `${prefix}total`);
        curve.push({ step, scores: Object.fromEntries(scores.map(([key, v]) => [key.slice(prefix.length), v])) });
      }
      ctx.log(step, values);
    },
  };
  if (name === "beta_vae") {
    const { encoder, last, dispose } = await trainVae(
      recording,
      {
        method: "beta_vae",
        value: cfg.beta,
        dataset: data.datasetName,
        resolution: dataset.imageShape[0] as 32 | 64,
        architecture: "conv",
        latents: cfg.latents,
        steps: cfg.steps,
        batch: cfg.batch,
        lr: cfg.lr,
        // Unused by the β-VAE: the AnnealedVAE and FactorVAE keys, and the scores of kept models.
        anneal_steps: 1,
        discriminator_hidden: 1,
        discriminator_layers: 1,
        eval_samples: cfg.curveSamples,
        score_points: 2,
        score_batch: 2,
        curve_every: every,
        curve_samples: cfg.curveSamples,
        log_every: cfg.logEvery,
        media_every: cfg.steps,
        checkpoint_every: 0,
      },
      train,
      {
        label: training.label,
        seed: training.seed,
        resumed: null,
        checkpoints: false,
        mediaPrefix: prefix,
      },
    );
    return { encoder, last, curve, dispose };
  }
  const transitions = SPLIT_ENCODERS[name].transitions;
  const method: PairModelMethod = name;
  const { encoder, last } = await trainPairModel(
    recording,
    trainPartPairSource(dataset, split, transitions, cfg.lapRate),
    {
      method,
      beta: name === "ada_gvae" ? cfg.adaBeta : 1,
      gamma: cfg.gamma,
      rate: cfg.rate,
      architecture: "conv",
      latents: cfg.latents,
      steps: cfg.steps,
      pairs: cfg.batch,
      lr: cfg.lr,
      logEvery: cfg.logEvery,
    },
    {
      label: training.label,
      seed: training.seed,
      curve: { every, score: (encoder, seed) => curveScores(encoder, train, cfg.curveSamples, seed) },
    },
  );
  return { encoder, last, curve, dispose: () => encoder.params.dispose() };
}

/** One regression phase on a split's training part: {@linkcode trainSplitRegressor}'s settings. */
export interface SplitRegression<X extends tf.Tensor> {
  /** Metric prefix of the loss and the evaluations. */
  label: string;
  /** The model trained: only its `params` change. */
  regressor: { params: Regressor["params"]; predict(x: X): tf.Tensor2D };
  /** The split whose training part the batches come from. */
  split: Split;
  /** The model's input for a batch of factors (images, or the factors themselves for the oracles). */
  input(factors: Factors, rng: Rng): X;
  /** Optimizer steps. */
  steps: number;
  /** Training points per step. */
  batch: number;
  /** Adam learning rate. */
  lr: number;
  /** Draws the batches and whatever `input` draws. */
  batches: Rng;
  /** Steps between logged losses. */
  logEvery: number;
  /** Evaluation every `evaluateEvery` steps and at the end (0: only at the end). */
  evaluateEvery: number;
  /** The values to log at an evaluation step. */
  evaluate(step: number): Promise<Record<string, number>>;
  /**
   * Splits each batch over data-parallel workers (wasm backend); absent or 1
   * worker: every step here. A plan (its replica e.g. `regressorReplica` of
   * lib/train/supervised_replicas.ts), whose workers start and end with this
   * phase, or running workers on `regressor.params.list()` and
   * `regressionShardLoss(regressor.predict)` (the caller's to end). The loss
   * is a mean over examples, so only float32 summation order changes;
   * `regressor.predict` computes this thread's shard.
   */
  parallel?: DataParallelPlan | DataParallel;
}

/**
 * Adam on the benchmark's loss Σ_j ‖y_j − f(x_j)‖² / b over `steps` batches
 * drawn uniformly from the training part, targets the normalized factors
 * (App. H.3). Returns the last logged terms.
 */
export async function trainSplitRegressor<X extends tf.Tensor>(
  ctx: RunContext,
  phase: SplitRegression<X>,
): Promise<Record<string, number>> {
  const { split, batch, batches } = phase;
  const k = split.sizes.length;
  const optimizer = tf.train.adam(phase.lr);
  const plan = phase.parallel;
  const parallel = plan instanceof DataParallel ? plan : plan && Math.min(plan.workers, batch) > 1
    ? new DataParallel({
      ...plan,
      workers: Math.min(plan.workers, batch),
      variables: phase.regressor.params.list(),
      loss: regressionShardLoss(phase.regressor.predict),
      signal: ctx.stopRequested,
    })
    : null;
  try {
    return await trainPhase(ctx, {
      label: phase.label,
      steps: phase.steps,
      startStep: 0,
      variables: phase.regressor.params.list(),
      optimizer,
      logEvery: phase.logEvery,
      evaluateEvery: phase.evaluateEvery,
      evaluate: phase.evaluate,
      loss: () => {
        const factors = sampleSplit(split, "train", batch, batches);
        const y = tf.tensor2d(normalizedFactors(factors, split.sizes), [batch, k]);
        return { total: regressionLoss(phase.regressor.predict(phase.input(factors, batches)), y) };
      },
      // The same draws in the same order as `loss`: the inputs are made here and read back for the shards.
      gradients: parallel
        ? async (step) => {
          const factors = sampleSplit(split, "train", batch, batches);
          const y = normalizedFactors(factors, split.sizes);
          const input = phase.input(factors, batches);
          let x;
          try {
            ({ x } = await batchInputsOf({ x: input }));
          } finally {
            input.dispose();
          }
          return parallel.gradients(step, { x, y: { data: y, shape: [batch, k] } });
        }
        : undefined,
      extraLogs: parallel
        ? () => ({ dp_workers: parallel.workers, dp_comm_share: parallel.takeCommunicationShare() })
        : undefined,
    });
  } finally {
    if (parallel !== plan) parallel?.terminate();
    optimizer.dispose();
  }
}

/** Steps of `epochs` passes over the training part in batches of `batch` (rounded up). */
export function readoutSteps(epochs: number, split: Split, batch: number): number {
  return Math.ceil((epochs * split.train.length) / batch);
}

/** The settings of {@linkcode trainReadout}. */
export interface ReadoutTraining {
  /** Metric prefix of the loss and the evaluations. */
  label: string;
  /** The encoder's code size, the readout's input width. */
  latents: number;
  /** Seeds the readout's weights. */
  init: Rng;
  /** Draws the batches. */
  batches: Rng;
  /** Passes over the training part (App. H.3: 8). */
  epochs: number;
  /** Training points per step. */
  batch: number;
  /** Adam learning rate. */
  lr: number;
  /** Steps between logged losses. */
  logEvery: number;
  /** Evaluation every `evaluateEvery` steps and at the end (0: only at the end). */
  evaluateEvery: number;
  /** Scores of the readout under training (e.g. test R² for the learning curve). */
  evaluate(readout: Readout, step: number): Promise<Record<string, number>>;
  /** Encode the training part once (default: when the steps draw at least as many images as it holds). */
  encodeOnce?: boolean;
}

/** Images per forward pass when the training part is encoded at once. */
const ENCODE_CHUNK = 500;

/** Row of each flat grid index in the ascending `train` (binary search). */
function trainPositions(train: Int32Array, indices: ArrayLike<number>): Int32Array {
  return Int32Array.from(indices as ArrayLike<number>, (index) => {
    let lo = 0, hi = train.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (train[mid] < index) lo = mid + 1;
      else hi = mid;
    }
    if (train[lo] !== index) throw new Error(`grid point ${index} is not a training point`);
    return lo;
  });
}

/**
 * The frozen encoder's mean codes of every training point of `split`,
 * `[train, latents]` on the backend, encoded chunk by chunk.
 */
async function trainCodes(encoder: Encoder, dataset: GroundTruthDataset, split: Split): Promise<tf.Tensor2D> {
  const noise = new Rng(0); // The benchmark's images are functions of their factors; nothing is drawn.
  const [codes] = await mapInChunks(split.train.length, ENCODE_CHUNK, (start, rows) => {
    const factors = factorsOf(split.sizes, split.train.subarray(start, start + rows));
    return [encoder.encode(observationsTensor(dataset, factors, noise)).mean];
  });
  return tf.tensor2d(codes, [split.train.length, codes.length / split.train.length]);
}

/**
 * The readout MLP of App. H.3 ([latents → 40 → 40 → 40 → factors]) trained
 * on the frozen `encoder`'s mean for `epochs` passes over the split's
 * training images: only the readout's parameters are optimized, the
 * encoder's weights stay as they are. The caller disposes the readout's
 * `params`.
 *
 * When the steps draw at least as many images as the training part holds,
 * the part is encoded once and each batch reads its codes: the encoder is
 * frozen and the images are functions of their factors (true of the
 * benchmark's procedural datasets), so these are the codes the images would
 * give, at an eighth of the cost over 8 epochs. Shorter runs encode each
 * batch (`encodeOnce` chooses). Either way the batches are the same draws.
 */
export async function trainReadout(
  ctx: RunContext,
  encoder: Encoder,
  dataset: GroundTruthDataset,
  split: Split,
  training: ReadoutTraining,
): Promise<{ readout: Readout; last: Record<string, number> }> {
  checkGrid(dataset, split);
  const head = readout(training.init, { outputs: dataset.factorSizes.length, inputs: training.latents, encoder });
  const steps = readoutSteps(training.epochs, split, training.batch);
  const common = {
    label: training.label,
    split,
    steps,
    batch: training.batch,
    lr: training.lr,
    batches: training.batches,
    logEvery: training.logEvery,
    evaluateEvery: training.evaluateEvery,
    evaluate: (step: number) => training.evaluate(head, step),
  };
  let codes: tf.Tensor2D | null = null;
  try {
    let last: Record<string, number>;
    if (training.encodeOnce ?? steps * training.batch >= split.train.length) {
      codes = await trainCodes(encoder, dataset, split);
      const space = new FactorSpace(split.sizes), k = split.sizes.length, table = codes;
      last = await trainSplitRegressor(ctx, {
        ...common,
        regressor: { params: head.params, predict: head.fromCodes },
        input: (factors) => {
          const flat = Array.from({ length: factors.n }, (_, r) => space.indexOf(factors.values.subarray(r * k)));
          return tf.gather(table, trainPositions(split.train, flat)) as tf.Tensor2D;
        },
      });
    } else {
      last = await trainSplitRegressor(ctx, {
        ...common,
        regressor: head,
        input: (factors, rng) => observationsTensor(dataset, factors, rng),
      });
    }
    return { readout: head, last };
  } catch (error) {
    head.params.dispose();
    throw error;
  } finally {
    codes?.dispose();
  }
}
