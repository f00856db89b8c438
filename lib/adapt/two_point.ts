/**
 * The two-point model of self-learning collapse (Schneider2023 Ch. 3,
 * eqs. 3.6–3.9, App. B, Prop. 1, Fig. 3.2).
 *
 * A linear model y = wᵀx with w ∈ ℝ² sees two points, x₁ = [1, 0] and
 * x₂ = [0, −1], and minimises the temperature-scaled binary cross-entropy
 * between a teacher and a student output,
 *
 *   L = −Σ_k [σ(y_t,k/τt) log σ(y_s,k/τs) + σ(−y_t,k/τt) log σ(−y_s,k/τs)].
 *
 * Entropy minimisation (ENT) uses one w for both and differentiates through
 * the teacher; pseudo-labelling (PL) copies w into the teacher each step and
 * stops its gradient. Training "collapses" when both outputs go to 0 (the
 * trivial solution xᵀw = 0). Prop. 1: no collapse when τs > τt/2 (ENT) or
 * τs > τt (PL). Plain float64 arithmetic, vectorised over (τt, τs) pairs.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";

/** The two objectives: entropy minimisation and (soft) pseudo-labelling. */
export const TWO_POINT_OBJECTIVES = ["ent", "pl"] as const;
/** An objective of the two-point model. */
export type TwoPointObjective = typeof TWO_POINT_OBJECTIVES[number];

/** The two data points x₁, x₂ of Fig. 3.2, `[2][2]`. */
export const TWO_POINT_INPUTS: readonly (readonly [number, number])[] = [[1, 0], [0, -1]];
/** The initial weights w = w_s = w_t of Fig. 3.2. */
export const TWO_POINT_INIT: readonly [number, number] = [0.5, 0.5];
/** |y_k| below which, for both points, a run counts as collapsed. */
export const COLLAPSE_THRESHOLD = 1e-2;

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
/** log σ(z) without overflow for large |z|. */
const logSigmoid = (z: number) => -(Math.max(-z, 0) + Math.log1p(Math.exp(-Math.abs(z))));

function checkTau(name: string, tau: number): void {
  if (!(tau > 0) || !Number.isFinite(tau)) throw new UsageError(`${name} must be a finite number > 0, got ${tau}`);
}

/**
 * The loss of one point, L(y_s, y_t) = −[σ(y_t/τt) log σ(y_s/τs) +
 * σ(−y_t/τt) log σ(−y_s/τs)], for student output `yStudent` and teacher
 * output `yTeacher` (scalars).
 */
export function twoPointLoss(yStudent: number, yTeacher: number, tauT: number, tauS: number): number {
  checkTau("tauT", tauT);
  checkTau("tauS", tauS);
  const p = sigmoid(yTeacher / tauT);
  return -(p * logSigmoid(yStudent / tauS) + (1 - p) * logSigmoid(-yStudent / tauS));
}

/**
 * dL/dy of one point at output y with a = 1/τt, b = 1/τs. The student
 * part is b(σ(by) − σ(ay)); ENT adds the teacher part
 * −a σ'(ay) [log σ(by) − log σ(−by)] = −ab y σ'(ay).
 */
function gradientAt(ent: boolean, y: number, a: number, b: number): number {
  const pTeacher = sigmoid(a * y);
  const student = b * (sigmoid(b * y) - pTeacher);
  return ent ? student - a * b * y * pTeacher * (1 - pTeacher) : student;
}

/**
 * The derivative of one point's loss with respect to its output y, as the
 * objective's update sees it: the total derivative with y_s = y_t = y (ENT),
 * or the student partial ∂L/∂y_s at y_t = y (PL, teacher stop-gradient).
 */
export function twoPointGradient(objective: TwoPointObjective, y: number, tauT: number, tauS: number): number {
  checkTau("tauT", tauT);
  checkTau("tauS", tauS);
  return gradientAt(objective === "ent", y, 1 / tauT, 1 / tauS);
}

/**
 * ENT's linearised dynamics at y = 0 under gradient flow (‖x_k‖ = 1):
 * ẏ = (b/4)(2a − b) y with a = 1/τt, b = 1/τs. Negative: 0 is stable, the
 * run collapses (τs < τt/2).
 */
export function entLinearRate(tauT: number, tauS: number): number {
  checkTau("tauT", tauT);
  checkTau("tauS", tauS);
  const a = 1 / tauT, b = 1 / tauS;
  return (b / 4) * (2 * a - b);
}

/**
 * PL's linearised rate at y = 0 when the teacher is a copy of the student
 * at every step: ẏ = (b/4)(a − b) y. Negative: collapse (τs < τt).
 */
export function plLinearRate(tauT: number, tauS: number): number {
  checkTau("tauT", tauT);
  checkTau("tauS", tauS);
  const a = 1 / tauT, b = 1 / tauS;
  return (b / 4) * (a - b);
}

