/**
 * The study behind the gen-benchmark experiment (Schott2022 §2–5, Tables 2–3, App. H): its plan of
 * models (regressors, readout oracles and unsupervised encoders with a readout, per dataset, split and seed), the
 * training and scoring of one model in this process or a worker, and the run's final metrics: R² per model and
 * split, the D_one-ood analysis, the OOD-error correlations between models and the DCI–R² correlation.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext, RunResult } from "../core/experiment.ts";
import { correlationMatrix, type Matrix } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import type { Factors, GroundTruthDataset } from "../data/ground_truth.ts";
import { loadDataset } from "../data/registry.ts";
import { makeSplit, sampleSplit, type Split, type SplitDataset } from "../data/splits.ts";
import { errorCorrelations, oodAnalysis, r2Scores } from "../metrics/r2.ts";
import type { StudyModel } from "../metrics/study.ts";
import { mapInChunks } from "../models/vae.ts";
import { MODEL_NOTES, readout, type Regressor, REGRESSOR_NAMES, REGRESSORS } from "../models/regressors.ts";
import { planWorker, runModelPlan } from "../train/model_plan.ts";
import type { WorkerPhase } from "../train/parallel_phases.ts";
import { seedSummary } from "../train/pair_study.ts";
import {
  type EncoderScores,
  normalizedFactors,
  observationsTensor,
  readoutSteps,
  SPLIT_ENCODER_NAMES,
  SPLIT_ENCODERS,
  type SplitEncoderConfig,
  type SplitEncoderName,
  trainReadout,
  trainSplitEncoder,
  trainSplitRegressor,
} from "../train/split_encoders.ts";

/** The oracles: the readout MLP on the ground-truth factors, or on their negatives (App. A). */
export const ORACLES = ["oracle", "oracle_flip"] as const;
/** Every model the benchmark can train: the supervised regressors, the oracles and the unsupervised encoders. */
export const MODEL_NAMES = [...REGRESSOR_NAMES, ...ORACLES, ...SPLIT_ENCODER_NAMES] as const;
/** The datasets: dSprites rotated on a quarter turn (App. E), dSprites and Shapes3D. */
export const DATASETS = ["dsprites-rot", "dsprites", "shapes3d"] as const;
/** One of {@linkcode DATASETS}. */
export type DatasetName = typeof DATASETS[number];
/** One of {@linkcode MODEL_NAMES}. */
export type ModelName = typeof MODEL_NAMES[number];
/** A split of the factor space: random, composition, interpolation or extrapolation. */
export type SplitName = Split["name"];

/** The experiment's config as the study reads it (each key is documented where the experiment declares it). */
export type GenBenchmarkConfig =
  & {
    datasets: DatasetName[];
    models: ModelName[];
    splits: SplitName[];
    encoder_datasets: DatasetName[];
    resolution: 32 | 64;
  }
  & Record<
    | "seeds"
    | "encoder_seeds"
    | "steps"
    | "batch"
    | "lr"
    | "readout_epochs"
    | "encoder_steps"
    | "encoder_batch"
    | "encoder_lr"
    | "latents"
    | "vae_beta"
    | "ada_beta"
    | "slow_gamma"
    | "slow_rate"
    | "lap_rate"
    | "encoder_curve_every"
    | "dci_samples"
    | "test_samples"
    | "ood_samples"
    | "log_every"
    | "curve_every"
    | "curve_samples"
    | "workers",
    number
  >;
type Cfg = GenBenchmarkConfig;

/** The metric prefix of a dataset: `dsprites_rot/cnn/random/r2`. */
export const datasetKey = (dataset: string): string => dataset.replace("-", "_");
/** The split grid of a dataset: dsprites-rot keeps dSprites' indices (App. E, drawn on a quarter turn). */
export const splitDataset = (dataset: string): SplitDataset => dataset === "shapes3d" ? "shapes3d" : "dsprites";

/** The splits in the order of Schott2022's tables. */
export const SPLIT_ORDER = ["random", "composition", "interpolation", "extrapolation"] as const;

