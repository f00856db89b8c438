/**
 * Metrics of representations: disentanglement_lib's array metrics (MIG,
 * DCI, SAP, Modularity and explicitness, unsupervised scores), MCC, and the
 * evaluation of arrays as `deno task eval` runs it.
 *
 * @module
 */
export * from "./dci.ts";
export * from "./discrete.ts";
export * from "./evaluate.ts";
export * from "./mcc.ts";
export * from "./mig.ts";
export * from "./modularity.ts";
export * from "./sap.ts";
export * from "./unsupervised.ts";
