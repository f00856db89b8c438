/**
 * The toolkit core: backends, randomness, config, CLI, run store, progress,
 * array and image files, and the experiment contract.
 *
 * @module
 */
export * from "./backend.ts";
export * from "./cli.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./experiment.ts";
export * from "./npy.ts";
export * from "./png.ts";
export * from "./progress.ts";
export * from "./rng.ts";
export * from "./run_store.ts";
export * from "./plot.ts";
export * from "./scorecard.ts";
