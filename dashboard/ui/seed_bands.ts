/**
 * Seeds of one configuration drawn as one line: runs are grouped by
 * experiment and config, and each group becomes its mean with a band of one
 * standard deviation.
 *
 * @module
 */
import { meanSd } from "../../lib/core/matrix.ts";
import type { Series } from "../../lib/core/run_layout.ts";
import { differingKeys } from "./config_keys.ts";
import { formatValue } from "./format.ts";

/** A mean series and its band, point for point. */
export interface SeedBand {
  series: Series;
  band: { lo: number[]; hi: number[] };
}

/** What a seed band spans: one sample s.d., or the 95% confidence interval of the mean (Student's t). */
export type BandKind = "sd" | "ci95";

/** Student's t 0.975 quantiles for 1–30 degrees of freedom (scipy.stats.t.ppf(0.975, df)). */
const T975 = [
  12.7062,
  4.3027,
  3.1824,
  2.7764,
  2.5706,
  2.4469,
  2.3646,
  2.306,
  2.2622,
  2.2281,
  2.201,
  2.1788,
  2.1604,
  2.1448,
  2.1314,
  2.1199,
  2.1098,
  2.1009,
  2.093,
  2.086,
  2.0796,
  2.0739,
  2.0687,
  2.0639,
  2.0595,
  2.0555,
  2.0518,
  2.0484,
  2.0452,
  2.0423,
];

/** The half-width of a band over `n` values of sample s.d. `sd`. */
export function bandHalfWidth(sd: number, n: number, kind: BandKind): number {
  if (n < 2) return 0;
  if (kind === "sd") return sd;
  // Beyond 30 degrees of freedom the normal quantile is within 4% of t's.
  const t = n - 1 <= 30 ? T975[n - 2] : 1.96;
  return (t * sd) / Math.sqrt(n);
}

/**
 * Grid points of a group's line at most: the union of 5 seeds' steps the
 * server thinned differently holds 3–4× a single run's points, and grows
 * with the seeds, while a chart is at most this many pixels wide.
 */
const MAX_GRID_POINTS = 2000;

/** At most `max` of the sorted `steps`, evenly by position, the first and the last always among them. */
function evenlyKept(steps: number[], max: number): number[] {
  if (steps.length <= max) return steps;
  return Array.from({ length: max }, (_, i) => steps[Math.round((i * (steps.length - 1)) / (max - 1))]);
}

/**
 * Mean ± one sample standard deviation (n − 1), or ± its 95% confidence
 * interval with `ci95`, over runs, on one grid of
 * steps: the union of the runs' steps (at most `maxPoints` of them, evenly). A run contributes at every grid step
 * within its own first and last step, linearly interpolated between its
 * neighbouring points (its own points exactly), so that runs the server
 * thinned to different steps still average together. A step only one run
 * covers has a zero-width band (no spread is known); its time is that of the
 * first run listed that covers it.
 *
 * @example
 * ```ts
 * meanBand([{ x: [0], t: [0], y: [1] }, { x: [0], t: [0], y: [3] }]);
 * // { series: { x: [0], t: [0], y: [2] }, band: { lo: [2 − √2], hi: [2 + √2] } }
 * ```
 */
export function meanBand(series: Series[], kind: BandKind = "sd", maxPoints = MAX_GRID_POINTS): SeedBand {
  const sorted = series.map((s) => {
    const order = s.x.map((_, i) => i).sort((a, b) => s.x[a] - s.x[b]);
    return { x: order.map((i) => s.x[i]), t: order.map((i) => s.t[i]), y: order.map((i) => s.y[i]) };
  }).filter((s) => s.x.length > 0);
  const steps = evenlyKept([...new Set(sorted.flatMap((s) => s.x))].sort((a, b) => a - b), maxPoints);
  // Each run's position in its own points, moved forward along the grid.
  const at = sorted.map(() => 0);
  const mean: number[] = [], lo: number[] = [], hi: number[] = [], t: number[] = [];
  for (const step of steps) {
    const values: number[] = [];
    let time: number | null = null;
    sorted.forEach((s, r) => {
      const last = s.x.length - 1;
      if (step < s.x[0] || step > s.x[last]) return;
      while (at[r] < last && s.x[at[r] + 1] <= step) at[r]++;
      const i = at[r];
      const exact = s.x[i] === step || i === last;
      const w = exact ? 0 : (step - s.x[i]) / (s.x[i + 1] - s.x[i]);
      values.push(exact ? s.y[i] : s.y[i] + w * (s.y[i + 1] - s.y[i]));
      time ??= exact ? s.t[i] : s.t[i] + w * (s.t[i + 1] - s.t[i]);
    });
    const { mean: m, sd: spread } = meanSd(values);
    const sd = bandHalfWidth(spread, values.length, kind);
    mean.push(m);
    lo.push(m - sd);
    hi.push(m + sd);
    t.push(time!);
  }
  return { series: { x: steps, t, y: mean }, band: { lo, hi } };
}

/** Runs drawn (and exported) as one: seeds of one setting, or runs sharing the values of chosen keys. */
export interface RunGroup<R> {
  /** The experiment and the config values that set the group apart, then its size: `vae beta=4 (2 seeds)`. */
  label: string;
  /** What makes the group one (stable: it names the group's colour). */
  id: string;
  runs: R[];
}

/**
 * Groups runs in the order each group first appears. Without `by`, runs
 * whose experiment and config are equal (the seed is not part of the
 * config) are one group, labelled by the config keys that differ between
 * the runs. With `by`, runs of one experiment whose values of those config
 * keys are equal are one group, whatever else differs, labelled by them.
 *
 * @example
 * ```ts
 * runGroups([{ experiment: "a", config: { lr: 1 } }, { experiment: "a", config: { lr: 1 } }])[0].label;
 * // "a (2 seeds)"
 * runGroups([{ experiment: "a", config: { lr: 1, m: "x" } }, { experiment: "a", config: { lr: 2, m: "x" } }], ["m"])[0].label;
 * // "a m=x (2 runs)"
 * ```
 */
export function runGroups<R extends { experiment: string; config: Record<string, unknown> }>(
  runs: R[],
  by: string[] = [],
): RunGroup<R>[] {
  // Seeds of one setting differ in their seed: a config that records it (`seed`) must not split them.
  const setting = (config: Record<string, unknown>) =>
    Object.entries(config).filter(([k]) => k !== "seed").sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  const idOf = (r: R) =>
    `${r.experiment} ${JSON.stringify(by.length ? by.map((k) => r.config[k] ?? null) : setting(r.config))}`;
  const groups = new Map<string, R[]>();
  for (const r of runs) groups.set(idOf(r), [...(groups.get(idOf(r)) ?? []), r]);
  const named = by.length ? by : differingKeys(runs.map((r) => r.config)).filter((k) => k !== "seed");
  const unit = by.length ? "run" : "seed";
  return [...groups.entries()].map(([id, members]) => ({
    id,
    label: [
      members[0].experiment,
      ...named.map((k) => `${k}=${members[0].config[k] === undefined ? "—" : formatValue(members[0].config[k])}`),
      `(${members.length} ${unit}${members.length > 1 ? "s" : ""})`,
    ].join(" "),
    runs: members,
  }));
}
