/**
 * Index samplers of CEBRA (`cebra/distributions/continuous.py`, `discrete.py`,
 * `mixed.py`, `multisession.py`; loaders in `cebra/data/single_session.py` and
 * `multi_session.py`): each draw gives reference, positive and negative row
 * indices of a session's data. References and negatives come from the prior
 * (uniform over time unless stated), positives from the conditional given the
 * reference: a fixed time offset, the label nearest to the reference's label
 * plus an empirical label change (`time_delta`) or Gaussian noise (`delta`), or
 * a row of the same class.
 *
 * Every returned index is clamped to the model's window [left, T − right], as
 * the package's `Dataset.expand_index` does before it cuts out the samples, so
 * row `i` stands for the window of rows i − left … i + right − 1.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { buildIndex, toFloat64 } from "./nearest_rows.ts";

/** Row indices of one batch, `n` each. */
export interface IndexBatch {
  /** Reference rows. */
  ref: Int32Array;
  /** Positive rows, one per reference. */
  pos: Int32Array;
  /** Negative rows. */
  neg: Int32Array;
}

/** Draws {@linkcode IndexBatch}es from a seeded generator. */
export interface Sampler {
  /** A batch of `n` rows each, drawn from `rng`. */
  sample(rng: Rng, n: number): IndexBatch;
}

/** The model's window: rows to the left and right of a time step it sees. */
interface Window {
  left: number;
  right: number;
}

/** A hybrid batch: `pos` from the behaviour conditional, `posTime` = ref + offset. */
export interface HybridBatch extends IndexBatch {
  /** Time positives: ref + offset. */
  posTime: Int32Array;
}

/**
 * A multi-session batch: `n` references, positives and negatives per session.
 * Each positive slot answers a query made from one reference, drawn in any
 * session and assigned to slots by a random permutation (the package's
 * `sample_conditional`), so `pos[s]` holds rows of session `s`. `queryOf[k]`
 * is the flat reference index (s·n + j) whose query the flat positive slot `k`
 * answered; the loss pairs reference i with the positive slot k where
 * `queryOf[k] = i`.
 */
export interface MultiSessionBatch {
  /** Per session, its reference rows. */
  ref: Int32Array[];
  /** Per session, the positive slots (rows of that session). */
  pos: Int32Array[];
  /** Per session, its negative rows. */
  neg: Int32Array[];
  /** Flat positive slot → the flat reference index (s·n + j) whose query it answered. */
  queryOf: Int32Array;
}

// ---------------------------------------------------------------- checks

function checkWindow(o: Window, rows: number, what: string): void {
  if (!Number.isInteger(o.left) || !Number.isInteger(o.right) || o.left < 0 || o.right < 1) {
    throw new UsageError(`${what}: window left ≥ 0 and right ≥ 1 must be integers, got ${o.left}, ${o.right}`);
  }
  if (rows < o.left + o.right) {
    throw new UsageError(`${what}: ${rows} rows are fewer than the model's receptive field ${o.left + o.right}`);
  }
}

function checkOffset(offset: number, rows: number, what: string): void {
  if (!Number.isInteger(offset) || offset < 1) {
    throw new UsageError(`${what}: time offset must be a positive integer, got ${offset}`);
  }
  if (offset >= rows) throw new UsageError(`${what}: time offset ${offset} must be below the number of rows ${rows}`);
}

function checkDiscrete(labels: Int32Array, what: string): number {
  let max = -1;
  for (let i = 0; i < labels.length; i++) {
    const v = labels[i];
    if (!Number.isInteger(v) || v < 0) {
      throw new UsageError(`${what}: discrete labels must be non-negative integers, got ${v} at row ${i}`);
    }
    if (v > max) max = v;
  }
  return max + 1;
}

function clampTo(index: Int32Array, o: Window, rows: number): Int32Array {
  const lo = o.left, hi = rows - o.right;
  for (let i = 0; i < index.length; i++) index[i] = Math.min(hi, Math.max(lo, index[i]));
  return index;
}

function uniformRows(rng: Rng, rows: number, n: number): Int32Array {
  return Int32Array.from({ length: n }, () => rng.int(rows));
}

/** D_t = c_t − c_{t−Δ}, zeros for t < Δ (the package's `TimedeltaDistribution`). */
function timeDifferences(c: Float64Array, cols: number, offset: number): Float64Array {
  const d = new Float64Array(c.length);
  for (let i = offset * cols; i < c.length; i++) d[i] = c[i] - c[i - offset * cols];
  return d;
}

