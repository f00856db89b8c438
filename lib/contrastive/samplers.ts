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

/** Row indices of one batch, `n` each. */
export interface IndexBatch {
  ref: Int32Array;
  pos: Int32Array;
  neg: Int32Array;
}

/** Draws {@linkcode IndexBatch}es from a seeded generator. */
export interface Sampler {
  sample(rng: Rng, n: number): IndexBatch;
}

/** The model's window: rows to the left and right of a time step it sees. */
interface Window {
  left: number;
  right: number;
}

/** A hybrid batch: `pos` from the behaviour conditional, `posTime` = ref + offset. */
export interface HybridBatch extends IndexBatch {
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
  ref: Int32Array[];
  pos: Int32Array[];
  neg: Int32Array[];
  queryOf: Int32Array;
}

// ---------------------------------------------------------------- nearest rows

/** Nearest-row search over fixed labels; ties go to the lowest row, as torch.argmin. */
interface NearestIndex {
  /** Row of the labels nearest (squared euclidean) to `query[offset … offset + cols)`. */
  nearest(query: ArrayLike<number>, offset: number): number;
}

class SortedIndex implements NearestIndex {
  readonly #values: Float64Array; // distinct label values, ascending
  readonly #rows: Int32Array; // lowest row holding each value

  constructor(values: ArrayLike<number>, rows: ArrayLike<number>) {
    const order = Array.from({ length: values.length }, (_, i) => i);
    order.sort((a, b) => values[a] - values[b] || rows[a] - rows[b]);
    const v: number[] = [], r: number[] = [];
    for (const i of order) {
      if (v.length === 0 || values[i] !== v[v.length - 1]) {
        v.push(values[i]);
        r.push(rows[i]);
      }
    }
    this.#values = Float64Array.from(v);
    this.#rows = Int32Array.from(r);
  }

  nearest(query: ArrayLike<number>, offset: number): number {
    const q = query[offset];
    const v = this.#values;
    let lo = 0, hi = v.length; // first value ≥ q
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v[mid] < q) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return this.#rows[0];
    if (lo === v.length) return this.#rows[v.length - 1];
    const below = q - v[lo - 1], above = v[lo] - q;
    if (below < above) return this.#rows[lo - 1];
    if (above < below) return this.#rows[lo];
    return Math.min(this.#rows[lo - 1], this.#rows[lo]);
  }
}

/**
 * Exact k-d tree over label rows of two or more columns. A tree rather than a
 * uniform grid: labels often crowd onto a curve or a few values in some
 * columns (a track position beside binary direction flags, a 2-D trajectory)
 * and queries can land far outside them; median splits adapt to any such
 * layout with depth log₂ n, where a grid's one cell size fits one density and
 * its ring search grows with the distance to the data.
 *
 * Answers equal the brute-force argmin bit for bit: candidate distances are
 * summed over columns in the same order as a plain loop, and a node is skipped
 * only when its box bound, summed the same way from per-column gaps that are
 * never larger than a member's, exceeds the best distance (rounding is
 * monotone, so the bound never exceeds a member's computed distance), or equals
 * it while all its rows come later. Ties go to the lowest position in `rows`.
 */
class KdIndex implements NearestIndex {
  static readonly LEAF = 8;
  readonly #cols: number;
  readonly #rows: Int32Array; // row reported for each position
  readonly #points: Float64Array; // labels of the distinct rows, in tree order
  readonly #order: Int32Array; // position of each point in `rows`
  readonly #start: Int32Array; // per node: its points are #start … #end − 1
  readonly #end: Int32Array;
  readonly #child: Int32Array; // first of two consecutive children, −1 at a leaf
  readonly #min: Float64Array; // per node and column: bounding box
  readonly #max: Float64Array;
  readonly #first: Int32Array; // lowest position in the node
  readonly #stack: Int32Array;
  readonly #stackBound: Float64Array;

