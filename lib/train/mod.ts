/**
 * Training (tier 3): the shared training loop and config keys, resumable phases run in-process or in
 * workers, data-parallel training, and the objectives and drivers of each model family: VAEs and pair
 * models (SlowVAE, SlowFlow, PCL), classifiers, noise training, fiRevNet, pose networks, source models,
 * model plans and saved encoders.
 *
 * @module
 */
export * from "./adamax.ts";
export * from "./classifier.ts";
export * from "./config.ts";
export * from "./data_parallel.ts";
export * from "./ensemble_training.ts";
export * from "./firevnet_readout.ts";
export * from "./firevnet_training.ts";
export * from "./ice.ts";
export * from "./jacobian.ts";
export * from "./loop.ts";
export * from "./model_plan.ts";
export * from "./noise_training.ts";
export * from "./pair_model.ts";
export * from "./pair_seeds.ts";
export * from "./pair_study.ts";
export * from "./parallel_phases.ts";
export * from "./pcl.ts";
export * from "./phases.ts";
export * from "./pose_loss.ts";
export * from "./pose_training.ts";
export * from "./resumable_model.ts";
export * from "./saved_encoder.ts";
export * from "./slow_flow.ts";
export * from "./slow_vae.ts";
export * from "./source_training.ts";
export * from "./split_encoders.ts";
export * from "./vae.ts";
export * from "./vae_objectives.ts";
