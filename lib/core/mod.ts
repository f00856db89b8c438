/**
 * The foundation every other folder builds on (tier 0: imports no other lib folder): the experiment
 * contract, its config, published targets and claims, the scorecard and audit; the run store (layout,
 * writer, readers, locks, checkpoints, metrics); seeded randomness, row-major matrices, `.npy` and PNG
 * files, plots, backend selection, gradient plumbing, scalar reads in one transfer, CLI parsing,
 * progress and user errors.
 *
 * @module
 */
export * from "./audit.ts";
export * from "./backend.ts";
export * from "./claims.ts";
export * from "./cli.ts";
export * from "./config.ts";
export * from "./curves.ts";
export * from "./docs_files.ts";
export * from "./docs_pages.ts";
export * from "./errors.ts";
export * from "./experiment.ts";
export * from "./gradients.ts";
// The ensembles of lib/models multiply member by member through this kernel.
export { memberProduct } from "./kernels/member_mat_mul.ts";
export * from "./matrix.ts";
export * from "./npy.ts";
export * from "./papers.ts";
export * from "./plot.ts";
export * from "./png.ts";
export * from "./progress.ts";
export * from "./readback.ts";
export * from "./readme.ts";
export * from "./reference_results.ts";
export * from "./registry.ts";
export * from "./rng.ts";
export * from "./run_checkpoints.ts";
export * from "./run_files.ts";
export * from "./run_guard.ts";
export * from "./run_layout.ts";
export * from "./run_lock.ts";
export * from "./run_metrics.ts";
export * from "./run_reader.ts";
export * from "./run_writer.ts";
export * from "./scorecard.ts";
export type * from "./shared_types.ts";
export * from "./shell.ts";
export * from "./special_functions.ts";
export * from "./targets.ts";
