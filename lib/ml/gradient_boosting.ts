/**
 * Gradient-boosted decision trees for classification, following scikit-learn's
 * `GradientBoostingClassifier` with its defaults (the model disentanglement_lib's
 * DCI metric fits per factor): log-loss, 100 stages, learning rate 0.1,
 * depth-3 `friedman_mse` regression trees, min_samples_split 2,
 * min_samples_leaf 1, no subsampling, class-prior initialisation and one
 * Newton step per leaf.
 *
 * Approximation, for speed: each feature is binned once, before boosting, into
 * at most 256 quantile bins, and splits are searched on bin boundaries by
 * histogram accumulation (as LightGBM and sklearn's HistGradientBoosting do)
 * instead of sklearn's exact scan of every distinct value. A feature with at
 * most 256 distinct values loses nothing (every boundary is a candidate and the
 * threshold is the same midpoint sklearn picks); one with more keeps only ~256
 * candidate cuts, whose thresholds are midpoints between neighbouring bins'
 * extreme training values, so trees differ slightly from sklearn's.
 *
 * @module
 */
import { checkMatrix, type Matrix } from "../core/matrix.ts";
import { stopPoint } from "../core/run_guard.ts";

/** Hyperparameters; the defaults are sklearn's. */
export interface GradientBoostingOptions {
  /** Boosting stages (sklearn `n_estimators`), default 100. */
  nEstimators?: number;
  /** Shrinkage of each tree's contribution, default 0.1. */
  learningRate?: number;
  /** Maximum depth of each regression tree, default 3. */
  maxDepth?: number;
  /** Histogram bins per feature, 2..256, default 256. */
  maxBins?: number;
}

/** A fitted classifier from {@linkcode fitGradientBoosting}. */
export interface GradientBoostingClassifier {
  /** The sorted distinct training labels; predictions are drawn from these. */
  classes: Int32Array;
  /**
   * Impurity-based importances, as sklearn's `feature_importances_`: per tree
   * the weighted decrease of node variance by splits on each feature (divided
   * by the sample count, not normalised per tree), averaged over all trees that
   * split at least once, then normalised to sum to 1 (all zeros if no tree split).
   */
  featureImportances: Float64Array;
  /** Predicted labels for the rows of `x`. */
  predict(x: Matrix): Int32Array;
  /** Fraction of rows of `x` whose predicted label equals `y`. */
  accuracy(x: Matrix, y: ArrayLike<number>): number;
}

/** A node whose variance is at most this becomes a leaf (sklearn's EPSILON). */
const EPSILON = 2.220446049250313e-16; // np.finfo(np.float64).eps
const FLOAT32_EPS = 1.1920928955078125e-7; // np.finfo(np.float32).eps, sklearn's prior clip

interface Tree {
  feature: Int32Array; // −1 marks a leaf
  threshold: Float64Array;
  left: Int32Array;
  right: Int32Array;
  value: Float64Array;
}

interface Binned {
  /** Sample-major bin indices: `bins[i * d + f]`, so one pass over a node's rows fills every feature's histogram. */
  bins: Uint8Array;
  nBins: Int32Array;
  /** Smallest and largest training value (float32) in each bin, per feature. */
  lower: Float64Array[];
  upper: Float64Array[];
}

