/**
 * How a run's number is compared with a published one: the verdict, and the
 * comparison in words for tables. Pure functions, shared by the run, the
 * scorecard and the dashboard's page.
 *
 * @module
 */
import { stillRising, type TargetCurve } from "./curves.ts";
import { meanSd } from "./matrix.ts";
import { studentTQuantile } from "./special_functions.ts";
import type { TargetDirection, Verdict } from "./run_store.ts";

/** What a verdict needs of a target. */
export interface Comparison {
  paper: number;
  tolerance: number;
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

/** A target's verdict over the seeds of one configuration. */
export interface SeedsVerdict {
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
  metric: string;
  nulls: { value: number; model: string }[];
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
