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
  type CheckpointArrays,
  type Experiment,
  type PresetName,
  PRESETS,
  type RunContext,
  type RunResult,
} from "../core/experiment.ts";
export type {
  BooleanParam,
  ChoiceParam,
  ChoicesParam,
  ConfigOf,
  ConfigOverrides,
  ConfigSpec,
  ListOptions,
  NumberBounds,
  NumberParam,
  NumbersParam,
  ParamSpec,
  ValueOf,
} from "../core/config.ts";
export type { Claim, NullModel, Target, TargetDirection, TargetKind } from "../core/targets.ts";
export { BACKEND_CHOICES, type BackendChoice, type BackendInfo } from "../core/backend.ts";
export type { Image } from "../core/png.ts";
export type { Progress, ProgressOptions } from "../core/progress.ts";
export type { LoadedCheckpoint } from "../core/run_checkpoints.ts";
export type { NpyArray, NpyData } from "../core/npy.ts";
export type { Rng, RngState } from "../core/rng.ts";
export type { RunListing } from "../core/run_reader.ts";
export type { RunInfo, RunStatus, SweepTag } from "../core/run_layout.ts";
