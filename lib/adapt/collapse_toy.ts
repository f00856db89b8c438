/**
 * The Tent-collapse toy of RDumb (Press et al. 2023, App. C;
 * Schneider2023 Ch. 4, App. C):
 * two 2-D Gaussian classes, a model BatchNorm (ε = 0, full-batch statistics)
 * → linear 2→1 without bias → sigmoid, trained on clean data, then adapted
 * to corrupted data by Tent on the BN scale γ alone.
 *
 * Data (App. C as printed, R_θ = [[cos θ, sin θ], [−sin θ, cos θ]]):
 *   Y ~ Bern(½); X ~ N((±1, 0), diag(1, 0.03)) (+1 for Y = 1);
 *   X_clean = R_{−π/4} X;
 *   X_corrupt ~ N(R_{−π/9} X_clean, R_{−π/4}ᵀ R_{−π/6}ᵀ diag(0.25, s²) R_{−π/6} R_{−π/4}),
 *   each corrupted point drawn around its own clean point (same label).
 * Condition 1 has s² = 4 (stable), condition 2 s² = 25 (collapses).
 *
 * What the document leaves open is a {@linkcode CollapseToyVariant}: whether
 * diag(0.25, s²) holds variances or standard deviations (the report writes
 * "Σ²_corrupt = R_{θc}ᵀ diag(0.25, 4) R_{θc}"), whether R_{−π/4} is part
 * of the noise covariance (the formula has it, that line does not), whether
 * the covariance is Aᵀ D A as printed or A D Aᵀ (what code drawing the noise
 * as A D^{½} ε makes; the two turn the noise axes in opposite senses), and
 * whether the BN affine parameters are trained on clean data with w
 * (PyTorch's affine BatchNorm1d) or fixed at γ = 1, β = 0.
 *
 * Everything is plain float64 on the full batch; the gradients are written
 * out by hand (tests/adapt/collapse_toy_test.ts checks them by finite
 * differences): a Tent step costs one exp per point, so 60,000 steps on
 * 30,000 points take under a minute on one core.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { accuracy as shareCorrect } from "../metrics/classification.ts";

/** How `diag(0.25, s²)` of the noise covariance is read. */
export const NOISE_SCALES = ["variance", "std"] as const;
/** Whether R_{−π/4} is part of the noise covariance. */
export const NOISE_ROTATIONS = ["with_pi4", "without_pi4"] as const;
/** Whether the noise covariance is Aᵀ D A as printed or A D Aᵀ (its axes turned the other way). */
export const NOISE_ORIENTATIONS = ["as_printed", "transposed"] as const;
/** Whether γ, β are trained on clean data with w or fixed at 1, 0 until Tent. */
export const BN_AFFINE_TRAINING = ["trained", "fixed"] as const;

/** The readings of App. C that the document leaves open. */
export interface CollapseToyVariant {
  /**
   * "variance" (default): diag(0.25, s²) holds the noise variances along the
   * rotated axes (s² = 4 is "noise variance 4", as the report's plan says);
   * "std": it holds standard deviations, so the variances are 0.25², s⁴.
   */
  noiseScale: typeof NOISE_SCALES[number];
  /**
   * "with_pi4" (default, the printed formula): covariance
   * R_{−π/4}ᵀ R_{−π/6}ᵀ D R_{−π/6} R_{−π/4}; "without_pi4": R_{−π/6}ᵀ D R_{−π/6}.
   */
  noiseRotation: typeof NOISE_ROTATIONS[number];
  /**
   * "as_printed" (default): covariance Aᵀ D A with A the product above; "transposed": A D Aᵀ, the
   * covariance of noise drawn as A D^{½} ε, as code that rotates standard draws by A would make it.
   * R_θᵀ = R_{−θ}, so this turns the noise axes by the opposite angle relative to the class means.
   */
  noiseOrientation: typeof NOISE_ORIENTATIONS[number];
  /** "trained" (default): γ, β trained with w on clean data; "fixed": γ = 1, β = 0 until Tent. */
  bnAffine: typeof BN_AFFINE_TRAINING[number];
}

