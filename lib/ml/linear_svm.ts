/**
 * Linear SVM on one feature with the model of sklearn's `LinearSVC` (liblinear,
 * squared hinge loss, L2 penalty, intercept_scaling = 1 so the intercept is a
 * penalised weight on a constant feature). Each binary problem
 *
 *     min_{w,b} ½(w² + b²) + Σ_i C_i · max(0, 1 − s_i (w x_i + b))²
 *
 * has two parameters, so it is solved exactly by generalised Newton steps
 * instead of liblinear's dual coordinate descent, which stops at tol 1e-4.
 *
 * Class weights follow liblinear: with two classes one problem is solved and
 * each sample's C_i = C · weight[its class]; with k > 2 classes one-vs-rest
 * problem c gives the positives C · weight[c] and the negatives plain C.
 *
 * @module
 */

/** Options of {@linkcode fitLinearSvm1d}. */
export interface LinearSvmOptions {
  /** Penalty parameter C. */
  c?: number;
  /** "balanced": weight[c] = n / (k · count[c]); "none": all 1. */
  classWeight?: "balanced" | "none";
}

/** A fitted model from {@linkcode fitLinearSvm1d}. */
export interface LinearSvmModel {
  /** Sorted distinct labels. */
  classes: Float64Array;
  /** Slopes: `[1]` (decision > 0 ⇒ classes[1]) with two classes, else `[k]`. */
  w: Float64Array;
  /** Intercepts, matching `w`. */
  b: Float64Array;
  /** Predicted labels `[x.length]`. */
  predict(x: ArrayLike<number>): Float64Array;
}

/**
 * Minimises ½(w² + b²) + Σ cost_i · max(0, 1 − sign_i (w x_i + b))² and
 * returns [w, b]. The objective is convex and piecewise quadratic, so Newton
 * with the generalised Hessian and a backtracking line search ends exactly
 * once the active set settles.
 */
export function solveSquaredHinge1d(
  x: ArrayLike<number>,
  sign: ArrayLike<number>,
  cost: ArrayLike<number>,
  maxIter = 200,
): [number, number] {
  const n = x.length;
  const objective = (w: number, b: number) => {
    let f = 0.5 * (w * w + b * b);
    for (let i = 0; i < n; i++) {
      const margin = 1 - sign[i] * (w * x[i] + b);
      if (margin > 0) f += cost[i] * margin * margin;
    }
    return f;
  };
  let scale = 1;
  for (let i = 0; i < n; i++) scale += cost[i] * (Math.abs(x[i]) + 1);
  let w = 0;
  let b = 0;
  let value = objective(w, b);
  for (let iter = 0; iter < maxIter; iter++) {
    let gw = w;
    let gb = b;
    let hww = 1;
    let hwb = 0;
    let hbb = 1;
    for (let i = 0; i < n; i++) {
      const margin = 1 - sign[i] * (w * x[i] + b);
      if (margin <= 0) continue;
      const g = -2 * cost[i] * margin * sign[i];
      gw += g * x[i];
      gb += g;
      hww += 2 * cost[i] * x[i] * x[i];
      hwb += 2 * cost[i] * x[i];
      hbb += 2 * cost[i];
    }
    if (Math.max(Math.abs(gw), Math.abs(gb)) <= 1e-13 * scale) break;
    // Newton step from the 2×2 system (the Hessian is ≥ I, so it is invertible).
    const det = hww * hbb - hwb * hwb;
    const sw = -(hbb * gw - hwb * gb) / det;
    const sb = -(hww * gb - hwb * gw) / det;
    const slope = sw * gw + sb * gb;
    let t = 1;
    let next = objective(w + sw, b + sb);
    while (next > value + 1e-4 * t * slope && t > 1e-12) {
      t /= 2;
      next = objective(w + t * sw, b + t * sb);
    }
    if (!(next < value)) break;
    w += t * sw;
    b += t * sb;
    value = next;
  }
  return [w, b];
}

/**
 * Fits a linear SVM to one feature `x` `[n]` and labels `y` `[n]` (any
 * numbers, at least two distinct), as `LinearSVC(C=c, class_weight=...)`.
 */
export function fitLinearSvm1d(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  { c = 0.01, classWeight = "balanced" }: LinearSvmOptions = {},
): LinearSvmModel {
  const n = x.length;
  if (y.length !== n) throw new Error(`row counts differ: ${n} features vs ${y.length} labels`);
  if (!(c > 0)) throw new Error(`c must be positive, got ${c}`);
  const classes = Float64Array.from(new Set(Array.from(y))).sort();
  const k = classes.length;
  if (k < 2) throw new Error(`linear SVM needs at least 2 classes, got ${k}`);
  const index = new Map(Array.from(classes, (value, i) => [value, i]));
  const label = Int32Array.from(Array.from(y), (value) => index.get(value)!);
  const count = new Float64Array(k);
  for (const l of label) count[l]++;
  const weight = Float64Array.from(count, (m) => (classWeight === "balanced" ? n / (k * m) : 1));
  const sign = new Float64Array(n);
  const cost = new Float64Array(n);
  const solve = (positive: number, binary: boolean): [number, number] => {
    for (let i = 0; i < n; i++) {
      const isPositive = label[i] === positive;
      sign[i] = isPositive ? 1 : -1;
      cost[i] = c * (isPositive || binary ? weight[label[i]] : 1);
    }
    return solveSquaredHinge1d(x, sign, cost);
  };
  const fits = k === 2 ? [solve(1, true)] : Array.from({ length: k }, (_, a) => solve(a, false));
  const w = Float64Array.from(fits, (f) => f[0]);
  const b = Float64Array.from(fits, (f) => f[1]);
  return {
    classes,
    w,
    b,
    predict(input: ArrayLike<number>): Float64Array {
      const out = new Float64Array(input.length);
      for (let i = 0; i < input.length; i++) {
        if (k === 2) {
          out[i] = classes[w[0] * input[i] + b[0] > 0 ? 1 : 0];
          continue;
        }
        // argmax of the decision values, first class on ties as np.argmax.
        let best = 0;
        for (let a = 1; a < k; a++) if (w[a] * input[i] + b[a] > w[best] * input[i] + b[best]) best = a;
        out[i] = classes[best];
      }
      return out;
    },
  };
}
