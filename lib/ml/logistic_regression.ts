/**
 * L2-regularised logistic regression with the objective of sklearn's
 * `LogisticRegression()` (lbfgs solver, C = 1): the sum of per-sample
 * log-losses plus ½‖W‖²/C, intercepts unpenalised. Like sklearn 1.x, two
 * classes get one sigmoid model and more classes one multinomial softmax
 * model (the two penalties differ, so this matters for the optimum). Fitted
 * by full-batch Newton with backtracking, i.e. to convergence rather than to
 * lbfgs's default 100 iterations and gtol 1e-4. The softmax Newton step is
 * solved by conjugate gradients on Hessian-vector products: forming the
 * (k·(d+1))² Hessian costs n·k²·d² per step (50 s for 40 classes on 8,000 rows).
 *
 * @module
 */
import type { Matrix } from "../core/matrix.ts";
import { solveSpd } from "./linalg.ts";
import { stopPoint } from "../core/run_guard.ts";

/** Options of {@linkcode fitLogisticRegression}. */
export interface LogisticRegressionOptions {
  /** Inverse regularisation strength (sklearn's C). */
  c?: number;
  /** Newton iterations at most. */
  maxIter?: number;
  /** Stop when max |gradient| ≤ tol · n. */
  tol?: number;
}

/** A fitted model from {@linkcode fitLogisticRegression}. */
export interface LogisticRegressionModel {
  /** Sorted distinct labels; column c of `predictProba` is `classes[c]`. */
  classes: Int32Array;
  /** Weights: `[1][d]` (for classes[1]) with two classes, else `[k][d]`. */
  coef: number[][];
  /** Intercepts `[1]` or `[k]`, matching `coef`. */
  intercept: number[];
  /** Newton iterations used. */
  iterations: number;
  /** Whether the gradient tolerance was reached. */
  converged: boolean;
  /** Class probabilities, row-major `[x.rows, k]`. */
  predictProba(x: Matrix): Float64Array;
}

function softplus(z: number): number {
  return z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
}

function sigmoid(z: number): number {
  if (z >= 0) return 1 / (1 + Math.exp(-z));
  const e = Math.exp(z);
  return e / (1 + e);
}

/** Linear scores `[n, m]` for parameters laid out as m blocks of [w (d), b]. */
function scores(x: Matrix, theta: ArrayLike<number>, m: number): Float64Array {
  const d = x.cols;
  const out = new Float64Array(x.rows * m);
  for (let i = 0; i < x.rows; i++) {
    for (let k = 0; k < m; k++) {
      let z = theta[k * (d + 1) + d];
      for (let j = 0; j < d; j++) z += theta[k * (d + 1) + j] * x.data[i * d + j];
      out[i * m + k] = z;
    }
  }
  return out;
}

/** Softmax of each row of `z` `[n, k]`, in place. */
function softmaxRows(z: Float64Array, k: number): Float64Array {
  for (let i = 0; i < z.length; i += k) {
    let max = -Infinity;
    for (let c = 0; c < k; c++) max = Math.max(max, z[i + c]);
    let sum = 0;
    for (let c = 0; c < k; c++) {
      z[i + c] = Math.exp(z[i + c] - max);
      sum += z[i + c];
    }
    for (let c = 0; c < k; c++) z[i + c] /= sum;
  }
  return z;
}

interface Problem {
  /** Number of linear score blocks: 1 (sigmoid) or k (softmax). */
  m: number;
  objective(theta: Float64Array): number;
  /** Gradient at theta and a solver of the Newton system H s = rhs there. */
  derivatives(theta: Float64Array): { gradient: Float64Array; solve(rhs: Float64Array): Float64Array };
}

