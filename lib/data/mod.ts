/**
 * Datasets and samplers.
 *
 * @module
 */
export * from "./laplace_ar.ts";
