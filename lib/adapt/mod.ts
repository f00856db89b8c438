/**
 * Test-time adaptation (Schneider2023 Ch. 2–4): BN statistics with a source prior,
 * self-learning losses and their adaptation step, ETA and RDumb, the two-point model of
 * self-learning collapse, and the collapse toy model (as `collapseToy`: its names, `logits`,
 * `corrupt`, `normalize`…, are the toy's own).
 *
 * @module
 */
export * from "./bn_adapt.ts";
export * from "./self_learning.ts";
export * from "./eta.ts";
export * from "./two_point.ts";
export * as collapseToy from "./collapse_toy.ts";
export * from "./source_model.ts";
export * from "./bn_adapt_study.ts";
// Types of other folders that this folder's API names, so that its documentation is complete.
export type { BnCnn, BnCnnSnapshot, NormKind, NormMode, NormStats } from "../models/bn_cnn.ts";
export type { Params } from "../models/params.ts";
export { COMMON_CORRUPTIONS, type CorruptionName, HOLDOUT_CORRUPTIONS } from "../data/corruptions.ts";
export type { CorruptionErrorResult } from "../metrics/corruption_error.ts";
export type * from "../core/shared_types.ts";
