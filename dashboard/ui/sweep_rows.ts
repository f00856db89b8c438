/**
 * The pure parts of the sweeps pages: the API's shapes, the order of a
 * sweep's task table and the segments of its progress bar.
 *
 * @module
 */

/** Every task status, in the order the progress bar shows them. */
export const SWEEP_STATUSES = ["completed", "active", "interrupted", "crashed", "failed", "lost", "pending"] as const;
/** A task status (as lib/sweep/store.ts derives it). */
export type SweepTaskStatus = typeof SWEEP_STATUSES[number];

/** GET /api/sweeps: one sweep. */
export interface SweepSummary {
  id: string;
  experiment: string;
  preset: string;
  created: string;
  executor: string;
  total: number;
  counts: Record<SweepTaskStatus, number>;
}

/** GET /api/sweeps/:id: one task. */
export interface SweepTaskRow {
  index: number;
  key: string;
  values: Record<string, unknown>;
  seed: number;
  status: SweepTaskStatus;
  /** The run the status comes from, as the dashboard links it. */
  run: { experiment: string; id: string } | null;
  /** The spec's metric in the completed run's summary. */
  metric: number | null;
  exit_code: number | null;
  attempts: number;
}

/** GET /api/sweeps/:id. */
export interface SweepDetail extends SweepSummary {
  /** Config keys whose values differ between tasks. */
  varied: string[];
  /** The spec's metric and whether more is better. */
  metric: { name: string; goal: "minimize" | "maximize" } | null;
  tasks: SweepTaskRow[];
}

/** The column a sweep's table is sorted by: the task index, the metric, or a varied key. */
export type SweepSortKey = "index" | "metric" | "seed" | `value:${string}`;

function compareUnknown(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return JSON.stringify(a ?? null).localeCompare(JSON.stringify(b ?? null));
}

/**
 * Tasks sorted by `key` (ascending, or descending with `descending`); by the
 * metric, tasks without a value go last either way. Ties keep task order.
 */
export function sortedTasks(tasks: readonly SweepTaskRow[], key: SweepSortKey, descending = false): SweepTaskRow[] {
  const sign = descending ? -1 : 1;
  return [...tasks].sort((a, b) => {
    let order: number;
    if (key === "metric") {
      if (a.metric === null || b.metric === null) return (a.metric === null ? 1 : 0) - (b.metric === null ? 1 : 0);
      order = a.metric - b.metric;
    } else if (key === "index" || key === "seed") order = a[key] - b[key];
    else order = compareUnknown(a.values[key.slice(6)], b.values[key.slice(6)]);
    return sign * order || a.index - b.index;
  });
}

/** The progress bar's segments: each status with tasks, its count and its share of the total in percent. */
export function progressSegments(
  counts: Record<SweepTaskStatus, number>,
  total: number,
): { status: SweepTaskStatus; count: number; percent: number }[] {
  return SWEEP_STATUSES.filter((s) => (counts[s] ?? 0) > 0).map((status) => ({
    status,
    count: counts[status],
    percent: total > 0 ? (100 * counts[status]) / total : 0,
  }));
}
