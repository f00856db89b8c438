/**
 * Every metric of the toolkit by name, with where it is defined, what it
 * reads and the keys it writes. `eval`, the scorers, the studies and `list`
 * read this registry.
 *
 * - "codes" metrics read a representation and its factors only (any
 *   framework's codes: `deno task eval`); those that fit a predictor train on
 *   the first 80% of rows and test on the rest.
 * - "encoder" metrics draw their own observations and encode them through a
 *   trained model.
 * - "models" metrics compare several trained models.
 * - "predictions" metrics score a model's predictions: of the factors
 *   (`deno task gen-eval`), of keypoints (pose-ood).
 *
 * @module
 */
import type { Matrix, Split } from "../core/matrix.ts";
import { defineRegistry, type Registered, type Registry } from "../core/registry.ts";
import { dci } from "./dci.ts";
import { irs } from "./irs.ts";
import { meanCorrelationCoefficient } from "./mcc.ts";
import { linearR2 } from "../ml/linear_regression.ts";
import { mig } from "./mig.ts";
import { modularityExplicitness } from "./modularity.ts";
import { sap } from "./sap.ts";
import { unsupervisedScores } from "./unsupervised.ts";
import { CORRUPTION_NAMES } from "../data/corruptions.ts";

/** What a "codes" metric reads: all rows, and the same rows split 80/20 into train and test. */
export interface CodesInput {
  /** The codes of all rows. */
  codes: Matrix;
  /** The factors of all rows. */
  factors: Matrix;
  /** The same rows split 80/20. */
  split: Split;
}

/** A registered metric. */
export interface MetricEntry extends Registered {
  /** What it reads (see the module doc). */
  kind: "codes" | "encoder" | "models" | "predictions" | "classifier";
  /** Keys it writes, in summaries and in `eval`'s output. */
  outputs: readonly string[];
  /** For "codes" metrics: the scores, keyed by `outputs`. */
  compute?(input: CodesInput): Record<string, number>;
}

const DISLIB = "Locatello2019 App. B (disentanglement_lib's implementation)";

