/**
 * Robustness reporting after Schott2019 (§6, Table 1): per sample
 * and norm the smallest adversarial any attack found, clean errors counted as
 * distance 0 and failed attacks as ∞; the median of those distances, and the
 * accuracy at a fixed ε (the share of samples whose distance exceeds ε).
 *
 * @module
 */

/** The ε of Table 1's accuracy columns per norm: L2 1.5, L∞ 0.3, L0 12 changed pixels. */
export const ACCURACY_THRESHOLDS = { l2: 1.5, linf: 0.3, l0: 12 } as const;

/** Median distance and accuracy at ε of one model under one norm. */
export interface DistanceSummary {
  /** Median of the per-sample distances (∞ when at least half the samples resisted every attack). */
  median: number;
  /** Share of samples with distance > ε: still correctly classified under every perturbation of size ≤ ε. */
  accuracy: number;
}

/**
 * Per-sample distances under the reporting convention: 0 where the clean
 * input is already misclassified, ∞ where the attack failed, else `distances[i]`.
 *
 * @param distances `[n]` distance of each sample's adversarial (any value where it failed)
 * @param cleanCorrect `[n]` 1 where the clean input is classified correctly
 * @param success `[n]` 1 where the attack found an adversarial
 */
export function reportedDistances(
  distances: ArrayLike<number>,
  cleanCorrect: ArrayLike<number>,
  success: ArrayLike<number>,
): Float64Array {
  const n = distances.length;
  if (cleanCorrect.length !== n || success.length !== n) {
    throw new RangeError(
      `reportedDistances: ${n} distances, ${cleanCorrect.length} clean flags, ${success.length} successes`,
    );
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = !cleanCorrect[i] ? 0 : success[i] ? distances[i] : Infinity;
  return out;
}

/**
 * Median and accuracy at `epsilon` of per-sample distances that already follow
 * the convention of {@linkcode reportedDistances} (clean error 0, failure ∞).
 * The median of an even count is the mean of the two middle values.
 *
 * @example
 * ```ts
 * summarizeDistances([0, 1, 2, Infinity, Infinity], 1.5); // { median: 2, accuracy: 0.6 }
 * ```
 */
export function summarizeDistances(distances: ArrayLike<number>, epsilon: number): DistanceSummary {
  const n = distances.length;
  if (n === 0) return { median: NaN, accuracy: NaN };
  const sorted = Float64Array.from(distances).sort();
  const mid = n >> 1;
  // (∞ + ∞) / 2 stays ∞; a finite and an infinite middle give ∞ as well.
  const median = n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  let robust = 0;
  for (let i = 0; i < n; i++) if (sorted[i] > epsilon) robust++;
  return { median, accuracy: robust / n };
}

/**
 * Per-sample minimum over attacks ("All L2 attacks" of Table 1).
 *
 * @param perAttack one `[n]` array per attack, each under the same convention
 * @returns `[n]` the smallest distance per sample (∞ when no attack is given)
 */
export function bestDistances(perAttack: readonly ArrayLike<number>[]): Float64Array {
  const n = perAttack.length ? perAttack[0].length : 0;
  const best = new Float64Array(n).fill(Infinity);
  for (const [k, d] of perAttack.entries()) {
    if (d.length !== n) throw new RangeError(`bestDistances: attack ${k} has ${d.length} samples, the first has ${n}`);
    for (let i = 0; i < n; i++) if (d[i] < best[i]) best[i] = d[i];
  }
  return best;
}

/**
 * Accuracy–distortion curve: for each ε of `grid`, the share of samples whose
 * distance exceeds ε.
 *
 * @returns `[grid.length]` accuracies in [0, 1]
 */
export function accuracyDistortionCurve(distances: ArrayLike<number>, grid: ArrayLike<number>): Float64Array {
  const sorted = Float64Array.from(distances).sort();
  const n = sorted.length;
  const out = new Float64Array(grid.length);
  for (let k = 0; k < grid.length; k++) {
    // First index with distance > ε by bisection over the sorted distances.
    let lo = 0, hi = n;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (sorted[m] > grid[k]) hi = m;
      else lo = m + 1;
    }
    out[k] = n ? (n - lo) / n : NaN;
  }
  return out;
}
