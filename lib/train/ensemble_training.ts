/**
 * Trains an {@linkcode EnsembleVae} (K independent VAEs in one graph) as one
 * phase of a run: every member draws its own batches and posterior noise
 * from streams of its own seed, so member k's numbers do not depend on which
 * other members share its graph. Checkpoints hold the weights, the optimizer
 * and every member's streams, so a stopped phase resumes to the same numbers.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import { Rng, type RngState } from "../core/rng.ts";
import { type EnsembleOptions, EnsembleVae } from "../models/ensemble.ts";
import { type LossTerms, optimizerState, restoreOptimizer, trainPhase } from "./loop.ts";
import type { PhaseCheckpoints } from "./phases.ts";

/** Where a member's training observations come from. */
export interface MemberSampler {
  /** Input width of one observation. */
  readonly input: number;
  /** Writes `batch` observations for member `k` into `out` at `offset`, drawn with `rng`. */
  sample(k: number, batch: number, rng: Rng, out: Float32Array, offset: number): void;
}

/** A member sampler over fixed training rows per member (`rows[k]` row-major, `input` columns). */
export function rowSampler(rows: readonly Float32Array[], input: number): MemberSampler {
  return {
    input,
    sample(k, batch, rng, out, offset) {
      const data = rows[k];
      const count = data.length / input;
      for (let b = 0; b < batch; b++) {
        const r = rng.int(count);
        out.set(data.subarray(r * input, (r + 1) * input), offset + b * input);
      }
    },
  };
}

/** One ensemble phase: the model, its data and its schedule. */
export interface EnsembleTraining {
  /** Metric prefix of the logged terms (e.g. "ablation/beta_vae"). */
  label: string;
  /** The ensemble: widths, kind, the members' β and the reconstruction loss. */
  model: EnsembleOptions;
  /** Each member's training observations. */
  data: MemberSampler;
  /** Optimizer steps. */
  steps: number;
  /** Observations per member per step. */
  batch: number;
  /** Learning rate of the shared optimizer. */
  lr: number;
  /** Adam (β 0.9, 0.999, ε 1e-8; the default) or Adagrad. */
  optimizer?: "adam" | "adagrad";
  /** Steps between logged loss terms. */
  logEvery: number;
  /** Evaluation every `evaluateEvery` steps and at the end (0: only at the end); its values are logged. */
  evaluateEvery: number;
  /** The values to log at an evaluation step; none when absent. */
  evaluate?(model: EnsembleVae, step: number): Promise<Record<string, number>>;
  /** Steps between checkpoints (0: none). */
  checkpointEvery: number;
}

interface EnsembleState {
  batches: RngState[];
  noise: RngState[];
  /** The evaluations so far, for statistics over the training history (e.g. the polarized fraction). */
  history: unknown;
}

/**
 * Trains the ensemble from scratch or from `checkpoints.resumed`. `history`
 * is the caller's record of earlier evaluations, saved with each checkpoint
 * and handed back on resume. Returns the trained model (the caller disposes it).
 */
