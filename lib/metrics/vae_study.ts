/**
 * The analyses of a study of VAE-family models as Locatello et al. 2019
 * report them (Locatello2019 §5.1–5.5): reconstruction and TC per
 * setting, metric rank correlations, unsupervised scores against metrics,
 * variance shares and the Table 1 selection statistic, as flat metrics plus
 * tables.
 *
 * @module
 */
import { Rng } from "../core/rng.ts";
import {
  metricRankCorrelation,
  selectionSuccess,
  settingMedians,
  type StudyModel,
  type VarianceShares,
  varianceShares,
} from "./study.ts";

/** The disentanglement metrics the paper correlates (Fig. 6) and selects by (Table 1). */
export const STUDY_METRICS = [
  "beta_vae_score",
  "factor_vae_score",
  "mig",
  "dci_disentanglement",
  "modularity",
  "sap",
] as const;

/** Scores that need no labels, which Locatello2019 §5.5 (Fig. 9) tests as selection criteria. */
export const UNSUPERVISED_SCORES = ["reconstruction", "kl", "elbo", "tc_sampled"] as const;

/** The analyses of a VAE study ({@linkcode analyseStudy}). */
export interface VaeStudyAnalysis {
  /** Flat metrics: medians per setting, TC trends, rank correlations, variance shares and selection success. */
  metrics: Record<string, number>;
  /** The tables behind them. */
  tables: {
    /** Median over seeds of each score, per method and swept value: `medians[score][method][value]`. */
    medians: Record<string, Record<string, Record<string, number>>>;
    /** Spearman rank correlations between the metrics over all models (Fig. 6). */
    spearman: { metrics: typeof STUDY_METRICS; matrix: number[][] };
    /** Spearman correlations of each unsupervised score (rows) with each metric (columns), Fig. 9. */
    unsupervised: { scores: typeof UNSUPERVISED_SCORES; metrics: typeof STUDY_METRICS; matrix: number[][] };
    /** How each metric's variance splits between method, value and seed. */
    shares: Record<string, VarianceShares>;
  };
}

/** The study's analyses of its finished models, as flat metrics plus tables. */
export function analyseStudy(models: StudyModel[], draws: number, seed: number): VaeStudyAnalysis {
  const metrics: Record<string, number> = {};
  const put = (key: string, value: number) => {
    if (Number.isFinite(value)) metrics[key] = value;
  };
  const medians = Object.fromEntries(
    ["reconstruction", "kl", "tc_mean", "tc_sampled", ...STUDY_METRICS].map((k) => [k, settingMedians(models, k)]),
  );
  for (const key of ["reconstruction", "tc_mean", "tc_sampled"]) {
    for (const [method, byValue] of Object.entries(medians[key])) {
      for (const [value, v] of Object.entries(byValue)) put(`${key}/${method}@${value}`, v);
    }
  }
  for (const method of Object.keys(medians.tc_mean)) {
    const values = Object.keys(medians.tc_mean[method]).map(Number).sort((a, b) => a - b);
    if (values.length < 2) continue;
    const [weakest, strongest] = [String(values[0]), String(values.at(-1))];
    put(`tc_trend/${method}/mean`, medians.tc_mean[method][strongest] - medians.tc_mean[method][weakest]);
    put(`tc_trend/${method}/sampled`, medians.tc_sampled[method][strongest] - medians.tc_sampled[method][weakest]);
  }
  put("tc_mean_above_sampled", models.filter((m) => m.metrics.tc_mean > m.metrics.tc_sampled).length / models.length);

  const spearman = metricRankCorrelation(models, STUDY_METRICS);
  STUDY_METRICS.forEach((a, i) => STUDY_METRICS.forEach((b, j) => j > i && put(`spearman/${a}~${b}`, spearman[i][j])));
  // Fig. 9: would an unsupervised score pick the models the metrics favour? (lower reconstruction is better)
  const withUnsupervised = metricRankCorrelation(models, [...UNSUPERVISED_SCORES, ...STUDY_METRICS]);
  const unsupervised = UNSUPERVISED_SCORES.map((_, i) => withUnsupervised[i].slice(UNSUPERVISED_SCORES.length));
  UNSUPERVISED_SCORES.forEach((u, i) =>
    STUDY_METRICS.forEach((k, j) => put(`unsupervised/${u}~${k}`, unsupervised[i][j]))
  );
  const shares = Object.fromEntries(STUDY_METRICS.map((k) => [k, varianceShares(models, k)]));
  for (const [k, s] of Object.entries(shares)) {
    put(`method_share/${k}`, s.method);
    put(`value_share/${k}`, s.value);
    put(`seed_share/${k}`, s.seed);
  }
  for (const differentMetric of [false, true]) {
    const rng = Rng.derive(seed, "selection", String(differentMetric));
    const success = selectionSuccess(models, STUDY_METRICS, rng, { draws, differentMetric });
    put(`selection/${differentMetric ? "different" : "same"}_metric`, success);
  }
  return {
    metrics,
    tables: {
      medians,
      spearman: { metrics: STUDY_METRICS, matrix: spearman },
      unsupervised: { scores: UNSUPERVISED_SCORES, metrics: STUDY_METRICS, matrix: unsupervised },
      shares,
    },
  };
}
