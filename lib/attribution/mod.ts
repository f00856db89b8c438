/**
 * Attribution maps of MLP encoders (Schneider2023 Ch. 8): the analytic Jacobian,
 * its pseudo-inverse map Σ_x |J_f⁺(x)|, the Jacobian penalty of RegCL, and the gradient,
 * ablation and integrated-gradients baselines, scored by ROC-AUC against a known mask.
 *
 * @module
 */
export * from "./jacobian.ts";
// Types of other folders (TF.js's tensor types through lib/core's aliases) that this folder's API names, so that
// its documentation is complete.
export type * from "../core/shared_types.ts";