/** Whether a model is an unsupervised encoder (trained, then read out), not a regressor or an oracle. */
export const isEncoder = (model: string): model is SplitEncoderName => model in SPLIT_ENCODERS;

/** The fewest (encoder, split) points a DCI–R² correlation is computed from. */
export const MIN_CORRELATION_POINTS = 3;

/** Encoders × splits × datasets × seeds of a config: the points of the DCI–R² correlation. */
export const encoderEntries = (cfg: Cfg): number =>
  cfg.models.filter(isEncoder).length * cfg.splits.length * encoderDatasets(cfg).length * cfg.encoder_seeds;

/** The datasets the unsupervised encoders train on: `encoder_datasets` among `datasets`. */
const encoderDatasets = (cfg: Cfg) => cfg.datasets.filter((d) => cfg.encoder_datasets.includes(d));

/** One model of the plan: a model on a dataset's split with a seed (`method` = `<dataset key>/<model>/<split>`). */
interface PlannedModel {
  method: string;
  value: number;
  seed: number;
  dataset: DatasetName;
  model: ModelName;
  split: SplitName;
}

const isOracle = (model: ModelName): model is typeof ORACLES[number] => (ORACLES as readonly string[]).includes(model);

/** What a model predicts from: images, or (the oracles) the factors themselves, negated for the sign flip. */
function modelInput(model: ModelName, dataset: GroundTruthDataset, factors: Factors, rng: Rng): tf.Tensor {
  if (isOracle(model)) {
    const y = normalizedFactors(factors, dataset.factorSizes);
    return tf.tensor2d(model === "oracle" ? y : y.map((v) => -v), [factors.n, dataset.factorSizes.length]);
  }
  return observationsTensor(dataset, factors, rng);
}

function buildModel(model: Exclude<ModelName, SplitEncoderName>, dataset: GroundTruthDataset, rng: Rng): Regressor {
  const outputs = dataset.factorSizes.length;
  if (isOracle(model)) {
    const r = readout(rng, { outputs, inputs: outputs });
    return { params: r.params, predict: (x) => r.fromCodes(x as unknown as tf.Tensor2D) };
  }
  const [size, , channels] = dataset.imageShape;
  return REGRESSORS[model].build(rng, { size: size as 32 | 64, channels, outputs });
}

/** Predictions `[n, k]` of a model for `factors`, in batches so that 10,000 test images fit in memory. */
async function predict(
  model: ModelName,
  regressor: Regressor,
  dataset: GroundTruthDataset,
  factors: Factors,
  rng: Rng,
): Promise<Matrix> {
  const k = dataset.factorSizes.length;
  const [predicted] = await mapInChunks(factors.n, 500, (start, n) => {
    const part = { values: factors.values.subarray(start * k, (start + n) * k), n };
    return [regressor.predict(modelInput(model, dataset, part, rng) as tf.Tensor4D)];
  });
  return { data: Float64Array.from(predicted), rows: factors.n, cols: k };
}

/** How the unsupervised encoders train, from the run's config (App. H.3). */
function encoderConfig(cfg: Cfg): SplitEncoderConfig {
  return {
    latents: cfg.latents,
    steps: cfg.encoder_steps,
    batch: cfg.encoder_batch,
    lr: cfg.encoder_lr,
    beta: cfg.vae_beta,
    adaBeta: cfg.ada_beta,
    gamma: cfg.slow_gamma,
    rate: cfg.slow_rate,
    lapRate: cfg.lap_rate,
    logEvery: cfg.log_every,
    curveEvery: cfg.encoder_curve_every,
    curveSamples: cfg.dci_samples,
  };
}

/** An encoder's DCI disentanglement at its scored steps as one array: steps, then values, `[2, points]`. */
function dciCurve(curve: EncoderScores[]): { data: Float32Array; shape: number[] } {
  const data = new Float32Array(2 * curve.length);
  curve.forEach(({ step, scores }, i) => {
    data[i] = step;
    data[curve.length + i] = scores.dci_disentanglement;
  });
  return { data, shape: [2, curve.length] };
}

