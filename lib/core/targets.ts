/**
 * How a run's number is compared with a published one: the verdict, and the
 * comparison in words for tables. Pure functions, shared by the run, the
 * scorecard and the dashboard's page.
 *
 * @module
 */
import { stillRising, type TargetCurve } from "./curves.ts";
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
  const gap = ours - target.paper;
  const holds = target.direction === "higher"
    ? gap >= -target.tolerance
    : target.direction === "lower"
    ? gap <= target.tolerance
    : Math.abs(gap) <= target.tolerance;
  return holds ? "reproduced" : stillRising(target, curve) ? "still rising" : "not reproduced";
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
