/**
 * A run made of phases (one model of a study, one setting of a toy): the
 * phases run in order, each finished phase's result and arrays are
 * checkpointed at its end, and a phase may checkpoint inside itself. A
 * resumed run skips the finished phases, hands the one it stopped in its own
 * checkpoint, and gives back every finished phase's result and arrays, so
 * that it ends with what an uninterrupted run ends with.
 *
 * @module
 */
import type { CheckpointArrays, RunContext } from "../core/experiment.ts";
import type { NpyArray } from "../core/npy.ts";

/** Arrays a finished phase leaves for the run's analysis, saved with every later checkpoint. */
export type PhaseArrays = Record<string, { data: Float32Array; shape: number[] }>;

/** What one phase gives back. */
export interface PhaseOutcome<R> {
  /** What the phase computed, kept in the run's checkpoints (JSON). */
  result: R;
  /** Arrays for the run's analysis, when the phase leaves any. */
  arrays?: PhaseArrays;
}

/** A phase's view of checkpointing. */
export interface PhaseCheckpoints {
  /** The checkpoint inside this phase that the run continues from, or null when the phase starts fresh. */
  resumed: { step: number; arrays: Record<string, NpyArray>; state: unknown } | null;
  /** Saves a checkpoint inside the phase at its `step` (1 ≤ step < the run's `stride`). */
  save(step: number, arrays: CheckpointArrays, state: unknown): Promise<void>;
}

/** Checkpoint state of a run of phases. */
interface PhasesState<R> {
  /** Results of the finished phases, in order. */
  results: R[];
  /** Inside an unfinished phase: its step, its own state and the names of its arrays. */
  within: { step: number; state: unknown; keys: string[] } | null;
}

/** A finished phase's array as read back from a checkpoint, in the form phases hand on. */
export function phaseArray(value: NpyArray): { data: Float32Array; shape: number[] } {
  return { data: Float32Array.from(value.data as ArrayLike<number>), shape: value.shape };
}

/**
 * Runs every phase not finished before a resume, in order. Checkpoints are
 * numbered `index · stride + step` inside phase `index` and `(index + 1) ·
 * stride` at its end, so the newest sorts last; `stride` must exceed every
 * step a phase checkpoints at (1 when phases save nothing inside).
 * Returns every phase's result and the arrays of all finished phases.
 */
export async function runPhases<P, R>(
  ctx: RunContext,
  phases: readonly P[],
  run: (phase: P, index: number, checkpoints: PhaseCheckpoints) => Promise<PhaseOutcome<R>>,
  options: { stride?: number } = {},
): Promise<{ results: R[]; arrays: PhaseArrays }> {
  const stride = options.stride ?? 1;
  const saved = ctx.resumed?.state as PhasesState<R> | undefined;
  const results = [...(saved?.results ?? [])];
  const within = saved?.within ?? null;
  if (results.length > phases.length || (within && !(within.step >= 1 && within.step < stride))) {
    throw new Error(
      `the checkpoint does not fit this run's plan: ${results.length} of ${phases.length} phases finished` +
        (within ? `, step ${within.step} inside the next (allowed 1..${stride - 1})` : ""),
    );
  }
  const arrays: PhaseArrays = {};
  const phaseArrays: Record<string, NpyArray> = {};
  for (const [key, value] of Object.entries(ctx.resumed?.arrays ?? {})) {
    if (within?.keys.includes(key)) phaseArrays[key] = value;
    else arrays[key] = phaseArray(value);
  }
  // Only the phase the run stopped in continues from `within`; the phases after it start fresh.
  const stoppedIn = results.length;
  for (let index = stoppedIn; index < phases.length; index++) {
    const resumed = index === stoppedIn && within
      ? { step: within.step, arrays: phaseArrays, state: within.state }
      : null;
    const checkpoints: PhaseCheckpoints = {
      resumed,
      save: async (step, own, state) => {
        if (!(step >= 1 && step < stride)) {
          throw new Error(`a phase checkpoint at step ${step} is outside 1..${stride - 1}`);
        }
        const progress: PhasesState<R> = { results, within: { step, state, keys: Object.keys(own) } };
        await ctx.checkpoint(index * stride + step, { ...arrays, ...own }, progress);
      },
    };
    const outcome = await run(phases[index], index, checkpoints);
    results.push(outcome.result);
    Object.assign(arrays, outcome.arrays);
    await ctx.checkpoint((index + 1) * stride, arrays, { results, within: null } satisfies PhasesState<R>);
  }
  return { results, arrays };
}
