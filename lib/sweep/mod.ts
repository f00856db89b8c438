/**
 * Sweeps (tier 3): a grid × seeds of an experiment's config, run as processes on a local worker pool or
 * as Slurm job arrays, with its spec, its files and task states, and the `sweep` command line.
 *
 * @module
 */
export * from "./commands.ts";
export * from "./local.ts";
export * from "./lock.ts";
export * from "./slurm.ts";
export * from "./spec.ts";
export * from "./store.ts";
// Types of lib/core that this folder's API names, so that its documentation is complete.
export {
  type AnyExperiment,
  type CheckpointArrays,
  type Experiment,
  type PresetName,
  PRESETS,
  type RunContext,
  type RunResult,
} from "../core/experiment.ts";
export { BACKEND_CHOICES } from "../core/backend.ts";
export type * from "../core/shared_types.ts";
