import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  betaSurvival,
  logGamma,
  regularizedIncompleteBeta,
  studentTQuantile,
} from "../../lib/core/special_functions.ts";

Deno.test("logGamma matches Γ at integers and ½ and the reflection formula", () => {
  assertAlmostEquals(logGamma(5), Math.log(24), 1e-12);
  assertAlmostEquals(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-12);
  // Below ½ the reflection formula applies: Γ(¼) = 3.6256099082219083 (scipy.special.gamma).
  assertAlmostEquals(logGamma(0.25), Math.log(3.6256099082219083), 1e-12);
});

// scipy 1.x: scipy.special.betainc(a, b, x) and scipy.stats.beta.sf(x, a, b).
const BETA_CASES: [x: number, a: number, b: number, cdf: number, sf: number][] = [
  [0.3, 2, 3, 0.34829999999999994, 0.6517000000000001],
  [0.6975, 0.5, 0.5, 0.6292554114529806, 0.3707445885470194],
  [0.6975, 0.5, 4.5, 0.9986248063319996, 0.0013751936680003064],
  [0.6975, 0.5, 49.5, 1.0, 1.8850125655602193e-27],
  [0.01, 0.5, 49.5, 0.6802515258606986, 0.3197484741393014],
  [0.9, 5, 0.5, 0.3166429150200122, 0.6833570849799877],
  [0.5, 30, 40, 0.8857998873233515, 0.11420011267664848],
];

Deno.test("the regularised incomplete beta and its survival function match scipy, far tail included", () => {
  for (const [x, a, b, cdf, sf] of BETA_CASES) {
    assertAlmostEquals(regularizedIncompleteBeta(x, a, b), cdf, 1e-12 * Math.max(1, cdf));
    // Relative: the survival function keeps its precision down to 1e-27.
    assertAlmostEquals(betaSurvival(x, a, b) / sf, 1, 1e-11);
  }
  assertEquals(regularizedIncompleteBeta(0, 2, 3), 0);
  assertEquals(betaSurvival(1, 2, 3), 0);
  // Beta(1, 1) is uniform.
  assertAlmostEquals(regularizedIncompleteBeta(0.37, 1, 1), 0.37, 1e-14);
  assertThrows(() => regularizedIncompleteBeta(1.5, 2, 3), RangeError, "[0, 1]");
  assertThrows(() => betaSurvival(0.5, 0, 3), RangeError, "positive");
});

Deno.test("Student's t quantile matches scipy.stats.t.ppf", () => {
  // /usr/bin/python3 -c "from scipy import stats; print([stats.t.ppf(p, df) for p, df in CASES])" (scipy 1.10.1)
  const cases: [number, number, number][] = [
    [0.975, 1, 12.706204736432095],
    [0.975, 2, 4.302652729911275],
    [0.975, 4, 2.7764451051977987],
    [0.975, 9, 2.2621571627409915],
    [0.975, 29, 2.045229642132703],
    [0.05, 3, -2.3533634348018273],
    [0.999, 5, 5.893429532923187],
  ];
  for (const [p, df, expected] of cases) {
    assertAlmostEquals(studentTQuantile(p, df), expected, 1e-9 * Math.abs(expected));
  }
  assertAlmostEquals(studentTQuantile(0.5, 7), 0, 1e-12);
  assertThrows(() => studentTQuantile(1, 3), RangeError);
  assertThrows(() => studentTQuantile(0.9, 0), RangeError);
});
