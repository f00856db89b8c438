/**
 * The lib/core types that other folders' public signatures name. Each folder's barrel re-exports them all in one
 * `export type *` line, so that `deno doc --lint` finds its documentation complete
 * without every barrel listing them again. TF.js types are not here: files import TF.js as
 * `import /** @ignore *\/ * as tf`, which keeps the lint from asking for TF.js's own undocumented declarations
 * (Deno treats the local node_modules as part of the project).
 *
 * @module
 */
export type { BackendChoice, BackendInfo } from "./backend.ts";
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
} from "./config.ts";
export type { CheckpointArrays, PresetName, RunContext } from "./experiment.ts";
export type { CorrelationMethod, Matrix } from "./matrix.ts";
export type { NpyArray, NpyData } from "./npy.ts";
export type { Image } from "./png.ts";
export type { Progress, ProgressOptions } from "./progress.ts";
export type { Registered, Registry } from "./registry.ts";
export type { Rng, RngState } from "./rng.ts";
export type { LoadedCheckpoint } from "./run_checkpoints.ts";
export type { RunInfo, RunStatus, SweepTag } from "./run_layout.ts";
export type { RunListing } from "./run_reader.ts";
export type { Claim, NullModel, Target, TargetDirection, TargetKind } from "./targets.ts";
