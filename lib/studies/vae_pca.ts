/**
 * The study behind `deno task vae-pca` (Zietlow2022 Ch. 3): its data sets, one
 * ensemble of VAEs per setting (phase), each member's DtO, DS, Δ_KL and Theorem 2 check, the random baselines,
 * and the metrics and tables of a run. Every setting's seeds train together as one ensemble (K VAEs in one graph,
 * lib/models/ensemble.ts); member k's weights, batches and noise come from its own seed, so its numbers do not
 * depend on its neighbours.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { type Matrix, meanSd } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import type { ResultTable } from "../core/scorecard.ts";
import type { GroundTruthDataset } from "../data/ground_truth.ts";
import { loadDataset } from "../data/registry.ts";
import { type PreparedData, prepareSynth, type TestSet } from "../data/synth_sets.ts";
import { defaultGeneratorSeed, preferenceScore, synthLinear, synthNonLinear, synthRotation } from "../data/synth.ts";
import { corrGap, disentanglementScore, type FactorKind, migBinned } from "../metrics/disentanglement_score.ts";
import { distanceToOrthogonality } from "../metrics/dto.ts";
import { linearPosteriorVariance, polarizedFraction, polarizedKl } from "../metrics/polarized.ts";
import { type EnsembleKind, type EnsembleOptions, EnsembleVae } from "../models/ensemble.ts";
import {
  type EnsembleTraining,
  memberCodes,
  type MemberSampler,
  rowSampler,
  trainEnsemble,
} from "../train/ensemble_training.ts";
import { decoderJacobians } from "../train/jacobian.ts";
import type { PhaseCheckpoints, PhaseOutcome } from "../train/phases.ts";
import { runPhasesOn, type WorkerPhase } from "../train/parallel_phases.ts";

/** The parts of the study (Tables 3.2–3.4, Fig. 3.7, Theorem 2). */
export const PARTS = ["ablation", "degeneracy", "beta_sweep", "pca", "polarized", "nonlin", "dsprites"] as const;
/** One part of the study. */
export type Part = typeof PARTS[number];

/** The config keys the study reads (the experiment documents each). */
export interface VaePcaConfig {
  /** Parts of the study (Tables 3.2–3.4, Fig. 3.7, Theorem 2). */
  parts: Part[];
  /** Synth data points per data set (80/10/10 split; numbers on the test split). */
  samples: number;
  /** Synth-Lin stretch r of the ablation, β sweep, PCA and polarized parts (Table 3.3: 2). */
  ratio: number;
  /** Degeneracy part: stretch ratios (Table 3.4). */
  ratios: number[];
  /** β of the Synth-Lin β-VAE and β-VAE_Σ (thesis: 1e-4). */
  beta: number;
  /** β of the Synth-Non-Lin β-VAE and β-VAE_Σ (thesis: 1e-3). */
  beta_nonlin: number;
  /** β sweep values (Fig. 3.7). */
  betas: number[];
  /** Adam learning rate of the linear models. */
  lr: number;
  /** Adam learning rate of the Synth-Non-Lin MLPs. */
  lr_nonlin: number;
  /** Observations per step. */
  batch: number;
  /** Adam steps of the linear models (600 epochs of 40,000). */
  steps: number;
  /** Adam steps of the Synth-Non-Lin MLPs. */
  steps_nonlin: number;
  /** Seeds per linear setting: --seed·100 + 0, 1, …. */
  seeds: number;
  /** Seeds per β of the sweep. */
  sweep_seeds: number;
  /** Seeds per Synth-Non-Lin model. */
  nonlin_seeds: number;
  /** Latents of the Synth models (the factors: Table 3.3's dep. setting). */
  latents: number;
  /** Latents of the polarized part's second setting (Table 3.2: 10). */
  latents_polarized: number;
  /** Synth-Non-Lin encoder widths, tanh (decoder reversed; Table 3.1). */
  hidden_nonlin: number[];
  /** Synth-Non-Lin generator (−1: the first in 0…99 whose S(45°) − S(0°) ≥ 0.05). */
  generator_seed: number;
  /** Test points whose decoder Jacobians give the DtO. */
  dto_points: number;
  /** Untrained N(0, 1) linear decoders of the random baseline. */
  random_decoders: number;
  /** dSprites part: image side. */
  dsprites_resolution: 32 | 64;
  /** dSprites part: encoder hidden width, ReLU (decoder reversed). */
  dsprites_hidden: number;
  /** dSprites part: hidden layers of each MLP. */
  dsprites_layers: number;
  /** dSprites part: latents (the 5 factors). */
  dsprites_latents: number;
  /** dSprites part: β of the β-VAE and β-VAE_Σ (Table 3.3: 4). */
  dsprites_beta: number;
  /** dSprites part: AdaGrad steps (50 epochs of 737,280 at batch 64). */
  dsprites_steps: number;
  /** dSprites part: AdaGrad learning rate. */
  dsprites_lr: number;
  /** dSprites part: seeds per model. */
  dsprites_seeds: number;
  /** dSprites part: test images (DS fits on 80%). */
  dsprites_test: number;
  /** Steps between evaluations: learning curves and Δ_KL (Table 3.2: every 500). */
  eval_every: number;
  /** Steps between logged losses. */
  log_every: number;
  /** Steps between checkpoints inside a setting (0: none). */
  checkpoint_every: number;
  /**
   * Phases (settings, models) trained at once, each in a worker on its own core; 1: in this process. The numbers do not
   * depend on it.
   */
  workers: number;
}
type Cfg = VaePcaConfig;