/** The evaluation sets every model of a split is scored on: the same images for every model and seed. */
interface SplitEvaluation {
  split: Split;
  test: Factors;
  oneOod: Factors | null;
}

/** The benchmark's plan and the training and scoring of one entry, rebuilt the same way in every worker. */
function benchmark(ctx: RunContext, cfg: Cfg) {
  const datasets = new Map<DatasetName, GroundTruthDataset>();
  const datasetOf = (name: DatasetName) => {
    if (!datasets.has(name)) datasets.set(name, loadDataset(name, { size: cfg.resolution }));
    return datasets.get(name)!;
  };
  const evaluations = new Map<string, SplitEvaluation>();
  const evaluationOf = (datasetName: DatasetName, name: SplitName): SplitEvaluation => {
    const key = `${datasetName}/${name}`;
    let found = evaluations.get(key);
    if (!found) {
      const split = makeSplit(splitDataset(datasetName), name);
      // The same test images for every model and seed of a split; dsprites and dsprites-rot share the factors.
      const rng = Rng.derive(ctx.seed, `evaluation/${splitDataset(datasetName)}/${name}`);
      const oneOod = name === "interpolation" || name === "extrapolation"
        ? sampleSplit(split, "one_ood", cfg.ood_samples, rng)
        : null;
      found = { split, test: sampleSplit(split, "test", cfg.test_samples, rng), oneOod };
      evaluations.set(key, found);
    }
    return found;
  };
  const plan: PlannedModel[] = (cfg.datasets as DatasetName[]).flatMap((dataset) =>
    cfg.models.filter((model) => !isEncoder(model) || cfg.encoder_datasets.includes(dataset)).flatMap((model) =>
      cfg.splits.flatMap((split) =>
        Array.from({ length: isEncoder(model) ? cfg.encoder_seeds : cfg.seeds }, (_, i) => ({
          method: `${datasetKey(dataset)}/${model}/${split}`,
          value: 0,
          seed: ctx.seed + i,
          dataset,
          model: model as ModelName,
          split: split as SplitName,
        }))
      )
    )
  );
  /**
   * Trains the entry's model on the split's training part: a regressor or an oracle directly; an unsupervised
   * encoder, then the readout on its frozen mean (the encoder's scores at each of its scored steps come back).
   */
  const train = async (
    runCtx: RunContext,
    entry: PlannedModel,
    split: Split,
    dataset: GroundTruthDataset,
    evaluate: (regressor: Regressor) => Promise<Record<string, number>>,
  ) => {
    const label = `${entry.method}/seed${entry.seed}`;
    const phase = {
      label,
      batch: cfg.batch,
      lr: cfg.lr,
      batches: Rng.derive(entry.seed, entry.method, "batches"),
      logEvery: cfg.log_every,
      evaluateEvery: cfg.curve_every,
    };
    if (!isEncoder(entry.model)) {
      const model = entry.model;
      const regressor = buildModel(model, dataset, Rng.derive(entry.seed, entry.method, "init"));
      try {
        const last = await trainSplitRegressor(runCtx, {
          ...phase,
          regressor,
          split,
          input: (factors, rng) => modelInput(model, dataset, factors, rng),
          steps: isOracle(model) ? readoutSteps(cfg.readout_epochs, split, cfg.batch) : cfg.steps,
          evaluate: () => evaluate(regressor),
        });
        return { regressor, last, encoder: null, dispose: () => regressor.params.dispose() };
      } catch (error) {
        regressor.params.dispose();
        throw error;
      }
    }
    const encoder = await trainSplitEncoder(
      runCtx,
      entry.model,
      { dataset, datasetName: entry.dataset, split },
      encoderConfig(cfg),
      { label: `${label}/encoder`, seed: entry.seed },
    );
    try {
      const { readout: head, last } = await trainReadout(runCtx, encoder.encoder, dataset, split, {
        ...phase,
        latents: cfg.latents,
        init: Rng.derive(entry.seed, entry.method, "init"),
        epochs: cfg.readout_epochs,
        evaluate: (head) => evaluate(head),
      });
      return {
        regressor: head,
        last,
        encoder,
        dispose: () => {
          head.params.dispose();
          encoder.dispose();
        },
      };
    } catch (error) {
      encoder.dispose();
      throw error;
    }
  };
  const run = async (runCtx: RunContext, entry: PlannedModel, index: number) => {
    const dataset = datasetOf(entry.dataset);
    const { split, test, oneOod } = evaluationOf(entry.dataset, entry.split);
    const k = dataset.factorSizes.length;
    const curveRows = Math.min(cfg.curve_samples, test.n);
    const curveFactors = { values: test.values.subarray(0, curveRows * k), n: curveRows };
    const predictOn = (regressor: Regressor, factors: Factors) =>
      predict(entry.model, regressor, dataset, factors, Rng.derive(entry.seed, "noise"));
    const scoreOn = async (regressor: Regressor, factors: Factors) =>
      r2Scores(await predictOn(regressor, factors), factors.values, dataset.factorSizes);
    const trained = await train(runCtx, entry, split, dataset, async (regressor) => ({
      r2: (await scoreOn(regressor, curveFactors)).r2,
    }));
    try {
      const { regressor, last } = trained;
      const scores = await scoreOn(regressor, test);
      const metrics: Record<string, number> = { r2: scores.r2, loss: last.total };
      dataset.factorNames.forEach((name, j) => metrics[`r2_${name}`] = scores.perFactor[j]);
      const arrays: Record<string, { data: Float32Array; shape: number[] }> = {};
      if (trained.encoder) {
        // The encoder's own terms and scores on training images (DCI, MCC, MIG, ...), and its DCI curve.
        for (const [key, value] of Object.entries(trained.encoder.last)) {
          metrics[key === "total" ? "encoder_loss" : key] = value;
        }
        arrays[`dci/${index}`] = dciCurve(trained.encoder.curve);
      }
      if (oneOod) {
        const pred = await predictOn(regressor, oneOod);
        const { r2Ood, r2Id, ratioMedian, ratioInUnit } = oodAnalysis(pred, oneOod.values, split);
        const scored = { r2_ood: r2Ood, r2_id: r2Id, ratio_median: ratioMedian, ratio_in_unit: ratioInUnit };
        for (const [key, value] of Object.entries(scored)) if (value !== null) metrics[key] = value;
        // Kept for the correlations of OOD errors between models, computed when every model is done.
        arrays[`one_ood/${index}`] = { data: Float32Array.from(pred.data), shape: [pred.rows, pred.cols] };
      }
      return { metrics, arrays };
    } finally {
      trained.dispose();
    }
  };
  return { datasetOf, plan, evaluationOf, run };
}

