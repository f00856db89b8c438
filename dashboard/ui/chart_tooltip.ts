/**
 * What a chart's tooltip says of a point: the line, its value (4 significant
 * digits), its step and the time since the run started, whichever x axis
 * is drawn.
 *
 * @module
 */
import { formatValue } from "./format.ts";

/**
 * Seconds as a person reads a duration: 3 significant digits under a
 * minute, minutes and whole seconds under an hour, else hours and minutes.
 *
 * @example
 * ```ts
 * formatDuration(12.34); // "12.3 s"
 * formatDuration(245); // "4 min 5 s"
 * formatDuration(7260); // "2 h 1 min"
 * ```
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "";
  if (Math.abs(seconds) < 60) return `${Number(seconds.toPrecision(3))} s`;
  const whole = Math.round(seconds);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
}

/** One point as its tooltip names it. */
export interface TooltipPoint {
  /** The line's label (a run or a seed group). */
  label: string;
  /** The value drawn (smoothed when smoothing is on). */
  value: number;
  /** The value logged, when it differs from the value drawn. */
  raw?: number;
  step: number;
  /** Seconds since the run started. */
  seconds: number;
}

/**
 * The tooltip line of a point.
 *
 * @example
 * ```ts
 * tooltipLine({ label: "vae/1", value: 0.123456, step: 120, seconds: 12.34 });
 * // "vae/1: 0.1235 · step 120 · 12.3 s"
 * ```
 */
export function tooltipLine(point: TooltipPoint): string {
  const raw = point.raw !== undefined && point.raw !== point.value ? ` (raw ${formatValue(point.raw)})` : "";
  return `${point.label}: ${formatValue(point.value)}${raw} · step ${point.step} · ${formatDuration(point.seconds)}`;
}

/** Lines a tooltip lists at most: with 200 runs at one step, the rest are counted in its footer. */
export const TOOLTIP_MAX_LINES = 12;
