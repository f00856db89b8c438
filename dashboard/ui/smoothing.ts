/**
 * Curve smoothing as TensorBoard does it, so a curve here looks like the
 * same curve there.
 *
 * @module
 */

/**
 * Debiased exponential moving average: `last = w·last + (1 − w)·v`, divided
 * by `1 − wⁿ` after n points so that the first points are not pulled toward 0.
 * A weight of 0 returns the values unchanged.
 *
 * @param values the raw series
 * @param weight the smoothing weight w in [0, 1)
 * @returns one smoothed value per input value
 *
 * @example
 * ```ts
 * smooth([1, 2], 0.5); // [1, 5 / 3]
 * ```
 */
export function smooth(values: number[], weight: number): number[] {
  let last = 0, count = 0;
  return values.map((v) => {
    last = last * weight + (1 - weight) * v;
    count++;
    return weight === 0 ? v : last / (1 - Math.pow(weight, count));
  });
}
