import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  checkIntegerLabels,
  checkMatrix,
  checkPaired,
  checkSplit,
  column,
  correlationMatrix,
  gatherRows,
  type Matrix,
  meanSd,
  ranks,
  type Split,
} from "../../lib/core/matrix.ts";

/** Row-major Matrix from nested rows. */
function fromRows(rows: number[][]): Matrix {
  return { data: Float64Array.from(rows.flat()), rows: rows.length, cols: rows[0].length };
}

Deno.test("ranks are 1-based and ties share the average of their ranks", () => {
  // Sorted: 1 → 1, 5 → 2, 10 → 3, the three 20s take ranks 4, 5, 6 → 5 each.
  assertEquals([...ranks([10, 20, 20, 5, 20, 1])], [3, 5, 5, 2, 5, 1]);
  // A tied pair at ranks 2 and 3 → 2.5 each.
  assertEquals([...ranks([2, 1, 2, 3])], [2.5, 1, 2.5, 4]);
  assertEquals([...ranks([])], []);
});

Deno.test("correlationMatrix matches hand-computed Pearson and Spearman correlations", () => {
  // Columns of a: x = 1..4, an alternating u, and a constant; b is one column [1, 3, 2, 5].
  const a = fromRows([[1, 1, 7], [2, 0, 7], [3, 1, 7], [4, 0, 7]]);
  const b = fromRows([[1], [3], [2], [5]]);
  // x: Σ dx·db = 5.5, Σ dx² = 5, Σ db² = 8.75 → 5.5 / √43.75 = 11 / (5√7).
  // u: Σ du·db = −2.5, Σ du² = 1 → −2.5 / √8.75 = −√35 / 7. A constant column correlates 0.
  const pearson = correlationMatrix(a, b);
  assertEquals(pearson.length, 3);
  assertAlmostEquals(pearson[0][0], 11 / (5 * Math.sqrt(7)), 1e-15);
  assertAlmostEquals(pearson[1][0], -Math.sqrt(35) / 7, 1e-15);
  assertEquals(pearson[2][0], 0);
  // Ranks of b are [1, 3, 2, 4]: ρ(x, b) = 1 − 6 Σd² / (n(n² − 1)) = 1 − 12/60 = 0.8; u ranks [3.5, 1.5, 3.5, 1.5]
  // give Σ du·dr = −4, Σ du² = 4, Σ dr² = 5 → −2/√5.
  const spearman = correlationMatrix(a, b, "spearman");
  assertAlmostEquals(spearman[0][0], 0.8, 1e-15);
  assertAlmostEquals(spearman[1][0], -2 / Math.sqrt(5), 1e-15);
  assertEquals(spearman[2][0], 0);
  // A matrix against itself: unit diagonal (the constant column is 0), symmetric.
  const self = correlationMatrix(a, a);
  assertAlmostEquals(self[0][0], 1, 1e-15);
  assertAlmostEquals(self[0][1], self[1][0], 1e-15);
  assertEquals(self[2][2], 0);
  assertThrows(() => correlationMatrix(a, fromRows([[1], [2]])), Error, "row counts differ: 4 vs 2");
  assertThrows(() => correlationMatrix(fromRows([[1]]), fromRows([[2]])), Error, "at least 2 rows");
});

Deno.test("meanSd gives the sample s.d. by default and the population s.d. with ddof 0", () => {
  // Mean 5, Σ (x − 5)² = 32 over 8 values.
  const values = [2, 4, 4, 4, 5, 5, 7, 9];
  const sample = meanSd(values);
  assertEquals(sample.mean, 5);
  assertEquals(sample.variance, 32 / 7);
  assertEquals(sample.sd, Math.sqrt(32 / 7));
  assertEquals(meanSd(values, { ddof: 0 }), { mean: 5, variance: 4, sd: 2 });
  assertEquals(meanSd(Float32Array.of(1, 3)), { mean: 2, variance: 2, sd: Math.SQRT2 });
  // One value has no sample s.d.; it has a population s.d. of 0.
  assert(Number.isNaN(meanSd([3]).sd));
  assertEquals(meanSd([3], { ddof: 0 }), { mean: 3, variance: 0, sd: 0 });
});

