import { REFERENCE } from "./helpers.ts";
import { assertAlmostEquals, assertThrows } from "../assert.ts";
import {
  gaussianTotalCorrelation,
  gaussianWassersteinCorrelation,
  gaussianWassersteinCorrelationNorm,
  unsupervisedScores,
} from "../../lib/metrics/unsupervised.ts";
import { covariance, logAbsDet, symmetricEigen, traceSqrtmScaled } from "../../lib/ml/linalg.ts";
import type { Matrix } from "../../lib/core/matrix.ts";

/** Row-major Matrix from nested rows. */
function fromRows(rows: number[][]): Matrix {
  return { data: Float64Array.from(rows.flat()), rows: rows.length, cols: rows[0].length };
}

function identity(n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

Deno.test("Gaussian total correlation matches the disentanglement_lib oracles", () => {
  assertAlmostEquals(gaussianTotalCorrelation(identity(5)), 0, 1e-12);
  assertAlmostEquals(gaussianTotalCorrelation([[1, 0.9], [0.9, 1]]), -0.5 * Math.log(1 - 0.81), 1e-12);
});

Deno.test("Gaussian Wasserstein correlation matches the oracles and a 2×2 closed form", () => {
  assertAlmostEquals(gaussianWassersteinCorrelation(identity(5)), 0, 1e-12);
  const c = [[2, 0.9], [0.9, 1.5]];
  // W = tr(C + D − 2 sqrtm(C·D)) with D = diag(diag C); for a 2×2 M with
  // positive eigenvalues, tr sqrtm(M) = sqrt(tr M + 2 sqrt(det M)).
  const trM = 2 * 2 + 1.5 * 1.5;
  const detM = (2 * 1.5 - 0.81) * 2 * 1.5;
  const expected = 2 * (2 + 1.5) - 2 * Math.sqrt(trM + 2 * Math.sqrt(detM));
  assertAlmostEquals(gaussianWassersteinCorrelation(c), expected, 1e-12);
  assertAlmostEquals(gaussianWassersteinCorrelationNorm(c), expected / 3.5, 1e-12);
});

Deno.test("linear algebra helpers: covariance, log-determinant, Jacobi eigenvalues", () => {
  const cov = covariance(fromRows([[1, 2], [2, 1], [3, 5], [4, 4]]));
  // np.cov of columns [1,2,3,4] and [2,1,5,4] (ddof = 1).
  assertAlmostEquals(cov[0][0], 5 / 3, 1e-12);
  assertAlmostEquals(cov[0][1], 5 / 3, 1e-12);
  assertAlmostEquals(cov[1][0], 5 / 3, 1e-12);
  assertAlmostEquals(cov[1][1], 10 / 3, 1e-12);
  assertAlmostEquals(logAbsDet([[0, 2], [3, 1]]), Math.log(6), 1e-12);
  const a = [[4, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 1]];
  const { values, vectors } = symmetricEigen(a);
  // A v = λ v for every pair.
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < 3; i++) {
      const av = a[i].reduce((s, aij, j) => s + aij * vectors[j][k], 0);
      assertAlmostEquals(av, values[k] * vectors[i][k], 1e-12);
    }
  }
  assertAlmostEquals(traceSqrtmScaled(identity(3), [4, 9, 16]), 9, 1e-12);
});

Deno.test("unsupervisedScores validates its inputs", () => {
  assertThrows(() => unsupervisedScores(fromRows([[1, 2]])), Error, "at least 2 rows");
  assertThrows(() => unsupervisedScores(fromRows([[1], [2]])), Error, "at least 2 codes");
});

for (const dataset of REFERENCE) {
  Deno.test(`unsupervised scores match disentanglement_lib on ${dataset.name}`, () => {
    const scores = unsupervisedScores(fromRows(dataset.train_codes));
    for (const key of Object.keys(scores) as (keyof typeof scores)[]) {
      const expected = dataset.expected[key];
      // Measured ≤ 5.3e-15 (the Wasserstein correlation: scipy's Schur sqrtm against the eigen route here).
      assertAlmostEquals(scores[key], expected, 5e-14 * Math.max(1, Math.abs(expected)), key);
    }
  });
}
