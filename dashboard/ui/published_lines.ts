/**
 * Published values drawn on a run's charts: which targets of its experiment
 * belong to a logged metric, and the band around each value that counts as
 * reproducing it.
 *
 * @module
 */
import type { SummaryTarget } from "../../lib/core/run_layout.ts";

/** A published target as GET /api/registry lists it under an experiment. */
export interface PublishedTarget {
  metric: string;
  paper: number;
  source: string;
  tolerance: number;
  /** "match", "higher" or "lower". */
  direction: string;
}

/** A published value as a chart draws it: a dashed line at `paper`, the band from `lo` to `hi` shaded. */
export interface Reference {
  /** `published (source)`: the legend's and the line's label. */
  label: string;
  paper: number;
  lo: number;
  hi: number;
}

/**
 * The band of values that reproduce a target, on the side that counts:
 * both sides for "match", below the value for "higher" (a higher value
 * reproduces it anyway), above it for "lower".
 *
 * @example
 * ```ts
 * referenceBand({ paper: 0.9, tolerance: 0.05, direction: "higher" }); // { lo: 0.85, hi: 0.9 }
 * ```
 */
export function referenceBand(target: Pick<PublishedTarget, "paper" | "tolerance" | "direction">): {
  lo: number;
  hi: number;
} {
  const { paper, tolerance, direction } = target;
  if (direction === "higher") return { lo: paper - tolerance, hi: paper };
  if (direction === "lower") return { lo: paper, hi: paper + tolerance };
  return { lo: paper - tolerance, hi: paper + tolerance };
}

/**
 * Whether the logged metric `name` matches a target's curve pattern (`*`:
 * any characters but "/", as in lib/core/curves.ts).
 */
export function matchesPattern(pattern: string, name: string): boolean {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join("[^/]*")}$`).test(name);
}

/**
 * Whether a logged metric plausibly is a target's metric when no summary
 * says so (a run still training): the same name, the same parts in another
 * order (`L1/slowflow/mcc` for `mcc/slowflow/L1`), or the name under a
 * method's prefix (`beta_vae/mig` for `mig`).
 */
export function namesTarget(logged: string, target: string): boolean {
  if (logged === target || logged.endsWith(`/${target}`)) return true;
  const parts = (name: string) => name.split("/").sort().join("/");
  return target.includes("/") && parts(logged) === parts(target);
}

/**
 * The published values to draw on the chart of `metric`. With the run's
 * summary targets, the targets whose learning curve is that metric (their
 * `curve.metric`; a target that recorded no curve, by the name as
 * {@linkcode namesTarget} judges it), valued as the registry states them
 * today when it lists them; without a summary, the registry's targets whose
 * name {@linkcode namesTarget} the metric.
 *
 * @param registry the experiment's targets in GET /api/registry
 * @param summary the run's summary.json targets, null while it has none
 */
export function publishedFor(
  metric: string,
  registry: PublishedTarget[],
  summary: SummaryTarget[] | null,
): Reference[] {
  const chosen = summary?.length
    ? summary.filter((t) =>
      t.curve ? matchesPattern(t.curve.metric, metric) || t.metric === metric : namesTarget(metric, t.metric)
    )
      .map((t) => registry.find((r) => r.metric === t.metric) ?? t)
    : registry.filter((t) => namesTarget(metric, t.metric));
  const seen = new Set<string>();
  return chosen.flatMap((t) => {
    const label = `published (${t.source})`;
    if (seen.has(`${label} ${t.paper}`)) return [];
    seen.add(`${label} ${t.paper}`);
    return [{ label, paper: t.paper, ...referenceBand(t) }];
  });
}