// ---------------------------------------------------------------- conditionals

/** A positive given references, in row indices (before clamping). */
type Conditional = (rng: Rng, ref: Int32Array) => Int32Array;

function timeConditional(offset: number): Conditional {
  return (_rng, ref) => ref.map((r) => r + offset);
}

function timeDeltaConditional(c: Float64Array, cols: number, offset: number): Conditional {
  const rows = c.length / cols;
  const diff = timeDifferences(c, cols, offset);
  const index = buildIndex(c, cols);
  return (rng, ref) => {
    const query = new Float64Array(ref.length * cols);
    for (let i = 0; i < ref.length; i++) {
      const u = rng.int(rows);
      for (let k = 0; k < cols; k++) query[i * cols + k] = c[ref[i] * cols + k] + diff[u * cols + k];
    }
    return index.many(query, ref.length);
  };
}

function deltaConditional(c: Float64Array, cols: number, delta: number): Conditional {
  const index = buildIndex(c, cols);
  return (rng, ref) => {
    const query = new Float64Array(ref.length * cols);
    for (let i = 0; i < ref.length; i++) {
      for (let k = 0; k < cols; k++) query[i * cols + k] = c[ref[i] * cols + k] + delta * rng.normal();
    }
    return index.many(query, ref.length);
  };
}

/**
 * The package's `Discrete` distribution: rows sorted by class, the class CDF,
 * and draws from the empirical prior (uniform over rows), the uniform prior
 * (uniform over classes, through the CDF interpolated on [0, N]) or a row of a
 * given class.
 */
class DiscreteDistribution {
  readonly sorted: Int32Array;
  readonly cdf: Float64Array;
  readonly classes: number;
  readonly rows: number;

  constructor(labels: Int32Array, what: string) {
    this.classes = checkDiscrete(labels, what);
    this.rows = labels.length;
    this.sorted = Int32Array.from({ length: labels.length }, (_, i) => i).sort((a, b) =>
      labels[a] - labels[b] || a - b
    );
    const counts = new Float64Array(this.classes);
    for (const v of labels) counts[v]++;
    this.cdf = new Float64Array(this.classes + 1);
    for (let k = 0; k < this.classes; k++) this.cdf[k + 1] = this.cdf[k] + counts[k];
  }

  empirical(rng: Rng): number {
    return this.sorted[rng.int(this.rows)];
  }

  uniform(rng: Rng): number {
    // scipy interp1d(linspace(0, N, K + 1), cdf) at u ~ U(0, N), truncated: class k gets the k-th K-th of u's range.
    const p = rng.uniform() * this.classes;
    const k = Math.min(this.classes - 1, Math.floor(p));
    const value = this.cdf[k] + (p - k) * (this.cdf[k + 1] - this.cdf[k]);
    return this.sorted[Math.min(this.rows - 1, Math.floor(value))];
  }

  conditional(rng: Rng, label: number): number {
    const lo = this.cdf[label], hi = this.cdf[label + 1];
    return this.sorted[Math.min(this.rows - 1, Math.floor(lo + rng.uniform() * (hi - lo)))];
  }

  has(label: number): boolean {
    return label < this.classes && this.cdf[label + 1] > this.cdf[label];
  }
}

// ---------------------------------------------------------------- single session

function priorAndConditional(
  rows: number,
  o: Window,
  prior: (rng: Rng, count: number) => Int32Array,
  conditional: Conditional,
): Sampler {
  return {
    sample(rng, n) {
      // The package's loaders draw 2n from the prior: the first n are references, the rest negatives.
      const both = prior(rng, 2 * n);
      const ref = both.slice(0, n), neg = both.slice(n);
      const pos = conditional(rng, ref);
      return { ref: clampTo(ref, o, rows), pos: clampTo(pos, o, rows), neg: clampTo(neg, o, rows) };
    },
  };
}

/** Time-contrastive sampling (`TimeContrastive`): ref, neg uniform in [0, T − Δ), pos = ref + Δ. */
export function timeSampler(T: number, o: { offset: number; left: number; right: number }): Sampler {
  checkWindow(o, T, "time sampler");
  checkOffset(o.offset, T, "time sampler");
  return priorAndConditional(T, o, (rng, k) => uniformRows(rng, T - o.offset, k), timeConditional(o.offset));
}

/**
 * Behaviour-contrastive sampling with the empirical label change
 * (`TimedeltaDistribution`): ref, neg uniform over time, pos = the row whose
 * label is nearest to c_ref + D_u, u uniform over time, D_t = c_t − c_{t−Δ}
 * (zero for t < Δ).
 */
