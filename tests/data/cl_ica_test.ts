import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { invertibleMlp, sampleConditional, sampleMarginal, sampleVmf } from "../../lib/data/cl_ica.ts";
import { conditionNumber } from "../../lib/data/laplace_ar.ts";

/** What make_cl_ica_reference.py computed with scipy and numpy. */
const REFERENCE = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_cl_ica.json", import.meta.url)));

/** Mean and variance of a sample. */
function moments(values: ArrayLike<number>): { mean: number; variance: number } {
  let mean = 0;
  for (let i = 0; i < values.length; i++) mean += values[i] / values.length;
  let variance = 0;
  for (let i = 0; i < values.length; i++) variance += (values[i] - mean) ** 2 / values.length;
  return { mean, variance };
}

Deno.test("vMF: E⟨x, μ⟩ and E⟨x, μ⟩² match the Bessel-ratio closed forms; x has unit norm", () => {
  const rng = new Rng(11);
  const draws = 20_000;
  for (const { n, kappa, mean_cos: meanCos, mean_cos_sq: meanCosSq } of REFERENCE.vmf) {
    // A random unit mean direction, so the check does not rely on μ being a basis vector.
    const mu = sampleMarginal(rng, "sphere", n, 1).data as Float64Array;
    const cos = new Float64Array(draws);
    let orthogonalSq = 0;
    for (let t = 0; t < draws; t++) {
      const x = sampleVmf(rng, mu, kappa);
      let dot = 0, norm = 0;
      for (let i = 0; i < n; i++) {
        dot += x[i] * mu[i];
        norm += x[i] * x[i];
      }
      assertAlmostEquals(norm, 1, 1e-12);
      cos[t] = dot;
      orthogonalSq += (1 - dot * dot) / draws;
    }
    const { mean } = moments(cos);
    const variance = meanCosSq - meanCos * meanCos;
    // 4 standard errors of the mean of w and of w².
    assertAlmostEquals(mean, meanCos, 4 * Math.sqrt(variance / draws), `n ${n} κ ${kappa}: E⟨x, μ⟩`);
    assertAlmostEquals(1 - orthogonalSq, meanCosSq, 4 * Math.sqrt(2 * variance / draws) + 1e-4, `n ${n} κ ${kappa}`);
  }
});

Deno.test("vMF conditional on the sphere: unit norms, concentration around each row", () => {
  const rng = new Rng(12);
  const z = sampleMarginal(rng, "sphere", 10, 4_000);
  const zt = sampleConditional(rng, "sphere", z, { kind: "vmf", scale: 10 });
  let meanCos = 0;
  for (let t = 0; t < z.rows; t++) {
    let dot = 0, norm = 0;
    for (let i = 0; i < 10; i++) {
      dot += z.data[t * 10 + i] * zt.data[t * 10 + i];
      norm += zt.data[t * 10 + i] ** 2;
    }
    assertAlmostEquals(norm, 1, 1e-12);
    meanCos += dot / z.rows;
  }
  const ref = REFERENCE.vmf.find((r: { n: number; kappa: number }) => r.n === 10 && r.kappa === 10);
  assertAlmostEquals(meanCos, ref.mean_cos, 4 * Math.sqrt((ref.mean_cos_sq - ref.mean_cos ** 2) / z.rows));
});

Deno.test("marginals: box in [0, 1] with mean ½ and variance 1/12, sphere norms 1, unbounded N(0, 1)", () => {
  const rng = new Rng(13);
  const count = 50_000;
  const box = sampleMarginal(rng, "box", 4, count);
  assert(Array.from(box.data).every((v) => v >= 0 && v < 1));
  const b = moments(box.data);
  assertAlmostEquals(b.mean, 0.5, 4 * Math.sqrt(1 / 12 / (4 * count)));
  assertAlmostEquals(b.variance, 1 / 12, 4 * Math.sqrt(1 / 180 / (4 * count)));
  const sphere = sampleMarginal(rng, "sphere", 7, 1_000);
  for (let t = 0; t < 1_000; t++) {
    let norm = 0;
    for (let i = 0; i < 7; i++) norm += sphere.data[t * 7 + i] ** 2;
    assertAlmostEquals(norm, 1, 1e-12);
  }
  // Uniform on S⁶: every coordinate has mean 0 and variance 1/7.
  const s = moments(Array.from({ length: 1_000 }, (_, t) => sphere.data[t * 7 + 3]));
  assertAlmostEquals(s.variance, 1 / 7, 0.02);
  const unbounded = moments(sampleMarginal(rng, "unbounded", 3, count).data);
  assertAlmostEquals(unbounded.mean, 0, 4 / Math.sqrt(3 * count));
  assertAlmostEquals(unbounded.variance, 1, 4 * Math.sqrt(2 / (3 * count)));
});

Deno.test("unbounded Laplace and Normal conditionals: zero-mean noise of variance 2λ² and σ², E|·| = λ", () => {
  const rng = new Rng(14);
  const count = 40_000, scale = 0.3;
  const z = sampleMarginal(rng, "unbounded", 2, count);
  for (const kind of ["laplace", "normal"] as const) {
    const zt = sampleConditional(rng, "unbounded", z, { kind, scale });
    const noise = Float64Array.from(zt.data, (v, i) => v - z.data[i]);
    const { mean, variance } = moments(noise);
    const expected = kind === "laplace" ? 2 * scale * scale : scale * scale;
    assertAlmostEquals(mean, 0, 4 * Math.sqrt(expected / noise.length));
    // Var of the sample variance: (μ₄ − σ⁴)/N with kurtosis 6 (Laplace) or 3 (Normal).
    const kurtosis = kind === "laplace" ? 6 : 3;
    assertAlmostEquals(variance, expected, 4 * expected * Math.sqrt((kurtosis - 1) / noise.length));
    if (kind === "laplace") {
      const absMean = moments(noise.map(Math.abs)).mean;
      assertAlmostEquals(absMean, scale, 4 * scale / Math.sqrt(noise.length));
    }
  }
});

