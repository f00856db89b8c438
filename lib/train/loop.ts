/**
 * The shared training loop: one optimizer step per iteration inside a tidy
 * scope, metrics logged and progress shown every `logEvery` steps,
 * evaluation and checkpoints on their own schedules.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { RunContext } from "../core/experiment.ts";
import type { NpyArray } from "../core/npy.ts";
import { readScalarRecord } from "../core/readback.ts";
import { stopPoint } from "../core/run_guard.ts";

/** Scalar loss terms of one step: `total` is minimised, every term is logged. */
export type LossTerms = { total: tf.Scalar; [term: string]: tf.Scalar };

/** One training phase: what to optimise, how long, what to log. */
export interface TrainPhase {
  /** Metric prefix, e.g. "L3/slowflow". */
  label: string;
  /** Last step of the phase. */
  steps: number;
  /** Last step already done (0 for a fresh phase, the checkpoint step on resume). */
  startStep: number;
  /** What the optimizer updates, in the order its saved state follows. */
  variables: tf.Variable[];
  /** The phase's optimizer; the caller creates, restores and disposes it. */
  optimizer: tf.Optimizer;
  /** Loss terms of one step; `total` is minimised, all are logged. Runs inside a tidy. */
  loss(step: number): LossTerms;
  /**
   * When present, replaces minimising `loss` here: the step's gradients by
   * variable name (in `variables`' order, which the optimizer's state
   * follows) and its loss terms, computed elsewhere (data-parallel workers).
   * They are applied with `optimizer.applyGradients` and disposed; the terms
   * are logged as `loss`'s would be.
   */
  gradients?(step: number): Promise<{ grads: tf.NamedTensorMap; terms: Record<string, number> }>;
  /** Further metrics at each logged step (e.g. the data-parallel communication share). */
  extraLogs?(step: number): Record<string, number>;
  /** Runs after each optimizer step (a second model's update, e.g. FactorVAE's discriminator). */
  afterStep?(step: number): void;
  /** Steps between logged loss terms. */
  logEvery: number;
  /** Evaluation every `evaluateEvery` steps and at the end (0: only at the end). */
  evaluateEvery?: number;
  /** The values to log at an evaluation step; none when absent. */
  evaluate?(step: number): Promise<Record<string, number>>;
  /** Checkpoint every `checkpointEvery` steps (0: never). */
  checkpointEvery?: number;
  /** Saves the phase's state at a checkpoint step; none when absent. */
  checkpoint?(step: number): Promise<void>;
  /**
   * The learning rate of each step (1-based), for a schedule; it depends on
   * the step alone, so a resumed phase continues the schedule exactly.
   * Without it the optimizer's own rate is kept.
   */
  learningRate?(step: number): number;
}

/** A phase's schedule as a training's settings carry it: its label, its length, and when it logs, evaluates and saves. */
export type PhaseSchedule = Pick<
  TrainPhase,
  "label" | "steps" | "logEvery" | "evaluateEvery" | "evaluate" | "checkpointEvery"
>;

/** The {@linkcode PhaseSchedule} fields of a training's settings (which hold more), to spread into a phase. */
export function scheduleOf(settings: PhaseSchedule): PhaseSchedule {
  const { label, steps, logEvery, evaluateEvery, evaluate, checkpointEvery } = settings;
  return { label, steps, logEvery, evaluateEvery, evaluate, checkpointEvery };
}

/** Cosine decay from `initial` at step 1 to `initial · floor` at `steps` (Loshchilov & Hutter's SGDR without restarts). */
export function cosineDecay(initial: number, steps: number, floor = 0): (step: number) => number {
  return (step) => {
    const progress = steps > 1 ? (step - 1) / (steps - 1) : 1;
    return initial * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
  };
}

/** The optimizers of tfjs read their rate from this field at every step. */
type WithRate = { learningRate: number };

/** Yields to the event loop so that signal handlers and timers can run. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Runs a phase from `startStep + 1` to `steps`. Returns the last logged
 * values (loss terms and evaluation), keyed without the prefix.
 */
