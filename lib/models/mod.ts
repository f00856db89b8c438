/**
 * Model architectures (tier 2: imports lib/core and lib/ml): VAE encoders and decoders and their
 * ensembles, MLPs, small and BatchNorm CNNs, analysis by synthesis, invertible layers, fiRevNet and
 * coupling flows, CEBRA encoders, the pose network, regressors, and named trainable parameters.
 *
 * @module
 */
export * from "./abs.ts";
export * from "./abs_calibration.ts";
export * from "./abs_cnn.ts";
export * from "./abs_vae.ts";
export * from "./bn_cnn.ts";
export * from "./cebra_models.ts";
export * from "./conv_bn.ts";
export * from "./coupling_flow.ts";
export * from "./cross_entropy_step.ts";
export * from "./dislib_vae.ts";
export * from "./ensemble.ts";
export * from "./firevnet.ts";
export * from "./full_covariance.ts";
export {
  ActNorm,
  AdditiveCoupling,
  AffineCoupling,
  type Bijection,
  type BijectionOutput,
  ChannelPermutation,
  Coupling,
  type CouplingKind,
  type CouplingOptions,
  type ForwardOptions as InvertibleForwardOptions,
  Invertible1x1,
  type LayerStore,
  type PermutationKind,
  Split,
  squeeze2x2,
  unsqueeze2x2,
} from "./invertible.ts";
export * from "./madry_cnn.ts";
export * from "./mlp.ts";
export * from "./nearest_neighbor.ts";
export * from "./noise_generator.ts";
export * from "./params.ts";
export * from "./pose_net.ts";
export * from "./regressors.ts";
export * from "./small_cnn.ts";
export * from "./vae.ts";

// Types of lib/core that this folder's API names, so that its documentation is complete.
export type * from "../core/shared_types.ts";
