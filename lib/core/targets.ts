/**
 * Published targets and claims, and how a run's number is compared with a
 * published one: the verdict (one seed or several), the null-model gate, and
 * the comparison in words for tables. Pure functions, shared by the run, the
 * scorecard, the audit and the dashboard's page.
 *
 * @module
 */
import { lastThirdTrend, type TargetCurve } from "./curves.ts";
import { meanSd } from "./matrix.ts";
import { studentTQuantile } from "./special_functions.ts";

/** How a published number is compared: within tolerance, or at least as good in a stated direction. */
export type TargetDirection = "match" | "higher" | "lower";

/** Verdict of a target or claim ("still rising": targets only, see {@linkcode stillRising}). */
export type Verdict = "reproduced" | "not reproduced" | "still rising" | "not measured";

/** Every verdict, in the order the scorecard counts them. */
export const VERDICTS: readonly Verdict[] = ["reproduced", "still rising", "not reproduced", "not measured"];

/** A published number an experiment is compared with. */
// deno-lint-ignore no-explicit-any
export interface Target<C = any> {
  /** Key in the run's final metrics. */
  metric: string;
  /** The published value. */
  paper: number;
  /** Where it is published: document file name and table. */
  source: string;
  /** Allowed distance from `paper` for the verdict "reproduced". */
  tolerance: number;
  /**
   * "match": reproduced within `tolerance` on either side; "higher" (a score
   * where more is better): reproduced unless below `paper − tolerance`;
   * "lower": reproduced unless above `paper + tolerance`. Beating a published
   * number is not a failure to reproduce it.
   */
  direction: TargetDirection;
  /**
   * Where `tolerance` comes from: the document's own spread (s.d. over seeds or
   * models, the IQR of a figure: say which table) or the stated rule applied.
   */
  toleranceSource: string;
  /**
   * What trivial models score on this metric (chance, the mean predictor, the
   * untrained network at step 0 by the same code, a ratio of 1 for "no
   * effect"): the band of "reproduced" must exclude each, with the tolerance
   * at most half the way from the published value to the nearest one.
   */
  nulls: NullModel[];
  /** Whether the run measures the document's quantity or a stand-in for it. */
  kind: TargetKind;
  /**
   * For an analogue: what stands in for what (e.g. "a 4-layer CNN on MNIST for
   * ResNet-50 on ImageNet"). For like-for-like: optional, the scale factor.
   */
  standIn?: string;
  /** Whether the published number is about this run's setting (default: always); others are left out. */
  appliesTo?: (cfg: C) => boolean;
  /**
   * The logged metric whose values during training are this target's learning
   * curve (default: `metric`); `*` matches any characters but "/", and the
   * metrics it matches are averaged per step (e.g. over seeds).
   */
  curve?: string | ((cfg: C) => string);
}

/** A trivial model's score on a target's metric, and what that model is. */
export interface NullModel {
  /** The model's score on the target's metric. */
  value: number;
  /** e.g. "chance (10 classes)", "mean predictor (R² 0)", "untrained network, step 0". */
  model: string;
}

/**
 * "like-for-like": the document's quantity (its data, model family and metric,
 * at a scale within a stated factor); "analogue": a stand-in (another dataset,
 * architecture or scale), counted apart.
 */
export type TargetKind = "like-for-like" | "analogue";

/** A qualitative finding of the source, checked on the final metrics and the run's config. */
// deno-lint-ignore no-explicit-any
export interface Claim<C = any> {
  /** The finding, in words. */
  text: string;
  /** Where it is published: document and section, table or figure. */
  source: string;
  /** True when the finding holds, false when not, undefined when the run did not measure it. */
  holds: (metrics: Record<string, number>, cfg: C) => boolean | undefined;
}

/** What a verdict needs of a target. */
export interface Comparison {
  /** The published value. */
  paper: number;
  /** Allowed distance from `paper` for "reproduced". */
  tolerance: number;
  /** Match within tolerance, or at least as good in this direction. */
  direction: TargetDirection;
}

/**
 * Verdict on one target: within tolerance of the published number (or beyond
 * it in its direction) or not; "still rising" when not, but its learning
 * curve ended still moving toward the published number (see {@linkcode stillRising}).
 */
export function targetVerdict(
  target: Comparison,
  ours: number | null | undefined,
  curve?: TargetCurve | null,
): Verdict {
  if (ours === undefined || ours === null || !Number.isFinite(ours)) return "not measured";
  return inBand(target, ours) ? "reproduced" : stillRising(target, curve) ? "still rising" : "not reproduced";
}

/**
 * Whether `value` counts as reproducing the target: within `tolerance` of the
 * published number, or beyond it in the target's direction.
 */
export function inBand(target: Comparison, value: number): boolean {
  const gap = value - target.paper;
  return target.direction === "higher"
    ? gap >= -target.tolerance
    : target.direction === "lower"
    ? gap <= target.tolerance
    : Math.abs(gap) <= target.tolerance;
}

/**
 * A trend counts only when its slope is this many standard errors from 0: a
 * flat curve's noise gives |slope| > 2 s.e. in about 5% of fits with many points.
 */
export const TREND_T = 2;

/**
 * Whether a curve that ended outside the band is still on its way into it:
 * the trend of its last third moves toward the published value by more than
 * {@linkcode TREND_T} standard errors of its slope (more than the curve's own
 * noise), and the straight line reaches the band within twice the steps run.
 * The trend is recomputed from the points, so stored curves get today's rule.
 */