export function timeDeltaSampler(continuous: Matrix, o: { offset: number; left: number; right: number }): Sampler {
  const c = toFloat64(continuous, "continuous labels");
  checkWindow(o, continuous.rows, "time_delta sampler");
  checkOffset(o.offset, continuous.rows, "time_delta sampler");
  const T = continuous.rows;
  return priorAndConditional(
    T,
    o,
    (rng, k) => uniformRows(rng, T, k),
    timeDeltaConditional(c, continuous.cols, o.offset),
  );
}

/** Gaussian behaviour-contrastive sampling (`DeltaNormalDistribution`): pos nearest to c_ref + N(0, δ²I). */
export function deltaSampler(continuous: Matrix, o: { delta: number; left: number; right: number }): Sampler {
  const c = toFloat64(continuous, "continuous labels");
  checkWindow(o, continuous.rows, "delta sampler");
  if (!(Number.isFinite(o.delta) && o.delta > 0)) {
    throw new UsageError(`delta sampler: delta must be a positive number, got ${o.delta}`);
  }
  const T = continuous.rows;
  return priorAndConditional(T, o, (rng, k) => uniformRows(rng, T, k), deltaConditional(c, continuous.cols, o.delta));
}

/**
 * Discrete sampling (`DiscreteEmpirical` / `DiscreteUniform`): ref, neg from
 * the prior (empirical: uniform over rows, the default; uniform: each class
 * equally likely), pos uniform among the rows of the reference's class.
 */
export function discreteSampler(
  discrete: Int32Array,
  o: { prior?: "empirical" | "uniform"; left: number; right: number },
): Sampler {
  const prior = o.prior ?? "empirical";
  if (prior !== "empirical" && prior !== "uniform") {
    throw new UsageError(`discrete sampler: prior must be "empirical" or "uniform", got "${prior}"`);
  }
  checkWindow(o, discrete.length, "discrete sampler");
  const dist = new DiscreteDistribution(discrete, "discrete labels");
  const draw = prior === "uniform" ? (rng: Rng) => dist.uniform(rng) : (rng: Rng) => dist.empirical(rng);
  return priorAndConditional(
    discrete.length,
    o,
    (rng, k) => Int32Array.from({ length: k }, () => draw(rng)),
    (rng, ref) => ref.map((r) => dist.conditional(rng, discrete[r])),
  );
}

/**
 * Mixed sampling (`MixedTimeDeltaDistribution`): ref and neg from the uniform
 * class prior (separate draws), pos the row of the reference's class whose
 * continuous label is nearest to c_ref + D_u.
 */
export function mixedSampler(
  continuous: Matrix,
  discrete: Int32Array,
  o: { offset: number; left: number; right: number },
): Sampler {
  const c = toFloat64(continuous, "continuous labels");
  const T = continuous.rows, cols = continuous.cols;
  if (discrete.length !== T) {
    throw new UsageError(`discrete labels have ${discrete.length} rows but the continuous labels ${T}`);
  }
  checkWindow(o, T, "mixed sampler");
  checkOffset(o.offset, T, "mixed sampler");
  const dist = new DiscreteDistribution(discrete, "discrete labels");
  const diff = timeDifferences(c, cols, o.offset);
  const byClass = new Map<number, ReturnType<typeof buildIndex>>();
  for (let k = 0; k < dist.classes; k++) {
    if (!dist.has(k)) continue;
    const rows = Int32Array.from(dist.sorted.subarray(dist.cdf[k], dist.cdf[k + 1])).sort();
    byClass.set(k, buildIndex(c, cols, rows));
  }
  const query = new Float64Array(cols);
  return {
    sample(rng, n) {
      const ref = Int32Array.from({ length: n }, () => dist.uniform(rng));
      const neg = Int32Array.from({ length: n }, () => dist.uniform(rng));
      const pos = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const u = rng.int(T);
        for (let k = 0; k < cols; k++) query[k] = c[ref[i] * cols + k] + diff[u * cols + k];
        pos[i] = byClass.get(discrete[ref[i]])!.nearest(query, 0);
      }
      return { ref: clampTo(ref, o, T), pos: clampTo(pos, o, T), neg: clampTo(neg, o, T) };
    },
  };
}

/**
 * Hybrid sampling (`HybridDataLoader`): ref and neg from the time prior
 * [0, T − Δ), `pos` from the behaviour conditional (time_delta by default,
 * delta with Gaussian noise δ, or time) and `posTime` = ref + Δ.
 */
