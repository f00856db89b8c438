/**
 * Nonlinear ICA toy (Klindt2021 App. F.1.2, Table 5).
 *
 * Sources follow a Laplace AR(1) process and are mixed by an L-layer random
 * MLP. Two estimators recover them from consecutive pairs:
 *   - SlowFlow: a volume-preserving coupling flow trained by exact maximum
 *     likelihood with a Gaussian marginal and a Laplace transition prior;
 *   - PCL: an MLP (L hidden layers) trained to tell real pairs from shuffled ones.
 * Both are scored by MCC (Pearson, Hungarian matching) against the sources.
 */
import * as tf from "@tensorflow/tfjs";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { choice, type ConfigOf, flag, integer, integers, real } from "../lib/core/config.ts";
import { gatherRows } from "../lib/core/matrix.ts";
import { scatterPanels } from "../lib/core/plot.ts";
import { Rng } from "../lib/core/rng.ts";
import { ICA_GENERATORS, laplaceArSources, mix, randomMixingMlp } from "../lib/data/laplace_ar.ts";
import { meanCorrelationCoefficient } from "../lib/metrics/mcc.ts";
import { CouplingFlow } from "../lib/models/coupling_flow.ts";
import { Mlp } from "../lib/models/mlp.ts";
import { Params } from "../lib/models/params.ts";
import { pcaWhiten } from "../lib/ml/linalg.ts";
import { mapInChunks } from "../lib/models/vae.ts";
import { cosineDecay, type LossTerms, trainPhase } from "../lib/train/loop.ts";
import { resumeModel } from "../lib/train/resumable_model.ts";
import type { PhaseCheckpoints } from "../lib/train/phases.ts";
import { runPhasesOn, type WorkerPhase, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import { PclHead, pclLoss } from "../lib/train/pcl.ts";
import { slowFlowNll } from "../lib/train/slow_flow.ts";
import { checkpointEveryConfig, evalEveryConfig, logEveryConfig } from "../lib/train/config.ts";

const SOURCE = "Klindt2021 App. F.1.2 Table 5";
const METHODS = ["slowflow", "pcl"] as const;
type Method = typeof METHODS[number];

/** Table 5 of Klindt2021: MCC (linear correlation) per number of mixing layers L = 1..5. */
const TABLE_5: Record<Method, number[]> = {
  slowflow: [0.997, 0.987, 0.982, 0.975, 0.975],
  pcl: [0.998, 0.960, 0.950, 0.917, 0.902],
};

const config = {
  layers: integers([1, 2, 3, 4, 5], "mixing depths L to run", { min: 1, max: 5 }),
  method: choice("both", ["both", ...METHODS], "estimators to train"),
  dim: integer(20, "number of sources (= observed dimensions)", { min: 2, max: 200 }),
  samples: integer(50_000, "time steps of the source process (Klindt2021 does not state N)", {
    min: 100,
    max: 1_000_000,
  }),
  rho: real(0.7, "AR coefficient of the sources", { min: 0, max: 0.99 }),
  mixing_slope: real(0.2, "slope α of the smooth leaky ReLU in the mixing MLP", { min: 0.01, max: 1 }),
  generator: choice(
    "reference",
    ICA_GENERATORS,
    "data: the PCL reference code's (unit-variance sources, conditioned U(−1, 1) matrices) or the first one",
  ),
  max_condition: real(4, "legacy generator: largest condition number of each mixing matrix", { min: 1 }),
  whiten: flag(false, "PCA-whiten the observations before training, as the PCL reference code's pcl_training.py does"),
  steps: integer(20_000, "Adam steps per method and L", { min: 1, max: 100_000_000 }),
  batch: integer(512, "pairs per step", { min: 2, max: 65_536 }),
  lr: real(1e-3, "Adam learning rate", { min: 0, max: 1 }),
  lr_schedule: choice(
    "constant",
    ["constant", "cosine"],
    "learning rate over each phase: constant, or cosine decay to 0",
  ),
  flow_blocks: integer(6, "coupling blocks of SlowFlow", { min: 1, max: 32 }),
  flow_hidden: integer(500, "hidden units of each coupling MLP", { min: 1, max: 2_048 }),
  flow_hidden_layers: integer(1, 'hidden layers of each coupling MLP (a "2-layer MLP" has 1)', { min: 1, max: 4 }),
  flow_coupling: choice(
    "additive",
    ["additive", "affine"],
    "coupling type; additive is volume-preserving as in the paper",
  ),
  flow_linear: flag(true, "add a learned unit-determinant linear map to each flow block (not in the paper)"),
  lambda: real(1, "rate λ of the Laplace transition prior (initial value when learned)", { min: 1e-3 }),
  learn_lambda: flag(true, "fit λ by maximum likelihood with the flow"),
  pcl_hidden: integer(100, "hidden units per hidden layer of the PCL MLP", { min: 1, max: 2_048 }),
  eval_samples: integer(10_000, "time steps on which MCC is computed", { min: 10, max: 1_000_000 }),
  ...logEveryConfig(100),
  ...evalEveryConfig(2_000, "steps between MCC evaluations"),
  ...checkpointEveryConfig(1_000),
  ...WORKERS_CONFIG,
};

type Cfg = ConfigOf<typeof config>;

// What trivial codes score per L (measured, seed 0–1, 20 sources): the observations themselves, which the untrained
// SlowFlow (an identity map at step 0) scores too, whitened 20,000-sample quick data or the paper preset's 2¹⁸; PCL's
// untrained MLP (step 0, quick and paper presets); 20 Gaussian noise codes. The highest measured value of each.
const OBSERVATIONS_MCC = [0.458, 0.44, 0.431, 0.405, 0.419];
const UNTRAINED_PCL_MCC = [0.421, 0.346, 0.315, 0.291, 0.278];
const icaNulls = (i: number) => [
  {
    value: OBSERVATIONS_MCC[i],
    model: "the observations x, as the untrained SlowFlow (identity at step 0) (measured)",
  },
  { value: UNTRAINED_PCL_MCC[i], model: "untrained PCL MLP, step 0 (measured, quick and paper presets)" },
  { value: 0.029, model: "random code: 20 Gaussian latents (measured, 5,000 rows)" },
];

const targets: Target<Cfg>[] = METHODS.flatMap((method) =>
  TABLE_5[method].map((paper, i) => ({
    metric: `mcc/${method}/L${i + 1}`,
    paper,
    source: `${SOURCE}, ${method === "slowflow" ? "SlowFlow" : "PCL"} row, L = ${i + 1}`,
    tolerance: 0.03,
    toleranceSource: "rule: 0.03 on MCC (Table 5 gives no spread), far below half the way to the observations' MCC",
    nulls: icaNulls(i),
    // The document's generator (20 Laplace AR(0.7) sources, L-layer smooth-leaky-ReLU MLP), metric and networks.
    kind: "like-for-like" as const,
    standIn: "matrices and source scale as the PCL reference code draws them (App. F.1.2 states Laplace " +
      "innovations of scale 1 and no matrix law); quick: 2,000 steps for 20,000, 64-unit coupling MLPs in 10 blocks",
    // SlowFlow's MCC is reproduced when reached or beaten; PCL, the baseline, when matched.
    direction: method === "slowflow" ? "higher" as const : "match" as const,
    // Each (L, method) phase logs its MCC every eval_every steps under its own label.
    curve: `L${i + 1}/${method}/mcc`,
  }))
);

const mccOf = (m: Record<string, number>, method: Method, layers: number) => m[`mcc/${method}/L${layers}`];

const claims: Claim<Cfg>[] = [
  {
    // Untrained, both estimators sit near the observations' MCC (≤ 0.42 at L = 4, 5), the flow above the MLP:
    // SlowFlow must be well past that. At L = 3 the published gap (0.032) is within the margin.
    text: "at L = 4 and 5, SlowFlow's MCC exceeds PCL's by more than 0.03 and exceeds 0.6 (the observations, " +
      "as the untrained flow, score ≤ 0.42 there)",
    source: `${SOURCE}, SlowFlow vs PCL rows, L = 4, 5 (0.975 vs 0.917, 0.975 vs 0.902)`,
    holds: (m) => {
      const measured = [4, 5].filter((l) => mccOf(m, "slowflow", l) !== undefined && mccOf(m, "pcl", l) !== undefined);
      return measured.length === 0
        ? undefined
        : measured.every((l) => mccOf(m, "slowflow", l) > 0.6 && mccOf(m, "slowflow", l) - mccOf(m, "pcl", l) > 0.03);
    },
  },
  {
    // An untrained PCL falls with L as well (0.42 → 0.28): PCL must have learned L = 1.
    text: "PCL's MCC falls from L = 1 to L = 5 by more than 0.05, from an L = 1 MCC of at least 0.9",
    source: `${SOURCE}, PCL row, L = 1 vs 5 (0.998 → 0.902)`,
    holds: (m) =>
      mccOf(m, "pcl", 1) === undefined || mccOf(m, "pcl", 5) === undefined
        ? undefined
        : mccOf(m, "pcl", 1) >= 0.9 && mccOf(m, "pcl", 1) - mccOf(m, "pcl", 5) > 0.05,
  },
];

/** An encoder under training: its parameters, its map x ↦ codes, and its loss. */
interface Estimator {
  params: Params;
  encode(x: tf.Tensor2D): tf.Tensor2D;
  loss(prev: tf.Tensor2D, next: tf.Tensor2D, shuffledPrev: tf.Tensor2D): LossTerms;
  dispose(): void;
}

function slowFlowEstimator(rng: Rng, cfg: Cfg): Estimator {
  const flow = new CouplingFlow(rng, {
    dim: cfg.dim,
    blocks: cfg.flow_blocks,
    hidden: cfg.flow_hidden,
    hiddenLayers: cfg.flow_hidden_layers,
    linear: cfg.flow_linear,
    coupling: cfg.flow_coupling,
  });
  const logLambda = cfg.learn_lambda ? flow.params.add("log_lambda", Float32Array.of(Math.log(cfg.lambda)), []) : null;
  return {
    params: flow.params,
    encode: (x) => flow.forward(x),
    loss: (prev, next) => {
      // One pass over both halves of the pairs: fewer, larger kernels run faster.
      const { z, logDet } = flow.forwardWithLogDet(tf.concat([prev, next], 0));
      const [z0, z1] = tf.split(z, 2, 0) as tf.Tensor2D[];
      const [logDet0, logDet1] = tf.split(logDet, 2, 0) as tf.Tensor1D[];
      const lambda = logLambda ? tf.exp(logLambda) as tf.Scalar : cfg.lambda;
      const terms: LossTerms = slowFlowNll(z0, z1, logDet0, logDet1, lambda);
      if (logLambda) terms.lambda = lambda as tf.Scalar;
      return terms;
    },
    dispose: () => flow.dispose(),
  };
}

function pclEstimator(rng: Rng, cfg: Cfg, layers: number): Estimator {
  const params = new Params();
  // "An MLP with the same number of hidden layers as the mixing" (Klindt2021 App. F.1.2).
  const sizes = [cfg.dim, ...Array(layers).fill(cfg.pcl_hidden), cfg.dim];
  const features = new Mlp(rng, params, "features/", sizes, { activation: "leaky_relu" });
  const head = new PclHead(params, cfg.dim);
  return {
    params,
    encode: (x) => features.apply(x),
    loss: (prev, next, shuffledPrev) => {
      const [h1, h2, h2Shuffled] = tf.split(
        features.apply(tf.concat([next, prev, shuffledPrev], 0)),
        3,
        0,
      ) as tf.Tensor2D[];
      return pclLoss(head, h1, h2, h2Shuffled);
    },
    dispose: () => params.dispose(),
  };
}

/** Rows `index[i] + offset` of a row-major `[n, dim]` matrix as a `[index.length, dim]` tensor. */
function rowsTensor(values: Float32Array, dim: number, index: Int32Array, offset: number): tf.Tensor2D {
  return tf.tensor2d(gatherRows(values, dim, index, offset), [index.length, dim]);
}

/** Codes of the first `rows` observations `[rows, dim]`. */
async function encodeAll(estimator: Estimator, x: Float32Array, dim: number, rows: number): Promise<Float32Array> {
  const [codes] = await mapInChunks(rows, 4096, (start, size) => [
    estimator.encode(tf.tensor2d(x.subarray(start * dim, (start + size) * dim), [size, dim])),
  ]);
  return codes;
}

async function runPhase(ctx: RunContext, cfg: Cfg, layers: number, method: Method, checkpoints: PhaseCheckpoints) {
  const label = `L${layers}/${method}`;
  // Data and model depend only on (seed, L, method): a resumed phase rebuilds them identically.
  const dataRng = Rng.derive(ctx.seed, "data", layers);
  const sources = laplaceArSources(dataRng, cfg.samples, cfg.dim, { rho: cfg.rho, generator: cfg.generator });
  const mixing = randomMixingMlp(dataRng, cfg.dim, layers, {
    alpha: cfg.mixing_slope,
    maxCondition: cfg.max_condition,
    generator: cfg.generator,
  });
  const observations = mix(mixing, sources);
  // An invertible linear map of x: identifiability is unchanged, both estimators see the same data.
  if (cfg.whiten) pcaWhiten(observations, cfg.dim);
  const modelRng = Rng.derive(ctx.seed, "model", layers, method);
  const estimator = method === "slowflow" ? slowFlowEstimator(modelRng, cfg) : pclEstimator(modelRng, cfg, layers);
  const optimizer = tf.train.adam(cfg.lr);
  const batches = Rng.derive(ctx.seed, "batches", layers, method);
  const { batchRng, startStep, checkpoint } = await resumeModel(estimator.params, optimizer, checkpoints, batches);
  const evalRows = Math.min(cfg.eval_samples, cfg.samples);

  const evaluate = async () => {
    const codes = await encodeAll(estimator, observations, cfg.dim, evalRows);
    const result = meanCorrelationCoefficient(
      { data: sources, rows: evalRows, cols: cfg.dim },
      { data: codes, rows: evalRows, cols: cfg.dim },
    );
    return { mcc: result.mcc, codes, result };
  };

  await trainPhase(ctx, {
    label,
    steps: cfg.steps,
    startStep,
    variables: estimator.params.list(),
    optimizer,
    learningRate: cfg.lr_schedule === "cosine" ? cosineDecay(cfg.lr, cfg.steps) : undefined,
    logEvery: cfg.log_every,
    loss: () => {
      // Pair (x_{t−1}, x_t) for t ≥ 1; the shuffled partner is another random x_{t'−1}.
      const t = Int32Array.from({ length: cfg.batch }, () => 1 + batchRng.int(cfg.samples - 1));
      const tShuffled = Int32Array.from({ length: cfg.batch }, () => 1 + batchRng.int(cfg.samples - 1));
      return estimator.loss(
        rowsTensor(observations, cfg.dim, t, -1),
        rowsTensor(observations, cfg.dim, t, 0),
        rowsTensor(observations, cfg.dim, tShuffled, -1),
      );
    },
    evaluateEvery: cfg.eval_every,
    evaluate: async () => ({ mcc: (await evaluate()).mcc }),
    checkpointEvery: cfg.checkpoint_every,
    checkpoint,
  });

  const { mcc, codes, result } = await evaluate();
  const shown = Math.min(4, cfg.dim);
  const points = Math.min(evalRows, 2000);
  ctx.image(
    `scatter/${label}`,
    cfg.steps,
    scatterPanels(
      Array.from({ length: shown }, (_, i) => ({
        x: Float32Array.from({ length: points }, (_, t) => sources[t * cfg.dim + i]),
        y: Float32Array.from({ length: points }, (_, t) => codes[t * cfg.dim + result.matching[i]]),
      })),
    ),
  );
  estimator.dispose();
  optimizer.dispose();
  return mcc;
}

/** One (L, method) phase. */
interface IcaPhase {
  layers: number;
  method: Method;
}

/** A phase as a worker runs it (lib/train/parallel_phases.ts): no checkpoints inside it. */
export const workerPhase: WorkerPhase<Cfg, IcaPhase, number> = async (ctx, cfg, { layers, method }) => ({
  result: await runPhase(ctx, cfg, layers, method, { resumed: null, save: () => Promise.resolve() }),
});

/** The nonlinear ICA toy of Klindt2021, SlowFlow vs PCL, as a latentlab experiment. */
export const experiment = defineExperiment({
  name: "ica-toy",
  finding: "SlowFlow keeps identifying the sources as mixing deepens; PCL degrades",
  description: "Nonlinear ICA of Laplace-AR sources: SlowFlow vs PCL, MCC per mixing depth L",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      layers: [1, 2, 3, 4, 5],
      dim: 4,
      samples: 1_000,
      steps: 30,
      batch: 64,
      flow_blocks: 2,
      flow_hidden: 16,
      pcl_hidden: 16,
      eval_samples: 500,
      log_every: 10,
      eval_every: 10,
      checkpoint_every: 10,
    },
    // Shows Table 5's finding in under 5 minutes on 2 cores. Deviations from App. F.1.2, for the budget: 2,000
    // steps, narrower coupling MLPs (64 units), and 10 blocks instead of 6 (at this budget depth helped where width
    // did not: L4 MCC after 2,000 steps 0.717 with 10 blocks of 64, 0.577 with 6 of 64, 0.527 with 6 of 128).
    // Whitening as the PCL reference code does; both estimators see the same data.
    quick: {
      samples: 20_000,
      steps: 2_000,
      batch: 256,
      lr: 1e-2,
      whiten: true,
      flow_blocks: 10,
      flow_hidden: 64,
      eval_samples: 5_000,
      log_every: 50,
      eval_every: 250,
      checkpoint_every: 500,
      workers: 2,
    },
    // App. F.1.2's networks (the defaults); the sample count of the PCL reference code (pcl_training.py: 2**18),
    // since Klindt2021 does not state one.
    paper: { samples: 2 ** 18 },
  },
  presetLimits: {
    quick:
      "the finding (SlowFlow ahead of PCL at L = 4, 5, PCL falling with L, both ≥ 0.9 at L = 1) in about 4 minutes on 2 " +
      "cores; Table 5's absolute MCC for L ≥ 2 is out of reach of 2,000 steps with 64-unit coupling MLPs (SlowFlow's " +
      "L4–L5 curves are still rising at the end); the paper preset trains App. F.1.2's networks for 20,000 steps",
  },
  targets,
  claims,
  async run(ctx, cfg) {
    const methods = METHODS.filter((m) => cfg.method === "both" || cfg.method === m);
    const phases: IcaPhase[] = cfg.layers.flatMap((layers) => methods.map((method) => ({ layers, method })));
    // One phase per (L, method); in this process, checkpoints inside a phase are numbered within its cfg.steps.
    // Measured at the quick preset: a flow step costs about 2–4 PCL steps, and both grow with L.
    const cost = (phase: IcaPhase) => (phase.method === "slowflow" ? 10 : 0) + phase.layers;
    const { results: mccs } = await runPhasesOn<Cfg, IcaPhase, number>(
      ctx,
      phases,
      async ({ layers, method }, _, checkpoints) => ({ result: await runPhase(ctx, cfg, layers, method, checkpoints) }),
      {
        stride: cfg.steps,
        parallel: { module: import.meta.url, exportName: "workerPhase", cfg, workers: cfg.workers, cost },
      },
    );
    const metrics: Record<string, number> = Object.fromEntries(
      phases.map(({ layers, method }, i) => [`mcc/${method}/L${layers}`, mccs[i]]),
    );
    const table = cfg.layers.map((layers) => ({
      L: layers,
      slowflow: metrics[`mcc/slowflow/L${layers}`],
      pcl: metrics[`mcc/pcl/L${layers}`],
      paper_slowflow: TABLE_5.slowflow[layers - 1],
      paper_pcl: TABLE_5.pcl[layers - 1],
    }));
    return { metrics, details: { table } };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
