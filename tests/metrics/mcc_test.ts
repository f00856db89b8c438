import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { correlationMatrix, ranks } from "../../lib/core/matrix.ts";
import { meanCorrelationCoefficient } from "../../lib/metrics/mcc.ts";
import { Rng } from "../../lib/core/rng.ts";
import { REFERENCE } from "./helpers.ts";

function laplaceMatrix(rng: Rng, rows: number, cols: number) {
  return { data: Float64Array.from({ length: rows * cols }, () => rng.laplace(1)), rows, cols };
}

Deno.test("MCC of a representation with itself is 1 with the identity matching", () => {
  const s = laplaceMatrix(new Rng(1), 2000, 5);
  const result = meanCorrelationCoefficient(s, s);
  assertAlmostEquals(result.mcc, 1, 1e-12);
  assertEquals(result.matching, [0, 1, 2, 3, 4]);
});

Deno.test("MCC of a permuted, rescaled, sign-flipped copy is 1 and recovers the permutation", () => {
  const s = laplaceMatrix(new Rng(2), 2000, 4);
  const permutation = [2, 0, 3, 1];
  const scales = [3, -0.5, 10, -2];
  const codes = { data: new Float64Array(s.data.length), rows: s.rows, cols: 4 };
  for (let r = 0; r < s.rows; r++) {
    for (let c = 0; c < 4; c++) codes.data[r * 4 + permutation[c]] = scales[c] * s.data[r * 4 + c] + 7;
  }
  const result = meanCorrelationCoefficient(s, codes);
  assertAlmostEquals(result.mcc, 1, 1e-12);
  assertEquals(result.matching, permutation);
});

Deno.test("MCC of independent noise is near 0", () => {
  const rng = new Rng(3);
  const result = meanCorrelationCoefficient(laplaceMatrix(rng, 5000, 6), laplaceMatrix(rng, 5000, 6));
  // With n = 5000 each |corr| is about 0.011 in sd; the best matching of 6 picks the larger ones.
  assert(result.mcc < 0.05, `mcc ${result.mcc}`);
});

Deno.test("MCC matches more codes than sources without padding, Spearman sees monotone maps as 1", () => {
  const rng = new Rng(4);
  const s = laplaceMatrix(rng, 1000, 2);
  const codes = { data: new Float64Array(1000 * 3), rows: 1000, cols: 3 };
  for (let r = 0; r < 1000; r++) {
    codes.data[r * 3] = rng.normal();
    codes.data[r * 3 + 1] = Math.exp(s.data[r * 2 + 1]); // monotone in source 1
    codes.data[r * 3 + 2] = s.data[r * 2] ** 3; // monotone in source 0
  }
  const spearman = meanCorrelationCoefficient(s, codes, "spearman");
  assertAlmostEquals(spearman.mcc, 1, 1e-12);
  assertEquals(spearman.matching, [2, 1]);
  const pearson = meanCorrelationCoefficient(s, codes, "pearson");
  assert(pearson.mcc < 0.95 && pearson.mcc > 0.3, `pearson ${pearson.mcc}`);
});

Deno.test("correlationMatrix and ranks agree with hand-computed values", () => {
  // x = [1, 2, 3, 4], y = [2, 1, 4, 3]: corr = 0.6 (Pearson), ranks equal values.
  const x = { data: [1, 2, 3, 4], rows: 4, cols: 1 };
  const y = { data: [2, 1, 4, 3], rows: 4, cols: 1 };
  assertAlmostEquals(correlationMatrix(x, y)[0][0], 0.6, 1e-12);
  assertEquals([...ranks([10, 20, 20, 5])], [2, 3.5, 3.5, 1]);
  // A constant column correlates 0 with everything.
  assertEquals(correlationMatrix({ data: [1, 1, 1, 1], rows: 4, cols: 1 }, y)[0][0], 0);
});

Deno.test("MCC matches scipy (corrcoef / spearmanr + linear_sum_assignment) to rounding", async () => {
  const expected = JSON.parse(await Deno.readTextFile(new URL("./fixtures/reference_mcc.json", import.meta.url)));
  REFERENCE.forEach((dataset, i) => {
    const factors = {
      data: dataset.train_factors.flat(),
      rows: dataset.train_factors.length,
      cols: dataset.train_factors[0].length,
    };
    const codes = {
      data: dataset.train_codes.flat(),
      rows: dataset.train_codes.length,
      cols: dataset.train_codes[0].length,
    };
    // Measured ≤ 1.3e-15; np.corrcoef's BLAS moves the reference by about as much between machines.
    assertAlmostEquals(meanCorrelationCoefficient(factors, codes).mcc, expected.datasets[i].pearson, 1e-14);
    assertAlmostEquals(
      meanCorrelationCoefficient(factors, codes, "spearman").mcc,
      expected.datasets[i].spearman,
      1e-14,
    );
  });
});
