/**
 * The analyses of a study of many trained models (Locatello2019
 * §5.2–5.5): Spearman rank correlation between
 * metrics across models (Fig. 6), per-setting medians (Figs. 2–3, 7–8), the
 * share of each metric's variance due to the hyperparameter setting vs the
 * seed, and the Table 1 selection statistic.
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";
import { correlationMatrix, type Matrix, meanSd } from "../core/matrix.ts";
import { udr } from "./udr.ts";

/** One trained model of a study: its setting and its scores. */
export interface StudyModel {
  /** The method. */
  method: string;
  /** The value of its hyperparameter. */
  value: number;
  /** The seed. */
  seed: number;
  /** Its scores by metric key. */
  metrics: Record<string, number>;
}

/** The setting of a model, e.g. "beta_vae@4". */
export function settingOf(model: Pick<StudyModel, "method" | "value">): string {
  return `${model.method}@${model.value}`;
}

function finiteScores(models: readonly StudyModel[], metric: string): number[] {
  return models.map((m) => m.metrics[metric]).filter((v) => Number.isFinite(v));
}

/** Median of a non-empty list (mean of the middle two for even lengths). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Spearman rank correlation `[metrics][metrics]` across models, over the
 * models that have every metric finite.
 */
export function metricRankCorrelation(models: readonly StudyModel[], metrics: readonly string[]): number[][] {
  const complete = models.filter((m) => metrics.every((k) => Number.isFinite(m.metrics[k])));
  if (complete.length < 3) {
    throw new RangeError(`rank correlation needs ≥ 3 models with every metric, got ${complete.length}`);
  }
  const table: Matrix = {
    data: Float64Array.from(complete.flatMap((m) => metrics.map((k) => m.metrics[k]))),
    rows: complete.length,
    cols: metrics.length,
  };
  return correlationMatrix(table, table, "spearman");
}

/** Median of `metric` over seeds, per method and value. */
export function settingMedians(
  models: readonly StudyModel[],
  metric: string,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const setting of groupBy(models, settingOf).values()) {
    const { method, value } = setting[0];
    (out[method] ??= {})[String(value)] = median(finiteScores(setting, metric));
  }
  return out;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(item);
  }
  return groups;
}

/** How a metric's variance across models splits between method, value within method, and seed. */
export interface VarianceShares {
  /** Variance over all models (population). */
  total: number;
  /** Share explained by the method (variance of method means). */
  method: number;
  /** Share explained by the hyperparameter value within a method. */
  value: number;
  /** Share left to the seed (mean within-setting variance). */
  seed: number;
}

/**
 * Nested decomposition of the total variance: method means, then setting
 * means around their method mean, then seeds around their setting mean.
 * Cross terms cancel within each group, so the three shares sum to 1.
 */
export function varianceShares(models: readonly StudyModel[], metric: string): VarianceShares {
  const scored = models.filter((m) => Number.isFinite(m.metrics[metric]));
  if (scored.length < 2) throw new RangeError(`variance shares need ≥ 2 scored models, got ${scored.length}`);
  const all = scored.map((m) => m.metrics[metric]);
  // Population variance: the three sums of squares below, each divided by n, add up to it exactly.
  const total = meanSd(all, { ddof: 0 }).variance;
  const mean = (ms: readonly StudyModel[]) => ms.reduce((a, m) => a + m.metrics[metric], 0) / ms.length;
  const grandMean = mean(scored);
  let method = 0, value = 0, seed = 0;
  for (const ofMethod of groupBy(scored, (m) => m.method).values()) {
    const methodMean = mean(ofMethod);
    for (const ofSetting of groupBy(ofMethod, settingOf).values()) {
      const settingMean = mean(ofSetting);
      for (const m of ofSetting) {
        method += (methodMean - grandMean) ** 2;
        value += (settingMean - methodMean) ** 2;
        seed += (m.metrics[metric] - settingMean) ** 2;
      }
    }
  }
  const n = scored.length;
  const share = (sum: number) => (total > 0 ? sum / n / total : 0);
  return { total, method: share(method), value: share(value), seed: share(seed) };
}

/** Options of {@linkcode selectionSuccess}. */
export interface SelectionOptions {
  /** Monte-Carlo draws (the paper: 10,000). */
  draws: number;
  /** Score the transferred choice with a different random metric than the one it was chosen by. */
  differentMetric: boolean;
}

/**
 * Table 1 of Locatello et al. 2019, same-dataset column: draw a seed and a
 * metric; choose the setting that scores best among that seed's models; then,
 * on a different seed, compare that setting's model with a random model of
 * that seed — by the same metric or a different random one. Returns the
 * fraction of draws where the chosen setting scores ≥ the random model.
 */
