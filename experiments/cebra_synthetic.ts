/**
 * CEBRA-Behavior on the pi-VAE synthetic spikes (Schneider2023 Ch. 7, App. F; Fig. 7.1b):
 * a label u ~ U[0, 2π) drives a 2-D latent z, a fixed RealNVP flow maps it to the Poisson rates of 100 neurons
 * (lib/data/pivae_synthetic.ts). CEBRA (offset1-model-mse, euclidean, `delta` conditional δ 0.1, batch 512, lr
 * 1e-4) is trained on the first 80 % of the samples with u as its continuous label, once per model seed, and PCA
 * (2 components) on the same rows is the baseline. The reconstruction score is the R² of a linear regression from
 * an embedding to the true z (Schneider2023 Ch. 7), on the held-out 20 % (fit and scored there, sklearn
 * `LinearRegression.score`); the in-sample score on the training rows is reported beside it. The thesis gives the
 * ordering (CEBRA above the other methods, 100 seeds), not a number: this run has claims only.
 */
import { choice, type ConfigOf, integer, real } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli } from "../lib/core/experiment.ts";
import type { Matrix } from "../lib/core/matrix.ts";
import { Rng } from "../lib/core/rng.ts";
import { fitWithSnapshots } from "../lib/contrastive/cebra_snapshots.ts";
import { pivaeSynthetic } from "../lib/data/pivae_synthetic.ts";
import { linearR2 } from "../lib/ml/linear_regression.ts";
import { fitPca } from "../lib/ml/pca.ts";
import { median } from "../lib/metrics/study.ts";
import { runPhasesOn, type WorkerPhase, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "Schneider2023 Ch. 7, App. F (Fig. 7.1b)";

const config = {
  samples: integer(15_000, "time points of the pi-VAE data (CEBRA's generate_synthetic_data.py --n-samples)", {
    min: 100,
    max: 1_000_000,
  }),
  neurons: integer(100, "neurons: the width of the flow, even (the thesis: 100)", { min: 4, max: 10_000 }),
  train_fraction: real(0.8, "first share of the samples CEBRA and PCA are fit on; the rest is held out", {
    min: 0.05,
    max: 0.95,
  }),
  model: choice("offset1-model-mse", ["offset1-model-mse", "offset1-model"], "CEBRA encoder (one sample per window)"),
  distance: choice("euclidean", ["euclidean", "cosine"], "InfoNCE similarity (Schneider2023 Ch. 7 Methods: euclidean)"),
  delta: real(0.1, "σ of the delta conditional: the positive is the sample whose u is nearest u_ref + N(0, δ²)", {
    min: 1e-6,
    max: 100,
  }),
  output_dimension: integer(2, "embedding dimension (the latent is 2-D)", { min: 1, max: 64 }),
  hidden: integer(32, "hidden units of offset1-model (the -mse model's widths are 30E, 30E, 10E)", {
    min: 2,
    max: 4_096,
  }),
  batch: integer(512, "references (and negatives) per step", { min: 2, max: 100_000 }),
  lr: real(1e-4, "Adam learning rate (Schneider2023 Ch. 7 Methods: 1e-4)", { min: 1e-8, max: 1 }),
  steps: integer(3_000, "Adam steps per model (the thesis: a few thousand)", { min: 1, max: 10_000_000 }),
  seeds: integer(5, "CEBRA models on the run's data, each with a seed of its own (Fig. 7.1b: 100)", {
    min: 1,
    max: 10_000,
  }),
  pca_components: integer(2, "components of the PCA baseline", { min: 1, max: 10_000 }),
  eval_every: integer(250, "steps between logged reconstruction scores (the learning curve)", {
    min: 1,
    max: 10_000_000,
  }),
  log_every: integer(25, "steps between logged mean losses", { min: 1, max: 10_000_000 }),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

const has = (m: Record<string, number>, ...keys: string[]) => keys.every((k) => m[k] !== undefined);

// Fig. 7.1b ranks CEBRA-Behavior above pi-VAE, t-SNE, UMAP and autoLFADS (100 seeds each) and gives no number, and
// PCA is not among its methods: the claim's margin is the run's own seed noise, the range of CEBRA's R² over its
// model seeds (max − min), not a published gap.
const claims: Claim<Cfg>[] = [
  {
    text: "CEBRA-Behavior reconstructs the latent better than PCA: the median R² over seeds exceeds PCA's R² by more " +
      "than the range of CEBRA's R² over its seeds (needs ≥ 2 seeds; no published margin: Fig. 7.1b gives the " +
      "ordering only)",
    source: "Schneider2023 Ch. 7 (Fig. 7.1b: CEBRA-Behavior above pi-VAE, t-SNE, UMAP, autoLFADS; one-way " +
      "ANOVA F(4,495) = 251; no numbers, no PCA); PCA as the baseline is ours",
    holds: (m, cfg) =>
      cfg.seeds >= 2 &&
        has(m, "synthetic/cebra/r2_median", "synthetic/cebra/r2_min", "synthetic/cebra/r2_max", "synthetic/pca/r2")
        ? m["synthetic/cebra/r2_median"] - m["synthetic/pca/r2"] >
          m["synthetic/cebra/r2_max"] - m["synthetic/cebra/r2_min"]
        : undefined,
  },
];

// ---------------------------------------------------------------------------------------------
// Data

/** The run's data split in time: training rows first, held-out rows after. */
interface SyntheticData {
  train: { x: Matrix; u: Matrix; z: Matrix };
  test: { x: Matrix; z: Matrix };
}

let dataCache: { key: string; data: SyntheticData } | null = null;

/** Rows [from, to) of a row-major matrix. */
function rowsOf(m: Matrix, from: number, to: number): Matrix {
  const data = Float64Array.from({ length: (to - from) * m.cols }, (_, i) => m.data[from * m.cols + i]);
  return { data, rows: to - from, cols: m.cols };
}

function trainRows(cfg: Cfg): number {
  return Math.round(cfg.train_fraction * cfg.samples);
}

/** The pi-VAE data of a seed (once per process: every model of a run, and a worker's phases, share it). */
function dataOf(seed: number, cfg: Cfg): SyntheticData {
  const key = JSON.stringify([seed, cfg.samples, cfg.neurons, cfg.train_fraction]);
  if (dataCache?.key !== key) {
    const d = pivaeSynthetic(Rng.derive(seed, "cebra-synthetic/data"), { samples: cfg.samples, dims: cfg.neurons });
    const n = trainRows(cfg);
    const u = { data: d.u, rows: cfg.samples, cols: 1 };
    dataCache = {
      key,
      data: {
        train: { x: rowsOf(d.spikes, 0, n), u: rowsOf(u, 0, n), z: rowsOf(d.z, 0, n) },
        test: { x: rowsOf(d.spikes, n, cfg.samples), z: rowsOf(d.z, n, cfg.samples) },
      },
    };
  }
  return dataCache.data;
}

// ---------------------------------------------------------------------------------------------
// One CEBRA model

/** What a model's phase gives back. */
interface ModelResult {
  seed: number;
  r2: number;
  r2_train: number;
  final_loss: number;
}

const modelKey = (index: number) => `synthetic/cebra/seed${index}`;

/** The Cebra seed of model `index` of a run. */
function modelSeed(runSeed: number, index: number): number {
  return Rng.derive(runSeed, "cebra-synthetic/model", index).int(2 ** 31);
}

/** Trains model `index` and scores its embeddings along training. */
async function trainModel(ctx: RunContext, cfg: Cfg, index: number): Promise<ModelResult> {
  const data = dataOf(ctx.seed, cfg);
  const seed = modelSeed(ctx.seed, index);
  const key = modelKey(index);
  const progress = ctx.progress(`cebra seed ${index}`, cfg.steps);
  let sum = 0, count = 0;
  let scores = { r2: NaN, r2_train: NaN };
  const { cebra } = await fitWithSnapshots(
    {
      modelArchitecture: cfg.model,
      distance: cfg.distance,
      conditional: "delta",
      delta: cfg.delta,
      batchSize: cfg.batch,
      learningRate: cfg.lr,
      maxIterations: cfg.steps,
      outputDimension: cfg.output_dimension,
      numHiddenUnits: cfg.hidden,
      seed,
    },
    data.train.x,
    { continuous: data.train.u },
    {
      every: cfg.eval_every,
      views: [{ x: data.train.x }, { x: data.test.x }],
      lossReadEvery: cfg.log_every,
      signal: ctx.stopRequested,
      onStep: (step, loss) => {
        sum += loss;
        count++;
        if (step % cfg.log_every === 0 || step === cfg.steps) {
          ctx.log(step, { [`${key}/loss`]: sum / count });
          progress.update(step, sum / count);
          sum = count = 0;
        }
      },
      onSnapshot: ({ step, embeddings: [train, test] }) => {
        scores = { r2: linearR2(test, data.test.z), r2_train: linearR2(train, data.train.z) };
        ctx.log(step, { [`${key}/r2`]: scores.r2, [`${key}/r2_train`]: scores.r2_train });
      },
    },
  );
  const finalLoss = cebra.lossHistory[cebra.lossHistory.length - 1];
  cebra.dispose();
  return { seed, ...scores, final_loss: finalLoss };
}

/** A model's phase as a worker runs it (lib/train/parallel_phases.ts). */
export const workerPhase: WorkerPhase<Cfg, number, ModelResult> = async (ctx, cfg, index) => ({
  result: await trainModel(ctx, cfg, index),
});

// ---------------------------------------------------------------------------------------------

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function printTable(models: readonly ModelResult[], pca: { r2: number; r2_train: number }, cfg: Cfg): void {
  const fixed = (v: number) => v.toFixed(4);
  const lines = [
    `reconstruction R² of the true 2-D latent (linear regression from the embedding), ${cfg.samples} samples, ` +
    `${trainRows(cfg)} for training`,
    `${"method".padEnd(22)} ${"held out".padStart(9)} ${"train".padStart(9)}`,
    ...models.map((m, i) =>
      `${`CEBRA seed ${i}`.padEnd(22)} ${fixed(m.r2).padStart(9)} ${fixed(m.r2_train).padStart(9)}`
    ),
    `${"CEBRA median".padEnd(22)} ${fixed(median(models.map((m) => m.r2))).padStart(9)} ${
      fixed(median(models.map((m) => m.r2_train))).padStart(9)
    }`,
    `${`PCA (${cfg.pca_components} components)`.padEnd(22)} ${fixed(pca.r2).padStart(9)} ${
      fixed(pca.r2_train).padStart(9)
    }`,
  ];
  console.log(lines.join("\n"));
}

export const experiment = defineExperiment({
  name: "cebra-synthetic",
  finding: "CEBRA-Behavior recovers a behavioural latent better than PCA",
  description: "CEBRA-Behavior vs PCA on the pi-VAE synthetic spikes: R² of the recovered 2-D latent (Fig. 7.1b)",
  source: SOURCE,
  config,
  presets: {
    smoke: { samples: 1_000, steps: 30, seeds: 2, eval_every: 10, log_every: 5 },
    quick: { workers: 2 },
    paper: { seeds: 100, workers: 2 },
  },
  presetLimits: {
    smoke: "plumbing only: 1,000 samples, 30 steps, 2 seeds; its numbers say nothing about the finding",
    quick: "5 CEBRA seeds of 3,000 steps on one draw of the data, instead of Fig. 7.1b's 100 seeds; no published " +
      "number exists (the thesis states the ordering), so the run checks the ordering against PCA only. For " +
      "context, PyTorch CEBRA at this size reaches R² ≈ 0.905 against PCA's ≈ 0.79",
    paper: "not run: 100 seeds of 3,000 steps (the thesis does not state the steps; its 'few thousand'). At ≈ 25 ms " +
      "per offset1-model-mse step of batch 512 on one wasm core, ≈ 2.1 core-hours, ≈ 1.1 h with 2 workers",
  },
  targets: [],
  claims,
  validate(cfg) {
    if (cfg.neurons % 2 !== 0) {
      throw new UsageError(`neurons must be even (the flow splits it in halves), got ${cfg.neurons}`);
    }
    const train = trainRows(cfg), test = cfg.samples - train;
    if (train < 10 || test < 10) {
      throw new UsageError(
        `samples × train_fraction leaves ${train} training and ${test} held-out rows; each needs at least 10`,
      );
    }
    if (cfg.pca_components > cfg.neurons) {
      throw new UsageError(`pca_components = ${cfg.pca_components} exceeds neurons = ${cfg.neurons}`);
    }
  },
  async run(ctx, cfg) {
    const data = dataOf(ctx.seed, cfg);
    const pcaFit = fitPca(data.train.x, cfg.pca_components);
    const pca = {
      r2: linearR2(pcaFit.transform(data.test.x), data.test.z),
      r2_train: linearR2(pcaFit.transform(data.train.x), data.train.z),
    };
    // PCA needs no training: logged at step 0, the floor of every curve.
    ctx.log(0, { "synthetic/pca/r2": pca.r2, "synthetic/pca/r2_train": pca.r2_train });
    const indices = Array.from({ length: cfg.seeds }, (_, i) => i);
    const { results } = await runPhasesOn<Cfg, number, ModelResult>(
      ctx,
      indices,
      async (index) => ({ result: await trainModel(ctx, cfg, index) }),
      { parallel: { module: import.meta.url, exportName: "workerPhase", cfg, workers: cfg.workers } },
    );
    const r2 = results.map((m) => m.r2);
    const metrics: Record<string, number> = {
      "synthetic/cebra/r2_median": median(r2),
      "synthetic/cebra/r2_mean": mean(r2),
      "synthetic/cebra/r2_min": Math.min(...r2),
      "synthetic/cebra/r2_max": Math.max(...r2),
      "synthetic/cebra/r2_train_median": median(results.map((m) => m.r2_train)),
      "synthetic/cebra/final_loss_mean": mean(results.map((m) => m.final_loss)),
      "synthetic/pca/r2": pca.r2,
      "synthetic/pca/r2_train": pca.r2_train,
      "synthetic/cebra_minus_pca": median(r2) - pca.r2,
    };
    results.forEach((m, i) => {
      metrics[`${modelKey(i)}/r2`] = m.r2;
      metrics[`${modelKey(i)}/r2_train`] = m.r2_train;
    });
    printTable(results, pca, cfg);
    return {
      metrics,
      details: {
        models: results,
        pca: { ...pca, explained_variance_ratio: Array.from(pcaFit.explainedVarianceRatio) },
        protocol: [
          `data: lib/data/pivae_synthetic.ts pivaeSynthetic(samples ${cfg.samples}, dims ${cfg.neurons}) from the run ` +
          `seed; the first ${trainRows(cfg)} samples train CEBRA and PCA, the rest are held out`,
          `CEBRA: ${cfg.model}, ${cfg.distance}, conditional delta (δ ${cfg.delta}) on u, batch ${cfg.batch}, ` +
          `Adam lr ${cfg.lr}, ${cfg.steps} steps, output dimension ${cfg.output_dimension}, package defaults otherwise`,
          "reconstruction score: linearR2(embedding, z), sklearn LinearRegression().fit(e, z).score(e, z), on the " +
          "held-out rows (r2) and on the training rows (r2_train); the claim reads the median over seeds",
          `PCA: lib/ml/pca.ts fitPca on the training spikes, ${cfg.pca_components} components, scored the same way`,
        ],
      },
    };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
