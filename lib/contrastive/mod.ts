/**
 * Contrastive learning with identifiability (Schneider2023 Ch. 6–8): CEBRA's
 * InfoNCE and cl-ica's Lp/SimCLR losses, the sampling schemes that pick positives by time,
 * behaviour or class, and the `Cebra` estimator (fit, transform, save, load).
 *
 * ```ts
 * import { Cebra } from "./lib/contrastive/mod.ts";
 * const cebra = new Cebra({ modelArchitecture: "offset10-model", outputDimension: 3, batchSize: 512, maxIterations: 1500 });
 * await cebra.fit(spikes, { continuous: behaviour });
 * const embedding = await cebra.transform(spikes);
 * ```
 *
 * @module
 */
export * from "./infonce.ts";
export * from "./samplers.ts";
export { nearestRows } from "./nearest_rows.ts";
export * from "./cebra.ts";
export * from "./cebra_step.ts";
export * from "./cebra_snapshots.ts";
export * from "./decoding.ts";
// Types of other folders that this folder's API names, so that its documentation is complete.
export type { CebraArchitecture, CebraModel } from "../models/cebra_models.ts";
export type { KnnMetric } from "../ml/knn.ts";
export type * from "../core/shared_types.ts";