export function hybridSampler(
  continuous: Matrix,
  o: { offset: number; left: number; right: number; conditional?: "time_delta" | "delta" | "time"; delta?: number },
): { sample(rng: Rng, n: number): HybridBatch } {
  const c = toFloat64(continuous, "continuous labels");
  const T = continuous.rows;
  checkWindow(o, T, "hybrid sampler");
  checkOffset(o.offset, T, "hybrid sampler");
  const kind = o.conditional ?? "time_delta";
  let behaviour: Conditional;
  if (kind === "time_delta") behaviour = timeDeltaConditional(c, continuous.cols, o.offset);
  else if (kind === "time") behaviour = timeConditional(o.offset);
  else if (kind === "delta") {
    if (!(o.delta !== undefined && Number.isFinite(o.delta) && o.delta > 0)) {
      throw new UsageError(`hybrid sampler: the delta conditional needs a positive delta, got ${o.delta}`);
    }
    behaviour = deltaConditional(c, continuous.cols, o.delta);
  } else {
    throw new UsageError(`hybrid sampler: conditional must be time_delta, delta or time, got "${kind}"`);
  }
  const time = timeConditional(o.offset);
  return {
    sample(rng, n) {
      const both = uniformRows(rng, T - o.offset, 2 * n);
      const ref = both.slice(0, n), neg = both.slice(n);
      const pos = behaviour(rng, ref);
      const posTime = time(rng, ref);
      return {
        ref: clampTo(ref, o, T),
        pos: clampTo(pos, o, T),
        neg: clampTo(neg, o, T),
        posTime: clampTo(posTime, o, T),
      };
    },
  };
}

// ---------------------------------------------------------------- multi-session

function multiSession(
  lengths: number[],
  o: Window,
  queryOfRef: (rng: Rng, ref: Int32Array[], n: number) => (flat: number) => void,
  answer: (rng: Rng, session: number, queryFlat: number) => number,
): { sample(rng: Rng, n: number): MultiSessionBatch } {
  return {
    sample(rng, n) {
      const S = lengths.length;
      // Prior: n rows uniform per session, for references, then negatives (MultisessionSampler.sample_prior).
      const ref = lengths.map((T) => uniformRows(rng, T, n));
      const neg = lengths.map((T) => uniformRows(rng, T, n));
      const makeQuery = queryOfRef(rng, ref, n);
      for (let i = 0; i < S * n; i++) makeQuery(i);
      // Each query goes to the session of the slot a random permutation assigns it.
      const queryOf = rng.permutation(S * n);
      const pos = lengths.map(() => new Int32Array(n));
      for (let s = 0; s < S; s++) {
        for (let j = 0; j < n; j++) pos[s][j] = answer(rng, s, queryOf[s * n + j]);
      }
      return {
        ref: ref.map((r, s) => clampTo(r, o, lengths[s])),
        pos: pos.map((p, s) => clampTo(p, o, lengths[s])),
        neg: neg.map((r, s) => clampTo(r, o, lengths[s])),
        queryOf,
      };
    },
  };
}

/**
 * Continuous multi-session sampling (`MultisessionSampler`): per session `n`
 * references and negatives uniform over its rows; a query c_ref + D_u for each
 * reference with D pooled over sessions (c_t − c_{t−Δ} for t ≥ Δ of every
 * session); the queries are shuffled across sessions and each answered by the
 * nearest label in its assigned session.
 */
export function multiSessionSampler(
  continuous: Matrix[],
  o: { offset: number; left: number; right: number },
): { sample(rng: Rng, n: number): MultiSessionBatch } {
  if (continuous.length < 1) throw new UsageError("multi-session sampling needs at least one session");
  const cols = continuous[0].cols;
  const labels = continuous.map((m, s) => {
    if (m.cols !== cols) {
      throw new UsageError(`label widths differ across sessions: session 0 has ${cols}, session ${s} has ${m.cols}`);
    }
    checkWindow(o, m.rows, `session ${s}`);
    checkOffset(o.offset, m.rows, `session ${s}`);
    return toFloat64(m, `continuous labels of session ${s}`);
  });
  const diffs: number[] = [];
  for (const c of labels) {
    for (let i = o.offset * cols; i < c.length; i++) diffs.push(c[i] - c[i - o.offset * cols]);
  }
  const pooled = Float64Array.from(diffs);
  const diffRows = pooled.length / cols;
  const indices = labels.map((c) => buildIndex(c, cols));
  let queries = new Float64Array(0);
  return multiSession(
    continuous.map((m) => m.rows),
    o,
    (rng, ref, n) => {
      queries = new Float64Array(ref.length * n * cols);
      return (flat) => {
        const s = Math.floor(flat / n), r = ref[s][flat % n];
        const u = rng.int(diffRows);
        for (let k = 0; k < cols; k++) queries[flat * cols + k] = labels[s][r * cols + k] + pooled[u * cols + k];
      };
    },
    (_rng, s, q) => indices[s].nearest(queries, q * cols),
  );
}