/** Every metric's entry; their literal names type {@linkcode MetricName}. */
export const METRIC_ENTRIES = [
  {
    name: "mig",
    description: "mutual information gap: top-two MI gap per factor over its entropy (20 bins)",
    source: DISLIB,
    kind: "codes",
    outputs: ["mig"],
    compute: ({ split }) => ({ mig: mig(split.trainCodes, split.trainFactors).mig }),
  },
  {
    name: "dci",
    description: "DCI disentanglement, completeness and informativeness from gradient-boosted importances",
    source: DISLIB,
    kind: "codes",
    outputs: ["dci_disentanglement", "dci_completeness", "dci_informativeness_train", "dci_informativeness_test"],
    compute: ({ split }) => {
      const r = dci(split.trainCodes, split.trainFactors, split.testCodes, split.testFactors);
      return {
        dci_disentanglement: r.disentanglement,
        dci_completeness: r.completeness,
        dci_informativeness_train: r.informativeness_train,
        dci_informativeness_test: r.informativeness_test,
      };
    },
  },
  {
    name: "sap",
    description: "separated attribute predictability: gap between the two most predictive codes per factor",
    source: DISLIB,
    kind: "codes",
    outputs: ["sap"],
    compute: ({ split }) => ({
      sap: sap(split.trainCodes, split.trainFactors, split.testCodes, split.testFactors).sap,
    }),
  },
  {
    name: "modularity",
    description: "modularity (each code informs about one factor) and explicitness (logistic-regression AUC)",
    source: DISLIB,
    kind: "codes",
    outputs: ["modularity", "explicitness"],
    compute: ({ split }) => {
      const r = modularityExplicitness(split.trainCodes, split.trainFactors, split.testCodes, split.testFactors);
      return { modularity: r.modularity, explicitness: r.explicitness_test };
    },
  },
  {
    name: "mcc",
    description: "mean correlation coefficient: |Pearson| of factors and codes under the best assignment",
    source: "Klindt2021 App. C (MCC)",
    kind: "codes",
    outputs: ["mcc"],
    compute: ({ codes, factors }) => ({ mcc: meanCorrelationCoefficient(factors, codes).mcc }),
  },
  {
    name: "linear_r2",
    description: "R² of a linear regression with intercept from the codes to the factors, in sample " +
      "(affine identifiability: cl-ica's R² and CEBRA's reconstruction score)",
    source: "Schneider2023 Ch. 6–8 (lib/ml/linear_regression.ts, sklearn LinearRegression.score)",
    kind: "codes",
    outputs: ["linear_r2"],
    compute: ({ codes, factors }) => ({ linear_r2: linearR2(codes, factors) }),
  },
  {
    name: "tc",
    description: "Gaussian total correlation of the codes' covariance (nats)",
    source: "Locatello2019 §5.2, App. B",
    kind: "codes",
    outputs: ["tc"],
    compute: ({ codes }) => ({ tc: unsupervisedScores(codes).gaussian_total_correlation }),
  },
  {
    name: "irs",
    description: "interventional robustness score, from the codes of the samples (quantile 0.99)",
    // Not among the preprint's metrics: only disentanglement_lib has it.
    source: "Locatello2019 (disentanglement_lib's implementation)",
    kind: "codes",
    outputs: ["irs"],
    compute: ({ codes, factors }) => ({ irs: irs(codes, factors).avg_score }),
  },
  {
    name: "beta_vae_score",
    description: "BetaVAE score: accuracy of predicting the fixed factor from code differences",
    source: DISLIB,
    kind: "encoder",
    outputs: ["beta_vae_score"],
  },
  {
    name: "factor_vae_score",
    description: "FactorVAE score: majority vote of the lowest-variance normalised code per fixed factor",
    source: DISLIB,
    kind: "encoder",
    outputs: ["factor_vae_score"],
  },
  {
    name: "udr",
    description: "unsupervised disentanglement ranking: agreement of a model's codes with its seed siblings'",
    source: "Klindt2021 §5.1 (model selection by UDR)",
    kind: "models",
    outputs: ["udr"],
  },
  {
    name: "r2",
    description: "R² of factor predictions against the full grid's variance; on D_one-ood the OOD factor's R² " +
      "against the others' and the towards-the-mean ratio (Eq. 2)",
    source: "Schott2022 Tables 2–3, App. H, §5.2–5.3 (evaluate_model.py's RSquared)",
    kind: "predictions",
    outputs: ["r2", "r2_ood", "r2_id", "ratio_median", "ratio_in_unit"],
  },
  {
    name: "clean_accuracy",
    description: "share of unperturbed test inputs a classifier labels correctly",
    source: "Schott2019 Table 1",
    kind: "classifier",
    outputs: ["clean"],
  },
  {
    name: "adversarial_distance",
    description: "per input the smallest adversarial perturbation any attack found under a norm (clean errors 0, " +
      "inputs no attack fooled ∞): the median, and the share still classified correctly at ε (L2 1.5, L∞ 0.3, " +
      "L0 12); ABS's certified L2 radius, averaged",
    source: "Schott2019 §3–7, App. A.3–A.7, Table 1 (lib/metrics/adversarial.ts)",
    kind: "classifier",
    outputs: [
      "median_l2",
      "median_linf",
      "median_l0",
      "acc_l2_1.5",
      "acc_linf_0.3",
      "acc_l0_12",
      "lower_bound_l2_mean",
    ],
  },
  {
    name: "corruption_accuracy",
    description: "accuracy on corrupted test inputs: the mean over the 15 MNIST-C corruptions (and per " +
      "corruption), the mean over the 15 common corruptions × 5 severities",
    source: "Rusak2020 App. E Table 6 (lib/data/corruptions.ts)",
    kind: "classifier",
    outputs: ["mnist_c", "common_mean"],
  },
  {
    name: "corruption_error",
    description: "Corruption Error per corruption (errors summed over severities over a reference model's) and " +
      "their mean, mCE; relative: the reference is the run's vanilla model, not AlexNet",
    source: "Rusak2020 App. D Table 5 (lib/metrics/corruption_error.ts)",
    kind: "classifier",
    outputs: ["relative_mce", "relative_ce"],
  },
  {
    name: "noise_perturbation_size",
    description: "ε*: the median L2 size at which Gaussian (gn), uniform (un) or learned adversarial (an) noise " +
      "along a random direction flips the decision (Eq. 4), and ε*_AN / ε*_GN",
    source: "Rusak2020 §3.3, Table 2 (lib/attacks/noise.ts zeroAccuracyPerturbation)",
    kind: "classifier",
    outputs: ["eps_gn", "eps_un", "eps_an", "eps_an_over_gn"],
  },
  {
    name: "adversarial_accuracy",
    description: "share of test inputs still classified correctly after a fixed-budget attack: DDN at L2 ε 1.5, " +
      "PGD at L∞ ε 0.1 (100 steps each)",
    source: "Rusak2020 App. F Table 7",
    kind: "classifier",
    outputs: ["l2_acc_1.5", "linf_acc_0.1"],
  },
  {
    name: "collapse_boundary",
    description: "two-point model of self-learning: the median over τt of the smallest τs/τt above which " +
      "entropy minimisation (ent) or pseudo-labelling (pl) no longer collapses",
    source: "Schneider2023 Ch. 3, Prop. 1, Fig. 3.2 (lib/adapt/two_point.ts)",
    kind: "models",
    outputs: ["ent_boundary", "pl_boundary"],
  },
  {
    name: "bn_adaptation_gain",
    description: "BatchNorm adaptation: 1 − mCE_adapted/mCE_unadapted with full (all test images) or partial " +
      "(n = 8) target statistics, and log₂ of the best source-prior N at n = 1",
    source: "Schneider2023 Ch. 2, Table 2.1, Table A.7 (lib/adapt/bn_adapt_study.ts)",
    kind: "classifier",
    outputs: ["rel_gain_full", "rel_gain_partial8", "log2_best_N_n1"],
  },
  {
    name: "self_learning_gain",
    description: "test-time self-learning on the BN affine parameters: 1 − mCE_method/mCE_BN-adapted for " +
      "entropy minimisation (ENT) and robust pseudo-labelling (RPL)",
    source: "Schneider2023 Ch. 3, Table 3.4 (lib/adapt/self_learning.ts)",
    kind: "classifier",
    outputs: ["ent_gain_over_bn", "rpl_gain_over_bn"],
  },
  {
    name: "continual_adaptation_accuracy",
    description: "online accuracy (predict, then adapt) on a continually changing corruption stream (CCC), " +
      "and RDumb's accuracy over BN adaptation's",
    source: "Schneider2023 Ch. 4, Table 4.1 (lib/data/ccc.ts, lib/adapt/eta.ts)",
    kind: "classifier",
    outputs: ["online_accuracy", "rdumb_over_bn"],
  },
  {
    name: "cebra_decoding",
    description: "kNN decoding of behaviour from an embedding (k ∈ {1, 4, 9, 16, 25} by validation, cosine): " +
      "test median absolute position error (cm) and R² of (position, direction)",
    source: "Schneider2023 Ch. 7 (Fig. 7.6d; lib/contrastive/decoding.ts)",
    kind: "encoder",
    outputs: ["median_err_cm", "r2"],
  },
  {
    name: "goodness_of_fit",
    description: "CEBRA's goodness of fit in bits, (ln(batch · sessions) − InfoNCE) · log₂ e: 0 for an " +
      "embedding that carries no information about the positives",
    source: "Schneider2023 Ch. 7, eq. 7.3 (lib/metrics/cebra_metrics.ts)",
    kind: "encoder",
    outputs: ["gof_bits"],
  },
  {
    name: "embedding_consistency",
    description: "R² of linear fits between embeddings, per ordered pair: of runs, or of data sets after " +
      "binning by label and averaging (CEBRA's consistency)",
    source: "Schneider2023 Ch. 7 (Fig. 7.1e; lib/metrics/cebra_metrics.ts)",
    kind: "models",
    outputs: ["consistency"],
  },
  {
    name: "attribution_auc",
    description: "ROC-AUC of an attribution map (Σ_x |J_f⁺(x)|, neuron gradient, feature ablation, integrated " +
      "gradients) against the generator's known input-latent dependence",
    source: "Schneider2023 Ch. 8, Table 8.1 (lib/attribution/jacobian.ts)",
    kind: "encoder",
    outputs: ["jpinv", "neuron_gradient", "feature_ablation", "integrated_gradients"],
  },
  {
    name: "distance_to_orthogonality",
    description: "DtO: mean over points of ‖V − P(V)‖_F, V the right singular vectors of the decoder's Jacobian " +
      "and P the closest signed permutation (0: locally orthogonal columns)",
    source: "Zietlow2022 §3.2.6 (eq. 3.25; lib/metrics/dto.ts)",
    kind: "encoder",
    outputs: ["dto"],
  },
  {
    name: "disentanglement_score",
    description: "the thesis' DS: per factor, the gap between the best and second-best 1-D kNN predictor from one " +
      "latent, each floored at the constant predictor's score and normalised so that DS lies in [0, 1]",
    source: "Zietlow2022 Ch. 3 (eqs. 3.32–3.37; lib/metrics/disentanglement_score.ts)",
    kind: "encoder",
    outputs: ["ds"],
  },
  {
    name: "polarized_regime",
    description: "share of training after which Δ_KL = |KL − KL_≈|/KL stays below 3% to the end (the polarized " +
      "regime's approximate KL over active latents)",
    source: "Zietlow2022 §3.2.2 (eqs. 3.5, 3.38; lib/metrics/polarized.ts)",
    kind: "encoder",
    outputs: ["polarized"],
  },
  {
    name: "invariance_attack_accuracy",
    description: "accuracy of Eq. 5's classifier on clean spheres and after Example 6's attack on the coordinate " +
      "it ignores",
    source: "Jacobsen2019 §2 (Example 6; lib/data/spheres.ts)",
    kind: "classifier",
    outputs: ["clean_acc", "shifted_acc"],
  },
  {
    name: "logit_classifier",
    description: "accuracy or error of a fully invertible network's logits z_s",
    source: "Jacobsen2019 Table 2 (lib/train/firevnet_training.ts)",
    kind: "classifier",
    outputs: ["logit_val_acc", "logit_train_err", "logit_test_err"],
  },
  {
    name: "nuisance_classifier",
    description: "accuracy or error of a fresh classifier on the frozen nuisances z_n: label information the " +
      "logits ignore",
    source: "Jacobsen2019 Table 2 (lib/train/firevnet_training.ts)",
    kind: "classifier",
    outputs: ["nuisance_val_acc", "nuisance_train_err", "nuisance_test_err"],
  },
  {
    name: "pose_error",
    description: "keypoint error in units of the nose–eye length and PCK@0.3, within domain and on unseen " +
      "identities (OOD), their ratio, and scratch over pretrained OOD error",
    source: "Schneider2023 Ch. 5 (lib/metrics/pose.ts)",
    kind: "predictions",
    outputs: ["within_err", "ood_err", "within_pck", "ood_pck", "ood_over_within", "scratch_over_pretrained_ood"],
  },
  {
    name: "pose_bn_adaptation_gain",
    description: "relative drop of the normalised keypoint error when a pose net's BatchNorm statistics are " +
      "re-estimated per identity (within, OOD) or per identity and (corruption, severity)",
    source: "Schneider2023 Tables D.5–D.9 (lib/train/pose_training.ts)",
    kind: "predictions",
    outputs: [
      "identity_gain_within",
      "identity_gain_ood",
      ...CORRUPTION_NAMES.flatMap((c) => [1, 2, 3, 4, 5].map((s) => `${c}_s${s}_gain`)),
    ],
  },
] as const satisfies readonly MetricEntry[];
/** A registered metric: its literal name, kind and outputs, and `compute` for those that read codes. */
export type RegisteredMetric = typeof METRIC_ENTRIES[number] & Pick<MetricEntry, "compute">;
/** Every metric. */
export const METRICS: Registry<RegisteredMetric> = defineRegistry("metric", METRIC_ENTRIES);

/** A metric name. */
export type MetricName = RegisteredMetric["name"];

/** Names of the metrics that read codes only, as `eval --metrics` accepts them. */
export const CODES_METRICS: MetricName[] = METRICS.entries.filter((m) => m.kind === "codes").map((m) => m.name);
