import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  fullCovarianceKl,
  lowerTriangular,
  sampleFullCovariance,
  triangleIndex,
  triangularCount,
} from "../../lib/models/full_covariance.ts";

await selectBackend("wasm");

/** L as nested arrays from a raw triangle, in float64 (the documented layout). */
function lowerFrom(raw: ArrayLike<number>, d: number): number[][] {
  return Array.from(
    { length: d },
    (_, i) =>
      Array.from(
        { length: d },
        (_, j) => j > i ? 0 : j === i ? Math.exp(raw[triangleIndex(i, j)]) : raw[triangleIndex(i, j)],
      ),
  );
}

/** KL(N(μ, LLᵀ) ‖ N(0, I)) in float64 from the raw triangle. */
function klFrom(mean: ArrayLike<number>, raw: ArrayLike<number>, d: number): number {
  const l = lowerFrom(raw, d);
  let sum = -d;
  for (let i = 0; i < d; i++) {
    sum += mean[i] ** 2 - 2 * Math.log(l[i][i]);
    for (let j = 0; j < d; j++) sum += l[i][j] ** 2;
  }
  return sum / 2;
}

Deno.test("triangle sizes and the row-major lower-triangle layout with exp on the diagonal", async () => {
  assertEquals([1, 2, 3, 4, 10].map(triangularCount), [1, 3, 6, 10, 55]);
  const before = tf.memory().numTensors;
  const raw = [0.1, -0.4, 0.3, 1.5, -2, -0.2];
  const l = tf.tidy(() => lowerTriangular(tf.tensor2d([raw, raw.map((v) => -v)], [2, 6]), 3));
  assertEquals(l.shape, [2, 3, 3]);
  const values = await l.data();
  l.dispose();
  for (const [row, sign] of [[0, 1], [1, -1]]) {
    const expected = lowerFrom(raw.map((v) => sign * v), 3).flat();
    expected.forEach((v, i) => assertAlmostEquals(values[row * 9 + i], v, 1e-6, `row ${row} entry ${i}`));
  }
  // Leading axes of any rank.
  const many = tf.tidy(() => lowerTriangular(tf.zeros([4, 5, 3]), 2));
  assertEquals(many.shape, [4, 5, 2, 2]);
  assertEquals(Array.from(await many.data()).slice(0, 4), [1, 0, 0, 1]);
  many.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("the full-covariance KL equals the diagonal KL (2.6) for a diagonal L and vanishes at N(0, I)", async () => {
  const rng = new Rng(4);
  const d = 4, rows = 6;
  const mean = rng.normalArray(rows * d), logSd = rng.normalArray(rows * d, 0.7);
  // A raw triangle with zeros off the diagonal and log σ on it: L = diag(σ).
  const raw = new Float32Array(rows * triangularCount(d));
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < d; j++) raw[r * triangularCount(d) + triangleIndex(j, j)] = logSd[r * d + j];
  }
  const before = tf.memory().numTensors;
  const kl = tf.tidy(() =>
    fullCovarianceKl(tf.tensor2d(mean, [rows, d]), lowerTriangular(tf.tensor2d(raw, [rows, triangularCount(d)]), d))
  );
  assertEquals(kl.shape, [rows]);
  const values = await kl.data();
  kl.dispose();
  for (let r = 0; r < rows; r++) {
    let diagonal = 0;
    for (let j = 0; j < d; j++) {
      const mu = mean[r * d + j], logVar = 2 * logSd[r * d + j];
      diagonal += 0.5 * (mu * mu + Math.exp(logVar) - logVar - 1);
    }
    assertAlmostEquals(values[r], diagonal, 1e-4 * Math.max(1, diagonal), `row ${r}`);
  }
  const zero = tf.tidy(() => fullCovarianceKl(tf.zeros([3]), tf.eye(3)));
  assertAlmostEquals((await zero.data())[0], 0, 1e-7);
  zero.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("μ + Lε over 100,000 draws has mean μ and covariance LLᵀ", async () => {
  const d = 3, n = 100_000;
  const raw = [0.2, 0.6, -0.3, -0.5, 0.4, 0.1], mu = [1, -2, 0.5];
  const l = lowerFrom(raw, d);
  const rng = new Rng(5);
  const before = tf.memory().numTensors;
  const z = tf.tidy(() => {
    const lt = lowerTriangular(tf.tile(tf.tensor2d([raw]), [n, 1]), d);
    return sampleFullCovariance(tf.tile(tf.tensor2d([mu]), [n, 1]), lt, tf.tensor2d(rng.normalArray(n * d), [n, d]));
  });
  assertEquals(z.shape, [n, d]);
  const values = await z.data();
  z.dispose();
  assertEquals(tf.memory().numTensors, before);
  const mean = [0, 0, 0];
  for (let i = 0; i < n * d; i++) mean[i % d] += values[i] / n;
  for (let j = 0; j < d; j++) assertAlmostEquals(mean[j], mu[j], 0.02, `mean ${j}`);
  for (let a = 0; a < d; a++) {
    for (let b = 0; b < d; b++) {
      let cov = 0;
      for (let i = 0; i < n; i++) cov += (values[i * d + a] - mean[a]) * (values[i * d + b] - mean[b]);
      cov /= n - 1;
      let expected = 0;
      for (let k = 0; k < d; k++) expected += l[a][k] * l[b][k];
      // Sampling error of a covariance entry: about √((Σaa Σbb + Σab²)/n) ≤ 0.01 here.
      assertAlmostEquals(cov, expected, 0.03, `cov[${a}][${b}] ${cov} vs ${expected}`);
    }
  }
});

Deno.test("the KL through lowerTriangular: value and gradients match float64 finite differences", async () => {
  const d = 3, count = triangularCount(d);
  const mu = [0.3, -0.7, 1.1], raw = [0.2, 0.6, -0.3, -0.5, 0.4, 0.1];
  const before = tf.memory().numTensors;
  const f = (m: tf.Tensor, r: tf.Tensor) => fullCovarianceKl(m, lowerTriangular(r, d)).sum() as tf.Scalar;
  const { value, grads } = tf.tidy(() => {
    const [gm, gr] = tf.grads(f)([tf.tensor1d(mu), tf.tensor1d(raw)]);
    return { value: f(tf.tensor1d(mu), tf.tensor1d(raw)), grads: [gm, gr] };
  });
  assertAlmostEquals((await value.data())[0], klFrom(mu, raw, d), 1e-5);
  const [gradMean, gradRaw] = await Promise.all(grads.map((g) => g.data()));
  tf.dispose([value, ...grads]);
  assertEquals(tf.memory().numTensors, before);
  const h = 1e-6;
  for (let j = 0; j < d; j++) {
    const plus = mu.map((v, i) => i === j ? v + h : v), minus = mu.map((v, i) => i === j ? v - h : v);
    assertAlmostEquals(gradMean[j], (klFrom(plus, raw, d) - klFrom(minus, raw, d)) / (2 * h), 1e-4, `∂/∂μ${j}`);
  }
  for (let t = 0; t < count; t++) {
    const plus = raw.map((v, i) => i === t ? v + h : v), minus = raw.map((v, i) => i === t ? v - h : v);
    assertAlmostEquals(gradRaw[t], (klFrom(mu, plus, d) - klFrom(mu, minus, d)) / (2 * h), 1e-4, `∂/∂raw${t}`);
  }
  // A large off-diagonal entry must not turn the gradient into NaN (exp only sees the diagonal).
  const big = tf.tidy(() => tf.grad((r: tf.Tensor) => f(tf.tensor1d(mu), r))(tf.tensor1d([0, 200, 0, 0, 0, 0])));
  assert((await big.data()).every(Number.isFinite));
  big.dispose();
});
