/**
 * Helpers for a claim's `holds(metrics, cfg)`: a claim over metrics that a
 * run did not measure is "not measured" (undefined), never false.
 *
 * @module
 */

/** undefined unless every key of `keys` was measured, else whether `test` holds on their values, in order. */
export function whenMeasured(
  metrics: Record<string, number>,
  keys: readonly string[],
  test: (...values: number[]) => boolean,
): boolean | undefined {
  const values = keys.map((key) => metrics[key]);
  return values.some((v) => v === undefined) ? undefined : test(...values);
}