/** The readings used unless a run asks otherwise. */
export const DEFAULT_VARIANT: CollapseToyVariant = {
  noiseScale: "variance",
  noiseRotation: "with_pi4",
  noiseOrientation: "as_printed",
  bnAffine: "trained",
};

/** The constants of App. C (radians for angles). */
export const COLLAPSE_TOY = {
  /** Class means (±classOffset, 0) before rotation. */
  classOffset: 1,
  /** Variances of X along its two axes. */
  cleanVariances: [1, 0.03] as const,
  /** X_clean = R_{cleanAngle} X. */
  cleanAngle: -Math.PI / 4,
  /** Mean of X_corrupt = R_{shiftAngle} X_clean. */
  shiftAngle: -Math.PI / 9,
  /** Angle θ_c of the noise axes. */
  noiseAngle: -Math.PI / 6,
  /** First entry of diag(0.25, s²). */
  noiseMinor: 0.25,
  /** Noise levels s² of condition 1 (stable) and condition 2 (collapses). */
  conditions: [4, 25] as const,
} as const;

/** Row-major 2×2 matrix [a, b, c, d] = [[a, b], [c, d]]. */
export type Mat2 = [number, number, number, number];

/** R_θ = [[cos θ, sin θ], [−sin θ, cos θ]] (App. C's convention), θ in radians. */
export function rotation(theta: number): Mat2 {
  const c = Math.cos(theta), s = Math.sin(theta);
  return [c, s, -s, c];
}

/** The product A·B of two 2×2 matrices. */
export function matMul2(a: Mat2, b: Mat2): Mat2 {
  return [
    a[0] * b[0] + a[1] * b[2],
    a[0] * b[1] + a[1] * b[3],
    a[2] * b[0] + a[3] * b[2],
    a[2] * b[1] + a[3] * b[3],
  ];
}

/** The transpose of a 2×2 matrix. */
export function transpose2(a: Mat2): Mat2 {
  return [a[0], a[2], a[1], a[3]];
}

/** Points of the toy: `x` row-major `[n, 2]`, labels `y` `[n]` in {0, 1}. */
export interface ToyData {
  /** The points, row-major `[n, 2]`. */
  x: Float64Array;
  /** The labels `[n]`, 0 or 1. */
  y: Uint8Array;
  /** Number of points. */
  n: number;
}

function checkPoints(n: number): void {
  if (!Number.isInteger(n) || n < 2) throw new UsageError(`points must be an integer ≥ 2 (got ${n})`);
}

function checkNoiseLevel(s2: number): void {
  if (!Number.isFinite(s2) || s2 <= 0) throw new UsageError(`noise level s² must be a finite number > 0 (got ${s2})`);
}

/** Mean of class `label` of X_clean: R_{−π/4}(±1, 0). */
export function cleanClassMean(label: 0 | 1): [number, number] {
  const r = rotation(COLLAPSE_TOY.cleanAngle);
  const m = label === 1 ? COLLAPSE_TOY.classOffset : -COLLAPSE_TOY.classOffset;
  return [r[0] * m, r[2] * m];
}

/** Within-class covariance of X_clean, R_{−π/4} diag(1, 0.03) R_{−π/4}ᵀ. */
export function cleanCovariance(): Mat2 {
  const r = rotation(COLLAPSE_TOY.cleanAngle);
  const [v1, v2] = COLLAPSE_TOY.cleanVariances;
  return matMul2(matMul2(r, [v1, 0, 0, v2]), transpose2(r));
}

/**
 * Samples `n` clean points: Y ~ Bern(½), X ~ N((±1, 0), diag(1, 0.03)),
 * X_clean = R_{−π/4} X. Throws UsageError when n < 2.
 */
