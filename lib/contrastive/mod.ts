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
// TF.js types in this folder's signatures are TF.js's own public API: each file imports them as
// `import /** @ignore */ * as tf`, which tells `deno doc --lint` not to ask this barrel to re-export them
// (deno treats the local node_modules as part of this project, and TF.js's declarations lack JSDoc).
// Types of other folders that this folder's API names, so that its documentation is complete.
export type { Matrix } from "../core/matrix.ts";
export type { Rng, RngState } from "../core/rng.ts";
export type { CebraArchitecture, CebraModel } from "../models/cebra_models.ts";
export type { KnnMetric } from "../ml/knn.ts";
