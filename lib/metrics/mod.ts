/**
 * Metrics of representations.
 *
 * @module
 */
export * from "./mcc.ts";