export function selectionSuccess(
  models: readonly StudyModel[],
  metrics: readonly string[],
  rng: Rng,
  options: SelectionOptions,
): number {
  const bySeed = groupBy(models, (m) => String(m.seed));
  const seeds = [...bySeed.keys()];
  if (seeds.length < 2) throw new RangeError(`selection needs ≥ 2 seeds, got ${seeds.length}`);
  if (options.differentMetric && metrics.length < 2) throw new RangeError("a different metric needs ≥ 2 metrics");
  let wins = 0, counted = 0;
  for (let draw = 0; draw < options.draws; draw++) {
    const seed = seeds[rng.int(seeds.length)];
    let other = seeds[rng.int(seeds.length - 1)];
    if (other === seed) other = seeds[seeds.length - 1];
    const metric = metrics[rng.int(metrics.length)];
    let judge = metric;
    if (options.differentMetric) {
      judge = metrics[rng.int(metrics.length - 1)];
      if (judge === metric) judge = metrics[metrics.length - 1];
    }
    const candidates = bySeed.get(seed)!.filter((m) => Number.isFinite(m.metrics[metric]));
    if (candidates.length === 0) continue;
    const best = candidates.reduce((a, b) => (b.metrics[metric] > a.metrics[metric] ? b : a));
    const pool = bySeed.get(other)!.filter((m) => Number.isFinite(m.metrics[judge]));
    const chosen = pool.find((m) => settingOf(m) === settingOf(best));
    if (!chosen || pool.length === 0) continue;
    const random = pool[rng.int(pool.length)];
    counted++;
    if (chosen.metrics[judge] >= random.metrics[judge]) wins++;
  }
  if (counted === 0) throw new RangeError("no draw found the chosen setting on another seed");
  return wins / counted;
}

/** A model's mean codes of the study's shared probe images, with each code's average KL. */
export interface ProbeCodes {
  /** Mean codes `[probes, codes]`. */
  codes: Matrix;
  /** Average KL of each code. */
  klPerCode: ArrayLike<number>;
}

/**
 * Each model's UDR score (Duan et al. 2020, as Klindt2021 selects SlowVAE's γ
 * and λ): the median of its pairwise UDR with every other seed of the same
 * setting, on the same probe images. A setting with one seed gets NaN.
 */
export function udrPerModel(models: readonly StudyModel[], probes: readonly ProbeCodes[]): number[] {
  if (probes.length !== models.length) throw new RangeError(`${probes.length} probe codes for ${models.length} models`);
  return models.map((model, i) => {
    const pairwise = models.flatMap((other, j) =>
      j !== i && settingOf(other) === settingOf(model)
        ? [udr(probes[i].codes, probes[j].codes, { kl: { a: probes[i].klPerCode, b: probes[j].klPerCode } })]
        : []
    );
    return median(pairwise);
  });
}

/** Which setting each criterion chooses, and how the two choices compare ({@linkcode compareSelection}). */
export interface SelectionComparison {
  /** The setting with the highest median unsupervised score (e.g. UDR). */
  byUnsupervised: string;
  /** The setting with the highest median supervised score (e.g. MCC). */
  bySupervised: string;
  /** 1 when both agree; 0 when the unsupervised choice has no supervised score. */
  supervisedRankOfUnsupervisedChoice: number;
  /** Median supervised score over seeds, per setting with a finite one. */
  medians: Record<string, number>;
  /** Median unsupervised score over seeds, per setting with a finite one. */
  unsupervisedMedians: Record<string, number>;
}

/**
 * The setting each criterion would choose (highest median over seeds), and
 * where the unsupervised choice ranks by the supervised metric: the
 * comparison of UDR-based with metric-based selection.
 */
export function compareSelection(
  models: readonly StudyModel[],
  unsupervised: string,
  supervised: string,
): SelectionComparison {
  const medianOf = (metric: string) =>
    [...groupBy(models, settingOf).entries()].map(([setting, ms]) => ({
      setting,
      score: median(finiteScores(ms, metric)),
    })).filter((s) => Number.isFinite(s.score)).sort((a, b) => b.score - a.score);
  const byUnsupervised = medianOf(unsupervised), bySupervised = medianOf(supervised);
  if (byUnsupervised.length === 0 || bySupervised.length === 0) {
    throw new RangeError(`no setting has a finite median ${byUnsupervised.length ? supervised : unsupervised}`);
  }
  const chosen = byUnsupervised[0].setting;
  const rank = bySupervised.findIndex((s) => s.setting === chosen) + 1;
  return {
    byUnsupervised: chosen,
    bySupervised: bySupervised[0].setting,
    /** 1 when both agree; 0 when the unsupervised choice has no supervised score. */
    supervisedRankOfUnsupervisedChoice: rank,
    medians: Object.fromEntries(bySupervised.map((s) => [s.setting, s.score])),
    unsupervisedMedians: Object.fromEntries(byUnsupervised.map((s) => [s.setting, s.score])),
  };
}
