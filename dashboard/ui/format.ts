/**
 * How the dashboard writes runs and values as text: run keys, table cells
 * and verdict styles.
 *
 * @module
 */
import { shellWord } from "../../lib/core/shell.ts";

/**
 * The key that names a run in the URL, the API and the table: `experiment/id`.
 *
 * @example
 * ```ts
 * runKey({ experiment: "ica-toy", id: "20240101-120000-abcdef" }); // "ica-toy/20240101-120000-abcdef"
 * ```
 */
export function runKey(run: { experiment: string; id: string }): string {
  return `${run.experiment}/${run.id}`;
}

/**
 * A run's `experiment/id` as a URL path: each name percent-encoded, so that
 * a folder copied in under a name of its own (accents) makes a working link.
 *
 * @example
 * ```ts
 * runPath({ experiment: "résumé", id: "Run-1" }); // "r%C3%A9sum%C3%A9/Run-1"
 * ```
 */
export function runPath(run: { experiment: string; id: string }): string {
  return `${encodeURIComponent(run.experiment)}/${encodeURIComponent(run.id)}`;
}

/**
 * A config or metric value as a table cell: integers in full, other numbers
 * to 4 significant digits without trailing zeros, strings as they are,
 * anything else as JSON.
 *
 * @example
 * ```ts
 * formatValue(0.123456); // "0.1235"
 * formatValue([1, 2]); // "[1,2]"
 * ```
 */
export function formatValue(value: unknown): string {
  // 4 significant digits, written as a person would (0.01, not 0.01000).
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  // JSON.stringify gives undefined (not a string) for undefined: a missing value is an empty cell.
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}

/** Our measured value of a target, or a dash when the run did not measure it. */
export function formatMeasured(value: number | null): string {
  return value === null ? "—" : formatValue(value);
}

/** The CSS class that colours a verdict; "not measured" stays plain. */
export function verdictClass(verdict: string, kind = "like-for-like"): string {
  const base = verdict === "reproduced"
    ? "verdict-reproduced"
    : verdict === "not reproduced"
    ? "verdict-not"
    : verdict === "still rising"
    ? "verdict-rising"
    : "";
  // An analogue's verdict has a colour of its own: it is not counted with like-for-like ones.
  return kind === "analogue" && base ? `${base} verdict-analogue` : base;
}

/**
 * The command that continues a run that stopped before its end
 * (interrupted or crashed), or null for a run that has nothing to continue.
 *
 * @example
 * ```ts
 * resumeCommand("ica-toy", "/runs/ica-toy/20240101-120000-abcdef", "interrupted");
 * // "deno task run ica-toy --resume /runs/ica-toy/20240101-120000-abcdef"
 * ```
 */
export function resumeCommand(experiment: string, dir: string, status: string): string | null {
  if (status !== "interrupted" && status !== "crashed" && status !== "failed") return null;
  return `deno task run ${experiment} --resume ${shellWord(dir)}`;
}