export async function trainPhase(ctx: RunContext, phase: TrainPhase): Promise<Record<string, number>> {
  if (!(Number.isSafeInteger(phase.startStep) && phase.startStep >= 0 && phase.startStep <= phase.steps)) {
    throw new Error(
      `${phase.label}: the checkpoint's step ${phase.startStep} is outside this phase's 0..${phase.steps}`,
    );
  }
  const progress = ctx.progress(phase.label, phase.steps);
  let last: Record<string, number> = {};
  for (let step = phase.startStep + 1; step <= phase.steps; step++) {
    const logging = step % phase.logEvery === 0 || step === phase.steps;
    if (phase.learningRate) (phase.optimizer as unknown as WithRate).learningRate = phase.learningRate(step);
    const values: Record<string, number> = {};
    if (phase.gradients) {
      const { grads, terms } = await phase.gradients(step);
      phase.optimizer.applyGradients(grads);
      tf.dispose(Object.values(grads));
      if (logging) Object.assign(values, terms);
    } else {
      let kept: Record<string, tf.Scalar> = {};
      const cost = phase.optimizer.minimize(
        () => {
          const terms = phase.loss(step);
          if (logging) kept = Object.fromEntries(Object.entries(terms).map(([k, v]) => [k, tf.keep(v)]));
          return terms.total;
        },
        true,
        phase.variables,
      )!;
      try {
        // All terms in one readback: on WebGPU each read waits for the queue to drain.
        Object.assign(values, await readScalarRecord(kept));
      } finally {
        // `cost` is the kept `total` itself when logging; dispose each tensor once.
        tf.dispose([...new Set([cost, ...Object.values(kept)])]);
      }
    }
    if (logging && phase.extraLogs) Object.assign(values, phase.extraLogs(step));
    // Read only at logged steps (no extra sync): training on a non-finite loss would only write NaN from here on.
    if (logging && !Number.isFinite(values.total)) {
      throw new Error(`${phase.label}: the loss is ${values.total} at step ${step}; the data or the settings diverge`);
    }
    phase.afterStep?.(step);
    const evaluating = phase.evaluate &&
      (step === phase.steps || (phase.evaluateEvery && step % phase.evaluateEvery === 0));
    if (evaluating) Object.assign(values, await phase.evaluate!(step));
    if (Object.keys(values).length > 0) {
      ctx.log(step, Object.fromEntries(Object.entries(values).map(([k, v]) => [`${phase.label}/${k}`, v])));
      last = { ...last, ...values };
      progress.update(step, last.total);
    }
    // Every step, so that Ctrl-C is handled within one step even between logged steps.
    await yieldToEventLoop();
    ctx.stopRequested.throwIfAborted();
    stopPoint();
    if (phase.checkpoint && phase.checkpointEvery && step % phase.checkpointEvery === 0 && step < phase.steps) {
      await phase.checkpoint(step);
    }
  }
  return last;
}

/**
 * Adam's bias-correction products β₁ᵗ⁺¹ and β₂ᵗ⁺¹. tfjs accumulates them as
 * float32 products step by step, but `setWeights` recomputes them as powers,
 * which differ in the last bits: a resumed run would drift from an
 * uninterrupted one. They are saved beside the weights and put back as they were.
 */
const ACCUMULATED_BETAS = ["accBeta1", "accBeta2"] as const;

/** The accumulated-beta variables an optimizer has (Adam: both, Adamax: β₁ only), by name. */
function accumulatedBetas(optimizer: tf.Optimizer): [string, tf.Variable][] {
  const held = optimizer as unknown as Record<string, unknown>;
  return ACCUMULATED_BETAS.flatMap((key) => held[key] instanceof tf.Variable ? [[key, held[key] as tf.Variable]] : []);
}

/** Weight arrays are saved as `<prefix><4-digit index>/<name>`; other keys under the prefix are extra state. */
const WEIGHT_KEY = /^\d{4}\//;

/** An optimizer's state (step count, moment estimates, Adam's accumulated betas) as named arrays. */
export async function optimizerState(
  optimizer: tf.Optimizer,
  prefix = "optimizer/",
): Promise<Record<string, { data: Float32Array | Int32Array; shape: number[] }>> {
  const weights = await optimizer.getWeights();
  const out: Record<string, { data: Float32Array | Int32Array; shape: number[] }> = {};
  for (const [i, w] of weights.entries()) {
    out[`${prefix}${String(i).padStart(4, "0")}/${w.name}`] = {
      data: (await w.tensor.data()) as Float32Array | Int32Array,
      shape: w.tensor.shape,
    };
  }
  // The step count is a fresh scalar; the moments are the optimizer's own variables.
  weights[0].tensor.dispose();
  for (const [key, variable] of accumulatedBetas(optimizer)) {
    out[`${prefix}${key}`] = { data: (await variable.data()) as Float32Array, shape: [] };
  }
  return out;
}

/** Restores state saved by {@linkcode optimizerState} (order-preserving), bit for bit. */
export async function restoreOptimizer(
  optimizer: tf.Optimizer,
  arrays: Record<string, NpyArray>,
  prefix = "optimizer/",
): Promise<void> {
  const keys = Object.keys(arrays).filter((k) => k.startsWith(prefix) && WEIGHT_KEY.test(k.slice(prefix.length)))
    .sort();
  const weights = keys.map((key) => {
    const saved = arrays[key];
    const dtype = saved.data instanceof Int32Array ? "int32" : "float32";
    return { name: key.slice(prefix.length + 5), tensor: tf.tensor(saved.data as Float32Array, saved.shape, dtype) };
  });
  await optimizer.setWeights(weights);
  tf.dispose(weights.map((w) => w.tensor));
  for (const [key, variable] of accumulatedBetas(optimizer)) {
    // Checkpoints written before these were saved keep tfjs' recomputed powers.
    const saved = arrays[`${prefix}${key}`];
    if (saved) tf.tidy(() => variable.assign(tf.scalar(Number(saved.data[0]), "float32")));
  }
}
