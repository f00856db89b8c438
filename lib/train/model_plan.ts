/**
 * Runs a plan of models inside one run (a study of methods × values ×
 * seeds): each model is trained and scored by the caller, its scores are
 * logged as `models/<metric>` at step = its position in the plan, and a
 * checkpoint after each model holds every finished model's scores and arrays,
 * so a stopped run resumes with the model it was on.
 *
 * @module
 */
import type { RunContext } from "../core/experiment.ts";
import type { StudyModel } from "../metrics/study.ts";
import type { PhaseArrays, PhaseOutcome } from "./phases.ts";
import { runPhasesOn, type WorkerOptions, type WorkerPhase } from "./parallel_phases.ts";

/** Arrays a model leaves for the analysis (e.g. its codes of shared probe images), saved with the checkpoint. */
export type ModelArrays = PhaseArrays;

/** What the caller reports for one model of the plan. */
export interface ModelOutcome {
  /** Its scores by name, logged as `models/<name>` and kept in the study's table. */
  metrics: Record<string, number>;
  /** Arrays for the analysis after the plan, when the model leaves any. */
  arrays?: ModelArrays;
}

/**
 * One entry of a plan: `run` trains and scores it (given with its position
 * in the plan), its wall time is added as `seconds`, its scores are logged.
 * A worker of {@linkcode runModelPlan} calls this for its entries.
 */
export async function planEntry<P extends Omit<StudyModel, "metrics">>(
  ctx: RunContext,
  entry: P,
  index: number,
  run: (entry: P, index: number) => Promise<ModelOutcome>,
): Promise<PhaseOutcome<StudyModel>> {
  const { method, value, seed } = entry;
  const started = performance.now();
  const outcome = await run(entry, index);
  const metrics = { ...outcome.metrics, seconds: (performance.now() - started) / 1000 };
  ctx.log(index + 1, Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`models/${k}`, v])));
  return { result: { method, value, seed, metrics }, arrays: outcome.arrays };
}

/** A plan and how one of its entries is trained and scored, as an experiment builds them from its config. */
export interface PlanSetup<P> {
  /** The entries, in training order. */
  plan: readonly P[];
  /** Trains and scores entry `index` of the plan. */
  run(ctx: RunContext, entry: P, index: number): Promise<ModelOutcome>;
}

/**
 * The worker side of {@linkcode runModelPlan}: entry `index` of the plan
 * that `setup` rebuilds from the run's config and seed (once per worker,
 * which runs several entries of one run).
 */
export function planWorker<P extends Omit<StudyModel, "metrics">, C>(
  setup: (ctx: RunContext, cfg: C) => PlanSetup<P>,
): WorkerPhase<C, number, StudyModel> {
  let built: { key: string; setup: PlanSetup<P> } | null = null;
  return (ctx, cfg, index) => {
    const key = JSON.stringify([ctx.seed, cfg]);
    if (built?.key !== key) built = { key, setup: setup(ctx, cfg) };
    const { plan, run } = built.setup;
    return planEntry(ctx, plan[index], index, (entry) => run(ctx, entry, index));
  };
}

/**
 * Trains every entry of `plan` not finished before a resume, in order (see
 * {@linkcode planEntry}). With `parallel.workers` > 1 the entries run that
 * many at once in workers, each entry's index handed to the function the
 * experiment's module exports with {@linkcode planWorker}; the models'
 * numbers are the same.
 * Returns all finished models and all their arrays (those of models finished
 * before a resume included).
 */
export async function runModelPlan<P extends Omit<StudyModel, "metrics">, C>(
  ctx: RunContext,
  plan: readonly P[],
  run: (entry: P, index: number) => Promise<ModelOutcome>,
  parallel?: WorkerOptions<C, number>,
): Promise<{ models: StudyModel[]; arrays: ModelArrays }> {
  // Phases are the entries' indices: a worker rebuilds its entry from the index (planWorker).
  const { results, arrays } = await runPhasesOn<C, number, StudyModel>(
    ctx,
    plan.map((_, i) => i),
    (index) => planEntry(ctx, plan[index], index, run),
    { parallel },
  );
  return { models: results, arrays };
}