Deno.test("column and gatherRows copy from a row-major matrix", () => {
  const data = Float32Array.of(0, 1, 10, 11, 20, 21, 30, 31); // [4, 2]
  assertEquals([...column(data, 4, 2, 1)], [1, 11, 21, 31]);
  const gathered = gatherRows(data, 2, [3, 0, 3]);
  assert(gathered instanceof Float32Array);
  assertEquals([...gathered], [30, 31, 0, 1, 30, 31]);
  // The offset shifts every index, e.g. to the previous time step.
  assertEquals([...gatherRows(data, 2, Int32Array.of(1, 3), -1)], [0, 1, 20, 21]);
  const plain = gatherRows([1, 2, 3, 4, 5, 6], 3, [1]);
  assert(plain instanceof Float64Array);
  assertEquals([...plain], [4, 5, 6]);
  assertThrows(() => gatherRows(data, 2, [4]), RangeError, "row 4 is outside 0..3");
  assertThrows(() => gatherRows(data, 2, [0], -1), RangeError, "row -1 is outside 0..3");
});

Deno.test("checkMatrix and checkPaired name what is wrong", () => {
  checkMatrix(fromRows([[1, 2]]), "m", 1);
  assertThrows(() => checkMatrix(fromRows([[1, 2]]), "m", 2), Error, "m: needs at least 2 rows and 1 column");
  assertThrows(() => checkMatrix({ data: [1, 2, 3], rows: 2, cols: 2 }, "m"), Error, "m: data length 3");
  assertThrows(() => checkMatrix(fromRows([[1, NaN]]), "m"), Error, "m: non-finite value at index 1");
  checkPaired(fromRows([[1], [2]]), fromRows([[0, 1], [1, 0]]), { minRows: 2 });
  assertThrows(
    () => checkPaired(fromRows([[1], [2], [3]]), fromRows([[0], [1]])),
    Error,
    "row counts differ: codes has 3, factors has 2",
  );
  assertThrows(
    () => checkPaired(fromRows([[1]]), fromRows([[0]]), { minRows: 2, names: ["a", "b"] }),
    Error,
    "a: needs at least 2 rows",
  );
});

Deno.test("checkSplit accepts a consistent split and names the matrix or count that is wrong", () => {
  const codes = fromRows([[1, 2], [3, 4], [5, 6]]);
  const factors = fromRows([[0], [1], [0]]);
  const valid: Split = { trainCodes: codes, trainFactors: factors, testCodes: codes, testFactors: factors };
  checkSplit(valid, 3);
  const broken = (changes: Partial<Split>) => () => checkSplit({ ...valid, ...changes }, 2);
  assertThrows(broken({ trainCodes: fromRows([[1, 2]]) }), Error, "trainCodes: needs at least 2 rows and 1 column");
  assertThrows(broken({ testFactors: { data: [0, 1, 0], rows: 2, cols: 1 } }), Error, "testFactors: data length 3");
  assertThrows(broken({ testCodes: fromRows([[1, 2], [3, Infinity], [5, 6]]) }), Error, "testCodes: non-finite");
  assertThrows(
    broken({ trainFactors: fromRows([[0], [1]]) }),
    Error,
    "row counts differ: trainCodes has 3, trainFactors has 2",
  );
  assertThrows(
    broken({ testCodes: fromRows([[1, 2], [3, 4]]) }),
    Error,
    "row counts differ: testCodes has 2, testFactors has 3",
  );
  assertThrows(
    broken({ testCodes: fromRows([[1], [2], [3]]) }),
    Error,
    "code counts differ: trainCodes has 2, testCodes has 1",
  );
  assertThrows(
    broken({ testFactors: fromRows([[0, 1], [1, 1], [0, 0]]) }),
    Error,
    "factor counts differ: trainFactors has 1, testFactors has 2",
  );
});

Deno.test("checkIntegerLabels names the matrix holding a non-integer label", () => {
  checkIntegerLabels({ trainFactors: fromRows([[0], [2]]) });
  assertThrows(
    () => checkIntegerLabels({ trainFactors: fromRows([[0], [2]]), testFactors: fromRows([[0.5], [1]]) }),
    Error,
    "testFactors: factor labels must be integers, got 0.5",
  );
});

Deno.test("correlationMatrix refuses NaN and Inf instead of reading them as a constant column", () => {
  const a = { data: [1, 2, 3, 4], rows: 4, cols: 1 };
  for (const bad of [NaN, Infinity]) {
    const b = { data: [1, bad, 2, 3], rows: 4, cols: 1 };
    assertThrows(() => correlationMatrix(a, b), Error, "non-finite");
    assertThrows(() => correlationMatrix(b, a), Error, "non-finite");
  }
});
