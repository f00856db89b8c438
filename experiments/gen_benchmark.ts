/**
 * The in-domain generalization benchmark of Schott et al. 2022 (Paper B,
 * 000_306f4209a39c5a17.md §2.5, §3.3, §5, §7.2): supervised regressors of
 * the factors, the readout oracle, and unsupervised encoders (β-VAE,
 * SlowVAE, PCL, Ada-GVAE) with the readout on their frozen mean, trained on
 * the training part of a random, composition, interpolation or
 * extrapolation split and scored by R² on the test part; on D_one-ood the
 * OOD factor's R² against the others', the "towards the mean" ratio (Eq. 2)
 * and the correlation of OOD errors between models (Fig. 17); and the
 * correlation of the encoders' DCI disentanglement with their R² (§5.4).
 */
import * as tf from "@tensorflow/tfjs";
import { choices, type ConfigOf, integer, integerChoice, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { correlationMatrix, type Matrix } from "../lib/core/matrix.ts";
import { Rng } from "../lib/core/rng.ts";
import { PUBLISHED_R2, STAND_IN, UNTRAINED_R2 } from "../lib/data/gen_benchmark_tables.ts";
import type { Factors, GroundTruthDataset } from "../lib/data/ground_truth.ts";
import { loadDataset } from "../lib/data/registry.ts";
import { makeSplit, sampleSplit, type Split, SPLIT_NAMES, type SplitDataset } from "../lib/data/splits.ts";
import { constantR2, errorCorrelations, oodAnalysis, r2Scores } from "../lib/metrics/r2.ts";
import { mapInChunks } from "../lib/models/vae.ts";
import { MODEL_NOTES, readout, type Regressor, REGRESSOR_NAMES, REGRESSORS } from "../lib/models/regressors.ts";
import { planWorker, runModelPlan } from "../lib/train/model_plan.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import { seedSummary } from "../lib/train/pair_study.ts";
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
} from "../lib/train/split_encoders.ts";

const SOURCE = "000_306f4209a39c5a17.md §2.5, §3.3 (Paper B); targets Tables 5–7, App. A Table 1, §5.2–5.4";

/** The oracles: the readout MLP on the ground-truth factors, or on their negatives (App. A). */
const ORACLES = ["oracle", "oracle_flip"] as const;
const MODEL_NAMES = [...REGRESSOR_NAMES, ...ORACLES, ...SPLIT_ENCODER_NAMES] as const;
const DATASETS = ["dsprites-rot", "dsprites", "shapes3d"] as const;
type DatasetName = typeof DATASETS[number];
/** The dataset the claims are checked on: Paper B's App. E variant, the one §7.2 plans for CPU scale. */
const CLAIMS_DATASET = "dsprites_rot";
type ModelName = typeof MODEL_NAMES[number];
type SplitName = Split["name"];

