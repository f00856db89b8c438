/**
 * The study behind the vae-manipulation experiment (Zietlow2022 Ch. 4, Table 4.2): the synth
 * analogue (an ensemble of β-VAEs on the original, wiggled and noisy Synth-Lin data) and the image study (β-VAE
 * restarts, the learned manipulation m between the most entangled and the most disentangled, β-VAEs on the original,
 * modified and noisy images), each a phase run in this process or a worker, and the run's aggregates and tables.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext, RunResult } from "../core/experiment.ts";
import { type Matrix, meanSd } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import type { ResultTable } from "../core/scorecard.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import {
  noisyDataset,
  PerturbationNet,
  perturbedDataset,
  type ReferenceModel,
  trainPerturbation,
} from "../data/manipulation.ts";
import { loadDataset } from "../data/registry.ts";
import { preferenceScore, synthLinear, synthRotation, withUniformNoise, withWiggle } from "../data/synth.ts";
import { type PreparedData, prepareSynth } from "../data/synth_sets.ts";
import { corrGap, migBinned } from "../metrics/disentanglement_score.ts";
import { distanceToOrthogonality } from "../metrics/dto.ts";
import { scoreVae } from "../metrics/score.ts";
import type { EnsembleVae } from "../models/ensemble.ts";
import { memberCodes, rowSampler, trainEnsemble } from "../train/ensemble_training.ts";
import { decoderJacobians } from "../train/jacobian.ts";
import type { PhaseCheckpoints, PhaseOutcome } from "../train/phases.ts";
import { runPhasesOn, type WorkerPhase, workerPhaseOptions } from "../train/parallel_phases.ts";
import { trainVae, type VaeConfig } from "../train/vae.ts";

/** The data sets: the Synth-Lin analogue, then dSprites and Shapes3D images. */
export const DATASETS = ["synth", "dsprites", "shapes3d"] as const;
/** One of {@linkcode DATASETS}. */
export type DatasetName = typeof DATASETS[number];
/** A data set of images (Table 4.2's rows). */
export type ImageDataset = Exclude<DatasetName, "synth">;
/** The data each VAE is trained on: the original, the manipulated (m applied) and the noisy copy. */
export const VARIANTS = ["orig", "mod", "noise"] as const;
/** One of {@linkcode VARIANTS}. */
export type Variant = typeof VARIANTS[number];
/** A published MIG per image data set and variant (Table 4.2), printed beside the run's. */
export type PublishedMig = Record<ImageDataset, Record<Variant, number>>;

/** The experiment's config as the study reads it (each key is documented where the experiment declares it). */
export type VaeManipulationConfig =
  & Omit<VaeConfig, "method" | "value" | "dataset">
  & { datasets: DatasetName[] }
  & Record<
    | "samples"
    | "ratio"
    | "eps"
    | "omega"
    | "hidden"
    | "hidden_layers"
    | "synth_latents"
    | "beta"
    | "synth_lr"
    | "synth_batch"
    | "synth_steps"
    | "synth_seeds"
    | "dto_points"
    | "eval_every"
    | "beta_dsprites"
    | "beta_shapes3d"
    | "image_seeds"
    | "restarts"
    | "references"
    | "eps_dsprites"
    | "eps_shapes3d"
    | "perturbation_steps"
    | "perturbation_batch"
    | "perturbation_lr"
    | "perturbation_points"
    | "workers",
    number
  >;
type Cfg = VaeManipulationConfig;

// ---------------------------------------------------------------------------------------------------------------
// Synth (ours): the wiggle

type Scores = Record<string, number>;