/** Bins every feature once; values are rounded to float32 first because sklearn fits trees on float32 input. */
function binFeatures(x: Matrix, maxBins: number): Binned {
  const n = x.rows, d = x.cols;
  const bins = new Uint8Array(n * d);
  const nBins = new Int32Array(d);
  const lower: Float64Array[] = [];
  const upper: Float64Array[] = [];
  const values = new Float32Array(n);
  const order = new Int32Array(n);
  for (let f = 0; f < d; f++) {
    for (let i = 0; i < n; i++) {
      values[i] = x.data[i * d + f];
      order[i] = i;
    }
    order.sort((a, b) => values[a] - values[b]);
    let distinct = 0;
    for (let p = 0; p < n; p++) if (p === 0 || values[order[p]] !== values[order[p - 1]]) distinct++;
    const lo = new Float64Array(Math.min(distinct, maxBins));
    const hi = new Float64Array(lo.length);
    // Equal-frequency bins: a run of equal values starting at sorted position p
    // opens a new bin when floor(p·maxBins/n) has grown, so heavy values get a bin of their own.
    let bin = -1, quantile = -1;
    for (let p = 0; p < n; p++) {
      const v = values[order[p]];
      if (p === 0 || v !== values[order[p - 1]]) {
        const q = Math.floor((p * maxBins) / n);
        if (distinct <= maxBins || q > quantile) {
          bin++;
          quantile = q;
          lo[bin] = v;
        }
        hi[bin] = v;
      }
      bins[order[p] * d + f] = bin;
    }
    nBins[f] = bin + 1;
    lower.push(lo.subarray(0, bin + 1));
    upper.push(hi.subarray(0, bin + 1));
  }
  return { bins, nBins, lower, upper };
}

/** sklearn's threshold between neighbouring values: their midpoint, or the lower one if rounding reaches the upper. */
function midpoint(a: number, b: number): number {
  const t = a / 2 + b / 2;
  return t === b || !Number.isFinite(t) ? a : t;
}

/** Histogram slots per feature: interleaved (Σ residual, count) for each of up to 256 bins. */
const SLOTS = 512;

/** Mutable state shared by the trees of one fit, so buffers are allocated once. */
class TreeBuilder {
  readonly n: number;
  readonly d: number;
  readonly samples: Int32Array;
  /** Histograms per depth, two per depth (left and right child), each `d × SLOTS`. */
  readonly histograms: Float64Array[][];
  readonly treeImportance: Float64Array;
  // Per tree being built.
  residual: Float64Array = new Float64Array(0);
  feature: number[] = [];
  threshold: number[] = [];
  left: number[] = [];
  right: number[] = [];
  value: number[] = [];

  constructor(readonly binned: Binned, readonly maxDepth: number, readonly newton: NewtonStep) {
    this.d = binned.nBins.length;
    this.n = binned.bins.length / this.d;
    this.samples = new Int32Array(this.n);
    this.histograms = Array.from(
      { length: maxDepth + 1 },
      () => [new Float64Array(this.d * SLOTS), new Float64Array(this.d * SLOTS)],
    );
    this.treeImportance = new Float64Array(this.d);
  }

  /** Fits one regression tree to `residual` and applies the Newton leaf values through `newton`. */
  fit(residual: Float64Array): Tree {
    this.residual = residual;
    this.feature = [];
    this.threshold = [];
    this.left = [];
    this.right = [];
    this.value = [];
    this.treeImportance.fill(0);
    for (let i = 0; i < this.n; i++) this.samples[i] = i;
    const root = this.histograms[0][0];
    this.fillHistogram(0, this.n, root);
    this.build(0, this.n, 0, root);
    return {
      feature: Int32Array.from(this.feature),
      threshold: Float64Array.from(this.threshold),
      left: Int32Array.from(this.left),
      right: Int32Array.from(this.right),
      value: Float64Array.from(this.value),
    };
  }

  private fillHistogram(start: number, end: number, hist: Float64Array): void {
    const { samples, residual, d } = this;
    const bins = this.binned.bins;
    hist.fill(0);
    for (let p = start; p < end; p++) {
      const s = samples[p];
      const r = residual[s];
      const o = s * d;
      for (let f = 0, slot = 0; f < d; f++, slot += SLOTS) {
        const k = slot + 2 * bins[o + f];
        hist[k] += r;
        hist[k + 1]++;
      }
    }
  }