const config = {
  datasets: choices(
    ["dsprites-rot"],
    DATASETS,
    "images and factor grids (dsprites-rot: orientation in [0°, 90°), App. E)",
  ),
  models: choices(
    ["cnn", "mlp", "oracle", "oracle_flip"],
    MODEL_NAMES,
    "models trained on every split (beta_vae, slow_vae, pcl, ada_gvae: an unsupervised encoder + the readout)",
  ),
  splits: choices([...SPLIT_NAMES], SPLIT_NAMES, "splits of Paper B Tables 2–3 (random: seed 0, Table 4's fraction)"),
  seeds: integer(1, "seeds per supervised model or oracle and split: --seed, --seed + 1, …", { min: 1, max: 100 }),
  encoder_seeds: integer(1, "seeds per unsupervised encoder and split (Paper B: 10)", { min: 1, max: 100 }),
  encoder_datasets: choices([...DATASETS], DATASETS, "of the datasets, those the unsupervised encoders train on"),
  resolution: integerChoice(64, [32, 64], "image side (32: 2×2 area-averaged, the CPU tier)"),
  steps: integer(500_000, "Adam steps per model (App. H.3: 500,000)", { min: 1, max: 10_000_000 }),
  batch: integer(64, "images per step (App. H.3: 64), drawn from the split's training part", { min: 1, max: 4096 }),
  lr: real(5e-4, "Adam learning rate (App. H.3: 5e-4)", { min: 0 }),
  readout_epochs: real(8, "the readouts' and oracles' training, in epochs of the training part (App. H.3: 8)", {
    min: 0.001,
    max: 1_000,
  }),
  encoder_steps: integer(500_000, "Adam steps per unsupervised encoder (App. H.3: 500,000)", {
    min: 1,
    max: 10_000_000,
  }),
  encoder_batch: integer(64, "images per step of the β-VAE, pairs per step of the pair models (App. H.3: 64)", {
    min: 2,
    max: 2_048,
  }),
  encoder_lr: real(1e-4, "Adam learning rate of the unsupervised encoders (App. H.3: 1e-4)", { min: 0, max: 1 }),
  latents: integer(10, "code size of the unsupervised encoders, the readout's input (App. H.3: 10)", {
    min: 1,
    max: 64,
  }),
  vae_beta: real(4, "β of the β-VAE (Paper B selects it from Locatello's grid by DCI; fixed here)", { min: 0 }),
  ada_beta: real(4, "β of Ada-GVAE (as vae_beta)", { min: 0 }),
  slow_gamma: real(10, "SlowVAE's transition-prior weight γ (Paper B selects from 1–25 by DCI; fixed here)", {
    min: 0,
  }),
  slow_rate: real(6, "SlowVAE's Laplace rate λ (Paper B: 6)", { min: 0.01 }),
  lap_rate: real(1, "LAP data rate of SlowVAE's and PCL's pairs: scale ln(n)/λ per factor (Paper A App. D.2)", {
    min: 0.01,
  }),
  encoder_curve_every: integer(0, "steps between the encoders' DCI scores (0: the end only)", {
    min: 0,
    max: 10_000_000,
  }),
  dci_samples: integer(10_000, "training images each DCI score of an encoder reads (80% fit, 20% scored)", {
    min: 20,
    max: 50_000,
  }),
  test_samples: integer(10_000, "test images scored, drawn from the test part", { min: 10, max: 1_000_000 }),
  ood_samples: integer(10_000, "D_one-ood images scored (interpolation, extrapolation)", { min: 10, max: 1_000_000 }),
  log_every: integer(100, "steps between logged losses", { min: 1, max: 10_000_000 }),
  curve_every: integer(500, "steps between test R² points of the learning curve (0: the end only)", {
    min: 0,
    max: 10_000_000,
  }),
  curve_samples: integer(1_000, "test images of each curve point (the first of the scored ones)", {
    min: 10,
    max: 1_000_000,
  }),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

/** The metric prefix of a dataset: `dsprites_rot/cnn/random/r2`. */
const datasetKey = (dataset: string) => dataset.replace("-", "_");
/** The split grid of a dataset: dsprites-rot keeps dSprites' indices (App. E, drawn on a quarter turn). */
const splitDataset = (dataset: string): SplitDataset => dataset === "shapes3d" ? "shapes3d" : "dsprites";

const SPLIT_ORDER = ["random", "composition", "interpolation", "extrapolation"] as const;

/** What trivial models score on a model's test R² on a split: the constants of {@linkcode constantR2}, untrained. */
function r2Nulls(dataset: DatasetName, key: string, split: SplitName): Target["nulls"] {
  const c = constantR2(splitDataset(dataset), split);
  const constants = split === "random"
    ? [{ value: 0, model: "mean predictor (training, grid or test mean: 0 on an i.i.d. split)" }]
    : [
      { value: 0, model: "R² 0, the textbook mean predictor's score" },
      { value: c.train, model: "the training part's mean (an MSE regressor blind to its input), exact on the grid" },
      { value: c.grid, model: "the grid's mean 0.5 per factor, exact" },
      { value: c.best, model: "the best constant, the test part's own mean, exact" },
    ];
  const untrained = UNTRAINED_R2[key][SPLIT_ORDER.indexOf(split)];
  return [...constants, { value: untrained, model: "untrained network, 1 Adam step (measured, smoke preset)" }];
}

/**
 * An R² target's tolerance: the table's s.d. over seeds, at least 0.01 (one R² point: the tables print s.d. 0.0
 * where the seeds agree), at most 0.05 on the random split and 0.1 on the others, and half the way to the nearest null.
 */
function r2Tolerance(paper: number, sd: number, split: SplitName, nulls: Target["nulls"], table: string) {
  const cap = split === "random" ? 0.05 : 0.1, spread = `${table}: s.d. ${sd.toFixed(3)} over seeds`;
  return [
    { value: Math.max(sd, 0.01), why: spread + (sd < 0.01 ? "; rule: at least 0.01" : "") },
    { value: cap, why: `${spread}; rule: at most ${cap} on this split` },
    ...nulls.map((n) => ({ value: Math.abs(paper - n.value) / 2, why: `rule: half the way to the null ${n.model}` })),
  ].reduce((a, b) => b.value < a.value ? b : a);
}

const standIn = (dataset: DatasetName, model: ModelName) =>
  `${isEncoder(model) ? `${model} + readout` : `the paper's ${model.toUpperCase()}`} on ${STAND_IN[dataset]} at ` +
  `32×32: ${STAND_IN[isEncoder(model) ? "encoder" : dataset === "dsprites-rot" ? "quick" : "smoke"]}`;

const isEncoder = (model: string): model is SplitEncoderName => model in SPLIT_ENCODERS;

/** The fewest (encoder, split) points a DCI–R² correlation is computed from. */
const MIN_CORRELATION_POINTS = 3;

/** Encoders × splits × datasets × seeds of a config: the points of the DCI–R² correlation. */
const encoderEntries = (cfg: Cfg) =>
  cfg.models.filter(isEncoder).length * cfg.splits.length * encoderDatasets(cfg).length * cfg.encoder_seeds;

/** The datasets the unsupervised encoders train on: `encoder_datasets` among `datasets`. */
const encoderDatasets = (cfg: Cfg) => cfg.datasets.filter((d) => cfg.encoder_datasets.includes(d));

const targets: Target<Cfg>[] = [
  ...PUBLISHED_R2.flatMap(([name, modelName, table, cells]) =>
    cells.split(" ").flatMap((cell, i): Target<Cfg>[] => {
      const [dataset, model, split] = [name as DatasetName, modelName as ModelName, SPLIT_ORDER[i]];
      const [paper, sd] = cell.split("±").map((v) => Number((Number(v) / 100).toFixed(4)));
      const key = `${datasetKey(dataset)}/${model}`, nulls = r2Nulls(dataset, key, split);
      // A published R² no higher than the best constant's is a score some constant predictor reaches: no target
      // (Table 6's MLP, BetaVAE and Ada-GVAE on composition; a claim compares them with the random split instead).
      if (paper <= constantR2(splitDataset(dataset), split).best) return [];
      const { value: tolerance, why } = r2Tolerance(paper, sd, split, nulls, table);
      return [{
        metric: `${key}/${split}/r2`,
        paper,
        source: `000_306f4209a39c5a17.md ${table}, ${split}`,
        tolerance,
        direction: "match",
        toleranceSource: why,
        nulls,
        kind: "analogue",
        standIn: standIn(dataset, model),
        appliesTo: (cfg) =>
          cfg.datasets.includes(dataset) && cfg.models.includes(model) && cfg.splits.includes(split) &&
          (!isEncoder(model) || cfg.encoder_datasets.includes(dataset)),
        curve: `${key}/${split}/*/r2`,
      }];
    })
  ),
  // App. A Table 1: 1.000 everywhere on dSprites and Shapes3D but dSprites extrapolation with the sign flip (0.999).
  // The oracle reads factors, not images: dsprites-rot shares dSprites' row, and the rendering does not matter.
  ...DATASETS.flatMap((dataset) =>
    ORACLES.flatMap((oracle) =>
      SPLIT_ORDER.map((split): Target<Cfg> => ({
        metric: `${datasetKey(dataset)}/${oracle}/${split}/r2`,
        paper: oracle === "oracle_flip" && split === "extrapolation" && dataset !== "shapes3d" ? 0.999 : 1.0,
        source: "000_306f4209a39c5a17.md App. A Table 1 (oracle readout on the ground truth)",
        tolerance: 0.01,
        direction: "higher",
        toleranceSource: "rule: App. A's own bar, R² ≥ 0.99 on every split (0.01 below 1.000)",
        nulls: r2Nulls(dataset, `${datasetKey(dataset)}/${oracle}`, split),
        kind: "like-for-like",
        standIn: STAND_IN.oracle,
        appliesTo: (cfg) => cfg.datasets.includes(dataset) && cfg.models.includes(oracle) && cfg.splits.includes(split),
        curve: `${datasetKey(dataset)}/${oracle}/${split}/*/r2`,
      }))
    )
  ),
  // §5.4: the correlation of the encoders' DCI disentanglement with their readout's test R², pooled over every
  // encoder, split, dataset and seed of the run; its learning curve: each encoder's DCI at every scored step.
  ...([["dci_r2_pearson", 0.63], ["dci_r2_spearman", 0.67]] as const).map(([metric, paper]): Target<Cfg> => ({
    metric,
    paper,
    source: "000_306f4209a39c5a17.md §5.2 (Paper B §5.4), DCI disentanglement vs downstream R²: Pearson 0.63, " +
      "Spearman 0.67",
    tolerance: 0.1,
    direction: "match",
    toleranceSource: "rule: 0.1 on a correlation (the document gives no spread), under half the way to ρ 0",
    nulls: [{ value: 0, model: "DCI unrelated to R² (ρ 0)" }],
    kind: "analogue",
    standIn: STAND_IN.dci,
    appliesTo: (cfg) => encoderEntries(cfg) >= MIN_CORRELATION_POINTS,
  })),
];

/** The metrics `keys` (under CLAIMS_DATASET unless they start with "/"), or undefined unless all are present. */
const read = (m: Record<string, number>, keys: string[]) => {
  const values = keys.map((k) => m[k.startsWith("/") ? k.slice(1) : `${CLAIMS_DATASET}/${k}`]);
  return values.every((v) => v !== undefined) ? values : undefined;
};

// Each claim needs the models to have learned (an R² floor, or a margin between R²s): an untrained network or a
// constant predictor would otherwise pass the ratio, error-correlation and D_one-ood claims.
const claims: Claim<Cfg>[] = [
  {
    text: "dsprites-rot, CNN and MLP: random-split R² ≥ 0.8; random − composition ≥ 0.3 and random − extrapolation " +
      "≥ 0.15 for both (published 0.467 and 0.216 CNN, 1.069 and 0.546 MLP); MLP random − interpolation ≥ 0.1 (0.214)",
    source: "000_306f4209a39c5a17.md §5.1, Table 6 (App. E) rows CNN and MLP",
    holds: (m) => {
      const v = read(m, ["cnn", "mlp"].flatMap((model) => SPLIT_ORDER.map((split) => `${model}/${split}/r2`)));
      if (!v) return undefined;
      const [cr, cc, , ce, mr, mc, mi, me] = v;
      return Math.min(cr, mr) >= 0.8 && Math.min(cr - cc, mr - mc) >= 0.3 && Math.min(cr - ce, mr - me) >= 0.15 &&
        mr - mi >= 0.1;
    },
  },
  {
    text: "dsprites-rot, MLP, β-VAE and Ada-GVAE (those run): composition R² below the random split's by > 0.5 " +
      "(published 1.069, 0.900, 0.905, s.d. ≤ 0.043; their composition R² −0.088, 0.043, 0.093 lie under the best " +
      "constant's 0.110, so they are no targets)",
    source: "000_306f4209a39c5a17.md §5.1, Table 6 (App. E) rows MLP, BetaVAE and Ada-GVAE, random and composition",
    holds: (m) => {
      const pairs = ["mlp", "beta_vae", "ada_gvae"].map((x) => read(m, [`${x}/random/r2`, `${x}/composition/r2`]));
      const gaps = pairs.flatMap((v) => v ? [v[0] - v[1]] : []);
      return gaps.length === 0 ? undefined : gaps.every((gap) => gap > 0.5);
    },
  },
  {
    text: "dsprites-rot extrapolation, CNN, D_one-ood: random-split R² ≥ 0.8, the in-distribution factors' R² within " +
      "0.1 of it and above the OOD factor's by ≥ 0.2",
    source: "000_306f4209a39c5a17.md §5.2, Fig. 5 (ID factors near the random split, the OOD factor far lower); " +
      "Table 6 (App. E) row CNN",
    holds: (m) => {
      const v = read(m, ["cnn/random/r2", "cnn/extrapolation/r2_id", "cnn/extrapolation/r2_ood"]);
      return v && v[0] >= 0.8 && v[1] >= v[0] - 0.1 && v[1] - v[2] >= 0.2;
    },
  },
  {
    text: "predictions regress towards the training mean (dsprites-rot, CNN, extrapolation): with test R² ≥ 0.5 " +
      "(published 0.784; the training-mean predictor, r = 0, scores −0.388), ≥ 70% of the ratios r (Eq. 2) in " +
      "[0, 1] and median r < 1",
    source: "000_306f4209a39c5a17.md §5.3, Eq. 2, Fig. 6; Table 6 (App. E) row CNN",
    holds: (m) => {
      const v = read(m, ["r2", "ratio_in_unit", "ratio_median"].map((k) => `cnn/extrapolation/${k}`));
      return v && v[0] >= 0.5 && v[1] >= 0.7 && v[2] < 1;
    },
  },
  {
    text: "dsprites-rot extrapolation, CNN and MLP each with test R² ≥ 0.2 (published 0.784, 0.435; constants' " +
      "errors correlate perfectly): OOD-factor errors correlate between them (ρ ≥ 0.57) and against the true " +
      "value (ρ ≤ −0.48) (Fig. 17 read as errors f − y)",
    source: "000_306f4209a39c5a17.md §5.3, Fig. 17; Table 6 (App. E) rows CNN and MLP",
    holds: (m) => {
      const rho = ["cnn_mlp", "truth_cnn", "truth_mlp"].map((k) => `extrapolation/error_rho_${k}`);
      const v = read(m, ["cnn/extrapolation/r2", "mlp/extrapolation/r2", ...rho]);
      return v && Math.min(v[0], v[1]) >= 0.2 && v[2] >= 0.57 && Math.max(v[3], v[4]) <= -0.48;
    },
  },
  {
    text: "dsprites-rot extrapolation: SlowVAE or PCL (+ readout) exceeds the β-VAE (+ readout) by > 0.2 R² " +
      "(published 0.771 ± 0.027, 0.775 ± 0.011 vs 0.295 ± 0.084)",
    source: "000_306f4209a39c5a17.md Table 6 (App. E) rows SlowVAE, PCL and BetaVAE, extrapolation; §7.2 item 4",
    holds: (m) => {
      const beta = read(m, ["beta_vae/extrapolation/r2"]);
      const pairs = ["slow_vae", "pcl"].flatMap((model) => read(m, [`${model}/extrapolation/r2`]) ?? []);
      return beta === undefined || pairs.length === 0 ? undefined : Math.max(...pairs) - beta[0] > 0.2;
    },
  },
  {
    text: "the encoders' DCI disentanglement correlates positively with their downstream R²: Pearson and Spearman " +
      "above the one-sided 5% chance level for the run's n points, tanh(1.645 / √(n − 3)) (Fisher z)",
    source: "000_306f4209a39c5a17.md §5.2 (Paper B §5.4): Pearson 0.63, Spearman 0.67, p < 0.01",
    holds: (m, cfg) => {
      const v = read(m, ["/dci_r2_pearson", "/dci_r2_spearman"]), n = encoderEntries(cfg);
      return v && n > 3 ? v.every((r) => r > Math.tanh(1.645 / Math.sqrt(n - 3))) : undefined;
    },
  },
  {
    text: "the readout oracles reach R² ≥ 0.99 on every split",
    source: "000_306f4209a39c5a17.md App. A Table 1 (all rows)",
    holds: (m) => {
      const oracle = Object.entries(m).filter(([k]) => /^[a-z0-9_]+\/oracle(_flip)?\/[a-z]+\/r2$/.test(k));
      return oracle.length === 0 ? undefined : oracle.every(([, v]) => v >= 0.99);
    },
  },
];

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
export const workerModel = planWorker((ctx: RunContext, cfg: Cfg) => {
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

/** Where the unsupervised encoders of a run depart from Paper B App. H.3 (none listed when it trains none). */
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
    "DCI–R² correlation (§5.4) pooled over every encoder, split, dataset and seed of the run; Paper B's per-split " +
      "p-values suggest per-split correlations too, given as <dataset>/<split>/dci_r2_*",
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
 * §5.4's DCI–R² correlation: each encoder's DCI disentanglement (on its
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

/** Regressors, oracles and unsupervised encoders with a readout on the four splits of Paper B, scored by R². */
export const experiment = defineExperiment({
  name: "gen-benchmark",
  description:
    "In-domain generalization (Paper B): regressors on random/composition/interpolation/extrapolation splits",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      datasets: [...DATASETS],
      resolution: 32,
      models: ["cnn", "mlp", "oracle", "oracle_flip", ...SPLIT_ENCODER_NAMES],
      steps: 10,
      readout_epochs: 0.005,
      test_samples: 256,
      ood_samples: 256,
      log_every: 5,
      curve_every: 5,
      curve_samples: 64,
      // The encoders on dsprites-rot only, where Table 6's targets are: 16 of them, not 48.
      encoder_datasets: ["dsprites-rot"],
      encoder_steps: 2,
      encoder_batch: 4,
      encoder_curve_every: 1,
      dci_samples: 30,
    },
    quick: {
      resolution: 32,
      models: ["cnn", "mlp", "oracle", "oracle_flip"],
      steps: 6_000,
      readout_epochs: 2,
      test_samples: 5_000,
      ood_samples: 5_000,
      log_every: 100,
      curve_every: 500,
      curve_samples: 1_000,
      workers: 2,
    },
    // Where quick stops: the β-VAE and SlowVAE encoders + readout on dsprites-rot extrapolation (Table 6) and random.
    long: {
      resolution: 32,
      models: ["beta_vae", "slow_vae"],
      splits: ["random", "extrapolation"],
      encoder_seeds: 2,
      // 64 images a step for both models: SlowVAE's 32 pairs are Paper A's batch (Paper B's 64 pairs cost twice).
      encoder_steps: 5_000,
      encoder_batch: 32,
      encoder_lr: 5e-4,
      encoder_curve_every: 1_000,
      dci_samples: 5_000,
      readout_epochs: 8,
      test_samples: 5_000,
      ood_samples: 5_000,
      log_every: 100,
      curve_every: 5_000,
      curve_samples: 1_000,
      workers: 2,
    },
    paper: {
      datasets: [...DATASETS],
      models: [...MODEL_NAMES],
      seeds: 3,
      encoder_seeds: 10,
    },
  },
  presetLimits: {
    quick: "6,000 steps per regressor at 32×32 against App. H.3's 500,000 at 64×64, the oracles 2 epochs of " +
      "the training part against 8, one seed, dsprites-rot only, no encoders. Measured at commit 89574d8 (2,025 s " +
      "with 2 workers while other runs kept the load of the 2 cores near 5.5; again 2,064 s at 8638f4d with the load " +
      "near 3.5; 1,391 s, within the 25-minute budget, at 45cd1ee with the run's process group favoured by the " +
      "scheduler over the other work that kept the load near 6; 3,000 steps took 1,074 s at load ≈ 6 " +
      "and left the CNN's random-split R² 0.968 below its interpolation R² 0.970, both still rising): the OOD errors " +
      "anti-correlate with the truth less than published (ρ −0.329 CNN, −0.460 MLP against ≤ −0.48)",
    long: "dsprites-rot only: the β-VAE and SlowVAE (+ readout) on the random and extrapolation splits, 2 seeds, " +
      "8 encoders of 5,000 steps at 32×32 (Adam 5e-4, 64 images or 32 pairs a step) against App. H.3's 500,000 " +
      "at 64×64 (Adam 1e-4, 64 images or 64 pairs) and 10 seeds; readout 8 epochs as App. H.3; DCI on 5,000 " +
      "training images. Budget measured over 300 steps with 2 workers on 2 shared cores: β-VAE ≈ 0.33 s/step, " +
      "SlowVAE ≈ 0.41 s/step, each DCI score ≈ 30 s, the readout ≈ 6 min (the training part encoded once, " +
      "then 30,000 steps), so about 2.6 h. Not run to its end: no Table 6 or DCI–R² value measured with it yet",
    paper: "estimated, not run: 36 runs (3 datasets × 4 splits × 3 seeds) of 500,000 steps per regressor at 64×64; " +
      "seconds per step measured over 40 steps on 2 shared cores at commit 89574d8 (CNN 0.45, MLP 0.031, CoordConv " +
      "0.57, SetEncoder 1.67, ResNet 5.6) give ≈ 1,730 core-days for the five regressors (ResNet 1,170 of them), " +
      "plus 480 encoder runs not timed at 64×64; on a GPU not measured",
  },
  targets,
  claims,
  async run(ctx, cfg) {
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
        datasets: Object.fromEntries(cfg.datasets.map((name) => [name, datasetOf(name as DatasetName).description])),
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
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