/**
 * Discrete multi-session sampling (`DiscreteMultisessionSampler`): per session
 * `n` references and negatives uniform over its rows; each reference's class
 * is shuffled to a session and answered by a uniform row of that class there.
 * Every session must hold every class that occurs in any session.
 */
export function discreteMultiSessionSampler(
  discrete: Int32Array[],
  o: { left: number; right: number },
): { sample(rng: Rng, n: number): MultiSessionBatch } {
  if (discrete.length < 1) throw new UsageError("multi-session sampling needs at least one session");
  const dists = discrete.map((d, s) => {
    checkWindow(o, d.length, `session ${s}`);
    return new DiscreteDistribution(d, `discrete labels of session ${s}`);
  });
  const classes = Math.max(...dists.map((d) => d.classes));
  for (let k = 0; k < classes; k++) {
    const holders = dists.map((d) => d.has(k));
    if (holders.some((h) => h) && !holders.every((h) => h)) {
      throw new UsageError(
        `class ${k} is missing in session ${holders.indexOf(false)}; each session must hold every class`,
      );
    }
  }
  let queries = new Int32Array(0);
  return multiSession(
    discrete.map((d) => d.length),
    o,
    (_rng, ref, n) => {
      queries = new Int32Array(ref.length * n);
      return (flat) => {
        const s = Math.floor(flat / n);
        queries[flat] = discrete[s][ref[s][flat % n]];
      };
    },
    (rng, s, q) => dists[s].conditional(rng, queries[q]),
  );
}

// ---------------------------------------------------------------- full batch

/**
 * Full-batch sampling (`FullDataLoader` with the `single-session-full`
 * solver): every step uses the references left … T − (left + right) − 2 in
 * order (the package's `arange(offset.left, T − len(offset) − 1)`), negatives a
 * random permutation of them, positives from the time, time_delta or delta
 * conditional. A positive past the last window falls back to its reference,
 * as the solver does; one before the first window is clamped to it (where the
 * package's negative index would wrap around to the end of the sequence).
 * `n` is ignored.
 */
export function fullBatchSampler(
  T: number,
  o: {
    left: number;
    right: number;
    offset: number;
    conditional: "time" | "time_delta" | "delta";
    continuous?: Matrix;
    delta?: number;
  },
): Sampler {
  checkWindow(o, T, "full-batch sampler");
  const first = o.left, end = T - (o.left + o.right) - 1;
  if (end <= first) {
    throw new UsageError(
      `full-batch training needs more than ${2 * o.left + o.right + 1} rows for this model, got ${T}`,
    );
  }
  let conditional: Conditional;
  if (o.conditional === "time") {
    checkOffset(o.offset, T, "full-batch sampler");
    conditional = timeConditional(o.offset);
  } else {
    if (!o.continuous) throw new UsageError(`the ${o.conditional} conditional needs continuous labels`);
    if (o.continuous.rows !== T) {
      throw new UsageError(`continuous labels have ${o.continuous.rows} rows but the data ${T}`);
    }
    const c = toFloat64(o.continuous, "continuous labels");
    if (o.conditional === "time_delta") {
      checkOffset(o.offset, T, "full-batch sampler");
      conditional = timeDeltaConditional(c, o.continuous.cols, o.offset);
    } else {
      if (!(o.delta !== undefined && Number.isFinite(o.delta) && o.delta > 0)) {
        throw new UsageError(`the delta conditional needs a positive delta, got ${o.delta}`);
      }
      conditional = deltaConditional(c, o.continuous.cols, o.delta);
    }
  }
  const ref = Int32Array.from({ length: end - first }, (_, i) => first + i);
  return {
    sample(rng) {
      const perm = rng.permutation(ref.length);
      const neg = perm.map((p) => ref[p]);
      const pos = conditional(rng, ref);
      for (let i = 0; i < pos.length; i++) {
        if (pos[i] > T - o.right) pos[i] = ref[i];
        if (pos[i] < o.left) pos[i] = o.left;
      }
      return { ref: ref.slice(), pos, neg };
    },
  };
}
