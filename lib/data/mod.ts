/**
 * Data sets and their generators (tier 2): the ground-truth dataset interface and its registry,
 * procedural stand-ins (dSprites, 3dshapes, quadruped, place cells, shiftMNIST, …), the synthetic
 * data of the reproduced papers, MNIST and MNIST-C, the ImageNet-C family of corruptions and CCC,
 * pair and sequence samplers, benchmark splits, and the data of experiments' targets.
 *
 * @module
 */
export * from "./abs_mnist_tables.ts";
export * from "./ccc.ts";
export * from "./cl_ica.ts";
export * from "./corrupt_command.ts";
export * from "./corruption_batch.ts";
export * from "./corruption_ops.ts";
export * from "./corruptions.ts";
export * from "./dsprites.ts";
export * from "./gen_benchmark_tables.ts";
export * from "./gen_commands.ts";
export * from "./ground_truth.ts";
export * from "./image_corruptions.ts";
export * from "./image_resampling.ts";
export * from "./jpeg.ts";
export * from "./kitti_masks.ts";
export * from "./laplace_ar.ts";
export * from "./manipulation.ts";
export * from "./mnist.ts";
export * from "./mnist_c.ts";
export * from "./opencv_ops.ts";
export * from "./original_files.ts";
export * from "./pair_samplers.ts";
export * from "./pivae_synthetic.ts";
export * from "./place_cells.ts";
export * from "./preview.ts";
export * from "./quadruped.ts";
export * from "./quadruped_render.ts";
export * from "./random_variates.ts";
export {
  type BlockMlp,
  blockMlp,
  reflect as reflectIntoUnit,
  reflectedWalk,
  REGCL_BLOCK_FEATURES,
  REGCL_OBSERVED_LATENTS,
  type RegclData,
  type RegclOptions,
  regclSynthetic,
} from "./regcl_synthetic.ts";
export * from "./registry.ts";
export * from "./shapes3d.ts";
export * from "./shift_mnist.ts";
export * from "./spheres.ts";
export * from "./splits.ts";
export * from "./synth.ts";
export * from "./synth_sets.ts";

// Types of lib/core and lib/models that this folder's API names, so that its documentation is complete.
export type { Params } from "../models/params.ts";
export type { Decoder, Encoder } from "../models/vae.ts";
export type * from "../core/shared_types.ts";
