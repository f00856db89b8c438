import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { polarizedFraction, polarizedKl } from "../../lib/metrics/polarized.ts";
import { fromRows } from "./helpers.ts";

Deno.test("polarizedKl at the prior: every KL 0, no active latent, Δ_KL 0", () => {
  const zeros = fromRows([[0, 0], [0, 0], [0, 0]]);
  assertEquals(polarizedKl(zeros, zeros), {
    kl: 0,
    klApprox: 0,
    deltaKl: 0,
    activeStd: [false, false],
    activeVar: [false, false],
  });
});

Deno.test("polarizedKl by hand: one active latent (σ² 0.01), one passive, one passive with small σ² (rules differ)", () => {
  // Latent 0: μ = ±1 (s.d. √2), σ² = 0.01. Latent 1: μ = 0.1 twice (s.d. 0), σ² = 1. Latent 2: μ = 0, σ² = 0.5, 0.9.
  const mean = fromRows([[1, 0.1, 0], [-1, 0.1, 0]]);
  const logVar = fromRows([[Math.log(0.01), 0, Math.log(0.5)], [Math.log(0.01), 0, Math.log(0.9)]]);
  const result = polarizedKl(mean, logVar);
  // Terms μ² + σ² − log σ² − 1 per row: 0.01 + log 100 (latent 0), 0.01 (latent 1), σ² − log σ² − 1 (latent 2).
  const kl = (2 * (0.01 + Math.log(100)) + 0.02 + (0.5 + Math.log(2) - 1) + (0.9 - Math.log(0.9) - 1)) / 4;
  assertAlmostEquals(result.kl, kl, 1e-15);
  assertAlmostEquals(result.kl, 2.362212, 1e-6);
  // Only latent 0 is active by the Ch. 3 rule: ½(1 − log 0.01 − 1) = log 10 per row.
  assertAlmostEquals(result.klApprox, Math.log(10), 1e-15);
  assertAlmostEquals(result.deltaKl, (kl - Math.log(10)) / kl, 1e-15);
  assertAlmostEquals(result.deltaKl, 0.025242, 1e-6);
  assertEquals(result.activeStd, [true, false, false]);
  // Ch. 4 rule: E σ² = 0.01, 1, 0.7.
  assertEquals(result.activeVar, [true, false, true]);
});

Deno.test("active rules: sample s.d. (ddof 1) strictly above 0.5, mean σ² below 0.8", () => {
  // μ = −0.55, 0, 0.55: s.d. 0.55 with ddof 1 (0.449 with ddof 0). μ = −0.5, 0, 0.5: s.d. exactly 0.5.
  const mean = fromRows([[-0.55, -0.5], [0, 0], [0.55, 0.5]]);
  // Mean σ² 0.81 (0.6, 0.83, 1.0) and 0.79.
  const logVar = fromRows([[Math.log(0.6), Math.log(0.79)], [Math.log(0.83), Math.log(0.79)], [0, Math.log(0.79)]]);
  const result = polarizedKl(mean, logVar);
  assertEquals(result.activeStd, [true, false]);
  assertEquals(result.activeVar, [false, true]);
  // Latent 0 is the only active one: klApprox = mean over rows of ½(μ² − log σ² − 1).
  const approx = ((0.3025 - Math.log(0.6) - 1) + (0 - Math.log(0.83) - 1) + (0.3025 - 0 - 1)) / 6;
  assertAlmostEquals(result.klApprox, approx, 1e-15);
});

Deno.test("polarizedKl refuses mismatched shapes, a single row and non-finite values", () => {
  const two = fromRows([[0, 0], [0, 0]]);
  assertThrows(() => polarizedKl(two, fromRows([[0], [0]])), Error, "latents");
  assertThrows(() => polarizedKl(fromRows([[0, 0]]), fromRows([[0, 0]])), Error, "at least 2 rows");
  assertThrows(() => polarizedKl(two, fromRows([[0, 0], [0, NaN]])), Error, "logVar: non-finite");
});

Deno.test("polarizedFraction: share of training from the first step after which Δ_KL stays below the threshold", () => {
  const steps = [0, 500, 1000, 1500, 2000];
  // Below from step 1500 on (the dip at 500 does not count): 1 − 1500/2000.
  assertEquals(polarizedFraction(steps, [0.5, 0.02, 0.04, 0.01, 0.02], 2000), 0.25);
  assertEquals(polarizedFraction(steps, [0.01, 0.02, 0.001, 0.01, 0.02], 2000), 1);
  // The evaluations may stop short of the end: the share still runs to totalSteps.
  assertEquals(polarizedFraction(steps, [0.5, 0.02, 0.04, 0.01, 0.02], 4000), 1 - 1500 / 4000);
  // The last evaluation is not below (equal is not below; NaN is not below): 0.
  assertEquals(polarizedFraction(steps, [0.01, 0.01, 0.01, 0.01, 0.03], 2000), 0);
  assertEquals(polarizedFraction(steps, [0.01, 0.01, 0.01, 0.01, 0.5], 2000), 0);
  assertEquals(polarizedFraction(steps, [0.01, 0.01, NaN, 0.01, 0.01], 2000), 1 - 1500 / 2000);
  assertEquals(polarizedFraction(steps, [0.5, 0.2, 0.09, 0.05, 0.02], 2000, 0.1), 1 - 1000 / 2000);
});

Deno.test("polarizedFraction refuses mismatched or empty histories and steps out of order or range", () => {
  assertThrows(() => polarizedFraction([0, 1], [0.1], 10), Error, "2 steps, 1 values");
  assertThrows(() => polarizedFraction([], [], 10), Error, "at least one");
  assertThrows(() => polarizedFraction([0, 5, 5], [0, 0, 0], 10), Error, "step 2 is 5");
  assertThrows(() => polarizedFraction([0, 11], [0, 0], 10), Error, "within 0..10");
  assertThrows(() => polarizedFraction([0], [0], 0), Error, "totalSteps must be positive");
});
