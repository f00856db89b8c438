/**
 * Training loops and objectives.
 *
 * @module
 */
export * from "./loop.ts";
export * from "./pcl.ts";
export * from "./slow_flow.ts";
export * from "./slow_vae.ts";
export * from "./pair_model.ts";