/** The three synth data sets of a run, built once per process. */
const synthSets = new Map<string, Record<Variant, PreparedData>>();
function synthVariants(seed: number, cfg: Cfg): Record<Variant, PreparedData> {
  const id = `${seed}/${cfg.samples}/${cfg.ratio}/${cfg.eps}/${cfg.omega}`;
  if (!synthSets.has(id)) {
    const base = synthLinear({ ratio: cfg.ratio, n: cfg.samples }, Rng.derive(seed, "data", "lin", cfg.ratio));
    const mod = withWiggle(base, { eps: cfg.eps, omega: cfg.omega });
    const noise = withUniformNoise(base, cfg.eps, Rng.derive(seed, "noise"));
    // One split for all three: the same points, factors and test rows.
    synthSets.set(id, {
      orig: prepareSynth(base, seed),
      mod: { ...prepareSynth(mod, seed) },
      noise: prepareSynth(noise, seed),
    });
  }
  return synthSets.get(id)!;
}

/** R² of the decoded component along the data plane's normal R e₃ against the wiggle ε·sin(ω(w₁ + w₂)). */
function wiggleFit(decoded: ArrayLike<number>, w: Matrix, cfg: Cfg): number {
  const rotation = synthRotation();
  const normal = rotation.map((row) => row[2]);
  const rows = w.rows;
  let ssRes = 0, ssTot = 0, mean = 0;
  const truth = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    truth[i] = cfg.eps * Math.sin(cfg.omega * (w.data[2 * i] + w.data[2 * i + 1]));
    mean += truth[i] / rows;
  }
  // The normal component of the original data is 0: the decoded one must carry the wiggle alone.
  for (let i = 0; i < rows; i++) {
    let along = 0;
    for (let c = 0; c < 3; c++) along += decoded[3 * i + c] * normal[c];
    ssRes += (along - truth[i]) ** 2;
    ssTot += (truth[i] - mean) ** 2;
  }
  return 1 - ssRes / ssTot;
}

/** Corr-gap and MIG-binned of member k (and, on the modified data, how well its decoder fits the wiggle); DtO at the end. */
async function scoreSynthMember(
  ensemble: EnsembleVae,
  k: number,
  data: PreparedData,
  variant: Variant,
  cfg: Cfg,
  final: boolean,
) {
  const test = data.test;
  const codes = await memberCodes(ensemble, k, test.x, test.rows);
  const mean: Matrix = { data: codes.mean, rows: test.rows, cols: codes.cols };
  const out: Scores = { corr_gap: corrGap(mean, test.w).gap, mig_binned: migBinned(mean, test.w).mig };
  if (variant === "mod") {
    const decodedTensor = tf.tidy(() => ensemble.memberDecoder(k)(tf.tensor2d(codes.mean, [test.rows, codes.cols])));
    const decoded = await decodedTensor.data();
    decodedTensor.dispose();
    out.wiggle_fit_r2 = wiggleFit(decoded, test.w, cfg);
  }
  if (final) {
    const points = Math.min(cfg.dto_points, test.rows);
    const z: Matrix = { data: codes.mean.subarray(0, points * codes.cols), rows: points, cols: codes.cols };
    const j = await decoderJacobians(ensemble.memberDecoder(k), z, { method: "auto" });
    out.dto = distanceToOrthogonality(j.jac, j.n, j.rows, j.cols).dto;
  }
  return out;
}

interface SynthResult {
  members: { seed: number; variant: Variant; scores: Scores }[];
}

