/**
 * Comparisons of two settings' means over seeds in a run's metrics, as a
 * study summarises each setting (`<key>` the mean, `<key>_sd` the s.d. over
 * seeds): a claim that one setting beats another holds only beyond the
 * seeds' noise.
 *
 * @module
 */

/**
 * Whether `a`'s seeds' mean exceeds `b`'s by more than `margin` and by more than twice the standard error of the
 * difference of the run's seeds' means (`seeds` per setting); undefined when either was not measured.
 */
export function clearlyAbove(
  m: Record<string, number>,
  a: string,
  b: string,
  margin: number,
  seeds: number,
): boolean | undefined {
  if (m[a] === undefined || m[b] === undefined) return undefined;
  const se = Math.sqrt(((m[`${a}_sd`] ?? 0) ** 2 + (m[`${b}_sd`] ?? 0) ** 2) / seeds);
  return m[a] - m[b] > Math.max(margin, 2 * se);
}
