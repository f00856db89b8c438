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
export * from "./supervised_replicas.ts";
export * from "./vae.ts";
export * from "./vae_objectives.ts";
// Types of other folders that this folder's API names, so that its documentation is complete.
export { BACKEND_CHOICES } from "../core/backend.ts";
export { PRESETS } from "../core/experiment.ts";
export type { Factors, GroundTruthDataset, Observations } from "../data/ground_truth.ts";
export type { FactorPairs } from "../data/pair_samplers.ts";
export { DATASET_NAMES, type DatasetName } from "../data/registry.ts";
export { type Split, SPLIT_NAMES } from "../data/splits.ts";
export type { BnCnn, BnCnnSnapshot, NormKind, NormMode, NormStats } from "../models/bn_cnn.ts";
export type { Architecture, ImageSize } from "../models/dislib_vae.ts";
export type { EnsembleCodes, EnsembleKind, EnsembleLoss, EnsembleOptions, EnsembleVae } from "../models/ensemble.ts";
export type { FiRevNet, FiRevNetOutput } from "../models/firevnet.ts";
export type { ForwardOptions as InvertibleForwardOptions } from "../models/invertible.ts";
export type { FrozenNoiseGenerator, GeneratorKind, NoiseGenerator } from "../models/noise_generator.ts";
export type { Params } from "../models/params.ts";
export type { PoseNet, PoseNormMode } from "../models/pose_net.ts";
export type { Readout, Regressor } from "../models/regressors.ts";
export type { Classifier } from "../models/small_cnn.ts";
export type { Decoder, Encoder, Posterior } from "../models/vae.ts";
export { SCORE_CONFIG, type ScoreConfig, type TrainedEncoder } from "../metrics/score.ts";
export type { ProbeCodes, SelectionComparison, StudyModel } from "../metrics/study.ts";
export {
  type LoadedSourceModel,
  SOURCE_ARCHS,
  type SourceArch,
  type SourceClassifier,
  type SourceModelOptions,
  type SourceTraining,
} from "../adapt/source_model.ts";
export type * from "../core/shared_types.ts";
