/**
 * Metrics of representations: disentanglement_lib's array metrics (MIG,
 * DCI, SAP, Modularity and explicitness, IRS, unsupervised scores), its
 * interventional scores (BetaVAE, FactorVAE), UDR between models, the
 * downstream task, MCC, and the evaluation of arrays as `deno task eval` runs it.
 *
 * @module
 */
export * from "./beta_vae_score.ts";
export * from "./dci.ts";
export * from "./discrete.ts";
export * from "./downstream.ts";
export * from "./evaluate.ts";
export * from "./factor_vae_score.ts";
export * from "./irs.ts";
export * from "./mcc.ts";
export * from "./mig.ts";
export * from "./modularity.ts";
export * from "./sap.ts";
export * from "./udr.ts";
export * from "./unsupervised.ts";
