import { assert, assertAlmostEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  conditionNumber,
  conditionThreshold,
  laplaceArSources,
  mix,
  randomMixingMlp,
  randomOrthogonal,
  smoothLeakyRelu,
} from "../../lib/data/laplace_ar.ts";

Deno.test("legacy Laplace AR(1) sources have the process's autocorrelation, variance and innovations", () => {
  const n = 100_000, rho = 0.7;
  const s = laplaceArSources(new Rng(1), n, 1, { rho, generator: "legacy" });
  let mean = 0, variance = 0, lag = 0, absInnovation = 0;
  for (let t = 0; t < n; t++) mean += s[t] / n;
  for (let t = 0; t < n; t++) variance += (s[t] - mean) ** 2 / n;
  for (let t = 1; t < n; t++) {
    lag += (s[t] - mean) * (s[t - 1] - mean) / (n - 1);
    absInnovation += Math.abs(s[t] - rho * s[t - 1]) / (n - 1);
  }
  assertAlmostEquals(lag / variance, rho, 0.01);
  assertAlmostEquals(variance, 2 / (1 - rho * rho), 0.1); // Var Laplace(1) = 2
  assertAlmostEquals(absInnovation, 1, 0.01); // E|Laplace(1)| = 1
});

Deno.test("randomOrthogonal is orthogonal; the mixing MLP is well conditioned and standardises x", () => {
  const q = randomOrthogonal(new Rng(2), 6);
  for (let i = 0; i < 6; i++) {
    for (let j = 0; j < 6; j++) {
      let dot = 0;
      for (let k = 0; k < 6; k++) dot += q[i * 6 + k] * q[j * 6 + k];
      assertAlmostEquals(dot, i === j ? 1 : 0, 1e-12);
    }
  }
  const rng = new Rng(3);
  const x = mix(randomMixingMlp(rng, 5, 3, { generator: "legacy" }), laplaceArSources(rng, 5000, 5));
  for (let c = 0; c < 5; c++) {
    let mean = 0, sq = 0;
    for (let t = 0; t < 5000; t++) {
      mean += x[t * 5 + c] / 5000;
      sq += x[t * 5 + c] ** 2 / 5000;
    }
    assertAlmostEquals(mean, 0, 1e-5);
    assertAlmostEquals(sq, 1, 1e-4);
  }
});

Deno.test("the smooth leaky ReLU is increasing with slopes between α and 1", () => {
  for (let x = -20; x <= 20; x += 0.5) {
    const slope = (smoothLeakyRelu(x + 1e-4, 0.2) - smoothLeakyRelu(x - 1e-4, 0.2)) / 2e-4;
    assert(slope >= 0.2 - 1e-6 && slope <= 1 + 1e-6, `slope ${slope} at ${x}`);
  }
  assertAlmostEquals(smoothLeakyRelu(0, 0.2), 0.8 * Math.log(2), 1e-12);
});

/** What make_laplace_ar_reference.py measured with numpy on the reference code's procedure. */
const REFERENCE = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_laplace_ar.json", import.meta.url)));

Deno.test("reference sources: unit variance, the AR coefficient, Laplace innovations of variance 1 − ρ²", () => {
  const n = 100_000, rho = 0.7;
  const s = laplaceArSources(new Rng(1), n, 1, { rho });
  let mean = 0, variance = 0, lag = 0, absInnovation = 0;
  for (let t = 0; t < n; t++) mean += s[t] / n;
  for (let t = 0; t < n; t++) variance += (s[t] - mean) ** 2 / n;
  for (let t = 1; t < n; t++) {
    lag += s[t] * s[t - 1] / (n - 1);
    absInnovation += Math.abs(s[t] - rho * s[t - 1]) / (n - 1);
  }
  // Standardised: mean 0 and variance 1 to float32 rounding.
  assertAlmostEquals(mean, 0, 1e-6);
  assertAlmostEquals(variance, 1, 1e-5);
  assertAlmostEquals(lag, rho, 0.01);
  // E|Laplace(b)| = b with b = √((1 − ρ²)/2), in units of the process's s.d. (1 before standardising).
  assertAlmostEquals(absInnovation, Math.sqrt((1 - rho * rho) / 2), 0.01);
});

Deno.test("reference mixing: unit-norm columns, condition numbers under numpy's 25th-percentile threshold", () => {
  for (const dim of [4, 20]) {
    const threshold = conditionThreshold(dim);
    // A 25th percentile of 10,000 draws has a sampling spread near 1%.
    assertAlmostEquals(threshold / REFERENCE.condition_threshold[String(dim)], 1, 0.03);
    const { weights } = randomMixingMlp(new Rng(dim), dim, 3);
    for (const w of weights) {
      assert(conditionNumber(w, dim) <= threshold);
      for (let c = 0; c < dim; c++) {
        let norm = 0;
        for (let r = 0; r < dim; r++) norm += w[r * dim + c] ** 2;
        assertAlmostEquals(norm, 1, 1e-12);
      }
    }
  }
});

Deno.test("reference mixing: each layer's input s.d. as numpy measures it (L = 5, d = 20)", () => {
  const dim = 20, n = 20_000, draws = 10;
  const mean = new Float64Array(5);
  for (let draw = 0; draw < draws; draw++) {
    const rng = new Rng(100 + draw);
    let h = Float64Array.from(laplaceArSources(rng, n, dim));
    const { weights, alpha } = randomMixingMlp(rng, dim, 5);
    weights.forEach((w, layer) => {
      let sds = 0;
      for (let c = 0; c < dim; c++) {
        let m = 0, sq = 0;
        for (let t = 0; t < n; t++) m += h[t * dim + c] / n;
        for (let t = 0; t < n; t++) sq += (h[t * dim + c] - m) ** 2 / n;
        sds += Math.sqrt(sq) / dim;
      }
      mean[layer] += sds / draws;
      const next = new Float64Array(n * dim);
      for (let t = 0; t < n; t++) {
        for (let r = 0; r < dim; r++) {
          let sum = 0;
          for (let c = 0; c < dim; c++) sum += w[r * dim + c] * h[t * dim + c];
          next[t * dim + r] = layer < 4 ? smoothLeakyRelu(sum, alpha) : sum;
        }
      }
      h = next;
    });
  }
  // Ten draws each side: within the spread numpy's draws showed.
  mean.forEach((sd, layer) =>
    assertAlmostEquals(sd, REFERENCE.layer_input_sd_l5_d20[layer], 0.03, `layer ${layer + 1}`)
  );
});