function binaryProblem(x: Matrix, target: Uint8Array, c: number): Problem {
  const d = x.cols;
  const p = d + 1;
  return {
    m: 1,
    objective(theta) {
      const z = scores(x, theta, 1);
      let loss = 0;
      for (let i = 0; i < x.rows; i++) loss += softplus(z[i]) - target[i] * z[i];
      for (let j = 0; j < d; j++) loss += (theta[j] * theta[j]) / (2 * c);
      return loss;
    },
    derivatives(theta) {
      const z = scores(x, theta, 1);
      const gradient = new Float64Array(p);
      const hessian = Array.from({ length: p }, () => new Array<number>(p).fill(0));
      const row = new Float64Array(p);
      row[d] = 1;
      for (let i = 0; i < x.rows; i++) {
        const prob = sigmoid(z[i]);
        const residual = prob - target[i];
        const curvature = prob * (1 - prob);
        for (let j = 0; j < d; j++) row[j] = x.data[i * d + j];
        for (let a = 0; a < p; a++) {
          gradient[a] += residual * row[a];
          for (let b = a; b < p; b++) hessian[a][b] += curvature * row[a] * row[b];
        }
      }
      for (let j = 0; j < d; j++) {
        gradient[j] += theta[j] / c;
        hessian[j][j] += 1 / c;
      }
      for (let a = 0; a < p; a++) for (let b = 0; b < a; b++) hessian[a][b] = hessian[b][a];
      return { gradient, solve: (rhs) => Float64Array.from(solveSpd(hessian, Array.from(rhs))) };
    },
  };
}

/**
 * Conjugate gradients for H s = rhs with H given by its products (positive
 * definite here). Inexact Newton: the step is solved to a relative residual
 * that tightens as the gradient shrinks, so early steps cost few products
 * and the last ones are exact.
 */
function conjugateGradient(product: (v: Float64Array) => Float64Array, rhs: Float64Array): Float64Array {
  const s = new Float64Array(rhs.length);
  const r = Float64Array.from(rhs);
  const q = Float64Array.from(rhs);
  let rr = r.reduce((sum, v) => sum + v * v, 0);
  const forcing = Math.min(0.1, Math.sqrt(Math.sqrt(rr)));
  const stop = forcing * forcing * rr;
  for (let iteration = 0; iteration < 4 * rhs.length && rr > stop; iteration++) {
    const hq = product(q);
    const alpha = rr / q.reduce((sum, v, i) => sum + v * hq[i], 0);
    for (let i = 0; i < s.length; i++) {
      s[i] += alpha * q[i];
      r[i] -= alpha * hq[i];
    }
    const next = r.reduce((sum, v) => sum + v * v, 0);
    for (let i = 0; i < q.length; i++) q[i] = r[i] + (next / rr) * q[i];
    rr = next;
  }
  return s;
}

function multinomialProblem(x: Matrix, label: Int32Array, k: number, c: number): Problem {
  const d = x.cols;
  const block = d + 1;
  const p = k * block;
  return {
    m: k,
    objective(theta) {
      const z = scores(x, theta, k);
      let loss = 0;
      for (let i = 0; i < x.rows; i++) {
        let max = -Infinity;
        for (let a = 0; a < k; a++) max = Math.max(max, z[i * k + a]);
        let sum = 0;
        for (let a = 0; a < k; a++) sum += Math.exp(z[i * k + a] - max);
        loss += max + Math.log(sum) - z[i * k + label[i]];
      }
      for (let a = 0; a < k; a++) for (let j = 0; j < d; j++) loss += theta[a * block + j] ** 2 / (2 * c);
      return loss;
    },
    derivatives(theta) {
      const prob = softmaxRows(scores(x, theta, k), k);
      const gradient = new Float64Array(p);
      for (let i = 0; i < x.rows; i++) {
        for (let a = 0; a < k; a++) {
          const residual = prob[i * k + a] - (label[i] === a ? 1 : 0);
          for (let j = 0; j < d; j++) gradient[a * block + j] += residual * x.data[i * d + j];
          gradient[a * block + d] += residual;
        }
      }
      for (let a = 0; a < k; a++) for (let j = 0; j < d; j++) gradient[a * block + j] += theta[a * block + j] / c;
      // H v = Σ_i r_i ⊗ (diag(p_i) − p_i p_iᵀ)(v · r_i) + v/c on the weights: O(n·k·d) per product.
      const product = (v: Float64Array) => {
        const out = new Float64Array(p);
        const u = new Float64Array(k);
        for (let i = 0; i < x.rows; i++) {
          let mean = 0;
          for (let a = 0; a < k; a++) {
            let dot = v[a * block + d];
            for (let j = 0; j < d; j++) dot += v[a * block + j] * x.data[i * d + j];
            u[a] = dot;
            mean += prob[i * k + a] * dot;
          }
          for (let a = 0; a < k; a++) {
            const weight = prob[i * k + a] * (u[a] - mean);
            for (let j = 0; j < d; j++) out[a * block + j] += weight * x.data[i * d + j];
            out[a * block + d] += weight;
          }
        }
        for (let a = 0; a < k; a++) for (let j = 0; j < d; j++) out[a * block + j] += v[a * block + j] / c;
        // The softmax is invariant to a common intercept shift: a tiny ridge keeps CG on a definite system.
        for (let a = 0; a < k; a++) out[a * block + d] += 1e-12 * v[a * block + d];
        return out;
      };
      return { gradient, solve: (rhs) => conjugateGradient(product, rhs) };
    },
  };
}

