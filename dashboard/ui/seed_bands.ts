/**
 * Seeds of one configuration drawn as one line: runs are grouped by
 * experiment and config, and each group becomes its mean with a band of one
 * standard deviation.
 *
 * @module
 */
import { meanSd } from "../../lib/core/matrix.ts";
import type { Series } from "../../lib/core/run_store.ts";

/** A mean series and its band, point for point. */
export interface SeedBand {
  series: Series;
  band: { lo: number[]; hi: number[] };
}

/**
 * Mean ± one sample standard deviation (n − 1) over runs, aligned on step,
 * with the toolkit's one mean/s.d. helper; a step one run alone logged has a
 * zero-width band (no spread is known). A step that only some runs logged
 * averages the runs that have it; its time is that of the first run listed.
 *
 * @example
 * ```ts
 * meanBand([{ x: [0], t: [0], y: [1] }, { x: [0], t: [0], y: [3] }]);
 * // { series: { x: [0], t: [0], y: [2] }, band: { lo: [2 − √2], hi: [2 + √2] } }
 * ```
 */
export function meanBand(series: Series[]): SeedBand {
  const byStep = new Map<number, { t: number; values: number[] }>();
  for (const s of series) {
    s.x.forEach((x, i) => {
      const entry = byStep.get(x) ?? { t: s.t[i], values: [] };
      entry.values.push(s.y[i]);
      byStep.set(x, entry);
    });
  }
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const mean: number[] = [], lo: number[] = [], hi: number[] = [], t: number[] = [];
  for (const step of steps) {
    const { values, t: time } = byStep.get(step)!;
    const { mean: m, sd: spread } = meanSd(values);
    const sd = values.length > 1 ? spread : 0;
    mean.push(m);
    lo.push(m - sd);
    hi.push(m + sd);
    t.push(time);
  }
  return { series: { x: steps, t, y: mean }, band: { lo, hi } };
}

/** Runs that differ only in seed, with the legend label of their line. */
export interface SeedGroup<R> {
  label: string;
  runs: R[];
}

/**
 * Groups runs whose experiment and config are equal (the seed is not part of
 * the config), in the order each group first appears.
 *
 * @example
 * ```ts
 * seedGroups([{ experiment: "a", config: { lr: 1 } }, { experiment: "a", config: { lr: 1 } }])[0].label;
 * // "a (2 seeds)"
 * ```
 */
export function seedGroups<R extends { experiment: string; config: Record<string, unknown> }>(
  runs: R[],
): SeedGroup<R>[] {
  const groups = new Map<string, R[]>();
  for (const r of runs) {
    const id = `${r.experiment} ${JSON.stringify(r.config)}`;
    groups.set(id, [...(groups.get(id) ?? []), r]);
  }
  return [...groups.values()].map((members) => ({
    label: `${members[0].experiment} (${members.length} seed${members.length > 1 ? "s" : ""})`,
    runs: members,
  }));
}
