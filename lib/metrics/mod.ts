/**
 * Metrics (tier 3): the disentanglement scores of disentanglement_lib (BetaVAE, FactorVAE, MIG, DCI,
 * SAP, IRS, modularity, downstream, unsupervised, UDR) and of the reproduced theses (MCC, DS, DtO,
 * polarized regime), classification, robustness and corruption errors, CEBRA and pose metrics, the
 * metric registry, and the analyses of studies over many models and seeds.
 *
 * @module
 */
export * from "./adversarial.ts";
export * from "./beta_vae_score.ts";
export * from "./cebra_metrics.ts";
export * from "./classification.ts";
export * from "./corruption_error.ts";
export * from "./dci.ts";
export * from "./discrete.ts";
export {
  corrGap,
  disentanglementScore as thesisDisentanglementScore,
  type DsOptions,
  type DsResult,
  type FactorKind,
  knnNeighbors1d,
  migBinned,
} from "./disentanglement_score.ts";
export * from "./downstream.ts";
export * from "./dto.ts";
export * from "./evaluate.ts";
export * from "./factor_vae_score.ts";
export * from "./gen_eval.ts";
export * from "./irs.ts";
export * from "./mcc.ts";
export * from "./mig.ts";
export * from "./modularity.ts";
export * from "./polarized.ts";
export * from "./pose.ts";
export * from "./r2.ts";
export * from "./registry.ts";
export * from "./representation.ts";
export * from "./robustness.ts";
export * from "./sap.ts";
export * from "./score.ts";
export * from "./seed_comparison.ts";
export * from "./study.ts";
export * from "./udr.ts";
export * from "./unsupervised.ts";
export * from "./vae_study.ts";
// Types of other folders that this folder's API names, so that its documentation is complete.
export type { Factors, GroundTruthDataset, Observations } from "../data/ground_truth.ts";
export { type Split as GridSplit, SPLIT_DATASETS, SPLIT_NAMES, type SplitDataset } from "../data/splits.ts";
export type { GradientBoostingOptions } from "../ml/gradient_boosting.ts";
export type { Encoder } from "../models/vae.ts";
export type { Params } from "../models/params.ts";
export type { Split } from "../core/matrix.ts";
export type * from "../core/shared_types.ts";