/**
 * The determinant of PL's linearised (y_s, y_t) system at 0 when the teacher
 * follows the student as ẏ_t = α(y_s − y_t): det = (αb/4)(b − a). The trace
 * −b²/4 − α is negative, so 0 is stable (collapse) exactly when det > 0.
 */
export function plLinearDeterminant(tauT: number, tauS: number, alpha: number): number {
  checkTau("tauT", tauT);
  checkTau("tauS", tauS);
  if (!(alpha > 0)) throw new UsageError(`alpha must be > 0, got ${alpha}`);
  const a = 1 / tauT, b = 1 / tauS;
  return ((alpha * b) / 4) * (b - a);
}

/** Optimiser and start of a two-point run. */
export interface TwoPointOptions {
  /** SGD learning rate (default 0.1). */
  lr?: number;
  /** Heavy-ball momentum, PyTorch convention v ← μv + g, w ← w − lr·v (default 0.9). */
  momentum?: number;
  /** Initial w (default [0.5, 0.5]). */
  init?: readonly [number, number];
}

/**
 * Many independent two-point runs advanced together, one per (τt, τs) pair:
 * each holds its own w and momentum buffer.
 */
export class TwoPointDynamics {
  /** Number of runs. */
  readonly size: number;
  /** The loss every run descends. */
  readonly objective: TwoPointObjective;
  /** SGD steps taken so far. */
  steps = 0;
  readonly #a: Float64Array;
  readonly #b: Float64Array;
  readonly #w: [Float64Array, Float64Array];
  readonly #velocity: [Float64Array, Float64Array];
  readonly #lr: number;
  readonly #momentum: number;

  /** Runs for the pairs (tauT[i], tauS[i]); both arrays of equal length, every τ > 0. */
  constructor(
    objective: TwoPointObjective,
    tauT: ArrayLike<number>,
    tauS: ArrayLike<number>,
    options: TwoPointOptions = {},
  ) {
    if (!TWO_POINT_OBJECTIVES.includes(objective)) {
      throw new UsageError(`objective must be one of ${TWO_POINT_OBJECTIVES.join(", ")}, got ${objective}`);
    }
    if (tauT.length !== tauS.length) {
      throw new UsageError(`tauT and tauS must have equal lengths, got ${tauT.length} and ${tauS.length}`);
    }
    const { lr = 0.1, momentum = 0.9, init = TWO_POINT_INIT } = options;
    if (!(lr > 0)) throw new UsageError(`lr must be > 0, got ${lr}`);
    if (!(momentum >= 0 && momentum < 1)) throw new UsageError(`momentum must be in [0, 1), got ${momentum}`);
    if (init.length !== 2 || !init.every(Number.isFinite)) {
      throw new UsageError(`init must be two finite numbers, got [${init.join(", ")}]`);
    }
    this.objective = objective;
    this.size = tauT.length;
    this.#a = new Float64Array(this.size);
    this.#b = new Float64Array(this.size);
    for (let i = 0; i < this.size; i++) {
      checkTau(`tauT[${i}]`, tauT[i]);
      checkTau(`tauS[${i}]`, tauS[i]);
      this.#a[i] = 1 / tauT[i];
      this.#b[i] = 1 / tauS[i];
    }
    this.#w = [new Float64Array(this.size).fill(init[0]), new Float64Array(this.size).fill(init[1])];
    this.#velocity = [new Float64Array(this.size), new Float64Array(this.size)];
    this.#lr = lr;
    this.#momentum = momentum;
  }

  /** Takes `count` SGD steps on the full two-point loss (both points every step). */
  step(count = 1): void {
    if (!Number.isInteger(count) || count < 0) throw new UsageError(`step count must be an integer ≥ 0, got ${count}`);
    const ent = this.objective === "ent";
    const [[x10, x11], [x20, x21]] = TWO_POINT_INPUTS;
    const [w0, w1] = this.#w;
    const [v0, v1] = this.#velocity;
    const a = this.#a, b = this.#b, lr = this.#lr, mu = this.#momentum;
    for (let s = 0; s < count; s++) {
      for (let i = 0; i < this.size; i++) {
        const g1 = gradientAt(ent, w0[i] * x10 + w1[i] * x11, a[i], b[i]);
        const g2 = gradientAt(ent, w0[i] * x20 + w1[i] * x21, a[i], b[i]);
        v0[i] = mu * v0[i] + g1 * x10 + g2 * x20;
        v1[i] = mu * v1[i] + g1 * x11 + g2 * x21;
        w0[i] -= lr * v0[i];
        w1[i] -= lr * v1[i];
      }
    }
    this.steps += count;
  }

  /** The outputs y_k = w·x_k of point k (0 or 1) for every run, `[size]`. */
  outputs(k: 0 | 1): Float64Array {
    const [xk0, xk1] = TWO_POINT_INPUTS[k];
    const [w0, w1] = this.#w;
    return Float64Array.from({ length: this.size }, (_, i) => w0[i] * xk0 + w1[i] * xk1);
  }

