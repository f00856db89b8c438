/**
 * The downstream-task metric of disentanglement_lib's `downstream_task.py`:
 * how well each factor can be predicted from the codes when the predictor
 * sees only 10, 100, 1,000 or 10,000 training rows.
 *
 * Differences from disentanglement_lib: it samples a fresh training set per
 * size; here each size uses the first `size` rows of one given training set
 * (and one test set), so the caller controls the data and the sizes nest.
 * Its "logistic_regression_cv" predictor is sklearn's
 * `LogisticRegressionCV(Cs=10, cv=5)`; here C is likewise chosen among
 * logspace(−4, 4, 10) by 5-fold stratified cross-validated accuracy (folds
 * built as sklearn's unshuffled `StratifiedKFold`, ties to the smallest C),
 * then refitted on all rows, but only when every class has at least 10 rows
 * (2 per fold); otherwise C = 1 (sklearn would cross-validate anyway, with
 * warnings, on folds that miss classes). Fits stop at sklearn's gradient
 * tolerance (1e-4 on the mean loss) but are Newton fits, not lbfgs capped at
 * 100 iterations, so on separable data (large C) weights can differ.
 *
 * @module
 */
import { checkIntegerLabels, checkSplit, gatherRows, type Matrix } from "../core/matrix.ts";
import { fitLogisticRegression } from "../ml/logistic_regression.ts";
import { fitGradientBoosting } from "../ml/gradient_boosting.ts";
import { accuracy, argmaxRows } from "./classification.ts";

/** A fitted classifier that predicts integer labels. */
export interface LabelPredictor {
  /** Sorted distinct training labels. */
  classes: Int32Array;
  /** Predicted labels of the rows of `x`. */
  predict(x: Matrix): Int32Array;
}

/** Distinct labels, sorted. */
function distinct(y: ArrayLike<number>): Int32Array {
  return Int32Array.from(new Set(Array.from(y))).sort();
}

/** Always predicts `label` (a training set with one class leaves nothing to learn). */
function constantPredictor(label: number): LabelPredictor {
  return { classes: Int32Array.of(label), predict: (x) => new Int32Array(x.rows).fill(label) };
}

/**
 * sklearn-default logistic regression (C = `c`) of labels `y` on rows `x`;
 * a single-class `y` gives the constant predictor of that class.
 */
export function fitLogisticOrConstant(x: Matrix, y: Int32Array, c = 1, tol?: number): LabelPredictor {
  const classes = distinct(y);
  if (classes.length === 1) return constantPredictor(classes[0]);
  const model = fitLogisticRegression(x, y, { c, tol });
  const k = model.classes.length;
  return {
    classes,
    predict(input: Matrix): Int32Array {
      const proba = model.predictProba(input);
      return Int32Array.from(argmaxRows(proba, input.rows, k), (best) => model.classes[best]);
    },
  };
}

/**
 * Gradient tolerance of the cross-validated fits: max |∂ mean loss| ≤ 1e-4,
 * sklearn's lbfgs `gtol` (its loss is the mean over samples). The default
 * 1e-10 made the test's cross-validation (large C, separable data) 10× slower.
 */
const CV_TOL = 1e-4;

/** sklearn's `LogisticRegressionCV` grid: `Cs=10` means logspace(−4, 4, 10). */
export const LOGISTIC_CV_CS: readonly number[] = Array.from({ length: 10 }, (_, i) => 10 ** (-4 + (8 * i) / 9));

/** Fold (0..nSplits−1) of each row, as sklearn's `StratifiedKFold(nSplits, shuffle=False)` assigns test folds. */
export function stratifiedFolds(y: ArrayLike<number>, nSplits: number): Int32Array {
  // Classes are numbered by first appearance, as sklearn does before allocating.
  const code = new Map<number, number>();
  const encoded = Int32Array.from(y, (v) => {
    if (!code.has(v)) code.set(v, code.size);
    return code.get(v)!;
  });
  const counts = new Int32Array(code.size);
  for (const c of encoded) counts[c]++;
  // allocation[f][c] = count of class c in sorted(encoded)[f::nSplits].
  const allocation = Array.from({ length: nSplits }, () => new Int32Array(code.size));
  let position = 0;
  for (let c = 0; c < code.size; c++) {
    for (let i = 0; i < counts[c]; i++, position++) allocation[position % nSplits][c]++;
  }
  // Each class's rows, in order, fill fold 0 first, then fold 1, …
  const fold = new Int32Array(encoded.length);
  const nextFold = new Int32Array(code.size), used = new Int32Array(code.size);
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i];
    while (used[c] >= allocation[nextFold[c]][c]) {
      nextFold[c]++;
      used[c] = 0;
    }
    fold[i] = nextFold[c];
    used[c]++;
  }
  return fold;
}

function rowsOf(x: Matrix, rows: number[]): Matrix {
  return { data: gatherRows(x.data, x.cols, rows), rows: rows.length, cols: x.cols };
}

/**
 * Logistic regression with C chosen by 5-fold stratified cross-validation
 * over {@linkcode LOGISTIC_CV_CS} when every class has ≥ 10 rows, else C = 1.
 */