export function sampleClean(rng: Rng, n: number): ToyData {
  checkPoints(n);
  const r = rotation(COLLAPSE_TOY.cleanAngle);
  const sd1 = Math.sqrt(COLLAPSE_TOY.cleanVariances[0]), sd2 = Math.sqrt(COLLAPSE_TOY.cleanVariances[1]);
  const x = new Float64Array(2 * n), y = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const label = rng.uniform() < 0.5 ? 1 : 0;
    const u = (label === 1 ? COLLAPSE_TOY.classOffset : -COLLAPSE_TOY.classOffset) + sd1 * rng.normal();
    const v = sd2 * rng.normal();
    y[i] = label;
    x[2 * i] = r[0] * u + r[1] * v;
    x[2 * i + 1] = r[2] * u + r[3] * v;
  }
  return { x, y, n };
}

/**
 * The noise as M D^{½} ε, ε ~ N(0, I), whose covariance is M D Mᵀ: M = Aᵀ as printed (M = A transposed),
 * A = R_{−π/6} R_{−π/4} (or R_{−π/6}), D the variances along the noise axes.
 */
function noiseFactors(s2: number, variant: CollapseToyVariant): { m: Mat2; variances: [number, number] } {
  const a = variant.noiseRotation === "with_pi4"
    ? matMul2(rotation(COLLAPSE_TOY.noiseAngle), rotation(COLLAPSE_TOY.cleanAngle))
    : rotation(COLLAPSE_TOY.noiseAngle);
  const d = COLLAPSE_TOY.noiseMinor;
  const variances: [number, number] = variant.noiseScale === "variance" ? [d, s2] : [d * d, s2 * s2];
  return { m: variant.noiseOrientation === "as_printed" ? transpose2(a) : a, variances };
}

/** Covariance of the corruption noise around R_{−π/9} X_clean for noise level s² under `variant`. */
export function noiseCovariance(s2: number, variant: CollapseToyVariant = DEFAULT_VARIANT): Mat2 {
  checkNoiseLevel(s2);
  const { m, variances } = noiseFactors(s2, variant);
  return matMul2(matMul2(m, [variances[0], 0, 0, variances[1]]), transpose2(m));
}

/**
 * Corrupts clean points: X_corrupt ~ N(R_{−π/9} X_clean, noiseCovariance(s²)),
 * one draw per point; returns row-major `[n, 2]`. Throws UsageError when s² ≤ 0.
 */
export function corrupt(
  rng: Rng,
  clean: ToyData,
  s2: number,
  variant: CollapseToyVariant = DEFAULT_VARIANT,
): Float64Array {
  checkNoiseLevel(s2);
  const shift = rotation(COLLAPSE_TOY.shiftAngle);
  const { m, variances } = noiseFactors(s2, variant);
  const sd1 = Math.sqrt(variances[0]), sd2 = Math.sqrt(variances[1]);
  const out = new Float64Array(2 * clean.n);
  for (let i = 0; i < clean.n; i++) {
    const x1 = clean.x[2 * i], x2 = clean.x[2 * i + 1];
    const e1 = sd1 * rng.normal(), e2 = sd2 * rng.normal();
    out[2 * i] = shift[0] * x1 + shift[1] * x2 + m[0] * e1 + m[1] * e2;
    out[2 * i + 1] = shift[2] * x1 + shift[3] * x2 + m[2] * e1 + m[3] * e2;
  }
  return out;
}

/** Per-feature batch statistics of BN: mean and biased standard deviation (ε = 0), `[2]` each. */
export interface BnStats {
  /** Per-feature batch mean. */
  mean: [number, number];
  /** Per-feature biased standard deviation. */
  std: [number, number];
}

/** Full-batch BN statistics of row-major `[n, 2]` points: mean and biased (÷ n) s.d. per feature. */
export function batchStats(x: Float64Array): BnStats {
  const n = x.length / 2;
  let m1 = 0, m2 = 0;
  for (let i = 0; i < n; i++) {
    m1 += x[2 * i];
    m2 += x[2 * i + 1];
  }
  m1 /= n;
  m2 /= n;
  let v1 = 0, v2 = 0;
  for (let i = 0; i < n; i++) {
    v1 += (x[2 * i] - m1) ** 2;
    v2 += (x[2 * i + 1] - m2) ** 2;
  }
  return { mean: [m1, m2], std: [Math.sqrt(v1 / n), Math.sqrt(v2 / n)] };
}

