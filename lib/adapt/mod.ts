/**
 * Test-time adaptation (001_6f3482ea4494d2ce.md §2.1–2.3): BN statistics with a source prior
 * and the two-point model of self-learning collapse.
 *
 * @module
 */
export * from "./bn_adapt.ts";
export * from "./two_point.ts";