/** Model `index` of the benchmark, as a worker trains it. */
export const workerModel: WorkerPhase<Cfg, number, StudyModel> = planWorker((ctx: RunContext, cfg: Cfg) => {
  const { plan, run } = benchmark(ctx, cfg);
  return { plan, run };
});

/**
 * The run's final metrics: per dataset, model and split the mean over seeds
 * (`dsprites_rot/cnn/extrapolation/r2`, `…_sd` with several seeds), per
 * dataset the OOD-error correlations between the first seeds of CNN and MLP,
 * and the encoders' DCI–R² correlations.
 */
function finalMetrics(
  models: { method: string; value: number; seed: number; metrics: Record<string, number> }[],
  arrays: Record<string, { data: Float32Array; shape: number[] }>,
  plan: PlannedModel[],
  evaluationOf: (dataset: DatasetName, name: SplitName) => SplitEvaluation,
  ctx: RunContext,
): Record<string, number> {
  const metrics = { ...seedSummary(models), ...dciR2Correlations(ctx, models, arrays, plan) };
  const asMatrix = (a: typeof arrays[string]) => ({ data: a.data, rows: a.shape[0], cols: a.shape[1] });
  for (const dataset of new Set(plan.map((p) => p.dataset))) {
    for (const splitName of ["interpolation", "extrapolation"] as const) {
      const first = (model: ModelName) =>
        plan.findIndex((p) =>
          p.dataset === dataset && p.model === model && p.split === splitName && p.seed === plan[0].seed
        );
      const [cnn, mlp] = [first("cnn"), first("mlp")];
      if (cnn < 0 || mlp < 0) continue;
      const { split, oneOod } = evaluationOf(dataset, splitName);
      const [a, b] = [asMatrix(arrays[`one_ood/${cnn}`]), asMatrix(arrays[`one_ood/${mlp}`])];
      const rho = errorCorrelations(a, b, oneOod!.values, split);
      const d = datasetKey(dataset);
      metrics[`${d}/${splitName}/error_rho_cnn_mlp`] = rho.between;
      metrics[`${d}/${splitName}/error_rho_truth_cnn`] = rho.truthA;
      metrics[`${d}/${splitName}/error_rho_truth_mlp`] = rho.truthB;
    }
  }
  return metrics;
}