/**
 * BN's normalisation with ε = 0, (x − mean)/std per feature, as two columns
 * `[n]` each (the layout the training loops read).
 */
export function normalize(x: Float64Array, stats: BnStats): { z1: Float64Array; z2: Float64Array } {
  const n = x.length / 2;
  const z1 = new Float64Array(n), z2 = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    z1[i] = (x[2 * i] - stats.mean[0]) / stats.std[0];
    z2[i] = (x[2 * i + 1] - stats.mean[1]) / stats.std[1];
  }
  return { z1, z2 };
}

/** Normalised features, two columns `[n]`. */
export interface Features {
  /** The first normalised feature `[n]`. */
  z1: Float64Array;
  /** The second normalised feature `[n]`. */
  z2: Float64Array;
}

/** The model's parameters: BN scale γ `[2]`, BN shift β `[2]`, linear weights w `[2]` (no bias). */
export interface ToyParams {
  /** BN scale γ `[2]`. */
  gamma: Float64Array;
  /** BN shift β `[2]`. */
  beta: Float64Array;
  /** Linear weights w `[2]`. */
  w: Float64Array;
}

/**
 * Initial parameters as PyTorch sets them: γ = 1, β = 0, w ~ U(−1/√2, 1/√2)
 * (nn.Linear's default for 2 inputs; App. C does not state an initialisation).
 */
export function initParams(rng: Rng): ToyParams {
  const bound = 1 / Math.SQRT2;
  return {
    gamma: Float64Array.of(1, 1),
    beta: Float64Array.of(0, 0),
    w: Float64Array.from({ length: 2 }, () => bound * (2 * rng.uniform() - 1)),
  };
}

/** A copy of `params`. */
export function copyParams(params: ToyParams): ToyParams {
  return { gamma: params.gamma.slice(), beta: params.beta.slice(), w: params.w.slice() };
}

/** Logits f = Σ_j w_j (γ_j z_j + β_j) `[n]`. */
export function logits(features: Features, params: ToyParams): Float64Array {
  const { z1, z2 } = features;
  const a = params.w[0] * params.gamma[0], b = params.w[1] * params.gamma[1];
  const c = params.w[0] * params.beta[0] + params.w[1] * params.beta[1];
  return Float64Array.from(z1, (v, i) => a * v + b * z2[i] + c);
}

/** Fraction of points whose prediction 1[f > 0] equals the label. */
export function accuracy(features: Features, y: Uint8Array, params: ToyParams): number {
  return shareCorrect(Uint8Array.from(logits(features, params), (f) => (f > 0 ? 1 : 0)), y);
}

/** Mean BCE (nats) and its gradients with respect to every parameter (`[2]` each). */
export interface BceResult {
  /** Mean binary cross-entropy, nats. */
  loss: number;
  /** Share of points classified correctly. */
  accuracy: number;
  /** Gradient of `loss` with respect to each parameter. */
  grad: ToyParams;
}

/**
 * Mean binary cross-entropy of sigmoid(f) against `y`, with its exact
 * gradients: ∂L/∂f_i = (p_i − y_i)/n, ∂f/∂w_j = γ_j z_j + β_j,
 * ∂f/∂γ_j = w_j z_j, ∂f/∂β_j = w_j.
 */