export function stillRising(
  target: Comparison,
  curve: TargetCurve | null | undefined,
): boolean {
  const trend = curve ? lastThirdTrend(curve.points) : null;
  if (!curve || !trend) return false;
  const [lastStep, lastValue] = curve.points[curve.points.length - 1];
  const fitted = trend.projected - trend.slope * (trend.projected_at - lastStep);
  const toward = target.direction === "higher"
    ? 1
    : target.direction === "lower"
    ? -1
    : Math.sign(target.paper - (Number.isFinite(fitted) ? fitted : lastValue));
  if (toward === 0 || !(toward * trend.slope > TREND_T * trend.slope_se)) return false;
  // The band's near edge in the direction of travel.
  const edge = toward > 0 ? target.paper - target.tolerance : target.paper + target.tolerance;
  return toward > 0 ? trend.projected >= edge : trend.projected <= edge;
}

/** A target's verdict over the seeds of one configuration. */
export interface SeedsVerdict {
  /** The verdict over the seeds (see {@linkcode seedsVerdict}). */
  verdict: Verdict;
  /** Seeds measured. */
  n: number;
  /** Their mean (the one value with one seed); null when none was measured. */
  mean: number | null;
  /** The 95% t-interval of the mean with three or more seeds, else null. */
  interval: [number, number] | null;
}

/** Seeds from which a verdict uses the seeds' mean and its 95% interval. */
export const MIN_SEEDS_FOR_INTERVAL = 3;

/**
 * Verdict on a target from the values several seeds of one configuration
 * measured. One seed: {@linkcode targetVerdict} with its curve. Two: the
 * mean's verdict, without an interval. Three or more: "reproduced" when the
 * mean is in the band and the mean's 95% t-interval holds no null model (the
 * seeds tell the run from the trivial model); otherwise "still rising" when
 * the seeds' mean curve says so, else "not reproduced".
 */
export function seedsVerdict(
  target: Comparison & { nulls?: readonly { value: number }[] },
  values: readonly (number | null | undefined)[],
  meanCurve?: TargetCurve | null,
): SeedsVerdict {
  const measured = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  const n = measured.length;
  if (n === 0) return { verdict: "not measured", n, mean: null, interval: null };
  if (n < MIN_SEEDS_FOR_INTERVAL) {
    const { mean } = meanSd(measured);
    return { verdict: targetVerdict(target, mean, meanCurve), n, mean, interval: null };
  }
  const { mean, sd } = meanSd(measured);
  const half = studentTQuantile(0.975, n - 1) * sd / Math.sqrt(n);
  const interval: [number, number] = [mean - half, mean + half];
  const nullInside = (target.nulls ?? []).some((m) => m.value >= interval[0] && m.value <= interval[1]);
  const verdict: Verdict = inBand(target, mean) && !nullInside
    ? "reproduced"
    : stillRising(target, meanCurve)
    ? "still rising"
    : "not reproduced";
  return { verdict, n, mean, interval };
}

/** What the null-model gate needs of a target. */
export interface GatedTarget extends Comparison {
  /** Key in the run's final metrics (names the target in the problems). */
  metric: string;
  /** What trivial models score on the metric. */
  nulls: { value: number; model: string }[];
  /** Where the tolerance comes from ("" when not stated, which is a problem). */
  toleranceSource: string;
}

/**
 * Why a target cannot give evidence, or [] when it can: a target needs at
 * least one null model and a tolerance source; no null may lie in its band,
 * and the tolerance may be at most half the way from the published value to
 * the nearest null (else a run halfway between the trivial model and the
 * document would count as reproducing it).
 */
export function nullGateProblems(target: GatedTarget): string[] {
  const problems: string[] = [];
  if (target.nulls.length === 0) problems.push(`${target.metric}: no null model`);
  if (!target.toleranceSource.trim()) problems.push(`${target.metric}: no tolerance source`);
  if (!(target.tolerance > 0) || !Number.isFinite(target.paper)) {
    problems.push(`${target.metric}: tolerance ${target.tolerance} must be > 0 and the published value finite`);
  }
  for (const n of target.nulls) {
    if (!Number.isFinite(n.value)) problems.push(`${target.metric}: null "${n.model}" is not a number`);
    else if (inBand(target, n.value)) {
      problems.push(`${target.metric}: null "${n.model}" (${n.value}) is "reproduced" by ${comparisonText(target)}`);
    } else if (target.tolerance > Math.abs(target.paper - n.value) / 2 + 1e-12) {
      problems.push(
        `${target.metric}: tolerance ${target.tolerance} exceeds half the way from ${target.paper} to null "${n.model}" (${n.value})`,
      );
    }
  }
  return problems;
}

/** What "reproduced" means for a target, e.g. "0.997 ± 0.03", "≥ 0.967 (0.997 − 0.03)". */
export function comparisonText({ paper, tolerance, direction }: Comparison): string {
  const round = (v: number) => Number(v.toFixed(4)).toString();
  // Summaries written before targets had a tolerance and direction in summary.json show the number alone.
  if (!Number.isFinite(tolerance)) return round(paper);
  if (direction === "higher") return `≥ ${round(paper - tolerance)} (${round(paper)} − ${round(tolerance)})`;
  if (direction === "lower") return `≤ ${round(paper + tolerance)} (${round(paper)} + ${round(tolerance)})`;
  return `${round(paper)} ± ${round(tolerance)}`;
}