/**
 * Fits logistic regression to features `x` `[n, d]` and integer labels `y`
 * `[n]` (at least two distinct values). Starts from zero like sklearn; the
 * softmax's shared intercept shift has zero gradient, so it stays at zero.
 */
export function fitLogisticRegression(
  x: Matrix,
  y: Int32Array,
  { c = 1, maxIter = 100, tol = 1e-10 }: LogisticRegressionOptions = {},
): LogisticRegressionModel {
  if (y.length !== x.rows) throw new Error(`row counts differ: ${x.rows} features vs ${y.length} labels`);
  if (x.rows < 2) throw new Error("logistic regression needs at least 2 rows");
  if (!(c > 0)) throw new Error(`c must be positive, got ${c}`);
  const classes = Int32Array.from(new Set(y)).sort();
  const k = classes.length;
  if (k < 2) throw new Error(`logistic regression needs at least 2 classes, got ${k}`);
  const index = new Map(Array.from(classes, (value, i) => [value, i]));
  const label = Int32Array.from(y, (value) => index.get(value)!);
  const problem = k === 2 ? binaryProblem(x, Uint8Array.from(label), c) : multinomialProblem(x, label, k, c);
  const d = x.cols;
  const theta = new Float64Array(problem.m * (d + 1));
  let value = problem.objective(theta);
  let iterations = 0;
  let converged = false;
  for (; iterations < maxIter; iterations++) {
    stopPoint();
    const { gradient, solve } = problem.derivatives(theta);
    if (gradient.reduce((max, g) => Math.max(max, Math.abs(g)), 0) <= tol * x.rows) {
      converged = true;
      break;
    }
    const step = solve(gradient.map((g) => -g));
    const slope = step.reduce((sum, s, i) => sum + s * gradient[i], 0);
    // Backtracking (Armijo) keeps each Newton step a descent step far from the optimum.
    let t = 1;
    let next = theta.map((v, i) => v + step[i]);
    let nextValue = problem.objective(next);
    while (nextValue > value + 1e-4 * t * slope && t > 1e-10) {
      t /= 2;
      next = theta.map((v, i) => v + t * step[i]);
      nextValue = problem.objective(next);
    }
    if (!(nextValue <= value)) {
      // No decrease left at rounding level: the optimum is reached.
      converged = true;
      break;
    }
    theta.set(next);
    value = nextValue;
  }
  const coef = Array.from({ length: problem.m }, (_, a) => Array.from(theta.subarray(a * (d + 1), a * (d + 1) + d)));
  const intercept = Array.from({ length: problem.m }, (_, a) => theta[a * (d + 1) + d]);
  const fitted = Float64Array.from(theta);
  return {
    classes,
    coef,
    intercept,
    iterations,
    converged,
    predictProba(input: Matrix): Float64Array {
      if (input.cols !== d) throw new Error(`predictProba: expected ${d} features, got ${input.cols}`);
      const z = scores(input, fitted, problem.m);
      if (k > 2) return softmaxRows(z, k);
      const out = new Float64Array(input.rows * 2);
      for (let i = 0; i < input.rows; i++) {
        out[i * 2 + 1] = sigmoid(z[i]);
        out[i * 2] = 1 - out[i * 2 + 1];
      }
      return out;
    },
  };
}