  /**
   * Depth-first growth as sklearn's DepthFirstTreeBuilder; `hist` holds the node's histograms
   * (unused at maximum depth). Returns the node's variance.
   */
  private build(start: number, end: number, depth: number, hist: Float64Array): number {
    const { samples, residual } = this;
    const n = end - start;
    let sum = 0, sq = 0;
    for (let p = start; p < end; p++) {
      const r = residual[samples[p]];
      sum += r;
      sq += r * r;
    }
    const impurity = sq / n - (sum / n) * (sum / n);
    const node = this.feature.length;
    this.feature.push(-1);
    this.threshold.push(0);
    this.left.push(-1);
    this.right.push(-1);
    this.value.push(0);
    const split = depth >= this.maxDepth || n < 2 || impurity <= EPSILON ? null : this.bestSplit(n, sum, hist);
    if (split === null) {
      this.value[node] = this.newton(samples, start, end);
      return impurity;
    }
    // Partition in place: rows whose bin is at most split.bin go left (x <= threshold).
    const { d } = this;
    const bins = this.binned.bins;
    let i = start, j = end - 1;
    while (i <= j) {
      if (bins[samples[i] * d + split.feature] <= split.bin) i++;
      else {
        const t = samples[i];
        samples[i] = samples[j];
        samples[j] = t;
        j--;
      }
    }
    // Children's histograms: fill the smaller child's, subtract it from the parent's for the larger.
    const [leftHist, rightHist] = this.histograms[depth + 1];
    if (depth + 1 < this.maxDepth) {
      const leftSmaller = i - start <= end - i;
      const small = leftSmaller ? leftHist : rightHist, large = leftSmaller ? rightHist : leftHist;
      if (leftSmaller) this.fillHistogram(start, i, small);
      else this.fillHistogram(i, end, small);
      for (let k = 0; k < large.length; k++) large[k] = hist[k] - small[k];
    }
    this.feature[node] = split.feature;
    this.threshold[node] = split.threshold;
    this.left[node] = this.feature.length;
    const leftImpurity = this.build(start, i, depth + 1, leftHist);
    this.right[node] = this.feature.length;
    const rightImpurity = this.build(i, end, depth + 1, rightHist);
    this.treeImportance[split.feature] += n * impurity - (i - start) * leftImpurity - (end - i) * rightImpurity;
    return impurity;
  }

  /**
   * The boundary maximising Friedman's proxy (n_R·ΣL − n_L·ΣR)² / (n_L·n_R). Features are
   * scanned in index order and only a strictly better split replaces the best, so
   * ties go to the lower feature and then the lower threshold.
   */
  private bestSplit(n: number, total: number, hist: Float64Array) {
    const { nBins, lower, upper } = this.binned;
    let best = -Infinity, bestFeature = -1, bestBin = -1, bestThreshold = 0;
    for (let f = 0; f < this.d; f++) {
      const nb = nBins[f];
      const slot = f * SLOTS;
      let sumLeft = 0, nLeft = 0, last = -1;
      for (let b = 0; b < nb; b++) {
        // Counts are exact small integers even after subtraction; empty bins are no boundary.
        const c = hist[slot + 2 * b + 1];
        if (c === 0) continue;
        if (last >= 0) {
          const nRight = n - nLeft;
          const diff = nRight * sumLeft - nLeft * (total - sumLeft);
          const proxy = (diff * diff) / (nLeft * nRight);
          if (proxy > best) {
            best = proxy;
            bestFeature = f;
            bestBin = last;
            bestThreshold = midpoint(upper[f][last], lower[f][b]);
          }
        }
        sumLeft += hist[slot + 2 * b];
        nLeft += c;
        last = b;
      }
    }
    return bestFeature < 0 ? null : { feature: bestFeature, bin: bestBin, threshold: bestThreshold };
  }
}

/** Leaf value from the samples `samples[start..end)` of a leaf (it may also update raw predictions). */
type NewtonStep = (samples: Int32Array, start: number, end: number) => number;

