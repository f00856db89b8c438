import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  type CouplingWeights,
  flowForward,
  flowInverse,
  pivaeFlow,
  pivaeSynthetic,
  type RealNvpFlow,
} from "../../lib/data/pivae_synthetic.ts";

/** What make_pivae_reference.py computed with a numpy transcription of pi_vae.py. */
const REFERENCE = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_pivae.json", import.meta.url)));

function referenceFlow(): RealNvpFlow {
  const dims: number = REFERENCE.dims;
  const layers: CouplingWeights[] = REFERENCE.layers.map((w: Record<string, number[]>) => ({
    half: dims / 2,
    hidden: dims / 4,
    ...Object.fromEntries(Object.entries(w).map(([k, v]) => [k, Float64Array.from(v)])),
  }));
  return { layers, permutations: REFERENCE.permutations.map((p: number[]) => Int32Array.from(p)) };
}

Deno.test("the RealNVP flow matches the numpy transcription of pi_vae.py; its inverse restores the input", () => {
  const flow = referenceFlow();
  const dims: number = REFERENCE.dims;
  const x = { data: Float64Array.from(REFERENCE.x), rows: REFERENCE.x.length / dims, cols: dims };
  const y = flowForward(flow, x);
  REFERENCE.y.forEach((v: number, i: number) => assertAlmostEquals(y.data[i], v, 1e-12));
  const back = flowInverse(flow, y);
  x.data.forEach((v, i) => assertAlmostEquals(back.data[i], v, 1e-12));
});

Deno.test("the simulation flow: numpy's permutations for 100 dimensions, Glorot kernels, zero biases", () => {
  const flow = pivaeFlow(new Rng(1), 100);
  assertEquals(flow.layers.length, 8);
  assertEquals(flow.permutations.map((p) => Array.from(p)), REFERENCE.numpy_permutations_100);
  for (const layer of flow.layers) {
    assertEquals([layer.half, layer.hidden], [50, 25]);
    const limits = [[layer.w1, Math.sqrt(6 / 75)], [layer.w2, Math.sqrt(6 / 50)], [
      layer.w3,
      Math.sqrt(6 / 125),
    ]] as const;
    for (const [w, limit] of limits) {
      assert(w.every((v) => Math.abs(v) <= limit));
      // Uniform on ±limit: variance limit²/3.
      const variance = w.reduce((s, v) => s + v * v, 0) / w.length;
      assertAlmostEquals(variance, limit * limit / 3, 0.2 * limit * limit / 3);
    }
    assert([layer.b1, layer.b2, layer.b3].every((b) => b.every((v) => v === 0)));
  }
});

Deno.test("pi-VAE data: label and latent moments match the generative model; Poisson spikes match the rates", () => {
  const samples = 15_000, dims = 100;
  const data = pivaeSynthetic(new Rng(2), { samples, dims });
  assertEquals([data.u.length, data.z.rows, data.z.cols], [samples, samples, 2]);
  assertEquals([data.rates.rows, data.rates.cols, data.spikes.rows, data.spikes.cols], [samples, dims, samples, dims]);

  // u ~ U[0, 2π): mean π, variance π²/3.
  assert(data.u.every((v) => v >= 0 && v < 2 * Math.PI));
  const uMean = data.u.reduce((s, v) => s + v, 0) / samples;
  assertAlmostEquals(uMean, Math.PI, 4 * Math.PI / Math.sqrt(3 * samples));

  // Standardised residuals of z given u: mean 0, variance 1, uncorrelated (variances, not s.d.s, on the diagonal).
  const r1 = new Float64Array(samples), r2 = new Float64Array(samples);
  for (let t = 0; t < samples; t++) {
    const abs = Math.abs(Math.sin(data.u[t]));
    r1[t] = (data.z.data[2 * t] - data.u[t]) / Math.sqrt(0.6 - 0.3 * abs);
    r2[t] = (data.z.data[2 * t + 1] - 2 * Math.sin(data.u[t])) / Math.sqrt(0.3 * abs);
  }
  for (const r of [r1, r2]) {
    const mean = r.reduce((s, v) => s + v, 0) / samples;
    const variance = r.reduce((s, v) => s + (v - mean) ** 2, 0) / samples;
    assertAlmostEquals(mean, 0, 4 / Math.sqrt(samples));
    assertAlmostEquals(variance, 1, 4 * Math.sqrt(2 / samples));
  }
  const cross = r1.reduce((s, v, t) => s + v * r2[t], 0) / samples;
  assertAlmostEquals(cross, 0, 4 / Math.sqrt(samples));

  // Rates are exp(2.2 tanh(flow(z zero-padded))), checked on every 100th time point.
  const rows = Array.from({ length: samples / 100 }, (_, k) => 100 * k);
  const padded = new Float64Array(rows.length * dims);
  rows.forEach((t, k) => padded.set((data.z.data as Float64Array).subarray(2 * t, 2 * t + 2), k * dims));
  const mean = flowForward(data.flow, { data: padded, rows: rows.length, cols: dims });
  rows.forEach((t, k) => {
    for (let i = 0; i < dims; i++) {
      assertAlmostEquals(data.rates.data[t * dims + i], Math.exp(2.2 * Math.tanh(mean.data[k * dims + i])), 1e-12);
    }
  });
  assert(Array.from(data.rates.data).every((v) => v >= Math.exp(-2.2) && v <= Math.exp(2.2)));

  // Poisson: E[x − λ] = 0 and E[(x − λ)² − λ] = 0, with Var(x − λ) = λ and Var((x − λ)²) = λ + 2λ².
  let first = 0, second = 0, lambdaSum = 0, fourth = 0;
  const n = data.spikes.data.length;
  for (let i = 0; i < n; i++) {
    const lambda = data.rates.data[i], x = data.spikes.data[i];
    assert(Number.isInteger(x) && x >= 0);
    first += x - lambda;
    second += (x - lambda) ** 2 - lambda;
    lambdaSum += lambda;
    fourth += lambda + 2 * lambda * lambda;
  }
  assertAlmostEquals(first / n, 0, 4 * Math.sqrt(lambdaSum) / n);
  assertAlmostEquals(second / n, 0, 4 * Math.sqrt(fourth) / n);
});

Deno.test("the same seed gives the same data", () => {
  const a = pivaeSynthetic(new Rng(5), { samples: 50, dims: 8 });
  const b = pivaeSynthetic(new Rng(5), { samples: 50, dims: 8 });
  assertEquals(Array.from(a.spikes.data), Array.from(b.spikes.data));
  assertEquals(Array.from(a.z.data), Array.from(b.z.data));
});

Deno.test("bad sizes throw UsageError", () => {
  assertThrows(() => pivaeSynthetic(new Rng(1), { dims: 7 }), UsageError, "even integer");
  assertThrows(() => pivaeSynthetic(new Rng(1), { samples: 0 }), UsageError, "samples");
  assertThrows(
    () => flowForward(pivaeFlow(new Rng(1), 8), { data: new Float64Array(6), rows: 1, cols: 6 }),
    UsageError,
    "[rows, 8]",
  );
});
