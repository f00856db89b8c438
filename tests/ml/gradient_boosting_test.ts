import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { fitGradientBoosting } from "../../lib/ml/gradient_boosting.ts";
import { Rng } from "../../lib/core/rng.ts";

/** Rows of uniform features in [−1, 1); columns listed in `constant` are fixed at 0.5. */
function features(rng: Rng, rows: number, cols: number, constant: number[] = []) {
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let c = 0; c < cols; c++) data[i * cols + c] = constant.includes(c) ? 0.5 : 2 * rng.uniform() - 1;
  }
  return { data, rows, cols };
}

function labels(x: { data: Float64Array; rows: number; cols: number }, rule: (row: Float64Array) => number) {
  return Int32Array.from({ length: x.rows }, (_, i) => rule(x.data.subarray(i * x.cols, (i + 1) * x.cols)));
}

Deno.test("gradient boosting learns XOR; importances sum to 1 and skip a constant feature", () => {
  const rng = new Rng(1);
  // Features: x0, x1 decide the label, x2 is noise, x3 constant. Labels 3 and 7, not 0/1.
  const xor = (r: Float64Array) => ((r[0] > 0) !== (r[1] > 0) ? 7 : 3);
  const train = features(rng, 1000, 4, [3]), test = features(rng, 1000, 4, [3]);
  const model = fitGradientBoosting(train, labels(train, xor));
  assertEquals(Array.from(model.classes), [3, 7]);
  const accuracy = model.accuracy(test, labels(test, xor));
  assert(accuracy > 0.95, `test accuracy ${accuracy}`);
  const importances = Array.from(model.featureImportances);
  assertAlmostEquals(importances.reduce((s, v) => s + v, 0), 1, 1e-12);
  assertEquals(importances[3], 0);
  assert(importances[0] > 0.3 && importances[1] > 0.3, `importances ${importances}`);
  assert(importances[2] < 0.1, `noise feature importance ${importances[2]}`);
});

Deno.test("gradient boosting learns a multi-class problem and ignores an irrelevant feature", () => {
  const rng = new Rng(2);
  // Five angular sectors in the (x0, x1) plane; x2 is constant.
  const sector = (r: Float64Array) => Math.min(4, Math.floor(((Math.atan2(r[1], r[0]) + Math.PI) / (2 * Math.PI)) * 5));
  const train = features(rng, 2000, 3, [2]), test = features(rng, 1000, 3, [2]);
  const model = fitGradientBoosting(train, labels(train, sector));
  assertEquals(Array.from(model.classes), [0, 1, 2, 3, 4]);
  const accuracy = model.accuracy(test, labels(test, sector));
  assert(accuracy > 0.95, `test accuracy ${accuracy}`);
  assertAlmostEquals(model.featureImportances.reduce((s, v) => s + v, 0), 1, 1e-12);
  assertEquals(model.featureImportances[2], 0);
});

Deno.test("gradient boosting is deterministic and reaches perfect training accuracy on separable data", () => {
  const rng = new Rng(3);
  const x = features(rng, 300, 2);
  const y = labels(x, (r) => (r[0] + r[1] > 0 ? 1 : 0));
  const a = fitGradientBoosting(x, y), b = fitGradientBoosting(x, y);
  assertEquals(a.featureImportances, b.featureImportances);
  assertEquals(a.predict(x), b.predict(x));
  assertEquals(a.accuracy(x, y), 1);
});

Deno.test("gradient boosting on exactly binnable data matches sklearn's GradientBoostingClassifier", async () => {
  // Features with ≤ 101 distinct values, so the histogram splits are sklearn's exact ones; what remains are
  // ties between features of equal gain, which sklearn breaks in a random feature order and we by index.
  const reference = JSON.parse(
    await Deno.readTextFile(new URL("../metrics/fixtures/reference_dci.json", import.meta.url)),
  );
  const { x, y, n_train: nTrain } = reference.gbt_exact;
  const matrix = (rows: number[][]) => ({ data: rows.flat(), rows: rows.length, cols: rows[0].length });
  const train = matrix(x.slice(0, nTrain)), test = matrix(x.slice(nTrain));
  const model = fitGradientBoosting(train, Int32Array.from(y.slice(0, nTrain)));
  assertEquals(model.accuracy(train, y.slice(0, nTrain)), reference.gbt_exact.train_accuracy);
  assertAlmostEquals(model.accuracy(test, y.slice(nTrain)), reference.gbt_exact.test_accuracy, 0.02);
  model.featureImportances.forEach((v, f) => assertAlmostEquals(v, reference.gbt_exact.feature_importances[f], 0.02));
});

Deno.test("gradient boosting validates its inputs", () => {
  const x = { data: [0, 1, 2, 3], rows: 4, cols: 1 };
  assertThrows(() => fitGradientBoosting(x, Int32Array.from([0, 1, 0])), Error, "row counts differ");
  assertThrows(
    () => fitGradientBoosting({ data: [0], rows: 1, cols: 1 }, Int32Array.from([0])),
    Error,
    "at least 2 rows",
  );
  assertThrows(() => fitGradientBoosting(x, [0, 1, 0.5, 1]), Error, "integers");
  assertThrows(() => fitGradientBoosting(x, Int32Array.from([1, 1, 1, 1])), Error, "at least 2 classes");
  assertThrows(
    () => fitGradientBoosting({ data: [0, NaN, 2, 3], rows: 4, cols: 1 }, [0, 1, 0, 1]),
    Error,
    "non-finite",
  );
  const model = fitGradientBoosting(x, [0, 0, 1, 1]);
  assertThrows(() => model.predict({ data: [0, 1], rows: 1, cols: 2 }), Error, "column counts differ");
  assertEquals(Array.from(model.predict({ data: [-5, 10], rows: 2, cols: 1 })), [0, 1]);
});
