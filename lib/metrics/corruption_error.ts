/**
 * Corruption Error and its mean over corruptions (Hendrycks & Dietterich 2019;
 * Rusak2020): CE_c = Σ_s E_{s,c} / Σ_s E^ref_{s,c}, the model's top-1 error
 * summed over severities relative to a reference model's, and mCE its mean
 * over corruptions. The reference is AlexNet on ImageNet-C, or, without
 * ImageNet, the run's own vanilla model ("relative mCE").
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";

/**
 * AlexNet's top-1 error on ImageNet-C per corruption, averaged over the five
 * severities (hendrycks/robustness `ImageNet-C/test.py` and game-of-noise
 * `evaluation_utils.py`, `get_ce_alexnet`), in imagecorruptions order.
 */
export const ALEXNET_ERRORS: Readonly<Record<string, number>> = {
  gaussian_noise: 0.886428,
  shot_noise: 0.894468,
  impulse_noise: 0.922640,
  defocus_blur: 0.819880,
  glass_blur: 0.826268,
  motion_blur: 0.785948,
  zoom_blur: 0.798360,
  snow: 0.866816,
  frost: 0.826572,
  fog: 0.819324,
  brightness: 0.564592,
  contrast: 0.853204,
  elastic_transform: 0.646056,
  pixelate: 0.717840,
  jpeg_compression: 0.606500,
};

/** Per-corruption CE and their mean (fractions: 1 = as bad as the reference; papers print ×100). */
export interface CorruptionErrorResult {
  /** Corruption → its CE. */
  ce: Record<string, number>;
  /** The mean of the CEs over corruptions. */
  mce: number;
}

/**
 * CE per corruption and mCE over the corruptions in `accuracy`.
 *
 * @param accuracy per corruption name, the model's top-1 accuracy at each severity, in [0, 1]
 * @param referenceError per name, the reference's error averaged over severities (CE_c = mean_s E_{s,c} / E^ref_c,
 *   as `get_ce_alexnet`), or one error per severity (CE_c = Σ_s E_{s,c} / Σ_s E^ref_{s,c}); names beyond
 *   those in `accuracy` are ignored
 */
export function corruptionError(
  accuracy: Readonly<Record<string, readonly number[]>>,
  referenceError: Readonly<Record<string, number | readonly number[]>>,
): CorruptionErrorResult {
  const names = Object.keys(accuracy);
  if (names.length === 0) throw new UsageError("corruptionError needs the accuracy of at least one corruption");
  const missing = names.filter((name) => !(name in referenceError));
  if (missing.length) {
    throw new UsageError(
      `no reference error for ${missing.join(", ")}; the reference has ${Object.keys(referenceError).join(", ")}`,
    );
  }
  const ce: Record<string, number> = {};
  for (const name of names) {
    const errors = checkFractions(accuracy[name], `accuracy of ${name}`).map((a) => 1 - a);
    const reference = referenceError[name];
    let modelError: number, refError: number;
    if (typeof reference === "number") {
      checkFractions([reference], `reference error of ${name}`);
      modelError = errors.reduce((a, b) => a + b, 0) / errors.length;
      refError = reference;
    } else {
      checkFractions(reference, `reference error of ${name}`);
      if (reference.length !== errors.length) {
        throw new UsageError(
          `${name}: ${errors.length} severities of accuracy but ${reference.length} reference errors`,
        );
      }
      modelError = errors.reduce((a, b) => a + b, 0);
      refError = reference.reduce((a, b) => a + b, 0);
    }
    if (refError === 0) throw new UsageError(`the reference error of ${name} is 0: its CE is undefined`);
    ce[name] = modelError / refError;
  }
  return { ce, mce: names.reduce((sum, name) => sum + ce[name], 0) / names.length };
}

/**
 * CE and mCE relative to a vanilla model trained alongside (the stand-in for
 * AlexNet without ImageNet): CE_c = Σ_s E^model_{s,c} / Σ_s E^vanilla_{s,c}.
 *
 * @param model per corruption name, accuracy at each severity
 * @param vanilla the same for the reference model (every name of `model`, the same severities)
 */
export function relativeCorruptionError(
  model: Readonly<Record<string, readonly number[]>>,
  vanilla: Readonly<Record<string, readonly number[]>>,
): CorruptionErrorResult {
  const reference: Record<string, number[]> = {};
  for (const [name, accuracies] of Object.entries(vanilla)) {
    reference[name] = checkFractions(accuracies, `vanilla accuracy of ${name}`).map((a) => 1 - a);
  }
  return corruptionError(model, reference);
}

function checkFractions(values: readonly number[], what: string): readonly number[] {
  if (!values?.length) throw new UsageError(`${what}: needs at least one value`);
  const bad = values.find((v) => !(v >= 0 && v <= 1));
  if (bad !== undefined) throw new UsageError(`${what}: ${bad} is outside [0, 1]`);
  return values;
}