async function runSynth(ctx: RunContext, cfg: Cfg, checkpoints: PhaseCheckpoints): Promise<SynthResult> {
  const sets = synthVariants(ctx.seed, cfg);
  const seeds = Array.from({ length: cfg.synth_seeds }, (_, i) => ctx.seed * 100 + i);
  const members = VARIANTS.flatMap((variant) => seeds.map((seed) => ({ seed, variant, data: sets[variant] })));
  const ensemble = await trainEnsemble(
    ctx,
    {
      label: "synth/beta_vae",
      model: {
        seeds: members.map((m) => m.seed),
        input: 3,
        latents: cfg.synth_latents,
        hidden: Array.from({ length: cfg.hidden_layers }, () => cfg.hidden),
        activation: "tanh",
        kind: "vae",
        betas: members.map(() => cfg.beta),
        loss: "squared",
      },
      data: rowSampler(members.map((m) => m.data.train), 3),
      steps: cfg.synth_steps,
      batch: cfg.synth_batch,
      lr: cfg.synth_lr,
      logEvery: cfg.log_every,
      evaluateEvery: cfg.eval_every,
      checkpointEvery: cfg.checkpoint_every,
      evaluate: async (model, step) => {
        const sums: Record<string, number[]> = {};
        for (let k = 0; k < members.length; k++) {
          const scores = await scoreSynthMember(model, k, members[k].data, members[k].variant, cfg, false);
          for (const [name, value] of Object.entries(scores)) {
            (sums[`synth/${name}/${members[k].variant}`] ??= []).push(value);
          }
        }
        ctx.log(
          step,
          Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v.reduce((a, b) => a + b) / v.length])),
        );
        return {};
      },
    },
    checkpoints,
    { get: () => null, set: () => {} },
  );
  try {
    const out: SynthResult["members"] = [];
    for (let k = 0; k < members.length; k++) {
      const scores = await scoreSynthMember(ensemble, k, members[k].data, members[k].variant, cfg, true);
      out.push({ seed: members[k].seed, variant: members[k].variant, scores });
    }
    return { members: out };
  } finally {
    ensemble.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Images: the learned manipulation

interface ImageResult {
  dataset: ImageDataset;
  references: { ent: number[]; dis: number[]; restarts: number[] };
  perturbation: { gap: number; maxAbs: number };
  members: { seed: number; variant: Variant; scores: Scores }[];
}

function imageConfig(cfg: Cfg, dataset: ImageDataset): VaeConfig {
  const { datasets: _d, ...rest } = cfg;
  return {
    ...rest,
    method: "beta_vae",
    value: dataset === "dsprites" ? cfg.beta_dsprites : cfg.beta_shapes3d,
    dataset,
  } as unknown as VaeConfig;
}

async function runImages(ctx: RunContext, cfg: Cfg, dataset: ImageDataset): Promise<ImageResult> {
  const base = loadDataset(dataset, { size: cfg.resolution });
  const modelCfg = imageConfig(cfg, dataset);
  const eps = dataset === "dsprites" ? cfg.eps_dsprites : cfg.eps_shapes3d;
  const train = async (data: GroundTruthDataset, label: string, seed: number) => {
    const trained = await trainVae(ctx, modelCfg, data, {
      label,
      seed,
      resumed: null,
      checkpoints: false,
      mediaPrefix: `${label.replaceAll("/", "-")}-`,
    });
    const { metrics } = await scoreVae(trained.encoder, data, modelCfg, seed);
    return { trained, metrics };
  };

  // 1. Restarts on the original data; the lowest MIG are ENT, the highest DIS.
  const restarts: { seed: number; mig: number; model: ReferenceModel; dispose(): void }[] = [];
  for (let r = 0; r < cfg.restarts; r++) {
    const seed = ctx.seed * 100 + 50 + r;
    const { trained, metrics } = await train(base, `${dataset}/restart/r${r}`, seed);
    restarts.push({
      seed,
      mig: metrics.mig,
      model: { encoder: trained.encoder, decoder: trained.decoder },
      dispose: trained.dispose,
    });
  }
  const byMig = [...restarts].sort((a, b) => a.mig - b.mig);
  const references = Math.min(cfg.references, Math.floor(restarts.length / 2));
  const ent = byMig.slice(0, references), dis = byMig.slice(-references);

  // 2. m(w) trained on ENT − DIS; its table renders the modified data set synchronously.
  const net = new PerturbationNet(Rng.derive(ctx.seed, "perturbation", dataset), {
    factors: base.factorSizes.length,
    factorSizes: base.factorSizes,
    imageShape: base.imageShape,
    eps,
  });
  let perturbation: ImageResult["perturbation"];
  let modified: GroundTruthDataset;
  try {
    const trained = await trainPerturbation(net, base, ent.map((r) => r.model), dis.map((r) => r.model), {
      steps: cfg.perturbation_steps,
      batch: cfg.perturbation_batch,
      lr: cfg.perturbation_lr,
      rng: Rng.derive(ctx.seed, "perturbation-batches", dataset),
      log: (step, terms) =>
        ctx.log(step, Object.fromEntries(Object.entries(terms).map(([k, v]) => [`${dataset}/perturbation/${k}`, v]))),
      shouldStop: () => ctx.stopRequested.aborted,
    });
    perturbation = { gap: trained.gap, maxAbs: trained.maxAbs };
    modified = perturbedDataset(base, await net.tabulate(cfg.perturbation_points));
  } finally {
    net.dispose();
    for (const r of restarts) r.dispose();
  }
  ctx.stopRequested.throwIfAborted();
  const noisy = noisyDataset(base, eps, Rng.derive(ctx.seed, "noise-seed", dataset).int(2 ** 31));

  // 3. β-VAEs on the original, modified and noisy data.
  const members: ImageResult["members"] = [];
  const data: Record<Variant, GroundTruthDataset> = { orig: base, mod: modified, noise: noisy };
  for (const variant of VARIANTS) {
    for (let s = 0; s < cfg.image_seeds; s++) {
      const seed = ctx.seed * 100 + s;
      const { trained, metrics } = await train(data[variant], `${dataset}/beta_vae/${variant}/s${s}`, seed);
      trained.dispose();
      members.push({ seed, variant, scores: metrics });
    }
  }
  return {
    dataset,
    references: { ent: ent.map((r) => r.mig), dis: dis.map((r) => r.mig), restarts: restarts.map((r) => r.mig) },
    perturbation,
    members,
  };
}

// ---------------------------------------------------------------------------------------------------------------

type PhaseResult = { synth?: SynthResult; images?: ImageResult };

async function runDataset(ctx: RunContext, cfg: Cfg, name: DatasetName, checkpoints: PhaseCheckpoints) {
  return name === "synth"
    ? { synth: await runSynth(ctx, cfg, checkpoints) }
    : { images: await runImages(ctx, cfg, name) };
}

/** A data set as a worker runs it (lib/train/parallel_phases.ts): no checkpoints inside it. */
export const workerPhase: WorkerPhase<Cfg, DatasetName, PhaseResult> = async (
  ctx,
  cfg,
  name,
): Promise<PhaseOutcome<PhaseResult>> => ({
  result: await runDataset(ctx, cfg, name, { resumed: null, save: () => Promise.resolve() }),
});

/** Means (and s.d.) over seeds of every score, keyed `<dataset>/<score>/<model?>/<variant>`. */
function aggregate(prefix: string, members: { variant: Variant; scores: Scores }[], metrics: Record<string, number>) {
  for (const variant of VARIANTS) {
    const of = members.filter((m) => m.variant === variant);
    if (of.length === 0) continue;
    for (const name of Object.keys(of[0].scores)) {
      const values = of.map((m) => m.scores[name]).filter((v) => Number.isFinite(v));
      if (values.length === 0) continue;
      const { mean, sd } = meanSd(values);
      metrics[`${prefix}/${name}/${variant}`.replace("//", "/")] = mean;
      if (values.length > 1) metrics[`${prefix}/${name}_sd/${variant}`] = sd;
    }
  }
}

/**
 * The study's run: S(0°) − S(45°) of the synth variants, then each data set as a phase (in this process, or
 * `cfg.workers` at a time in workers), the means over seeds, the tables beside the `published` MIGs and the
 * deviations from the thesis.
 */
export async function runVaeManipulation(ctx: RunContext, cfg: Cfg, published: PublishedMig): Promise<RunResult> {
  const metrics: Record<string, number> = {};
  const details: Record<string, unknown> = {};
  if (cfg.datasets.includes("synth")) {
    const sets = synthVariants(ctx.seed, cfg);
    for (const variant of VARIANTS) {
      const [s0, s45] = preferenceScore(sets[variant].synth!, [0, 45]);
      // S(0°) − S(45°) > 0: the diagonal frame is cheaper (our preference score).
      metrics[`synth/preference_gap/${variant}`] = s0 - s45;
    }
  }
  const { results } = await runPhasesOn<Cfg, DatasetName, PhaseResult>(
    ctx,
    cfg.datasets,
    async (name, _, checkpoints) => ({ result: await runDataset(ctx, cfg, name, checkpoints) }),
    {
      stride: cfg.synth_steps,
      parallel: workerPhaseOptions(
        import.meta.url,
        cfg,
        (name: DatasetName) => name === "synth" ? cfg.synth_steps : 1_000 * cfg.steps,
      ),
    },
  );
  for (const result of results) {
    if (result.synth) {
      aggregate("synth", result.synth.members, metrics);
      details.synth = result.synth.members;
    }
    if (result.images) {
      const { dataset, members, references, perturbation } = result.images;
      aggregate(`${dataset}`, members.map((m) => ({ ...m, scores: prefixed(m.scores) })), metrics);
      metrics[`${dataset}/perturbation_gap`] = perturbation.gap;
      metrics[`${dataset}/perturbation_max_abs`] = perturbation.maxAbs;
      metrics[`${dataset}/reference_mig/ent`] = references.ent.reduce((a, b) => a + b) / references.ent.length;
      metrics[`${dataset}/reference_mig/dis`] = references.dis.reduce((a, b) => a + b) / references.dis.length;
      details[dataset] = result.images;
    }
  }
  details.results = resultTables(metrics, cfg, published);
  details.deviations = {
    synth: "the quick analogue (ours): a hand-made wiggle ε·sin(ω(w₁+w₂))·R e₃ instead of a " +
      "learned m; noise U[−ε, ε] per coordinate drawn once",
    m_output: "m's bound ‖m‖∞ ≤ ε by ε·tanh on its output (the thesis does not state how)",
    noise: "U[−ε, ε] per pixel drawn once per image, reflected into [0, 1] (unstated in the thesis)",
  };
  return { metrics, details };
}

/** Per variant: the synth scores (and S(0°) − S(45°)), the images' MIG beside Table 4.2, as the command prints them. */
function resultTables(m: Record<string, number>, cfg: Cfg, published: PublishedMig): ResultTable[] {
  const tables: ResultTable[] = [];
  if (cfg.datasets.includes("synth")) {
    tables.push({
      title:
        `synth (r ${cfg.ratio}, wiggle ε ${cfg.eps}, ω ${cfg.omega}; β ${cfg.beta}), mean over ${cfg.synth_seeds} seeds`,
      rows: VARIANTS.map((v) => ({
        variant: v,
        corr_gap: m[`synth/corr_gap/${v}`] ?? null,
        mig_binned: m[`synth/mig_binned/${v}`] ?? null,
        dto: m[`synth/dto/${v}`] ?? null,
        wiggle_fit_r2: m[`synth/wiggle_fit_r2/${v}`] ?? null,
        "S(0°) − S(45°)": m[`synth/preference_gap/${v}`] ?? null,
      })),
    });
  }
  for (const dataset of ["dsprites", "shapes3d"] as const) {
    if (!cfg.datasets.includes(dataset)) continue;
    tables.push({
      title: `${dataset}: β-VAE MIG beside Table 4.2`,
      rows: VARIANTS.map((v) => ({
        variant: v,
        mig: m[`${dataset}/mig/beta_vae/${v}`] ?? null,
        "Table 4.2": published[dataset][v],
      })),
    });
  }
  return tables;
}

/** Image scores keyed `<metric>/beta_vae` so that aggregate() writes `<dataset>/<metric>/beta_vae/<variant>`. */
function prefixed(scores: Scores): Scores {
  return Object.fromEntries(Object.entries(scores).map(([k, v]) => [`${k}/beta_vae`, v]));
}