function packTrees(trees: Tree[]): Tree & { roots: Int32Array } {
  const size = trees.reduce((s, t) => s + t.feature.length, 0);
  const roots = new Int32Array(trees.length);
  const out = {
    roots,
    feature: new Int32Array(size),
    threshold: new Float64Array(size),
    left: new Int32Array(size),
    right: new Int32Array(size),
    value: new Float64Array(size),
  };
  let offset = 0;
  trees.forEach((tree, t) => {
    roots[t] = offset;
    out.feature.set(tree.feature, offset);
    out.threshold.set(tree.threshold, offset);
    out.value.set(tree.value, offset);
    for (let j = 0; j < tree.feature.length; j++) {
      out.left[offset + j] = tree.left[j] + offset;
      out.right[offset + j] = tree.right[j] + offset;
    }
    offset += tree.feature.length;
  });
  return out;
}

/**
 * Fits a gradient-boosted trees classifier to rows `x` `[n, d]` with integer
 * labels `y` (at least two distinct labels), deterministically. Binary problems
 * boost one tree per stage on the log-odds; K > 2 classes boost K trees per
 * stage, one per class on the softmax residuals.
 */
export function fitGradientBoosting(
  x: Matrix,
  y: ArrayLike<number>,
  options: GradientBoostingOptions = {},
): GradientBoostingClassifier {
  const nEstimators = options.nEstimators ?? 100;
  const learningRate = options.learningRate ?? 0.1;
  const maxDepth = options.maxDepth ?? 3;
  const maxBins = options.maxBins ?? 256;
  if (!Number.isInteger(nEstimators) || nEstimators < 1) throw new Error(`nEstimators must be ≥ 1, got ${nEstimators}`);
  if (!(learningRate > 0)) throw new Error(`learningRate must be > 0, got ${learningRate}`);
  if (!Number.isInteger(maxDepth) || maxDepth < 1) throw new Error(`maxDepth must be ≥ 1, got ${maxDepth}`);
  if (!Number.isInteger(maxBins) || maxBins < 2 || maxBins > 256) {
    throw new Error(`maxBins must be an integer in [2, 256], got ${maxBins}`);
  }
  checkMatrix(x, "x");
  if (x.rows !== y.length) throw new Error(`row counts differ: x has ${x.rows}, y has ${y.length}`);
  if (x.rows < 2) throw new Error(`gradient boosting needs at least 2 rows, got ${x.rows}`);
  for (let i = 0; i < y.length; i++) {
    if (!Number.isInteger(y[i])) throw new Error(`labels must be integers, got ${y[i]} at row ${i}`);
  }
  const classes = Int32Array.from(new Set(Array.from(y))).sort();
  if (classes.length < 2) throw new Error(`need at least 2 classes, got ${classes.length}`);
  const n = x.rows, d = x.cols, K = classes.length;
  const classIndex = new Map<number, number>();
  classes.forEach((c, k) => classIndex.set(c, k));
  const encoded = Int32Array.from(y, (v) => classIndex.get(v)!);

  // Initial raw prediction: class-prior log-probabilities (log-odds when binary), clipped as sklearn does.
  const T = K === 2 ? 1 : K; // trees per stage
  const counts = new Float64Array(K);
  for (const k of encoded) counts[k]++;
  const clip = (p: number) => Math.min(Math.max(p, FLOAT32_EPS), 1 - FLOAT32_EPS);
  const init = new Float64Array(T);
  if (K === 2) {
    const p = clip(counts[1] / n);
    init[0] = Math.log(p / (1 - p));
  } else {
    for (let k = 0; k < K; k++) init[k] = Math.log(clip(counts[k] / n));
  }
  const raw = new Float64Array(n * T);
  for (let i = 0; i < n; i++) raw.set(init, i * T);

  const residuals = Array.from({ length: T }, () => new Float64Array(n));
  let current = 0; // the tree (column of raw) being fitted
  // sklearn's leaf update: Σr / Σ(y − r)(1 − y + r), i.e. Σr / Σp(1 − p), scaled by (K−1)/K for multiclass;
  // applied to the training rows' raw predictions at once, as sklearn does after each tree.
  const scale = K === 2 ? 1 : (K - 1) / K;
  const newton: NewtonStep = (samples, start, end) => {
    const r = residuals[current];
    const positive = K === 2 ? 1 : current;
    let numerator = 0, denominator = 0;
    for (let p = start; p < end; p++) {
      const i = samples[p];
      const target = encoded[i] === positive ? 1 : 0;
      numerator += r[i];
      denominator += (target - r[i]) * (1 - target + r[i]);
    }
    numerator *= scale;
    const value = Math.abs(denominator) < 1e-150 ? 0 : numerator / denominator;
    for (let p = start; p < end; p++) raw[samples[p] * T + current] += learningRate * value;
    return value;
  };
  const builder = new TreeBuilder(binFeatures(x, maxBins), maxDepth, newton);
  const trees: Tree[] = [];
  const importanceSum = new Float64Array(d);
  let relevantTrees = 0;
  for (let stage = 0; stage < nEstimators; stage++) {
    stopPoint();
    // Residuals (negative gradients) of all classes from the stage's starting predictions.
    if (K === 2) {
      for (let i = 0; i < n; i++) residuals[0][i] = encoded[i] - 1 / (1 + Math.exp(-raw[i]));
    } else {
      for (let i = 0; i < n; i++) {
        const o = i * K;
        let max = -Infinity;
        for (let k = 0; k < K; k++) max = Math.max(max, raw[o + k]);
        let z = 0;
        for (let k = 0; k < K; k++) z += Math.exp(raw[o + k] - max);
        const logZ = max + Math.log(z);
        for (let k = 0; k < K; k++) residuals[k][i] = (encoded[i] === k ? 1 : 0) - Math.exp(raw[o + k] - logZ);
      }
    }
    for (current = 0; current < T; current++) {
      const tree = builder.fit(residuals[current]);
      trees.push(tree);
      if (tree.feature.length > 1) {
        relevantTrees++;
        for (let f = 0; f < d; f++) importanceSum[f] += builder.treeImportance[f] / n;
      }
    }
  }

  const featureImportances = new Float64Array(d);
  if (relevantTrees > 0) {
    let total = 0;
    for (let f = 0; f < d; f++) total += importanceSum[f] / relevantTrees;
    for (let f = 0; f < d; f++) featureImportances[f] = importanceSum[f] / relevantTrees / total;
  }

  // All trees packed into flat arrays with absolute child indices, so prediction walks typed arrays only.
  const packed = packTrees(trees);
  const predict = (q: Matrix): Int32Array => {
    checkMatrix(q, "x");
    if (q.cols !== d) throw new Error(`column counts differ: fitted on ${d}, got ${q.cols}`);
    const { roots, feature, threshold, left, right, value } = packed;
    const out = new Int32Array(q.rows);
    const row = new Float32Array(d); // sklearn predicts on float32 input too
    const scores = new Float64Array(T);
    for (let i = 0; i < q.rows; i++) {
      for (let f = 0; f < d; f++) row[f] = q.data[i * d + f];
      scores.set(init);
      for (let t = 0, k = 0; t < roots.length; t++) {
        let node = roots[t];
        while (feature[node] >= 0) node = row[feature[node]] <= threshold[node] ? left[node] : right[node];
        scores[k] += learningRate * value[node];
        if (++k === T) k = 0;
      }
      let best = 0;
      if (K === 2) {
        const p = 1 / (1 + Math.exp(-scores[0]));
        best = p > 1 - p ? 1 : 0; // argmax of [1 − p, p], ties to the first class
      } else {
        for (let c = 1; c < K; c++) if (scores[c] > scores[best]) best = c;
      }
      out[i] = classes[best];
    }
    return out;
  };

  return {
    classes,
    featureImportances,
    predict,
    accuracy(q: Matrix, labels: ArrayLike<number>): number {
      if (q.rows !== labels.length) throw new Error(`row counts differ: x has ${q.rows}, y has ${labels.length}`);
      if (q.rows < 1) throw new Error("accuracy needs at least 1 row");
      const predicted = predict(q);
      let correct = 0;
      for (let i = 0; i < q.rows; i++) if (predicted[i] === labels[i]) correct++;
      return correct / q.rows;
    },
  };
}
