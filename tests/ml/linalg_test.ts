import { assert, assertAlmostEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { covariance, pcaWhiten } from "../../lib/ml/linalg.ts";

Deno.test("pcaWhiten: zero mean and identity sample covariance; the first component is the direction of most variance", () => {
  const rng = new Rng(5), n = 4000, dim = 3;
  // x = A s with independent sources of s.d. 1 and a mixing whose first column dominates.
  const a = [[3, 0.5, 0.1], [1, -1, 0.2], [0.5, 0.3, -0.7]];
  const x = new Float32Array(n * dim);
  for (let t = 0; t < n; t++) {
    const s = [rng.normal(), rng.normal(), rng.normal()];
    for (let r = 0; r < dim; r++) x[t * dim + r] = 5 + a[r][0] * s[0] + a[r][1] * s[1] + a[r][2] * s[2];
  }
  const before = covariance({ data: x, rows: n, cols: dim });
  const w = Float32Array.from(x);
  pcaWhiten(w, dim);
  const cov = covariance({ data: w, rows: n, cols: dim });
  for (let i = 0; i < dim; i++) {
    let mean = 0;
    for (let t = 0; t < n; t++) mean += w[t * dim + i] / n;
    assertAlmostEquals(mean, 0, 1e-6);
    for (let j = 0; j < dim; j++) assertAlmostEquals(cov[i][j], i === j ? 1 : 0, 1e-5);
  }
  // cov(x, u_k) = √λ_k v_k, so Σ_c cov(x_c, u_k)² is the k-th component's variance λ_k: decreasing, the first
  // equal to the largest eigenvalue of the covariance, found here by power iteration.
  const lambdas = [0, 1, 2].map((k) => {
    let total = 0;
    for (let c = 0; c < dim; c++) {
      let cross = 0;
      for (let t = 0; t < n; t++) cross += (x[t * dim + c] - 5) * w[t * dim + k];
      total += (cross / (n - 1)) ** 2;
    }
    return total;
  });
  assert(lambdas[0] > lambdas[1] && lambdas[1] > lambdas[2], lambdas.join(", "));
  let v = [1, 1, 1], top = 0;
  for (let i = 0; i < 200; i++) {
    const next = before.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]);
    top = Math.hypot(...next);
    v = next.map((e) => e / top);
  }
  // The whitened values are float32: agreement to their rounding.
  assertAlmostEquals(lambdas[0] / top, 1, 1e-5);
});