/** Where the unsupervised encoders of a run depart from Schott2022 App. H.3 (none listed when it trains none). */
function encoderDeviations(cfg: Cfg): string[] {
  if (!cfg.models.some(isEncoder)) return [];
  const out: string[] = [];
  const budget = [
    cfg.encoder_steps !== 500_000 ? `${cfg.encoder_steps.toLocaleString("en")} steps (App. H.3: 500,000)` : "",
    cfg.encoder_lr !== 1e-4 ? `Adam ${cfg.encoder_lr} (1e-4)` : "",
    cfg.encoder_batch !== 64 ? `${cfg.encoder_batch} images or pairs per step (64)` : "",
    cfg.resolution !== 64 ? `${cfg.resolution}×${cfg.resolution} images (64×64)` : "",
    cfg.latents !== 10 ? `${cfg.latents} latents (10)` : "",
    cfg.encoder_seeds !== 10 ? `${cfg.encoder_seeds} seed(s) per encoder and split (10)` : "",
    cfg.readout_epochs !== 8 ? `readout ${cfg.readout_epochs} epochs (8)` : "",
  ].filter((s) => s !== "");
  if (budget.length > 0) out.push(`unsupervised encoders: ${budget.join(", ")}`);
  out.push(
    `encoder hyperparameters fixed (β-VAE β = ${cfg.vae_beta}, Ada-GVAE β = ${cfg.ada_beta}, SlowVAE γ = ` +
      `${cfg.slow_gamma}, λ = ${cfg.slow_rate}), not selected by DCI on the training split from Locatello's grid ` +
      "and γ ∈ {1, 5, …, 25}",
    "pair models: each pair is redrawn until both frames are training points, so the first frame is uniform over " +
      "the training points whose transition stays in the training part; Ada-GVAE's pairs change exactly one " +
      "factor, drawn uniformly among those with more than one value",
    `encoder scores (DCI, MCC, MIG, SAP, modularity) on ${cfg.dci_samples.toLocaleString("en")} training-part ` +
      "images, fitted on 80% and scored on 20%; DCI's trees are the toolkit's gradient boosting",
    ...(cfg.readout_epochs >= 1
      ? [
        "readout: the training part's codes are encoded once (the encoder is frozen and the images are functions " +
        "of their factors), then each batch reads its rows; the batches are the same draws",
      ]
      : []),
    "DCI–R² correlation (Schott2022 §5.4) pooled over every encoder, split, dataset and seed of the run; " +
      "Schott2022's per-split p-values suggest per-split correlations too, given as <dataset>/<split>/dci_r2_*",
  );
  return out;
}

/** Pearson and Spearman correlation of two equally long lists (at least 2). */
function pearsonSpearman(x: ArrayLike<number>, y: ArrayLike<number>): { pearson: number; spearman: number } {
  const column = (v: ArrayLike<number>) => ({ data: Float64Array.from(v), rows: v.length, cols: 1 });
  const [a, b] = [column(x), column(y)];
  return { pearson: correlationMatrix(a, b)[0][0], spearman: correlationMatrix(a, b, "spearman")[0][0] };
}