const MODELS = ["beta_vae", "ae", "beta_vae_sigma"] as const;
type SynthModel = typeof MODELS[number];
const KIND: Record<SynthModel, EnsembleKind> = { beta_vae: "vae", ae: "ae", beta_vae_sigma: "full" };

/** Number formatting of keys: `1.2`, `0.01`. */
const key = (v: number) => String(v);

// ---------------------------------------------------------------------------------------------------------------
// Data

/** Data sets of a run, built once per process (a worker builds those of its own phases). */
const prepared = new Map<string, PreparedData>();
function linearData(seed: number, cfg: Cfg, ratio: number): PreparedData {
  const id = `${seed}/lin/${ratio}/${cfg.samples}`;
  if (!prepared.has(id)) {
    prepared.set(
      id,
      prepareSynth(synthLinear({ ratio, n: cfg.samples }, Rng.derive(seed, "data", "lin", ratio)), seed),
    );
  }
  return prepared.get(id)!;
}

/** The Synth-Non-Lin generator of a run: the configured one, or the first with a clear preference. */
function generatorSeed(cfg: Cfg): number {
  return cfg.generator_seed >= 0 ? cfg.generator_seed : defaultGeneratorSeed();
}

/** The Synth-Non-Lin data of a run, built once per process. */
function nonLinearData(seed: number, cfg: Cfg): PreparedData {
  const g = generatorSeed(cfg);
  const id = `${seed}/nonlin/${g}/${cfg.samples}`;
  if (!prepared.has(id)) {
    const d = synthNonLinear({ n: cfg.samples, generatorSeed: g }, Rng.derive(seed, "data", "nonlin"));
    prepared.set(id, prepareSynth(d, seed));
  }
  return prepared.get(id)!;
}

const datasets = new Map<string, GroundTruthDataset>();
function dspritesDataset(cfg: Cfg): GroundTruthDataset {
  const id = `dsprites/${cfg.dsprites_resolution}`;
  if (!datasets.has(id)) datasets.set(id, loadDataset("dsprites", { size: cfg.dsprites_resolution }));
  return datasets.get(id)!;
}

function dspritesTest(seed: number, cfg: Cfg): TestSet & { kinds: FactorKind[] } {
  const dataset = dspritesDataset(cfg);
  const rng = Rng.derive(seed, "dsprites-test");
  const factors = dataset.sampleFactors(cfg.dsprites_test, rng);
  const x = dataset.observations(factors, rng).values;
  const f = dataset.factorNames.length;
  return {
    x,
    w: { data: Float64Array.from(factors.values), rows: factors.n, cols: f },
    rows: factors.n,
    kinds: dataset.factorNames.map((_, i) => dataset.categorical.includes(i) ? "classification" : "regression"),
  };
}