  /** 1 where a run has collapsed (max_k |y_k| < threshold), else 0, `[size]`. */
  collapsed(threshold = COLLAPSE_THRESHOLD): Uint8Array {
    if (!(threshold > 0)) throw new UsageError(`threshold must be > 0, got ${threshold}`);
    const y1 = this.outputs(0), y2 = this.outputs(1);
    return Uint8Array.from(
      { length: this.size },
      (_, i) => Math.max(Math.abs(y1[i]), Math.abs(y2[i])) < threshold ? 1 : 0,
    );
  }
}

/** `size` temperatures log-spaced from `lo` to `hi` inclusive. */
export function tauGrid(size: number, lo = 1e-3, hi = 10): Float64Array {
  if (!Number.isInteger(size) || size < 2) throw new UsageError(`grid size must be an integer ≥ 2, got ${size}`);
  checkTau("lowest τ", lo);
  checkTau("highest τ", hi);
  if (!(lo < hi)) throw new UsageError(`the lowest τ must be below the highest, got ${lo} and ${hi}`);
  const [logLo, logHi] = [Math.log10(lo), Math.log10(hi)];
  return Float64Array.from({ length: size }, (_, i) => 10 ** (logLo + ((logHi - logLo) * i) / (size - 1)));
}

/**
 * Every (τt, τs) pair of a square grid, run i = iS·G + iT (τs indexes rows,
 * τt columns), as the two arrays {@linkcode TwoPointDynamics} takes.
 */
export function gridPairs(taus: ArrayLike<number>): { tauT: Float64Array; tauS: Float64Array } {
  const g = taus.length;
  const tauT = new Float64Array(g * g), tauS = new Float64Array(g * g);
  for (let s = 0; s < g; s++) {
    for (let t = 0; t < g; t++) {
      tauT[s * g + t] = taus[t];
      tauS[s * g + t] = taus[s];
    }
  }
  return { tauT, tauS };
}

/** Which runs of a square (τt, τs) grid collapsed. */
export interface CollapseMap {
  /** The grid's temperatures, `[G]`, shared by both axes. */
  taus: Float64Array;
  /** 1 = collapsed, `[G·G]` row-major: row = τs index, column = τt index. */
  collapsed: Uint8Array;
}

/**
 * Per τt column, the smallest grid ratio τs/τt at and above which no run
 * collapses: the first grid point above the column's largest collapsed τs
 * (Prop. 1's boundary is "no collapse for τs/τt above it", so on a grid it
 * lies in (last collapsed, first clear] and equals the first clear ratio when
 * it is a grid ratio, as PL's 1 is); undefined for a column with no collapse,
 * Infinity when the column's largest τs collapses (the boundary lies beyond
 * the grid); `[G]`.
 */
export function columnBoundaries(map: CollapseMap): (number | undefined)[] {
  const g = map.taus.length;
  if (map.collapsed.length !== g * g) {
    throw new UsageError(`collapse map has ${map.collapsed.length} cells, expected ${g}×${g}`);
  }
  return Array.from(map.taus, (tauT, t) => {
    let last = -1;
    for (let s = 0; s < g; s++) if (map.collapsed[s * g + t]) last = s;
    if (last < 0) return undefined;
    return last + 1 < g ? map.taus[last + 1] / tauT : Infinity;
  });
}

/**
 * The collapse boundary in τs/τt: the median over the τt columns that have a
 * collapse of {@linkcode columnBoundaries}; undefined when nothing collapsed.
 */
export function collapseBoundary(map: CollapseMap): number | undefined {
  const found = columnBoundaries(map).filter((b): b is number => b !== undefined).sort((x, y) => x - y);
  if (found.length === 0) return undefined;
  const mid = found.length >> 1;
  return found.length % 2 === 1 ? found[mid] : (found[mid - 1] + found[mid]) / 2;
}

/** The largest τs/τt of any collapsed run on the grid; undefined when nothing collapsed. */
export function maxCollapsedRatio(map: CollapseMap): number | undefined {
  const g = map.taus.length;
  let largest: number | undefined;
  map.collapsed.forEach((c, i) => {
    const ratio = map.taus[Math.floor(i / g)] / map.taus[i % g];
    if (c && (largest === undefined || ratio > largest)) largest = ratio;
  });
  return largest;
}

/**
 * Runs `objective` on the full grid of `taus` × `taus` for `steps` SGD steps
 * and returns which runs collapsed.
 */
export function collapseMap(
  objective: TwoPointObjective,
  taus: Float64Array,
  steps: number,
  options: TwoPointOptions & { threshold?: number } = {},
): CollapseMap {
  if (!Number.isInteger(steps) || steps < 1) throw new UsageError(`steps must be an integer ≥ 1, got ${steps}`);
  const { tauT, tauS } = gridPairs(taus);
  const dynamics = new TwoPointDynamics(objective, tauT, tauS, options);
  dynamics.step(steps);
  return { taus, collapsed: dynamics.collapsed(options.threshold) };
}
