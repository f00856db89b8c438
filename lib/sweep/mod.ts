/**
 * Sweeps (tier 3): a grid × seeds of an experiment's config, run as processes on a local worker pool or
 * as Slurm job arrays, with its spec, its files and task states, and the `sweep` command line.
 *
 * @module
 */
export * from "./commands.ts";
export * from "./local.ts";
export * from "./slurm.ts";
export * from "./spec.ts";
export * from "./store.ts";
// Types of lib/core that this folder's API names, so that its documentation is complete.
export {
  type AnyExperiment,
  type Experiment,
  type PresetName,
  PRESETS,
  type RunContext,
  type RunResult,
} from "../core/experiment.ts";
export type { ConfigOf, ConfigOverrides, ConfigSpec } from "../core/config.ts";
export type { Claim, Target } from "../core/targets.ts";
export { BACKEND_CHOICES, type BackendChoice } from "../core/backend.ts";
export type { RunListing } from "../core/run_reader.ts";
export type { RunInfo, RunStatus, SweepTag } from "../core/run_layout.ts";
