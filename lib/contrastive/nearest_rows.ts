/**
 * Exact nearest-row search over fixed label rows (CEBRA's `ContinuousIndex.search`), which the behaviour-contrastive
 * samplers use to turn a perturbed reference label into the row of the positive: binary search for one label
 * column, a k-d tree for more. Ties go to the lowest row, as torch.argmin.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";

/** Nearest-row search over fixed labels; ties go to the lowest row, as torch.argmin. */
export interface NearestIndex {
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

/**
 * A search index over `rows` of the `[n, cols]` labels (all rows by default): `nearest` answers one query at an
 * offset, `many` the first `count` rows of a `[count, cols]` query matrix.
 */
export function buildIndex(labels: Float64Array, cols: number, rows?: Int32Array): NearestIndex & {
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

/**
 * The data of `m` as float64 after checking its shape and that every value is finite; throws a UsageError naming
 * `what` otherwise.
 */
export function toFloat64(m: Matrix, what: string): Float64Array {
  if (!Number.isInteger(m.rows) || !Number.isInteger(m.cols) || m.cols < 1 || m.data.length !== m.rows * m.cols) {
    throw new UsageError(`${what}: data of length ${m.data.length} does not fit shape [${m.rows}, ${m.cols}]`);
  }
  const out = Float64Array.from(m.data);
  for (let i = 0; i < out.length; i++) {
    if (!Number.isFinite(out[i])) throw new UsageError(`${what}: non-finite value at index ${i}`);
  }
  return out;
}
