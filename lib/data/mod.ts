/**
 * Datasets and samplers: ground-truth image datasets (procedural, or the
 * original files when supplied), MNIST, pair and sequence samplers, the
 * KITTI-Masks-like pedestrian pairs and the nonlinear-ICA toy sources.
 *
 * @module
 */
export * from "./dsprites.ts";
export * from "./ground_truth.ts";
export * from "./kitti_masks.ts";
export * from "./laplace_ar.ts";
export * from "./mnist.ts";
export * from "./original_files.ts";
export * from "./pair_samplers.ts";
export * from "./preview.ts";
export * from "./registry.ts";
export * from "./shapes3d.ts";
