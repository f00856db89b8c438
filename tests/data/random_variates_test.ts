import { assert, assertAlmostEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { logGamma } from "../../lib/core/special_functions.ts";
import { betaVariate, gammaVariate, poissonVariate } from "../../lib/data/random_variates.ts";

Deno.test("gamma variates have mean k and variance k; beta variates mean a/(a + b)", () => {
  const rng = new Rng(1);
  const n = 40_000;
  for (const shape of [0.3, 1, 2.5, 9]) {
    const x = Float64Array.from({ length: n }, () => gammaVariate(rng, shape));
    const mean = x.reduce((s, v) => s + v, 0) / n;
    const variance = x.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
    assertAlmostEquals(mean, shape, 4 * Math.sqrt(shape / n));
    // Var of the sample variance: (μ₄ − σ⁴)/n with μ₄ = 3k² + 6k for Gamma(k).
    assertAlmostEquals(variance, shape, 4 * Math.sqrt((2 * shape * shape + 6 * shape) / n));
  }
  for (const [a, b] of [[0.5, 0.5], [2, 2], [4.5, 4.5], [1, 3]]) {
    const x = Float64Array.from({ length: n }, () => betaVariate(rng, a, b));
    const mean = x.reduce((s, v) => s + v, 0) / n;
    const variance = a * b / ((a + b) ** 2 * (a + b + 1));
    assertAlmostEquals(mean, a / (a + b), 4 * Math.sqrt(variance / n));
  }
});

Deno.test("Poisson variates follow the pmf (both samplers), mean and variance λ", () => {
  const rng = new Rng(2);
  const n = 100_000;
  for (const lambda of [0.2, 3, 9.5, 10, 40, 250]) {
    const counts = new Map<number, number>();
    let mean = 0, sq = 0;
    for (let i = 0; i < n; i++) {
      const k = poissonVariate(rng, lambda);
      counts.set(k, (counts.get(k) ?? 0) + 1);
      mean += k / n;
      sq += k * k / n;
    }
    assertAlmostEquals(mean, lambda, 4 * Math.sqrt(lambda / n));
    assertAlmostEquals(sq - mean * mean, lambda, 4 * Math.sqrt((lambda + 2 * lambda * lambda) / n));
    // Each of the likeliest values within 4.5 binomial standard errors of its pmf.
    const mode = Math.floor(lambda);
    for (let k = Math.max(0, mode - 3); k <= mode + 3; k++) {
      const p = Math.exp(-lambda + k * Math.log(lambda) - logGamma(k + 1));
      assertAlmostEquals((counts.get(k) ?? 0) / n, p, 4.5 * Math.sqrt(p * (1 - p) / n), `λ ${lambda}, k ${k}`);
    }
  }
});

Deno.test("poissonVariate has mean and variance λ below and above the method switch at 10", () => {
  const rng = new Rng(8);
  for (const lambda of [0.3, 3, 9.5, 12, 60, 500]) {
    const n = 20_000;
    let sum = 0, sq = 0;
    for (let i = 0; i < n; i++) {
      const k = poissonVariate(rng, lambda);
      assert(Number.isInteger(k) && k >= 0);
      sum += k;
      sq += k * k;
    }
    const mean = sum / n, variance = sq / n - mean * mean;
    // 4 standard errors: of the mean √(λ/n); of the variance ≈ λ·√(2/n) (plus the excess kurtosis 1/λ term).
    assertAlmostEquals(mean, lambda, 4 * Math.sqrt(lambda / n), `mean at λ ${lambda}`);
    assertAlmostEquals(variance, lambda, 4 * Math.sqrt((2 * lambda * lambda + lambda) / n), `variance at λ ${lambda}`);
  }
});
