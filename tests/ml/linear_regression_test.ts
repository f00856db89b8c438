import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { fitLinearRegression, linearR2 } from "../../lib/ml/linear_regression.ts";

interface LinearCase {
  name: string;
  rows: number;
  cols: number;
  outs: number;
  x: number[];
  y: number[];
  xTest: number[];
  coef: number[];
  intercept: number[];
  rank: number;
  score: number;
  sklearnScore: number;
  predTest: number[];
}

const reference: { linear: LinearCase[] } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_linear_knn.json", import.meta.url)),
);

function closeAll(actual: ArrayLike<number>, expected: number[], tol: number, what: string): void {
  assertEquals(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    const bound = tol * Math.max(1, Math.abs(expected[i]));
    assertAlmostEquals(actual[i], expected[i], bound, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

Deno.test("fitLinearRegression and linearR2 match sklearn LinearRegression (minimum-norm lstsq when rank-deficient)", () => {
  for (const c of reference.linear) {
    const x = { data: c.x, rows: c.rows, cols: c.cols }, y = { data: c.y, rows: c.rows, cols: c.outs };
    const fit = fitLinearRegression(x, y);
    // The offset design (inputs near 10⁴, intercept near −3·10⁴) limits agreement to ~10⁻¹¹: predictions cancel.
    closeAll(fit.coef, c.coef, 1e-11, `${c.name} coef`);
    closeAll(fit.intercept, c.intercept, 1e-11, `${c.name} intercept`);
    assertEquals(fit.rank, c.rank, `${c.name} rank`);
    closeAll(fit.predict({ data: c.xTest, rows: c.xTest.length / c.cols, cols: c.cols }), c.predTest, 1e-11, c.name);
    assertAlmostEquals(linearR2(x, y), c.score, 1e-13, `${c.name} R²`);
    assertAlmostEquals(c.score, c.sklearnScore, 1e-10, `${c.name}: sklearn's own score`);
  }
});

Deno.test("linearR2: an invertible linear map of the inputs scores 1; a target that ignores them scores ≈ 0", () => {
  const rng = new Rng(3), n = 500;
  const x = new Float64Array(n * 3), y = new Float64Array(n * 3), noise = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const [a, b, c] = [rng.uniform(), rng.uniform(), rng.uniform()];
    x.set([a, b, c], i * 3);
    y.set([2 * a - b + 1, b + 3 * c, -a + 0.5 * c - 7], i * 3);
    noise[i] = rng.normal();
  }
  assertAlmostEquals(linearR2({ data: x, rows: n, cols: 3 }, { data: y, rows: n, cols: 3 }), 1, 1e-12);
  // E[R²] of an unrelated target is d/(n−1) ≈ 0.006.
  const r2 = linearR2({ data: x, rows: n, cols: 3 }, { data: noise, rows: n, cols: 1 });
  assert(r2 >= 0 && r2 < 0.03, `${r2}`);
});

Deno.test("fitLinearRegression rejects bad input before any work", () => {
  const ok = { data: [1, 2, 3, 4], rows: 2, cols: 2 };
  assertThrows(() => fitLinearRegression(ok, { data: [1, 2, 3], rows: 3, cols: 1 }), UsageError, "rows");
  assertThrows(() => fitLinearRegression({ data: [1, NaN, 3, 4], rows: 2, cols: 2 }, ok), UsageError, "non-finite");
  assertThrows(() => fitLinearRegression(ok, ok).predict({ data: [1, 2, 3], rows: 1, cols: 3 }), UsageError, "columns");
  assertThrows(() => linearR2({ data: [1], rows: 1, cols: 1 }, { data: [1], rows: 1, cols: 1 }), UsageError, "2 rows");
});