  /** `labels` `[rows.length, cols]`: the labels of `rows`, in that order. */
  constructor(labels: Float64Array, cols: number, rows: Int32Array) {
    const d = cols, n = rows.length;
    this.#cols = d;
    this.#rows = rows;
    // Keep the first of equal rows only: a later copy can never win a tie.
    const sorted = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => {
      for (let c = 0; c < d; c++) {
        const diff = labels[a * d + c] - labels[b * d + c];
        if (diff !== 0) return diff;
      }
      return a - b;
    });
    const kept: number[] = [];
    for (let i = 0; i < n; i++) {
      const a = sorted[i], b = sorted[i - 1];
      let same = i > 0;
      for (let c = 0; same && c < d; c++) same = labels[a * d + c] === labels[b * d + c];
      if (!same) kept.push(a);
    }
    const order = Int32Array.from(kept);
    const start: number[] = [], end: number[] = [], child: number[] = [], first: number[] = [];
    const min: number[] = [], max: number[] = [];
    let depth = 0;
    const build = (node: number, lo: number, hi: number, level: number) => {
      depth = Math.max(depth, level);
      start[node] = lo;
      end[node] = hi;
      let widest = 0, width = -1, low = order[lo];
      for (let c = 0; c < d; c++) {
        let a = Infinity, b = -Infinity;
        for (let i = lo; i < hi; i++) {
          const v = labels[order[i] * d + c];
          if (v < a) a = v;
          if (v > b) b = v;
        }
        min[node * d + c] = a;
        max[node * d + c] = b;
        if (b - a > width) {
          widest = c;
          width = b - a;
        }
      }
      for (let i = lo; i < hi; i++) low = Math.min(low, order[i]);
      first[node] = low;
      if (hi - lo <= KdIndex.LEAF) {
        child[node] = -1;
        return;
      }
      const mid = (lo + hi) >>> 1, left = start.length;
      child[node] = left;
      start.push(0, 0); // reserve both children
      selectByColumn(order, labels, d, widest, lo, hi - 1, mid);
      build(left, lo, mid, level + 1);
      build(left + 1, mid, hi, level + 1);
    };
    start.push(0);
    build(0, 0, order.length, 0);
    this.#points = new Float64Array(order.length * d);
    order.forEach((p, i) => this.#points.set(labels.subarray(p * d, (p + 1) * d), i * d));
    this.#order = order;
    this.#start = Int32Array.from(start);
    this.#end = Int32Array.from(end);
    this.#child = Int32Array.from(child);
    this.#first = Int32Array.from(first);
    this.#min = Float64Array.from(min);
    this.#max = Float64Array.from(max);
    this.#stack = new Int32Array(2 * depth + 2);
    this.#stackBound = new Float64Array(2 * depth + 2);
  }

  nearest(query: ArrayLike<number>, offset: number): number {
    const d = this.#cols, points = this.#points, order = this.#order;
    const child = this.#child, first = this.#first, stack = this.#stack, bounds = this.#stackBound;
    // The brute force's starting state: position 0 at distance ∞ (it stays the answer if nothing is finite).
    let best = Infinity, arg = 0, top = 0;
    stack[top] = 0;
    bounds[top++] = 0;
    while (top > 0) {
      const node = stack[--top], bound = bounds[top];
      if (bound > best || (bound === best && first[node] > arg)) continue;
      const left = child[node];
      if (left < 0) {
        for (let i = this.#start[node], end = this.#end[node]; i < end; i++) {
          let dist = 0;
          for (let c = 0, base = i * d; c < d; c++) {
            const diff = points[base + c] - query[offset + c];
            dist += diff * diff;
          }
          if (dist < best || (dist === best && order[i] < arg)) {
            best = dist;
            arg = order[i];
          }
        }
        continue;
      }
      const bl = this.#bound(left, query, offset), br = this.#bound(left + 1, query, offset);
      // The nearer child goes on top so that it tightens `best` first.
      const rightFirst = br < bl;
      stack[top] = rightFirst ? left : left + 1;
      bounds[top++] = rightFirst ? bl : br;
      stack[top] = rightFirst ? left + 1 : left;
      bounds[top++] = rightFirst ? br : bl;
    }
    return this.#rows[arg];
  }

