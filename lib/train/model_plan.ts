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
import { type PhaseArrays, runPhases } from "./phases.ts";

/** Arrays a model leaves for the analysis (e.g. its codes of shared probe images), saved with the checkpoint. */
export type ModelArrays = PhaseArrays;

/** What the caller reports for one model of the plan. */
export interface ModelOutcome {
  metrics: Record<string, number>;
  arrays?: ModelArrays;
}

/**
 * Trains every entry of `plan` not finished before a resume, in order.
 * `run` trains and scores one entry (given with its position in the plan);
 * its wall time is added as `seconds`.
 * Returns all finished models and all their arrays (those of models finished
 * before a resume included).
 */
export async function runModelPlan<P extends Omit<StudyModel, "metrics">>(
  ctx: RunContext,
  plan: readonly P[],
  run: (entry: P, index: number) => Promise<ModelOutcome>,
): Promise<{ models: StudyModel[]; arrays: ModelArrays }> {
  const { results, arrays } = await runPhases<P, StudyModel>(ctx, plan, async (entry, index) => {
    const { method, value, seed } = entry;
    const started = performance.now();
    const outcome = await run(entry, index);
    const metrics = { ...outcome.metrics, seconds: (performance.now() - started) / 1000 };
    ctx.log(index + 1, Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`models/${k}`, v])));
    return { result: { method, value, seed, metrics }, arrays: outcome.arrays };
  });
  return { models: results, arrays };
}
