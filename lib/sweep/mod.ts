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
