/**
 * Calibration of the ABS classifier's scores (Schott2019 §3–4,
 * App. A.7): the calibrated softmax (`utils.confidence_softmax`) with its fitted α and η, and the
 * per-class loss scales γ of Binary ABS. Host-side float64 over logits or losses `[n, classes]`.
 *
 * @module
 */

/**
 * The calibrated softmax (Eq. 4, `utils.confidence_softmax`) in float64:
 * p_c = (e^{α·logit_c} + η)/(Σ e^{α·logit} + C·η), rows of `logits` `[n, classes]`. Numerator and
 * denominator are divided by e^s, s = max(α·max logit, ln η), which keeps η exact.
 */
export function calibratedSoftmax(
  logits: ArrayLike<number>,
  classes: number,
  alpha: number,
  eta: number,
): Float64Array {
  const n = logits.length / classes, out = new Float64Array(logits.length);
  const logEta = eta > 0 ? Math.log(eta) : -Infinity;
  for (let i = 0; i < n; i++) {
    let s = logEta;
    for (let c = 0; c < classes; c++) s = Math.max(s, alpha * logits[i * classes + c]);
    const floor = Math.exp(logEta - s);
    let total = classes * floor;
    for (let c = 0; c < classes; c++) total += out[i * classes + c] = Math.exp(alpha * logits[i * classes + c] - s);
    for (let c = 0; c < classes; c++) out[i * classes + c] = (out[i * classes + c] + floor) / total;
  }
  return out;
}

/** Mean cross-entropy of softmax(α·logits) against `labels`, in nats. */
function crossEntropy(logits: ArrayLike<number>, labels: ArrayLike<number>, classes: number, alpha: number): number {
  let sum = 0;
  for (let i = 0; i < labels.length; i++) {
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, alpha * logits[i * classes + c]);
    let total = 0;
    for (let c = 0; c < classes; c++) total += Math.exp(alpha * logits[i * classes + c] - max);
    sum += max + Math.log(total) - alpha * logits[i * classes + labels[i]];
  }
  return sum / labels.length;
}

/** Median over rows of the largest calibrated probability. */
function medianConfidence(logits: ArrayLike<number>, classes: number, alpha: number, eta: number): number {
  const p = calibratedSoftmax(logits, classes, alpha, eta);
  const n = p.length / classes;
  const top = Float64Array.from({ length: n }, (_, i) => Math.max(...p.subarray(i * classes, (i + 1) * classes)));
  top.sort();
  return n % 2 ? top[(n - 1) / 2] : (top[n / 2 - 1] + top[n / 2]) / 2;
}

/** Options of {@linkcode fitCalibration}. */
export interface CalibrationData {
  /** Training logits `[n, classes]` that α is fit on. */
  logits: ArrayLike<number>;
  /** True classes of the training logits' rows, `[n]` in [0, classes). */
  labels: ArrayLike<number>;
  /** Number of classes (columns of the logits). */
  classes: number;
  /** Clean logits whose median confidence η sets (default: `logits`). */
  confidenceLogits?: ArrayLike<number>;
  /** Median confidence to reach (App. A.7: 0.9). */
  targetConfidence?: number;
}

/**
 * Fits the calibrated softmax (App. A.7): α > 0 minimising the cross-entropy of softmax(α·logit)
 * (η = 0; golden-section search on ln α, the loss being convex in α), then η ≥ 0 by bisection
 * on ln η so that the median of max_c p_c is the target (η = 0 when it is already below).
 */
export function fitCalibration(data: CalibrationData): { alpha: number; eta: number } {
  const { logits, labels, classes } = data;
  const target = data.targetConfidence ?? 0.9;
  const ce = (logAlpha: number) => crossEntropy(logits, labels, classes, Math.exp(logAlpha));
  let lo = Math.log(1e-4), hi = Math.log(1e6);
  const phi = (Math.sqrt(5) - 1) / 2;
  let a = hi - phi * (hi - lo), b = lo + phi * (hi - lo), fa = ce(a), fb = ce(b);
  while (hi - lo > 1e-9) {
    if (fa <= fb) {
      [hi, b, fb] = [b, a, fa];
      a = hi - phi * (hi - lo);
      fa = ce(a);
    } else {
      [lo, a, fa] = [a, b, fb];
      b = lo + phi * (hi - lo);
      fb = ce(b);
    }
  }
  const alpha = Math.exp((lo + hi) / 2);
  const clean = data.confidenceLogits ?? logits;
  if (medianConfidence(clean, classes, alpha, 0) <= target) return { alpha, eta: 0 };
  // The confidence falls monotonically in η (towards 1/C); bracket, then bisect ln η.
  let low = -700, high = 0;
  while (medianConfidence(clean, classes, alpha, Math.exp(high)) > target && high < 700) high += 20;
  for (let k = 0; k < 200 && high - low > 1e-12; k++) {
    const mid = (low + high) / 2;
    if (medianConfidence(clean, classes, alpha, Math.exp(mid)) > target) low = mid;
    else high = mid;
  }
  return { alpha, eta: Math.exp((low + high) / 2) };
}

/** Share of rows whose argmin over c of γ_c·loss_c is the label. */
function scaledAccuracy(losses: ArrayLike<number>, labels: ArrayLike<number>, scales: Float64Array): number {
  const classes = scales.length;
  let correct = 0;
  for (let i = 0; i < labels.length; i++) {
    let best = 0, bestValue = Infinity;
    for (let c = 0; c < classes; c++) {
      const value = scales[c] * losses[i * classes + c];
      if (value < bestValue) [best, bestValue] = [c, value];
    }
    if (best === labels[i]) correct++;
  }
  return correct / labels.length;
}

/**
 * Binary ABS's class scales γ (Schott2019, published [1, .96, 1.001, 1.06, .98, .96, 1.03, 1, 1, 1]):
 * a coordinate-wise line search over `grid` maximising the training accuracy of argmin γ_c·ℓ*_c,
 * class 0 fixed at 1 (only ratios matter), ties to the value nearest 1. `losses` are ℓ*
 * `[n, classes]` of the (binarized) training images; returns `[classes]`.
 */
export function fitClassScales(
  losses: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
  options: { grid?: number[]; sweeps?: number } = {},
): Float64Array {
  const grid = options.grid ?? Array.from({ length: 101 }, (_, k) => 0.9 + 0.002 * k);
  const scales = new Float64Array(classes).fill(1);
  for (let sweep = 0; sweep < (options.sweeps ?? 3); sweep++) {
    for (let c = 1; c < classes; c++) {
      let best = scales[c], bestAccuracy = scaledAccuracy(losses, labels, scales);
      for (const value of grid) {
        scales[c] = value;
        const accuracy = scaledAccuracy(losses, labels, scales);
        if (accuracy > bestAccuracy || (accuracy === bestAccuracy && Math.abs(value - 1) < Math.abs(best - 1))) {
          [best, bestAccuracy] = [value, accuracy];
        }
      }
      scales[c] = best;
    }
  }
  return scales;
}