  /** Squared distance from the query to the node's box, summed as a candidate's distance is. */
  #bound(node: number, query: ArrayLike<number>, offset: number): number {
    const d = this.#cols, min = this.#min, max = this.#max;
    let dist = 0;
    for (let c = 0, base = node * d; c < d; c++) {
      const q = query[offset + c], a = min[base + c], b = max[base + c];
      const gap = q < a ? a - q : q > b ? q - b : 0;
      dist += gap * gap;
    }
    return dist;
  }
}

/** Reorders `order[lo … hi]` so that position `k` holds its value by column `col`, smaller before, larger after. */
function selectByColumn(
  order: Int32Array,
  labels: Float64Array,
  d: number,
  col: number,
  lo: number,
  hi: number,
  k: number,
) {
  while (hi > lo) {
    const pivot = labels[order[(lo + hi) >>> 1] * d + col];
    let i = lo, j = hi;
    while (i <= j) {
      while (labels[order[i] * d + col] < pivot) i++;
      while (labels[order[j] * d + col] > pivot) j--;
      if (i <= j) {
        const t = order[i];
        order[i++] = order[j];
        order[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/** A search index over `rows` of the labels (all rows by default). */
function buildIndex(labels: Float64Array, cols: number, rows?: Int32Array): NearestIndex & {
  many(query: Float64Array, count: number): Int32Array;
} {
  const all = rows ?? Int32Array.from({ length: labels.length / cols }, (_, i) => i);
  if (cols === 1) {
    const values = rows ? Float64Array.from(rows, (r) => labels[r]) : labels;
    const index = new SortedIndex(values, all);
    return {
      nearest: (q, o) => index.nearest(q, o),
      many: (q, count) => Int32Array.from({ length: count }, (_, i) => index.nearest(q, i)),
    };
  }
  let subset = labels;
  if (rows) {
    subset = new Float64Array(rows.length * cols);
    rows.forEach((r, i) => subset.set(labels.subarray(r * cols, (r + 1) * cols), i * cols));
  }
  const index = new KdIndex(subset, cols, all);
  return {
    nearest: (q, o) => index.nearest(q, o),
    many: (q, count) => {
      const out = new Int32Array(count);
      for (let i = 0; i < count; i++) out[i] = index.nearest(q, i * cols);
      return out;
    },
  };
}

/**
 * For each query row, the label row nearest in squared euclidean distance
 * (`cebra.distributions.ContinuousIndex.search`; ties go to the lowest row).
 * One label column: binary search over the sorted labels; more: an exact k-d
 * tree built once over the labels. Returns `[queries.rows]`.
 */
export function nearestRows(labels: Matrix, queries: Matrix): Int32Array {
  const l = toFloat64(labels, "labels");
  const q = toFloat64(queries, "queries");
  if (labels.cols !== queries.cols) {
    throw new UsageError(`labels have ${labels.cols} columns but the queries ${queries.cols}`);
  }
  if (labels.rows < 1) throw new UsageError("labels need at least one row");
  return buildIndex(l, labels.cols).many(q, queries.rows);
}

// ---------------------------------------------------------------- checks

function toFloat64(m: Matrix, what: string): Float64Array {
  if (!Number.isInteger(m.rows) || !Number.isInteger(m.cols) || m.cols < 1 || m.data.length !== m.rows * m.cols) {
    throw new UsageError(`${what}: data of length ${m.data.length} does not fit shape [${m.rows}, ${m.cols}]`);
  }
  const out = Float64Array.from(m.data);
  for (let i = 0; i < out.length; i++) {
    if (!Number.isFinite(out[i])) throw new UsageError(`${what}: non-finite value at index ${i}`);
  }
  return out;
}

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
