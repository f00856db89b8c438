/**
 * Adversarial attacks after foolbox 3 (tier 3): the attack contract and its runner, gradient attacks,
 * DeepFool, Carlini & Wagner, decision-based and noise attacks, transfer and distal adversarials,
 * latent descent on analysis-by-synthesis models, model wrappers and perturbation distances.
 *
 * @module
 */
export * from "./attack.ts";
export * from "./carlini_wagner.ts";
export * from "./decision.ts";
export * from "./deepfool.ts";
export * from "./distal.ts";
export * from "./distances.ts";
export * from "./gradient.ts";
export * from "./latent_descent.ts";
export * from "./noise.ts";
export * from "./transfer.ts";
export * from "./types.ts";
export * from "./wrappers.ts";
// Types of other folders that this folder's API names, so that its documentation is complete.
export type * from "../core/shared_types.ts";
