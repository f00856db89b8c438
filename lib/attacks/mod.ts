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
// TF.js types in this folder's signatures are TF.js's own public API: each file imports them as
// `import /** @ignore */ * as tf`, which tells `deno doc --lint` not to ask this barrel to re-export them
// (deno treats the local node_modules as part of this project, and TF.js's declarations lack JSDoc).
// Types of other folders that this folder's API names, so that its documentation is complete.
export type { Rng, RngState } from "../core/rng.ts";
