import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { knnClassify, type KnnMetric, knnRegress } from "../../lib/ml/knn.ts";

interface KnnReference {
  rows: number;
  cols: number;
  targetCols: number;
  queryRows: number;
  train: number[];
  targets: number[];
  labels: number[];
  query: number[];
  cases: { metric: KnnMetric; k: number; regress: number[]; classify: number[] }[];
}

const reference: { knn: KnnReference } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_linear_knn.json", import.meta.url)),
);

Deno.test("knnRegress and knnClassify match sklearn's brute-force KNeighbors* (uniform, cosine and euclidean, k 1/4/9)", () => {
  const r = reference.knn;
  const train = { data: r.train, rows: r.rows, cols: r.cols };
  const targets = { data: r.targets, rows: r.rows, cols: r.targetCols };
  const query = { data: r.query, rows: r.queryRows, cols: r.cols };
  const labels = Int32Array.from(r.labels);
  for (const c of r.cases) {
    const what = `${c.metric} k ${c.k}`;
    const pred = knnRegress(train, targets, query, c.k, c.metric);
    assertEquals(pred.length, c.regress.length, what);
    for (let i = 0; i < pred.length; i++) assertAlmostEquals(pred[i], c.regress[i], 1e-12, `${what} [${i}]`);
    assertEquals(Array.from(knnClassify(train, labels, query, c.k, c.metric)), c.classify, what);
  }
});

Deno.test("kNN ties: equal distances go to the lower training index, equal votes to the smallest label", () => {
  // Four training points at distance 1 from the origin, two farther.
  const train = { data: [0, 1, 1, 0, 0, -1, -1, 0, 3, 0, 0, 3], rows: 6, cols: 2 };
  const targets = { data: [10, 20, 30, 40, 50, 60], rows: 6, cols: 1 };
  const origin = { data: [0, 0], rows: 1, cols: 2 };
  assertEquals(Array.from(knnRegress(train, targets, origin, 1, "euclidean")), [10]);
  assertEquals(Array.from(knnRegress(train, targets, origin, 3, "euclidean")), [20]);
  assertEquals(Array.from(knnRegress(train, targets, origin, 5, "euclidean")), [(10 + 20 + 30 + 40 + 50) / 5]);
  // Votes 7, 7, −2, −2 among the four nearest: a tie between −2 and 7 goes to −2.
  const labels = Int32Array.from([7, -2, 7, -2, 5, 5]);
  assertEquals(Array.from(knnClassify(train, labels, origin, 4, "euclidean")), [-2]);
  assertEquals(Array.from(knnClassify(train, labels, origin, 1, "euclidean")), [7]);
  // Cosine ignores scale: (3, 0) is as near to (1, 0.01) as (1, 0) is, and comes later.
  const q = { data: [1, 0.01], rows: 1, cols: 2 };
  assertEquals(Array.from(knnRegress(train, targets, q, 2, "cosine")), [(20 + 50) / 2]);
  // A zero query is at cosine distance 1 from everything: the first k rows.
  assertEquals(Array.from(knnRegress(train, targets, origin, 2, "cosine")), [15]);
});

Deno.test("kNN rejects bad input before any work", () => {
  const train = { data: [0, 1, 1, 0], rows: 2, cols: 2 }, targets = { data: [1, 2], rows: 2, cols: 1 };
  assertThrows(() => knnRegress(train, targets, train, 3, "cosine"), UsageError, "1..2");
  assertThrows(() => knnRegress(train, targets, { data: [1], rows: 1, cols: 1 }, 1, "cosine"), UsageError, "columns");
  assertThrows(() => knnRegress(train, targets, train, 1, "manhattan" as KnnMetric), UsageError, "cosine, euclidean");
  assertThrows(() => knnRegress(train, { data: [1], rows: 1, cols: 1 }, train, 1, "cosine"), UsageError, "rows");
  assertThrows(() => knnClassify(train, Int32Array.from([1]), train, 1, "cosine"), UsageError, "labels");
});