export function bceAndGradient(features: Features, y: Uint8Array, params: ToyParams): BceResult {
  const { z1, z2 } = features;
  const n = z1.length;
  const [g1, g2] = params.gamma, [b1, b2] = params.beta, [w1, w2] = params.w;
  const a = w1 * g1, b = w2 * g2, c = w1 * b1 + w2 * b2;
  let loss = 0, correct = 0, sumR = 0, sumRz1 = 0, sumRz2 = 0;
  for (let i = 0; i < n; i++) {
    const f = a * z1[i] + b * z2[i] + c;
    const e = Math.exp(-Math.abs(f));
    // softplus(f) − y f, and p = σ(f), both from e = exp(−|f|) without overflow.
    loss += Math.log1p(e) + (f > 0 ? f : 0) - y[i] * f;
    const p = f >= 0 ? 1 / (1 + e) : e / (1 + e);
    const r = p - y[i];
    sumR += r;
    sumRz1 += r * z1[i];
    sumRz2 += r * z2[i];
    if ((f > 0 ? 1 : 0) === y[i]) correct++;
  }
  return {
    loss: loss / n,
    accuracy: correct / n,
    grad: {
      gamma: Float64Array.of(w1 * sumRz1 / n, w2 * sumRz2 / n),
      beta: Float64Array.of(w1 * sumR / n, w2 * sumR / n),
      w: Float64Array.of((g1 * sumRz1 + b1 * sumR) / n, (g2 * sumRz2 + b2 * sumR) / n),
    },
  };
}

/** Mean prediction entropy (nats), accuracy and the gradient `[2]` of the entropy with respect to γ. */
export interface EntropyResult {
  /** Mean prediction entropy, nats. */
  entropy: number;
  /** Share of points classified correctly. */
  accuracy: number;
  /** Gradient `[2]` of `entropy` with respect to γ. */
  gradGamma: Float64Array;
}

/**
 * Tent's objective on the toy: the mean binary entropy H(σ(f)) of the
 * predictions and its gradient with respect to γ alone. With
 * e = exp(−|f|): H = log(1 + e) + |f| e/(1 + e), dH/df = −f p(1 − p),
 * p(1 − p) = e/(1 + e)². `y` only counts the accuracy of the same forward.
 * With `withEntropy` false the entropy is NaN and not computed (its log
 * costs as much as the gradient; Tent's loop needs it only where it logs).
 */
export function entropyAndGradient(
  features: Features,
  y: Uint8Array,
  params: ToyParams,
  withEntropy = true,
): EntropyResult {
  const { z1, z2 } = features;
  const n = z1.length;
  const [w1, w2] = params.w;
  const a = w1 * params.gamma[0], b = w2 * params.gamma[1];
  const c = w1 * params.beta[0] + w2 * params.beta[1];
  let entropy = 0, correct = 0, sumQz1 = 0, sumQz2 = 0;
  for (let i = 0; i < n; i++) {
    const f = a * z1[i] + b * z2[i] + c;
    const abs = Math.abs(f);
    const e = Math.exp(-abs);
    const onePlus = 1 + e;
    if (withEntropy) entropy += Math.log1p(e) + abs * e / onePlus;
    const q = f * e / (onePlus * onePlus);
    sumQz1 += q * z1[i];
    sumQz2 += q * z2[i];
    if ((f > 0 ? 1 : 0) === y[i]) correct++;
  }
  return {
    entropy: withEntropy ? entropy / n : NaN,
    accuracy: correct / n,
    gradGamma: Float64Array.of(-w1 * sumQz1 / n, -w2 * sumQz2 / n),
  };
}

/** Options of {@linkcode trainOnClean}; defaults are App. C's. */
export interface CleanTrainingOptions {
  /** Full-batch gradient-descent steps (3000). */
  steps?: number;
  /** Initial learning rate (0.1), no momentum. */
  lr?: number;
  /** Steps at which the learning rate is multiplied by `decay` ([1000, 2000]). */
  decayAt?: number[];
  /** Learning-rate factor at each of `decayAt` (0.1). */
  decay?: number;
  /** Train γ and β with w ("trained") or keep them at 1, 0 ("fixed"). */
  bnAffine?: CollapseToyVariant["bnAffine"];
  /** Called before update k (k = 0, every `logEvery`, and after the last update) with that forward's loss. */
  onLog?: (step: number, values: { loss: number; accuracy: number }) => void;
  /** Steps between `onLog` calls (500). */
  logEvery?: number;
}

