/**
 * Special functions shared by samplers and their tests.
 *
 * @module
 */

/** log Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error about 1e-15). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const g = 7;
  const coefficients = [
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  x -= 1;
  let a = coefficients[0];
  const t = x + g + 0.5;
  for (let i = 1; i < 9; i++) a += coefficients[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/**
 * Continued fraction of the incomplete beta function (modified Lentz, as in
 * Numerical Recipes' `betacf`); converges fast for x < (a + 1)/(a + b + 2).
 */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  const qab = a + b, qap = a + 1, qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) return h;
  }
  throw new Error(`incomplete beta: the continued fraction did not converge for x = ${x}, a = ${a}, b = ${b}`);
}

/**
 * Both tails of Beta(a, b) at x: `lower` = I_x(a, b) = P(X ≤ x) and
 * `upper` = 1 − I_x(a, b). The tail on the continued fraction's fast side is
 * evaluated directly and the other as its complement, so a tail far below
 * machine epsilon (Beta(½, 49.5) above 0.7: about 1e-27) keeps its relative precision.
 */
function betaTails(x: number, a: number, b: number): { lower: number; upper: number } {
  if (!(a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b))) {
    throw new RangeError(`incomplete beta: a and b must be positive and finite, got a = ${a}, b = ${b}`);
  }
  if (!(x >= 0 && x <= 1)) throw new RangeError(`incomplete beta: x must lie in [0, 1], got ${x}`);
  if (x === 0) return { lower: 0, upper: 1 };
  if (x === 1) return { lower: 1, upper: 0 };
  // x^a (1 − x)^b / B(a, b), in logs so that large a, b do not overflow.
  const front = Math.exp(
    logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x),
  );
  if (x < (a + 1) / (a + b + 2)) {
    const lower = (front * betaContinuedFraction(x, a, b)) / a;
    return { lower, upper: 1 - lower };
  }
  const upper = (front * betaContinuedFraction(1 - x, b, a)) / b;
  return { lower: 1 - upper, upper };
}

/**
 * The regularised incomplete beta function I_x(a, b), the Beta(a, b)
 * distribution function at x ∈ [0, 1] (scipy.special.betainc); relative
 * error about 1e-13 (logGamma's error grows with a + b).
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  return betaTails(x, a, b).lower;
}

/**
 * P(X > x) for X ~ Beta(a, b) (scipy.stats.beta.sf), computed without the
 * cancellation of 1 − I_x(a, b): tail probabilities down to the smallest
 * doubles keep their relative precision, which closed-form error rates of
 * high-dimensional toys need.
 */
export function betaSurvival(x: number, a: number, b: number): number {
  return betaTails(x, a, b).upper;
}

/**
 * The quantile of Student's t distribution with `df` degrees of freedom at
 * probability `p` ∈ (0, 1) (scipy.stats.t.ppf), by bisection on the
 * distribution function P(T ≤ t) = 1 − ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`studentTQuantile: p in (0, 1) and df > 0, got ${p}, ${df}`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  const upper = (t: number) => 0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5);
  let lo = 0, hi = 1;
  while (upper(hi) > 1 - p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (upper(mid) > 1 - p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
