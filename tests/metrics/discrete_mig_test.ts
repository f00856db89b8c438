import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  discreteEntropy,
  discreteMutualInfo,
  histogramDiscretize,
  mutualInfoMatrix,
} from "../../lib/metrics/discrete.ts";
import { mig } from "../../lib/metrics/mig.ts";
import { factorGrid, fromRows, permutedGridCopy, REFERENCE } from "./helpers.ts";
import { Rng } from "../../lib/core/rng.ts";

Deno.test("histogramDiscretize matches np.digitize over np.histogram edges", () => {
  const up = { data: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], rows: 6, cols: 1 };
  assertEquals([...histogramDiscretize(up, 3)], [1, 1, 2, 2, 3, 3]);
  const down = { data: [0.6, 0.5, 0.4, 0.3, 0.2, 0.1], rows: 6, cols: 1 };
  assertEquals([...histogramDiscretize(down, 3)], [3, 3, 2, 2, 1, 1]);
  // Columns are discretised independently; a constant column is a single bin.
  const two = { data: [0, 5, 10, 5, 20, 5, 30, 5], rows: 4, cols: 2 };
  assertEquals([...histogramDiscretize(two, 20)], [1, 1, 7, 1, 14, 1, 20, 1]);
});

Deno.test("discreteEntropy and discreteMutualInfo follow sklearn's mutual_info_score", () => {
  assertAlmostEquals(discreteEntropy([1, 1, 2, 2, 3, 3]), Math.log(3), 1e-12);
  assertEquals(discreteEntropy([4, 4, 4]), 0);
  assertAlmostEquals(discreteMutualInfo([1, 2, 1, 2], [1, 2, 1, 2]), Math.log(2), 1e-12);
  assertEquals(discreteMutualInfo([1, 2, 1, 2], [1, 1, 2, 2]), 0);
  assertThrows(() => discreteMutualInfo([1, 2], [1, 2, 3]), Error, "row counts differ");
});

Deno.test("mutualInfoMatrix of the disentanglement_lib oracle is diag(ln 2)", () => {
  // disentanglement_lib stores dims × samples: xs = [[1,2,1,2],[1,1,2,2]], ys = [[1,2,1,2],[2,2,1,1]].
  const xs = [[1, 1], [2, 1], [1, 2], [2, 2]];
  const ys = fromRows([[1, 2], [2, 2], [1, 1], [2, 1]]);
  const m = mutualInfoMatrix(xs.flat(), 2, ys);
  const expected = [[Math.log(2), 0], [0, Math.log(2)]];
  m.forEach((row, i) => row.forEach((v, j) => assertAlmostEquals(v, expected[i][j], 1e-12)));
});

Deno.test("MIG is 1 when the codes are the factors of a full grid", () => {
  const factors = factorGrid([3, 6, 10, 8]);
  const result = mig(factors, factors);
  assertAlmostEquals(result.mig, 1, 1e-12);
  result.perFactor.forEach((v) => assertAlmostEquals(v, 1, 1e-12));
});

Deno.test("MIG is ≥ 0.99 for a permuted, rescaled, shifted copy of the factors", () => {
  const { factors, codes } = permutedGridCopy();
  const result = mig(codes, factors);
  assert(result.mig >= 0.99, `mig ${result.mig}`);
});

Deno.test("MIG of independent uniform noise codes is ≤ 0.05", () => {
  const factors = factorGrid([3, 6, 10, 8]);
  const rng = new Rng(11);
  const codes = {
    data: Float64Array.from({ length: factors.rows * 6 }, () => rng.uniform()),
    rows: factors.rows,
    cols: 6,
  };
  const result = mig(codes, factors);
  assert(result.mig >= 0 && result.mig <= 0.05, `mig ${result.mig}`);
});

Deno.test("MIG of a duplicated latent space is 0, as in disentanglement_lib's mig_test.py", () => {
  // disentanglement_lib: 3,000 samples of 10 factors with 10 values each, codes hstack([x, x]).
  const rng = new Rng(0);
  const rows = Array.from({ length: 3000 }, () => Array.from({ length: 10 }, () => rng.int(10)));
  const result = mig(fromRows(rows.map((x) => [...x, ...x])), fromRows(rows));
  // Both copies carry the same mutual information, so every top-two gap is exactly 0.
  assertEquals(result.mig, 0);
  assertEquals(result.perFactor, new Array(10).fill(0));
});

Deno.test("MIG is 0 for a factor copied into two codes and 1 for the factors coded once", () => {
  const factors = factorGrid([3, 6, 10, 8]);
  const rows = Array.from(
    { length: factors.rows },
    (_, r) => Array.from({ length: 4 }, (_, c) => factors.data[r * 4 + c]),
  );
  // Codes [f2, f0, f1, f3, 5 − 2·f0]: factor 0 has two equally informative codes.
  const result = mig(fromRows(rows.map(([f0, f1, f2, f3]) => [f2, f0, f1, f3, 5 - 2 * f0])), factors);
  assertEquals(result.perFactor[0], 0);
  result.perFactor.slice(1).forEach((v, j) => assertAlmostEquals(v, 1, 1e-12, `factor ${j + 1}`));
  assertAlmostEquals(result.mig, 3 / 4, 1e-12);
  // The two copies tie at the factor's entropy, ln 3.
  assertAlmostEquals(result.mutualInfo[1][0], Math.log(3), 1e-12);
  assertAlmostEquals(result.mutualInfo[4][0], Math.log(3), 1e-12);
});

Deno.test("MIG with a single code uses 0 as the runner-up", () => {
  const factors = fromRows([[0], [0], [1], [1]]);
  assertAlmostEquals(mig(fromRows([[0.1], [0.2], [0.8], [0.9]]), factors).mig, 1, 1e-12);
});

Deno.test("MIG validates its inputs", () => {
  const codes = fromRows([[1], [2], [3]]);
  assertThrows(() => mig(codes, fromRows([[1], [2]])), Error, "row counts differ");
  assertThrows(() => mig(fromRows([[1]]), fromRows([[1]])), Error, "at least 2 rows");
  assertThrows(() => mig(codes, fromRows([[1], [1], [1]])), Error, "constant");
});

for (const dataset of REFERENCE) {
  Deno.test(`MIG matches disentanglement_lib on ${dataset.name}`, () => {
    const result = mig(fromRows(dataset.train_codes), fromRows(dataset.train_factors));
    // Same bins and counts, logs summed in another order: measured ≤ 5.6e-16.
    assertAlmostEquals(result.mig, dataset.expected.mig, 1e-14);
    result.mutualInfo.forEach((row, i) =>
      row.forEach((v, j) => assertAlmostEquals(v, dataset.diagnostics.mutual_info[i][j], 1e-14))
    );
  });
}