/**
 * Schott2022 §5.4's DCI–R² correlation: each encoder's DCI disentanglement (on its
 * split's training images, at the end of its training) against its
 * readout's test R², Pearson and Spearman, pooled over every encoder, split,
 * dataset and seed of the run (`dci_r2_pearson`, `dci_r2_spearman`), and
 * per dataset and split (`<dataset>/<split>/dci_r2_*`), where there are
 * {@linkcode MIN_CORRELATION_POINTS} points or more. The pooled pair is
 * logged at each step the encoders were scored at, from their DCI at that
 * step: its learning curve, whose last point is the final value.
 */
function dciR2Correlations(
  ctx: RunContext,
  models: { metrics: Record<string, number> }[],
  arrays: Record<string, { data: Float32Array; shape: number[] }>,
  plan: PlannedModel[],
): Record<string, number> {
  const points = plan.flatMap((entry, i) => {
    if (!isEncoder(entry.model)) return [];
    const { data, shape } = arrays[`dci/${i}`];
    const length = shape[1];
    return [{ entry, steps: data.subarray(0, length), dci: data.subarray(length), r2: models[i].metrics.r2 }];
  });
  const metrics: Record<string, number> = {};
  const correlate = (prefix: string, group: typeof points) => {
    if (group.length < MIN_CORRELATION_POINTS) return;
    const { pearson, spearman } = pearsonSpearman(group.map((p) => p.dci.at(-1)!), group.map((p) => p.r2));
    metrics[`${prefix}dci_r2_pearson`] = pearson;
    metrics[`${prefix}dci_r2_spearman`] = spearman;
  };
  correlate("", points);
  for (const dataset of new Set(points.map((p) => p.entry.dataset))) {
    for (const split of SPLIT_ORDER) {
      const group = points.filter((p) => p.entry.dataset === dataset && p.entry.split === split);
      correlate(`${datasetKey(dataset)}/${split}/`, group);
    }
  }
  if (points.length >= MIN_CORRELATION_POINTS) {
    // Every encoder trains the same steps and is scored at the same ones.
    points[0].steps.forEach((step, j) => {
      const { pearson, spearman } = pearsonSpearman(points.map((p) => p.dci[j]), points.map((p) => p.r2));
      ctx.log(step, { dci_r2_pearson: pearson, dci_r2_spearman: spearman });
    });
  }
  return metrics;
}

/**
 * The benchmark's run: every model of the plan, `cfg.workers` at a time (in workers through
 * {@linkcode workerModel}), then the final metrics and the details of the summary.
 */
export async function runGenBenchmark(ctx: RunContext, cfg: Cfg): Promise<RunResult> {
  const { datasetOf, plan, evaluationOf, run } = benchmark(ctx, cfg);
  const { models, arrays } = await runModelPlan(ctx, plan, (entry, index) => run(ctx, entry, index), {
    module: import.meta.url,
    exportName: "workerModel",
    cfg,
    workers: cfg.workers,
  });
  return {
    metrics: finalMetrics(models, arrays, plan, evaluationOf, ctx),
    details: {
      datasets: Object.fromEntries(cfg.datasets.map((name) => [name, datasetOf(name).description])),
      models,
      model_notes: MODEL_NOTES,
      encoders: Object.fromEntries(
        cfg.models.filter(isEncoder).map((name) => [name, SPLIT_ENCODERS[name].description]),
      ),
      deviations: [
        ...(cfg.datasets.includes("dsprites-rot")
          ? ["dsprites-rot: orientation index k drawn at k·90°/40 (App. E does not say how the grid was adapted)"]
          : []),
        "oracle readout input: the k normalized factors (or their negatives), not a 10-dimensional code",
        "Fig. 17's correlations are read as errors f − y of the OOD factor, pooled over factors",
        ...encoderDeviations(cfg),
      ],
    },
  };
}