Deno.test("box conditionals stay in [0, 1] and have the truncated distributions' mean and variance", () => {
  const rng = new Rng(15);
  const rows = 20_000;
  for (const { kind, scale, m, mean, var: variance } of REFERENCE.truncated) {
    const z = { data: new Float64Array(rows).fill(m), rows, cols: 1 };
    const zt = sampleConditional(rng, "box", z, { kind, scale });
    assert(Array.from(zt.data).every((v) => v >= 0 && v <= 1), `${kind} around ${m} left the box`);
    const got = moments(zt.data);
    assertAlmostEquals(got.mean, mean, 4 * Math.sqrt(variance / rows), `${kind} around ${m}: mean`);
    assertAlmostEquals(got.variance, variance, 0.05 * variance, `${kind} around ${m}: variance`);
  }
  // Many dimensions at once, anchors near the faces: every coordinate stays inside.
  const z = sampleMarginal(rng, "box", 10, 2_000);
  const zt = sampleConditional(rng, "box", z, { kind: "laplace", scale: 0.05 });
  assert(Array.from(zt.data).every((v) => v >= 0 && v <= 1));
});

Deno.test("sphere Laplace/Normal conditionals are projected back to unit norm", () => {
  const rng = new Rng(16);
  const z = sampleMarginal(rng, "sphere", 5, 500);
  for (const kind of ["laplace", "normal"] as const) {
    const zt = sampleConditional(rng, "sphere", z, { kind, scale: 0.05 });
    for (let t = 0; t < 500; t++) {
      let norm = 0;
      for (let i = 0; i < 5; i++) norm += zt.data[t * 5 + i] ** 2;
      assertAlmostEquals(norm, 1, 1e-12);
    }
  }
});

Deno.test("condition numbers agree with numpy's np.linalg.cond", () => {
  for (const { n, a, cond } of REFERENCE.cond_matrices) {
    assertAlmostEquals(conditionNumber(Float64Array.from(a), n), cond, 1e-9 * cond);
  }
});

Deno.test("the mixing network's condition bound is the pool's quantile; numpy's distribution of the draws", () => {
  const draws = 20_000;
  for (const { n, q, values } of REFERENCE.cond_quantiles) {
    if (n !== 5) continue;
    q.forEach((ratio: number, k: number) => {
      const g = invertibleMlp(new Rng(17 + k), n, { draws, ratio, layers: 2 });
      // Sampling error of an empirical quantile of 20,000 draws: a few percent at most in the lower tail.
      assertAlmostEquals(g.threshold, values[k], 0.02 * values[k], `n ${n}: ${ratio} quantile`);
      for (const c of g.condition) assert(c <= g.threshold);
      g.weights.forEach((w, l) => {
        assertAlmostEquals(conditionNumber(w, n), g.condition[l], 1e-12);
        for (let c = 0; c < n; c++) {
          let norm = 0;
          for (let r = 0; r < n; r++) norm += w[r * n + c] ** 2;
          assertAlmostEquals(norm, 1, 1e-12);
        }
      });
    });
  }
});

Deno.test("the default bound is the minimum of the pool, below numpy's 1% quantile", () => {
  const g = invertibleMlp(new Rng(18), 3, { draws: 2_000 });
  const q1 = REFERENCE.cond_quantiles.find((r: { n: number }) => r.n === 3).values[0];
  assert(g.threshold < q1, `${g.threshold} vs 1% quantile ${q1}`);
  assert(g.condition.length === 3 && g.condition.every((c) => c <= g.threshold));
});

Deno.test("g is A₃ σ(A₂ σ(A₁ z)) with a leaky ReLU of slope 0.2, as a TF.js evaluation of the same weights", () => {
  const n = 4;
  const g = invertibleMlp(new Rng(19), n, { draws: 200 });
  const z = sampleMarginal(new Rng(20), "box", n, 64);
  const x = g.apply(z);
  const before = tf.memory().numTensors;
  const expected = tf.tidy(() => {
    let h = tf.tensor2d(Float32Array.from(z.data), [64, n]);
    g.weights.forEach((w, l) => {
      if (l > 0) h = tf.leakyRelu(h, 0.2);
      h = tf.matMul(h, tf.tensor2d(Float32Array.from(w), [n, n]), false, true);
    });
    return h.dataSync();
  });
  assert(tf.memory().numTensors === before);
  for (let i = 0; i < expected.length; i++) assertAlmostEquals(x.data[i], expected[i], 1e-5);
});

Deno.test("bad input throws UsageError before any work", () => {
  const rng = new Rng(21);
  const box = sampleMarginal(rng, "box", 3, 2);
  assertThrows(() => sampleConditional(rng, "box", box, { kind: "vmf", scale: 1 }), UsageError, "sphere only");
  assertThrows(() => sampleConditional(rng, "box", box, { kind: "laplace", scale: 0 }), UsageError, "> 0");
  assertThrows(
    () => sampleConditional(rng, "sphere", box, { kind: "vmf", scale: 1 }),
    UsageError,
    "norm 1",
  );
  assertThrows(() => sampleMarginal(rng, "cube" as "box", 3, 2), UsageError, "allowed: box, sphere, unbounded");
  assertThrows(() => sampleVmf(rng, Float64Array.of(1, 1), 1), UsageError, "norm 1");
  assertThrows(() => invertibleMlp(rng, 0), UsageError, "n (latent dimensions)");
  assertThrows(() => invertibleMlp(rng, 3, { ratio: 1 }), UsageError, "ratio");
});
