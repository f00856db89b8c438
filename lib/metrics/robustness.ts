/**
 * Robustness metrics of test-time adaptation (Schneider2023 Ch. 2–3, App. A): mCE
 * relative to a reference model, the expected calibration error, and the distances between
 * source and target BatchNorm statistics (diagonal Gaussians, one value per channel) that App. A
 * correlates with the error: W₂² (eq. A.1), the source-normalised W̃₂² (eq. A.3) and the Jeffrey
 * divergence (eqs. A.5–A.7). The paper averages each over layers; these functions score one layer.
 *
 * Correlating a distance with the error uses `correlationMatrix` (lib/core/matrix.ts).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { relativeCorruptionError } from "./corruption_error.ts";
import { argmaxRows } from "./classification.ts";

/**
 * mCE of `model` relative to a reference model trained alongside: per corruption
 * CE_c = Σ_s (1 − acc^model_{s,c}) / Σ_s (1 − acc^ref_{s,c}), averaged over the corruptions of
 * `model` (delegates to `relativeCorruptionError`, lib/metrics/corruption_error.ts).
 *
 * @param model per corruption name, top-1 accuracy at each severity, in [0, 1]
 * @param reference the same for the reference (every name of `model`, the same severities)
 */
export function relativeMce(
  model: Readonly<Record<string, readonly number[]>>,
  reference: Readonly<Record<string, readonly number[]>>,
): number {
  return relativeCorruptionError(model, reference).mce;
}

/**
 * Expected calibration error (Naeini et al. 2015, as Guo et al.'s `_ECELoss`): the confidence is
 * the largest probability of a row and the prediction its first argmax; rows fall into `bins`
 * equal-width bins (k/B, (k+1)/B] of the confidence (boundaries as numpy `linspace(0, 1, B + 1)`);
 * ECE = Σ_b (|b|/n)·|accuracy_b − mean confidence_b|, in [0, 1].
 *
 * @param probs row-major `[n, classes]` probabilities in [0, 1]
 * @param labels `[n]` classes 0..classes−1
 * @param bins number of bins (default 15, as the paper's Table 3.13)
 */
export function ece(probs: Float32Array | Float64Array, labels: Int32Array, classes: number, bins = 15): number {
  if (!Number.isInteger(classes) || classes < 2) throw new UsageError(`classes must be an integer ≥ 2, got ${classes}`);
  if (!Number.isInteger(bins) || bins < 1) throw new UsageError(`bins must be an integer ≥ 1, got ${bins}`);
  if (!(labels instanceof Int32Array) || labels.length === 0) {
    throw new UsageError("labels must be a non-empty Int32Array");
  }
  const n = labels.length;
  if (!(probs instanceof Float32Array || probs instanceof Float64Array) || probs.length !== n * classes) {
    throw new UsageError(`probs must hold [${n}, ${classes}] values (row-major), got ${probs?.length}`);
  }
  const bad = probs.findIndex((p) => !(p >= 0 && p <= 1));
  if (bad >= 0) throw new UsageError(`probs must lie in [0, 1]; value ${bad} is ${probs[bad]}`);
  const badLabel = labels.findIndex((y) => y < 0 || y >= classes);
  if (badLabel >= 0) {
    throw new UsageError(`labels must be in 0..${classes - 1}; label ${badLabel} is ${labels[badLabel]}`);
  }

  const step = 1 / bins;
  const upper = Float64Array.from({ length: bins }, (_, k) => (k + 1 === bins ? 1 : (k + 1) * step));
  const count = new Float64Array(bins), correct = new Float64Array(bins), confidence = new Float64Array(bins);
  const predicted = argmaxRows(probs, n, classes);
  for (let i = 0; i < n; i++) {
    const best = predicted[i], conf = probs[i * classes + best];
    if (conf === 0) continue; // (0, 1/B] excludes 0, as the reference's bins do
    // The first bin whose upper boundary reaches conf: lower < conf ≤ upper.
    let k = Math.min(bins - 1, Math.max(0, Math.ceil(conf * bins) - 1));
    while (k > 0 && conf <= upper[k - 1]) k--;
    while (k + 1 < bins && conf > upper[k]) k++;
    count[k]++;
    confidence[k] += conf;
    if (best === labels[i]) correct[k]++;
  }
  let total = 0;
  for (let k = 0; k < bins; k++) {
    if (count[k] > 0) total += (count[k] / n) * Math.abs(correct[k] / count[k] - confidence[k] / count[k]);
  }
  return total;
}