export function fitLogisticCv(x: Matrix, y: Int32Array, nSplits = 5): LabelPredictor & { c: number } {
  const classes = distinct(y);
  if (classes.length === 1) return { ...constantPredictor(classes[0]), c: 1 };
  const counts = new Map<number, number>();
  for (const v of y) counts.set(v, (counts.get(v) ?? 0) + 1);
  if (Math.min(...counts.values()) < 2 * nSplits) return { ...fitLogisticOrConstant(x, y, 1, CV_TOL), c: 1 };
  const fold = stratifiedFolds(y, nSplits);
  const scores = new Float64Array(LOGISTIC_CV_CS.length);
  for (let f = 0; f < nSplits; f++) {
    const trainRows: number[] = [], testRows: number[] = [];
    for (let i = 0; i < y.length; i++) (fold[i] === f ? testRows : trainRows).push(i);
    const xTrain = rowsOf(x, trainRows), xTest = rowsOf(x, testRows);
    const yTrain = Int32Array.from(trainRows, (r) => y[r]), yTest = Int32Array.from(testRows, (r) => y[r]);
    LOGISTIC_CV_CS.forEach((c, i) => {
      scores[i] += accuracy(fitLogisticOrConstant(xTrain, yTrain, c, CV_TOL).predict(xTest), yTest);
    });
  }
  let best = 0; // first maximum: the smallest C among ties, as sklearn's argmax
  for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
  const c = LOGISTIC_CV_CS[best];
  return { ...fitLogisticOrConstant(x, y, c, CV_TOL), c };
}

/** sklearn-default gradient boosting; a single-class `y` gives the constant predictor. */
export function fitGbtOrConstant(x: Matrix, y: Int32Array): LabelPredictor {
  const classes = distinct(y);
  if (classes.length === 1) return constantPredictor(classes[0]);
  const model = fitGradientBoosting(x, y);
  return { classes, predict: (input) => model.predict(input) };
}

/** Options of {@linkcode downstreamTask}. */
export interface DownstreamOptions {
  /** Training-set sizes, default [10, 100, 1000, 10000]. */
  sizes?: number[];
  /** "logistic" (cross-validated C; disentanglement_lib's logistic_regression_cv) or "gbt". */
  predictor?: "logistic" | "gbt";
}

/** Scores for one training-set size. */
export interface DownstreamSizeScore {
  /** Training rows used. */
  size: number;
  /** Mean over factors of the accuracy on the `size` training rows. */
  train_accuracy: number;
  /** Mean over factors of the accuracy on all test rows. */
  test_accuracy: number;
  /** Smallest per-factor test accuracy (disentanglement_lib's min_test_accuracy). */
  min_test_accuracy: number;
  /** Per-factor accuracies. */
  per_factor_train: number[];
  /** Per-factor test accuracies. */
  per_factor_test: number[];
}

/** The result of {@linkcode downstreamTask}. */
export interface DownstreamResult {
  /** Scores per training-set size scored. */
  scores: DownstreamSizeScore[];
  /** Requested sizes larger than the training rows available, hence not scored. */
  skipped: number[];
}

function labels(factors: Matrix, j: number, rows: number): Int32Array {
  return Int32Array.from({ length: rows }, (_, i) => factors.data[i * factors.cols + j]);
}

/**
 * Downstream accuracy of predicting each factor from the codes, per
 * training-set size: fits one predictor per factor on the first `size`
 * training rows and scores it on those rows and on every test row.
 */
export function downstreamTask(
  trainCodes: Matrix,
  trainFactors: Matrix,
  testCodes: Matrix,
  testFactors: Matrix,
  { sizes = [10, 100, 1000, 10000], predictor = "logistic" }: DownstreamOptions = {},
): DownstreamResult {
  if (predictor !== "logistic" && predictor !== "gbt") throw new Error(`unknown predictor "${predictor}"`);
  checkSplit({ trainCodes, trainFactors, testCodes, testFactors }, 1);
  checkIntegerLabels({ trainFactors, testFactors });
  for (const size of sizes) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`sizes must be positive integers, got ${size}`);
  }
  const fit = predictor === "logistic" ? fitLogisticCv : fitGbtOrConstant;
  const testLabels = Array.from({ length: testFactors.cols }, (_, j) => labels(testFactors, j, testFactors.rows));
  const scores: DownstreamSizeScore[] = [];
  const skipped: number[] = [];
  for (const size of sizes) {
    if (size > trainCodes.rows) {
      skipped.push(size);
      continue;
    }
    const x: Matrix = {
      data: Float64Array.from({ length: size * trainCodes.cols }, (_, i) => trainCodes.data[i]),
      rows: size,
      cols: trainCodes.cols,
    };
    const perTrain: number[] = [], perTest: number[] = [];
    for (let j = 0; j < trainFactors.cols; j++) {
      const y = labels(trainFactors, j, size);
      const model = fit(x, y);
      perTrain.push(accuracy(model.predict(x), y));
      perTest.push(accuracy(model.predict(testCodes), testLabels[j]));
    }
    const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
    scores.push({
      size,
      train_accuracy: mean(perTrain),
      test_accuracy: mean(perTest),
      min_test_accuracy: Math.min(...perTest),
      per_factor_train: perTrain,
      per_factor_test: perTest,
    });
  }
  return { scores, skipped };
}