function dspritesSampler(cfg: Cfg): MemberSampler {
  const dataset = dspritesDataset(cfg);
  const [h, w, c] = dataset.imageShape;
  return {
    input: h * w * c,
    sample(_k, batch, rng, out, offset) {
      out.set(dataset.observations(dataset.sampleFactors(batch, rng), rng).values, offset);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Phases: one ensemble each

/** Member seeds of a setting: --seed·100 + 0, 1, … (the same offsets in every setting). */
const memberSeeds = (seed: number, count: number) => Array.from({ length: count }, (_, i) => seed * 100 + i);

/** What one ensemble member is: its labels in the metric keys and its data. */
interface Member {
  seed: number;
  beta: number;
  /** Keys this member's scores are averaged under, e.g. "degeneracy/{}@1.2" with {} the score's name. */
  group: string;
  data: PreparedData;
}

interface PhaseSpec {
  id: string;
  kind: EnsembleKind;
  members: Member[];
  hidden: number[];
  activation: "tanh" | "relu";
  latents: number;
  loss: "squared" | "bernoulli";
  steps: number;
  lr: number;
  optimizer: "adam" | "adagrad";
  /** Test data shared by every member when they share one (dsprites). */
  test?: TestSet;
  /** Scores to compute at each evaluation (the final one computes every score). */
  curve: ("dto" | "ds" | "delta_kl")[];
}

/** The phases the parts need, in order. */
export function phaseIds(cfg: Cfg): string[] {
  const ids: string[] = [];
  const parts = new Set<Part>(cfg.parts);
  if (parts.has("ablation") || parts.has("pca") || parts.has("polarized")) ids.push("ablation/beta_vae");
  if (parts.has("ablation")) ids.push("ablation/ae", "ablation/beta_vae_sigma");
  if (parts.has("degeneracy")) ids.push("degeneracy");
  if (parts.has("beta_sweep")) ids.push("beta_sweep");
  if (parts.has("polarized")) ids.push("polarized/10");
  if (parts.has("nonlin")) ids.push(...MODELS.map((m) => `nonlin/${m}`));
  if (parts.has("dsprites")) ids.push("dsprites/vae", "dsprites/ae", "dsprites/beta_vae_sigma");
  return ids;
}

function phaseSpec(seed: number, cfg: Cfg, id: string): PhaseSpec {
  const linear = {
    hidden: [],
    activation: "tanh" as const,
    loss: "squared" as const,
    lr: cfg.lr,
    optimizer: "adam" as const,
  };
  const seeds = memberSeeds(seed, cfg.seeds);
  const [part, model] = id.split("/") as [string, string | undefined];
  if (part === "ablation") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: KIND[model as SynthModel],
      members: seeds.map((s) => ({ seed: s, beta: cfg.beta, group: `ablation/{}/${model}`, data })),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: model === "beta_vae" ? ["dto", "ds", "delta_kl"] : ["dto", "ds"],
      ...linear,
    };
  }
  if (part === "degeneracy") {
    return {
      id,
      kind: "vae",
      members: cfg.ratios.flatMap((r) =>
        seeds.map((s) => ({
          seed: s,
          beta: cfg.beta,
          group: `degeneracy/{}@${key(r)}`,
          data: linearData(seed, cfg, r),
        }))
      ),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: ["dto", "ds"],
      ...linear,
    };
  }
  if (part === "beta_sweep") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: "vae",
      members: cfg.betas.flatMap((b) =>
        memberSeeds(seed, cfg.sweep_seeds).map((s) => ({ seed: s, beta: b, group: `beta_sweep/{}@${key(b)}`, data }))
      ),
      latents: cfg.latents,
      steps: cfg.steps,
      curve: ["ds"],
      ...linear,
    };
  }
  if (part === "polarized") {
    const data = linearData(seed, cfg, cfg.ratio);
    return {
      id,
      kind: "vae",
      members: seeds.map((s) => ({ seed: s, beta: cfg.beta, group: "latents10/{}", data })),
      latents: cfg.latents_polarized,
      steps: cfg.steps,
      curve: ["delta_kl"],
      ...linear,
    };
  }
  if (part === "nonlin") {
    const data = nonLinearData(seed, cfg);
    return {
      id,
      kind: KIND[model as SynthModel],
      members: memberSeeds(seed, cfg.nonlin_seeds).map((s) => ({
        seed: s,
        beta: cfg.beta_nonlin,
        group: `nonlin/{}/${model}`,
        data,
      })),
      hidden: cfg.hidden_nonlin,
      activation: "tanh",
      latents: cfg.latents,
      loss: "squared",
      steps: cfg.steps_nonlin,
      lr: cfg.lr_nonlin,
      optimizer: "adam",
      curve: ["dto", "ds"],
    };
  }
  // dsprites: β-VAE and VAE share one ensemble (diagonal posterior, β per member).
  const test = dspritesTest(seed, cfg);
  const data: PreparedData = { train: new Float32Array(0), input: test.x.length / test.rows, test, kinds: test.kinds };
  const dsSeeds = memberSeeds(seed, cfg.dsprites_seeds);
  const members: Member[] = model === "vae"
    ? [
      ...dsSeeds.map((s) => ({ seed: s, beta: cfg.dsprites_beta, group: "dsprites/{}/beta_vae", data })),
      ...dsSeeds.map((s) => ({ seed: s, beta: 1, group: "dsprites/{}/vae", data })),
    ]
    : dsSeeds.map((s) => ({ seed: s, beta: cfg.dsprites_beta, group: `dsprites/{}/${model}`, data }));
  return {
    id,
    kind: model === "vae" ? "vae" : KIND[model as SynthModel],
    members,
    hidden: Array.from({ length: cfg.dsprites_layers }, () => cfg.dsprites_hidden),
    activation: "relu",
    latents: cfg.dsprites_latents,
    loss: "bernoulli",
    steps: cfg.dsprites_steps,
    lr: cfg.dsprites_lr,
    optimizer: "adagrad",
    test,
    curve: ["dto", "ds"],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Scores of one member

type Scores = Record<string, number>;

/** DtO at the first `dto_points` test codes, DS, corr-gap, MIG-binned, Δ_KL and active counts of member k. */
async function scoreMember(
  model: EnsembleVae,
  k: number,
  member: Member,
  cfg: Cfg,
  which: readonly string[],
): Promise<Scores> {
  const test = member.data.test;
  const codes = await memberCodes(model, k, test.x, test.rows);
  const mean: Matrix = { data: codes.mean, rows: test.rows, cols: codes.cols };
  const out: Scores = {};
  // Over all latents, as the thesis' setting has as many latents as factors (Zietlow2022 Table 3.1); a code wider
  // than the data (Table 3.2's 10 latents on 3-D data) has no orthogonal Jacobian to measure.
  if (which.includes("dto") && codes.cols <= (member.data.synth?.dim ?? test.x.length / test.rows)) {
    const points = Math.min(cfg.dto_points, test.rows);
    const z: Matrix = { data: codes.mean.subarray(0, points * codes.cols), rows: points, cols: codes.cols };
    const j = await decoderJacobians(model.memberDecoder(k), z, { method: "auto" });
    const dto = distanceToOrthogonality(j.jac, j.n, j.rows, j.cols);
    out.dto = dto.dto;
    out.sv_gap = dto.svGap;
  }
  if (which.includes("ds")) {
    out.ds = disentanglementScore(mean, test.w, member.data.kinds).ds;
    out.corr_gap = corrGap(mean, test.w).gap;
    if (member.data.synth) out.mig_binned = migBinned(mean, test.w).mig;
  }
  if (which.includes("delta_kl") && codes.logVar) {
    const p = polarizedKl(mean, { data: codes.logVar, rows: test.rows, cols: codes.cols });
    out.delta_kl = p.deltaKl;
    out.active_std = p.activeStd.filter(Boolean).length;
    out.active = p.activeVar.filter(Boolean).length;
  }
  return out;
}

/** The linear decoder's columns c_j = dec(e_j) − dec(0) of member k, [outputs][latents]. */
async function decoderColumns(model: EnsembleVae, k: number, latents: number): Promise<number[][]> {
  const decoded = tf.tidy(() =>
    model.memberDecoder(k)(tf.concat([tf.zeros([1, latents]), tf.eye(latents)], 0) as tf.Tensor2D)
  );
  const values = await decoded.array() as number[][];
  decoded.dispose();
  return values[0].map((_, r) => values.slice(1).map((row) => row[r] - values[0][r]));
}

/** Mean over the rows of exp(log σ_j²) per latent: E σ_j², the posterior noise of latent j. */
function meanPosteriorVariance(logVar: Float32Array, rows: number, latents: number): number[] {
  return Array.from({ length: latents }, (_, j) => {
    let s = 0;
    for (let i = 0; i < rows; i++) s += Math.exp(logVar[i * latents + j]);
    return s / rows;
  });
}

/**
 * Theorem 2 check of one linear β-VAE member: |cos| of its columns with R e₁, R e₂, and its E σ_j² (`sigma2`)
 * against β/(2λ_j) of the axis it matches.
 */
async function pcaCheck(model: EnsembleVae, k: number, member: Member, ratio: number, sigma2: number[]) {
  const columns = await decoderColumns(model, k, 2);
  const rotation = synthRotation();
  const axes = [0, 1].map((a) => rotation.map((row) => row[a]));
  const cos = (j: number, a: number) => {
    const c = columns.map((row) => row[j]);
    const dot = c.reduce((s, v, i) => s + v * axes[a][i], 0);
    return Math.abs(dot) / Math.hypot(...c);
  };
  // Latent j ↔ axis π(j): the better of the two matchings.
  const straight = cos(0, 0) + cos(1, 1), crossed = cos(0, 1) + cos(1, 0);
  const axisOf = straight >= crossed ? [0, 1] : [1, 0];
  const lambda = [ratio * ratio / 12, 1 / 12];
  const relErr = Math.max(...[0, 1].map((j) => {
    const predicted = linearPosteriorVariance(member.beta, lambda[axisOf[j]]);
    return Math.abs(sigma2[j] - predicted) / predicted;
  }));
  return { cos_min: Math.min(cos(0, axisOf[0]), cos(1, axisOf[1])), sigma2_rel_err: relErr };
}

/** Means over members of each score, keyed by the members' groups ({} replaced by the score's name). */
function groupMeans(spec: PhaseSpec, perMember: Scores[]): Record<string, number> {
  const sums = new Map<string, number[]>();
  spec.members.forEach((member, k) => {
    for (const [name, value] of Object.entries(perMember[k])) {
      const id = member.group.replace("{}", name);
      if (!sums.has(id)) sums.set(id, []);
      sums.get(id)!.push(value);
    }
  });
  return Object.fromEntries([...sums].map(([id, values]) => [id, values.reduce((a, b) => a + b, 0) / values.length]));
}

/** The result of a phase: every member's final scores and, for the polarized statistics, its Δ_KL history. */
interface PhaseResult {
  id: string;
  members: { seed: number; beta: number; group: string; scores: Scores }[];
}

/** Δ_KL per member at each evaluated step. */
type KlHistory = { steps: number[]; deltas: number[][] };

async function runPhase(ctx: RunContext, cfg: Cfg, id: string, checkpoints: PhaseCheckpoints): Promise<PhaseResult> {
  const spec = phaseSpec(ctx.seed, cfg, id);
  const sampler = spec.id.startsWith("dsprites")
    ? dspritesSampler(cfg)
    : rowSampler(spec.members.map((m) => m.data.train), spec.members[0].data.input);
  const model: EnsembleOptions = {
    seeds: spec.members.map((m) => m.seed),
    input: sampler.input,
    latents: spec.latents,
    hidden: spec.hidden,
    activation: spec.activation,
    kind: spec.kind,
    betas: spec.members.map((m) => m.beta),
    loss: spec.loss,
  };
  let history: KlHistory = { steps: [], deltas: spec.members.map(() => []) };
  const tracksKl = spec.curve.includes("delta_kl") && spec.kind === "vae";
  const fractions = (total: number) => history.deltas.map((d) => polarizedFraction(history.steps, d, total));
  const training: EnsembleTraining = {
    label: spec.id,
    model,
    data: sampler,
    steps: spec.steps,
    batch: cfg.batch,
    lr: spec.lr,
    optimizer: spec.optimizer,
    logEvery: cfg.log_every,
    evaluateEvery: cfg.eval_every,
    checkpointEvery: cfg.checkpoint_every,
    evaluate: async (ensemble, step) => {
      const perMember: Scores[] = [];
      for (let k = 0; k < spec.members.length; k++) {
        perMember.push(await scoreMember(ensemble, k, spec.members[k], cfg, spec.curve));
      }
      const logged: Record<string, number> = {};
      if (tracksKl) {
        history.steps.push(step);
        perMember.forEach((s, k) => history.deltas[k].push(s.delta_kl));
        // The polarized fraction as if training ended here: its learning curve.
        const f = fractions(step);
        f.forEach((value, k) => (perMember[k].polarized = value));
      }
      for (const [name, value] of Object.entries(groupMeans(spec, perMember))) logged[name] = value;
      // Logged under the final keys (not the phase label), so each target's curve is its own metric.
      ctx.log(step, logged);
      return {};
    },
  };
  const ensemble = await trainEnsemble(ctx, training, checkpoints, {
    get: () => history,
    set: (value: KlHistory) => (history = value),
  });
  try {
    const members: PhaseResult["members"] = [];
    const f = tracksKl ? fractions(spec.steps) : [];
    for (let k = 0; k < spec.members.length; k++) {
      const member = spec.members[k];
      const scores = await scoreMember(ensemble, k, member, cfg, ["dto", "ds", "delta_kl"]);
      if (tracksKl) scores.polarized = f[k];
      if (spec.id === "ablation/beta_vae" || spec.id === "beta_sweep") {
        const test = member.data.test;
        const codes = await memberCodes(ensemble, k, test.x, test.rows);
        const sigma2 = meanPosteriorVariance(codes.logVar!, test.rows, spec.latents);
        sigma2.forEach((v, j) => (scores[`sigma2_${j}`] = v));
        if (spec.id === "ablation/beta_vae" && spec.latents === 2) {
          Object.assign(scores, await pcaCheck(ensemble, k, member, cfg.ratio, sigma2));
        }
      }
      members.push({ seed: member.seed, beta: member.beta, group: member.group, scores });
    }
    if (spec.id === "dsprites/ae") members.push(...await randomImageDecoders(ctx.seed, cfg, spec, model));
    return { id, members };
  } finally {
    ensemble.dispose();
  }
}

/** The dsprites part's random decoders: the β-VAE's untrained decoders, at codes z ~ N(0, I). */
async function randomImageDecoders(seed: number, cfg: Cfg, spec: PhaseSpec, trained: EnsembleOptions) {
  const untrained = new EnsembleVae({ ...trained, kind: "vae", betas: trained.seeds.map(() => cfg.dsprites_beta) });
  try {
    const out: PhaseResult["members"] = [];
    const rng = Rng.derive(seed, "random-codes");
    const points = Math.min(cfg.dto_points, spec.test!.rows);
    for (let k = 0; k < spec.members.length; k++) {
      const z: Matrix = { data: rng.normalArray(points * spec.latents), rows: points, cols: spec.latents };
      const j = await decoderJacobians(untrained.memberDecoder(k), z, { method: "auto" });
      out.push({
        seed: spec.members[k].seed,
        beta: 0,
        group: "dsprites/{}/random",
        scores: { dto: distanceToOrthogonality(j.jac, j.n, j.rows, j.cols).dto },
      });
    }
    return out;
  } finally {
    untrained.dispose();
  }
}

/** The random baseline of the ablation: DtO of `count` untrained linear 3×2 decoders with N(0, 1) weights. */
function randomLinearDto(seed: number, count: number, outputs = 3, latents = 2): { mean: number; sd: number } {
  const rng = Rng.derive(seed, "random-decoders");
  const jac = rng.normalArray(count * outputs * latents);
  const { perSample } = distanceToOrthogonality(jac, count, outputs, latents);
  const { mean, sd } = meanSd(perSample);
  return { mean, sd };
}

/** A phase as a worker runs it (lib/train/parallel_phases.ts): no checkpoints inside it. */
export const workerPhase: WorkerPhase<Cfg, string, PhaseResult> = async (
  ctx,
  cfg,
  id,
): Promise<PhaseOutcome<PhaseResult>> => ({
  result: await runPhase(ctx, cfg, id, { resumed: null, save: () => Promise.resolve() }),
});

/** Relative cost of a phase: members × steps × a width factor. */
function phaseCost(cfg: Cfg, id: string): number {
  if (id.startsWith("nonlin")) return cfg.nonlin_seeds * cfg.steps_nonlin * 6;
  if (id.startsWith("dsprites")) return cfg.dsprites_seeds * cfg.dsprites_steps * 400;
  const members = id === "degeneracy"
    ? cfg.ratios.length * cfg.seeds
    : id === "beta_sweep"
    ? cfg.betas.length * cfg.sweep_seeds
    : cfg.seeds;
  return (members + 10) * cfg.steps * (id === "polarized/10" ? 2 : 1);
}

// ---------------------------------------------------------------------------------------------------------------

/** Table 3.3/3.4's settings beside the thesis' values, and the β sweep, as the command prints them. */
function resultTables(m: Record<string, number>): ResultTable[] {
  const pm = (key: string) =>
    m[key] === undefined
      ? null
      : m[`${key.replace(/\/(dto|ds)([/@])/, "/$1_sd$2")}`] === undefined
      ? m[key].toFixed(3)
      : `${m[key].toFixed(3)} ± ${m[key.replace(/\/(dto|ds)([/@])/, "/$1_sd$2")].toFixed(3)}`;
  const rows: ResultTable["rows"] = [];
  const row = (setting: string, dto: string, ds: string, paper: [string, string]) => {
    if (m[dto] !== undefined) {
      rows.push({ setting, DtO: pm(dto), "DtO (thesis)": paper[0], DS: pm(ds), "DS (thesis)": paper[1] });
    }
  };
  // Setting, its keys with {} for dto / ds, Table 3.3–3.4's DtO and DS.
  for (
    const [setting, keys, dto, ds] of [
      ["Synth-Lin r 2, β-VAE", "ablation/{}/beta_vae", "0.00 ± 0.00", "0.99 ± 0.01"],
      ["Synth-Lin r 2, AE", "ablation/{}/ae", "0.33 ± 0.18", "0.71 ± 0.19"],
      ["Synth-Lin r 2, β-VAE_Σ", "ablation/{}/beta_vae_sigma", "0.34 ± 0.35", "0.71 ± 0.31"],
      ["Synth-Lin r 2, untrained decoders", "ablation/{}/random", "0.79 ± 0.21", "—"],
      ["Synth-Lin r 1, β-VAE", "degeneracy/{}@1", "0.49 ± 0.32", "0.51 ± 0.28"],
      ["Synth-Lin r 1.2, β-VAE", "degeneracy/{}@1.2", "0.20 ± 0.24", "0.76 ± 0.25"],
      ["Synth-Lin r 1.5, β-VAE", "degeneracy/{}@1.5", "0.01 ± 0.06", "0.98 ± 0.06"],
      ["Synth-Non-Lin, β-VAE", "nonlin/{}/beta_vae", "0.18 ± 0.02", "0.73 ± 0.16"],
      ["Synth-Non-Lin, AE", "nonlin/{}/ae", "0.54 ± 0.13", "0.59 ± 0.30"],
      ["Synth-Non-Lin, β-VAE_Σ", "nonlin/{}/beta_vae_sigma", "0.55 ± 0.02", "0.42 ± 0.24"],
      ["dSprites, beta_vae", "dsprites/{}/beta_vae", "0.76 ± 0.08", "0.33 ± 0.15"],
      ["dSprites, vae", "dsprites/{}/vae", "1.08 ± 0.15", "0.21 ± 0.10"],
      ["dSprites, ae", "dsprites/{}/ae", "1.62 ± 0.03", "0.09 ± 0.04"],
      ["dSprites, beta_vae_sigma", "dsprites/{}/beta_vae_sigma", "1.73 ± 0.14", "0.12 ± 0.06"],
      ["dSprites, random", "dsprites/{}/random", "1.86 ± 0.11", "—"],
    ]
  ) row(setting, keys.replace("{}", "dto"), keys.replace("{}", "ds"), [dto, ds]);
  const sweep = Object.keys(m).filter((k) => /^beta_sweep\/active@/.test(k)).map((k) =>
    k.slice("beta_sweep/active@".length)
  );
  const tables: ResultTable[] = [{ title: "DtO and DS, mean ± s.d. over seeds, beside Tables 3.3–3.4", rows }];
  if (sweep.length > 0) {
    tables.push({
      title: "β sweep (Fig. 3.7): active latents (E σ² < 0.8), DS, DtO; pruning predicted at β ≳ 2λ_j = 0.167, 0.667",
      rows: sweep.map((b) => ({
        β: b,
        active: m[`beta_sweep/active@${b}`],
        DS: m[`beta_sweep/ds@${b}`] ?? null,
        DtO: m[`beta_sweep/dto@${b}`] ?? null,
      })),
    });
  }
  const extra: ResultTable["rows"] = [];
  if (m["pca/cos_min"] !== undefined) {
    extra.push({ check: "decoder columns vs R e₁, R e₂: min |cos| (claim ≥ 0.99)", value: m["pca/cos_min"] });
    extra.push({
      check: "σ_j² vs β/(2λ_j): largest relative error (claim ≤ 0.1)",
      value: m["pca/sigma2_rel_err"],
    });
  }
  if (m["polarized/synth_lin/dep"] !== undefined) {
    extra.push({
      check: "Δ_KL < 3% to the end, share of training, 2 latents (Table 3.2: 0.998)",
      value: m["polarized/synth_lin/dep"],
    });
    extra.push({ check: "the same, 10 latents (Table 3.2: 0.967)", value: m["polarized/synth_lin/10"] });
  }
  if (extra.length > 0) tables.push({ title: "Theorem 2 and the polarized regime", rows: extra });
  return tables;
}

/**
 * Runs every phase the parts need (`cfg.workers` at a time, in workers that call {@linkcode workerPhase}) and the
 * random baselines; returns the run's metrics (means and s.d. over each group's members) and its details: every
 * member's scores, the Synth-Non-Lin generator and the result tables.
 */
export async function runVaePcaStudy(
  ctx: RunContext,
  cfg: Cfg,
): Promise<{ metrics: Record<string, number>; details: Record<string, unknown> }> {
  const metrics: Record<string, number> = {};
  const details: Record<string, unknown> = {};
  if (cfg.parts.includes("ablation")) {
    const random = randomLinearDto(ctx.seed, cfg.random_decoders);
    metrics["ablation/dto/random"] = random.mean;
    metrics["ablation/dto_sd/random"] = random.sd;
    ctx.log(0, { "ablation/dto/random": random.mean });
  }
  if (cfg.parts.includes("nonlin")) {
    const d = nonLinearData(ctx.seed, cfg).synth!;
    const [s0, s45] = preferenceScore(d, [0, 45]);
    metrics["nonlin/preference_gap"] = s45 - s0;
    details.nonlin_generator = { generator_seed: generatorSeed(cfg), s0, s45 };
  }
  const ids = phaseIds(cfg);
  const { results } = await runPhasesOn<Cfg, string, PhaseResult>(
    ctx,
    ids,
    async (id, _, checkpoints) => ({ result: await runPhase(ctx, cfg, id, checkpoints) }),
    {
      stride: Math.max(cfg.steps, cfg.steps_nonlin, cfg.parts.includes("dsprites") ? cfg.dsprites_steps : 0),
      parallel: {
        module: import.meta.url,
        exportName: "workerPhase",
        cfg,
        workers: cfg.workers,
        cost: (id) => phaseCost(cfg, id),
      },
    },
  );
  const table: Record<string, unknown>[] = [];
  for (const result of results) {
    // Means and s.d. over the members of each group.
    const groups = new Map<string, Scores[]>();
    for (const m of result.members) {
      if (!groups.has(m.group)) groups.set(m.group, []);
      groups.get(m.group)!.push(m.scores);
      table.push({ phase: result.id, seed: m.seed, beta: m.beta, group: m.group, ...m.scores });
    }
    for (const [group, all] of groups) {
      for (const name of Object.keys(all[0])) {
        const values = all.map((s) => s[name]);
        const { mean, sd } = meanSd(values);
        metrics[group.replace("{}", name)] = mean;
        if (values.length > 1) metrics[group.replace("{}", `${name}_sd`)] = sd;
      }
    }
  }
  // The ablation's β-VAE is also the PCA check and Table 3.2's dep. setting.
  const ablation = results.find((r) => r.id === "ablation/beta_vae");
  if (ablation) {
    if (cfg.parts.includes("pca") && cfg.latents === 2) {
      metrics["pca/cos_min"] = metrics["ablation/cos_min/beta_vae"];
      metrics["pca/sigma2_rel_err"] = metrics["ablation/sigma2_rel_err/beta_vae"];
    }
    if (cfg.parts.includes("polarized")) metrics["polarized/synth_lin/dep"] = metrics["ablation/polarized/beta_vae"];
  }
  if (cfg.parts.includes("polarized")) metrics["polarized/synth_lin/10"] = metrics["latents10/polarized"];
  details.members = table;
  details.results = resultTables(metrics);
  return { metrics, details };
}
