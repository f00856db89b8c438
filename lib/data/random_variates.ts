/**
 * Gamma, beta and Poisson variates from a seeded {@linkcode Rng}, for the
 * synthetic datasets (Wood's vMF sampler needs beta draws, the spike
 * generators Poisson counts).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { logGamma } from "../core/special_functions.ts";

/**
 * Gamma(shape, 1) by Marsaglia & Tsang (2000); for shape < 1 it draws
 * Gamma(shape + 1) and multiplies by U^(1/shape), their boost.
 */
export function gammaVariate(rng: Rng, shape: number): number {
  if (!(shape > 0) || !Number.isFinite(shape)) {
    throw new UsageError(`gamma shape must be a finite number > 0, got ${shape}`);
  }
  if (shape < 1) {
    // 1 − uniform() lies in (0, 1], so the power never hits 0^(1/shape) by rounding alone.
    return gammaVariate(rng, shape + 1) * Math.pow(1 - rng.uniform(), 1 / shape);
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = rng.normal();
    const t = 1 + c * x;
    if (t <= 0) continue;
    const v = t * t * t;
    const u = 1 - rng.uniform();
    if (u < 1 - 0.0331 * x ** 4) return d * v; // Squeeze: accepts most draws without logs.
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Beta(a, b) as G_a / (G_a + G_b). */
export function betaVariate(rng: Rng, a: number, b: number): number {
  const x = gammaVariate(rng, a);
  const y = gammaVariate(rng, b);
  return x / (x + y);
}

/**
 * Poisson(λ), λ ≥ 0, as numpy's legacy generator draws it: multiplication of
 * uniforms (Knuth) for λ < 10, else the transformed rejection PTRS of
 * Hörmann (1993). The image corruptions rely on numpy's draws step by step.
 */
export function poissonVariate(rng: Rng, lambda: number): number {
  if (!(lambda >= 0) || !Number.isFinite(lambda)) {
    throw new UsageError(`Poisson rate must be a finite number ≥ 0, got ${lambda}`);
  }
  if (lambda === 0) return 0;
  if (lambda < 10) {
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = rng.uniform();
    while (p > limit) {
      k++;
      p *= rng.uniform();
    }
    return k;
  }
  const sqrtLambda = Math.sqrt(lambda);
  const logLambda = Math.log(lambda);
  const b = 0.931 + 2.53 * sqrtLambda;
  const a = -0.059 + 0.02483 * b;
  const invAlpha = 1.1239 + 1.1328 / (b - 3.4);
  const vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const u = rng.uniform() - 0.5;
    const v = rng.uniform();
    const us = 0.5 - Math.abs(u);
    const k = Math.floor((2 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    // v = 0 accepts (log 0 = −∞), as in numpy.
    if (Math.log(v) + Math.log(invAlpha) - Math.log(a / (us * us) + b) <= -lambda + k * logLambda - logGamma(k + 1)) {
      return k;
    }
  }
}
