/**
 * The study code behind single experiments (tier 4: may import any lib folder, and no lib folder
 * imports it): each file is one experiment's phases, data and tables, exported here as a namespace
 * named after the file, since their names (`workerPhase`, `MODELS`, …) are each study's own.
 *
 * @module
 */
export * as absMnist from "./abs_mnist.ts";
export * as bnAdapt from "./bn_adapt.ts";
export * as cccMini from "./ccc_mini.ts";
export * as cebraPlaceCells from "./cebra_place_cells.ts";
export * as genBenchmark from "./gen_benchmark.ts";
export * as noiseTraining from "./noise_training.ts";
export * as poseOod from "./pose_ood.ts";
export * as selfLearning from "./self_learning.ts";
export * as vaeManipulation from "./vae_manipulation.ts";
export * as vaePca from "./vae_pca.ts";
export type * from "../core/shared_types.ts";
