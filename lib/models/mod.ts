/**
 * Models: parameters, MLPs, invertible networks.
 *
 * @module
 */
export * from "./coupling_flow.ts";
export * from "./mlp.ts";
export * from "./params.ts";
export * from "./dislib_vae.ts";
export * from "./small_cnn.ts";
