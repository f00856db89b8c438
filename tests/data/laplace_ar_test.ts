import { assert, assertAlmostEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  laplaceArSources,
  mix,
  randomMixingMlp,
  randomOrthogonal,
  smoothLeakyRelu,
} from "../../lib/data/laplace_ar.ts";

Deno.test("Laplace AR(1) sources have the process's autocorrelation, variance and innovations", () => {
  const n = 100_000, rho = 0.7;
  const s = laplaceArSources(new Rng(1), n, 1, { rho });
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
  const x = mix(randomMixingMlp(rng, 5, 3), laplaceArSources(rng, 5000, 5));
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