export async function trainEnsemble<H>(
  ctx: RunContext,
  training: EnsembleTraining,
  checkpoints: PhaseCheckpoints,
  history: { get(): H; set(value: H): void },
): Promise<EnsembleVae> {
  const model = new EnsembleVae(training.model);
  const seeds = training.model.seeds;
  const optimizer = training.optimizer === "adagrad"
    ? tf.train.adagrad(training.lr)
    : tf.train.adam(training.lr, 0.9, 0.999, 1e-8);
  const resumed = checkpoints.resumed;
  const state = resumed?.state as EnsembleState | undefined;
  if (resumed && state) {
    model.params.load(resumed.arrays, "model/");
    await restoreOptimizer(optimizer, resumed.arrays);
    history.set(state.history as H);
  }
  const batchRngs = seeds.map((s, k) =>
    state ? Rng.fromState(state.batches[k]) : Rng.derive(s, "batches", training.label)
  );
  const noiseRngs = seeds.map((s, k) => state ? Rng.fromState(state.noise[k]) : Rng.derive(s, "noise", training.label));
  const members = seeds.length, batch = training.batch, input = training.data.input;
  const x = new Float32Array(members * batch * input);
  const noise = new Float32Array(members * batch * training.model.latents);
  const usesNoise = training.model.kind !== "ae";

  try {
    await trainPhase(ctx, {
      label: training.label,
      steps: training.steps,
      startStep: resumed?.step ?? 0,
      variables: model.params.list(),
      optimizer,
      logEvery: training.logEvery,
      loss: (): LossTerms => {
        drawEnsembleBatch(training.data, batch, batchRngs, usesNoise ? noiseRngs : null, x, noise);
        return ensembleLoss(model, x, noise, batch);
      },
      evaluateEvery: training.evaluateEvery,
      evaluate: training.evaluate ? (step) => training.evaluate!(model, step) : undefined,
      checkpointEvery: training.checkpointEvery,
      checkpoint: async (step) => {
        await checkpoints.save(
          step,
          { ...model.params.entries("model/"), ...(await optimizerState(optimizer)) },
          {
            batches: batchRngs.map((r) => r.state()),
            noise: noiseRngs.map((r) => r.state()),
            history: history.get(),
          } satisfies EnsembleState,
        );
      },
    });
  } catch (error) {
    model.dispose();
    throw error;
  } finally {
    optimizer.dispose();
  }
  return model;
}

/**
 * Draws one step's batch of every member into `x` `[K, batch, input]` and, with `noiseRngs`, its posterior noise into
 * `noise` `[K, batch, latents]`: member k from its own streams `batchRngs[k]` and `noiseRngs[k]` only.
 */
export function drawEnsembleBatch(
  data: MemberSampler,
  batch: number,
  batchRngs: readonly Rng[],
  noiseRngs: readonly Rng[] | null,
  x: Float32Array,
  noise: Float32Array,
): void {
  const members = batchRngs.length, input = data.input, latents = noise.length / (members * batch);
  for (let k = 0; k < members; k++) {
    data.sample(k, batch, batchRngs[k], x, k * batch * input);
    if (noiseRngs) noise.set(noiseRngs[k].normalArray(batch * latents), k * batch * latents);
  }
}

/**
 * The loss terms of a drawn batch (`x` `[K, batch, input]`, `noise` `[K, batch, latents]`): `total` the members'
 * summed loss, which a step minimises, and their mean reconstruction and KL terms, which are logged.
 */
export function ensembleLoss(model: EnsembleVae, x: Float32Array, noise: Float32Array, batch: number): LossTerms {
  const members = model.options.seeds.length, latents = model.options.latents;
  const { total, rec, kl } = model.loss(
    tf.tensor3d(x, [members, batch, x.length / (members * batch)]),
    tf.tensor3d(noise, [members, batch, latents]),
  );
  return { total, reconstruction: tf.mean(rec), kl: tf.mean(kl) };
}

/** Member `k`'s posterior means and log-variances of `x` ([rows, input]), in chunks; log-variances absent for an AE. */
export async function memberCodes(
  model: EnsembleVae,
  k: number,
  x: Float32Array,
  rows: number,
  chunk = 2_000,
): Promise<{ mean: Float32Array; logVar: Float32Array | null; cols: number }> {
  const input = x.length / rows;
  const encode = model.memberEncoder(k);
  const parts: { mean: Float32Array; logVar: Float32Array | null }[] = [];
  for (let start = 0; start < rows; start += chunk) {
    const count = Math.min(chunk, rows - start);
    const out = tf.tidy(() => {
      const { mean, logVar } = encode(tf.tensor2d(x.subarray(start * input, (start + count) * input), [count, input]));
      return logVar ? [mean, logVar] : [mean];
    });
    parts.push({
      mean: await out[0].data() as Float32Array,
      logVar: out[1] ? await out[1].data() as Float32Array : null,
    });
    tf.dispose(out);
  }
  const cols = model.options.latents;
  const join = (pick: (p: typeof parts[number]) => Float32Array) => {
    const out = new Float32Array(rows * cols);
    let at = 0;
    for (const p of parts) (out.set(pick(p), at), at += pick(p).length);
    return out;
  };
  return { mean: join((p) => p.mean), logVar: parts[0].logVar ? join((p) => p.logVar!) : null, cols };
}