/**
 * Trains the model on clean normalised features by full-batch gradient
 * descent on the mean BCE (App. C: lr 0.1, ×0.1 at steps 1000 and 2000,
 * 3000 steps). Returns new parameters; `params` is left as it was.
 */
export function trainOnClean(
  features: Features,
  y: Uint8Array,
  params: ToyParams,
  options: CleanTrainingOptions = {},
): ToyParams {
  const { steps = 3000, decayAt = [1000, 2000], decay = 0.1, bnAffine = "trained", logEvery = 500 } = options;
  if (!Number.isInteger(steps) || steps < 1) {
    throw new UsageError(`training steps must be an integer ≥ 1 (got ${steps})`);
  }
  let lr = options.lr ?? 0.1;
  const p = copyParams(params);
  for (let k = 0; k <= steps; k++) {
    const result = bceAndGradient(features, y, p);
    if (k % logEvery === 0 || k === steps) options.onLog?.(k, { loss: result.loss, accuracy: result.accuracy });
    if (k === steps) break;
    // The decay applies from update number `decayAt` on (PyTorch MultiStepLR with milestones [1000, 2000]).
    if (decayAt.includes(k)) lr *= decay;
    for (let j = 0; j < 2; j++) {
      p.w[j] -= lr * result.grad.w[j];
      if (bnAffine === "trained") {
        p.gamma[j] -= lr * result.grad.gamma[j];
        p.beta[j] -= lr * result.grad.beta[j];
      }
    }
  }
  return p;
}

/** One logged point of a Tent run, after `step` updates. */
export interface TentPoint {
  /** Updates taken before this point. */
  step: number;
  /** Share of points classified correctly. */
  accuracy: number;
  /** Mean prediction entropy, nats. */
  entropy: number;
  /** ‖γ‖₂. */
  gammaNorm: number;
}

/** Options of {@linkcode tent}; defaults are App. C's. */
export interface TentOptions {
  /** Full-batch SGD steps (60,000). */
  steps?: number;
  /** Learning rate (0.01), no momentum. */
  lr?: number;
  /** Steps between logged points (500); step 0 and the last step are always logged. */
  logEvery?: number;
  /** Called with each logged point (a place to stop a run between steps). */
  onLog?: (point: TentPoint) => void;
}

/** What a Tent run gives back: the adapted parameters and its logged curve. */
export interface TentResult {
  /** The parameters after the last step. */
  params: ToyParams;
  /** The logged points, in step order. */
  curve: TentPoint[];
}

/**
 * Tent on the BN scale: full-batch SGD on the mean prediction entropy with
 * respect to γ only (β, w fixed), on features normalised with the corrupted
 * batch's own statistics. Point k of the curve is the forward after k
 * updates. Returns new parameters; `params` is left as it was.
 */
export function tent(features: Features, y: Uint8Array, params: ToyParams, options: TentOptions = {}): TentResult {
  const { steps = 60_000, lr = 0.01, logEvery = 500 } = options;
  if (!Number.isInteger(steps) || steps < 1) throw new UsageError(`Tent steps must be an integer ≥ 1 (got ${steps})`);
  const p = copyParams(params);
  const curve: TentPoint[] = [];
  for (let k = 0; k <= steps; k++) {
    const logged = k % logEvery === 0 || k === steps;
    const result = entropyAndGradient(features, y, p, logged);
    if (logged) {
      const point = { step: k, accuracy: result.accuracy, entropy: result.entropy, gammaNorm: Math.hypot(...p.gamma) };
      curve.push(point);
      options.onLog?.(point);
    }
    if (k === steps) break;
    p.gamma[0] -= lr * result.gradGamma[0];
    p.gamma[1] -= lr * result.gradGamma[1];
  }
  return { params: p, curve };
}