/** Throws a UsageError unless the four arrays are non-empty, equally long, finite, variances ≥ 0 or > 0. */
function checkGaussians(
  what: string,
  muS: ArrayLike<number>,
  varS: ArrayLike<number>,
  muT: ArrayLike<number>,
  varT: ArrayLike<number>,
  positive: { source: boolean; target: boolean },
): number {
  const d = muS?.length;
  if (!(d >= 1) || varS?.length !== d || muT?.length !== d || varT?.length !== d) {
    throw new UsageError(
      `${what} needs four non-empty arrays of one length (means and variances per channel), got ` +
        `${muS?.length}, ${varS?.length}, ${muT?.length}, ${varT?.length}`,
    );
  }
  const arrays: [string, ArrayLike<number>, boolean | null][] = [
    ["muS", muS, null],
    ["varS", varS, positive.source],
    ["muT", muT, null],
    ["varT", varT, positive.target],
  ];
  for (const [name, values, strict] of arrays) {
    for (let i = 0; i < d; i++) {
      const v = values[i];
      if (!Number.isFinite(v)) throw new UsageError(`${what}: ${name}[${i}] is ${v}; values must be finite`);
      if (strict !== null && (strict ? !(v > 0) : !(v >= 0))) {
        throw new UsageError(`${what}: ${name}[${i}] is ${v}; variances must be ${strict ? "> 0" : "≥ 0"}`);
      }
    }
  }
  return d;
}

/**
 * Squared 2-Wasserstein distance between diagonal Gaussians (eq. A.1):
 * W₂² = ‖μ_s − μ_t‖² + tr(Σ_s + Σ_t − 2(Σ_t^{1/2}Σ_sΣ_t^{1/2})^{1/2}) = Σ_i (μ_s,i − μ_t,i)² + (σ_s,i − σ_t,i)².
 *
 * @param muS source means per channel; `varS` source variances (≥ 0); `muT`, `varT` the target's
 */
export function w2(
  muS: ArrayLike<number>,
  varS: ArrayLike<number>,
  muT: ArrayLike<number>,
  varT: ArrayLike<number>,
): number {
  const d = checkGaussians("w2", muS, varS, muT, varT, { source: false, target: false });
  let total = 0;
  for (let i = 0; i < d; i++) {
    // (σ_s − σ_t)² rather than σ_s² + σ_t² − 2σ_sσ_t: no cancellation when the two are close.
    total += (muS[i] - muT[i]) ** 2 + (Math.sqrt(varS[i]) - Math.sqrt(varT[i])) ** 2;
  }
  return total;
}

/**
 * Source-normalised squared Wasserstein distance W̃₂² (eq. A.3), W₂² measured in the source's
 * standard deviations: Tr(I + Σ_tΣ_s⁻¹ − 2Σ_t^{1/2}Σ_s^{−1/2}) + (μ_t − μ_s)ᵀΣ_s⁻¹(μ_t − μ_s)
 * = Σ_i (σ_t,i/σ_s,i − 1)² + (μ_t,i − μ_s,i)²/σ²_s,i. Source variances must be > 0.
 */
export function w2Normalized(
  muS: ArrayLike<number>,
  varS: ArrayLike<number>,
  muT: ArrayLike<number>,
  varT: ArrayLike<number>,
): number {
  const d = checkGaussians("w2Normalized", muS, varS, muT, varT, { source: true, target: false });
  let total = 0;
  for (let i = 0; i < d; i++) {
    total += (Math.sqrt(varT[i] / varS[i]) - 1) ** 2 + (muT[i] - muS[i]) ** 2 / varS[i];
  }
  return total;
}

/**
 * Jeffrey divergence between diagonal Gaussians as App. A prints it (eqs. A.5–A.7):
 * J = ¼[Tr(Σ_s⁻¹Σ_t) + Tr(Σ_t⁻¹Σ_s) + (μ_s − μ_t)ᵀ(Σ_s⁻¹ + Σ_t⁻¹)(μ_s − μ_t) − 2D], which is
 * ½(KL(s‖t) + KL(t‖s)), the mean of the two KL divergences. Both variances must be > 0.
 */
export function jeffrey(
  muS: ArrayLike<number>,
  varS: ArrayLike<number>,
  muT: ArrayLike<number>,
  varT: ArrayLike<number>,
): number {
  const d = checkGaussians("jeffrey", muS, varS, muT, varT, { source: true, target: true });
  let total = 0;
  for (let i = 0; i < d; i++) {
    const delta2 = (muS[i] - muT[i]) ** 2;
    total += varT[i] / varS[i] + varS[i] / varT[i] + delta2 * (1 / varS[i] + 1 / varT[i]) - 2;
  }
  return total / 4;
}
