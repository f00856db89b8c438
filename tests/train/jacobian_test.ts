import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import { EnsembleLinearVae } from "../../lib/models/ensemble.ts";
import { decoderJacobians, type Jacobians } from "../../lib/train/jacobian.ts";

await selectBackend("wasm");

/** M₁(x, y) = (4x + y, −3x + y, 5x − y), the hands-on decoder of §3.2.4 (rows = outputs). */
const M1 = [[4, 1], [-3, 1], [5, -1]];

/** The linear decoder z ↦ M z + c as a batch function (z `[n, d]` → `[n, rows]`). */
function linearDecoder(m: number[][], offset: number[] = m.map(() => 0)) {
  return (z: tf.Tensor2D) => tf.add(tf.matMul(z, tf.tensor2d(m), false, true), tf.tensor1d(offset)) as tf.Tensor2D;
}

function points(rng: Rng, n: number, d: number, scale = 1): Matrix {
  return { data: Float64Array.from(rng.normalArray(n * d, scale)), rows: n, cols: d };
}

/** Largest |a − b| over two Jacobian arrays. */
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let out = 0;
  for (let i = 0; i < a.length; i++) out = Math.max(out, Math.abs(a[i] - b[i]));
  return out;
}

/** The same matrix m at every one of n points, in the Jacobians layout. */
function repeated(m: number[][], n: number): Float64Array {
  const flat = m.flat();
  const out = new Float64Array(n * flat.length);
  for (let i = 0; i < n; i++) out.set(flat, i * flat.length);
  return out;
}

/** A 2 → 5 tanh → 3 MLP with its analytic Jacobian W₂ᵀ diag(1 − tanh²(W₁ᵀz + b₁)) W₁ᵀ in float64. */
function tanhMlp(rng: Rng) {
  const d = 2, hidden = 5, out = 3;
  const w1 = rng.normalArray(d * hidden), b1 = rng.normalArray(hidden, 0.5), w2 = rng.normalArray(hidden * out, 0.5);
  const b2 = rng.normalArray(out, 0.5);
  const decode = (z: tf.Tensor2D) =>
    tf.add(
      tf.matMul(
        tf.tanh(tf.add(tf.matMul(z, tf.tensor2d(w1, [d, hidden])), tf.tensor1d(b1))),
        tf.tensor2d(w2, [hidden, out]),
      ),
      tf.tensor1d(b2),
    ) as tf.Tensor2D;
  const jacobian = (z: ArrayLike<number>): number[][] => {
    const slope = Array.from({ length: hidden }, (_, h) => {
      let a = b1[h];
      for (let c = 0; c < d; c++) a += z[c] * w1[c * hidden + h];
      return 1 - Math.tanh(a) ** 2;
    });
    return Array.from({ length: out }, (_, r) =>
      Array.from({ length: d }, (_, c) => {
        let s = 0;
        for (let h = 0; h < hidden; h++) s += w2[h * out + r] * slope[h] * w1[c * hidden + h];
        return s;
      }));
  };
  return { decode, jacobian };
}

Deno.test("decoderJacobians of a linear map is the map at every point: exact by grad, to rounding by central", async () => {
  const rng = new Rng(1);
  const z = points(rng, 37, 2);
  const before = tf.memory().numTensors;
  const decode = linearDecoder(M1, [0.5, -1, 2]);
  const grad = await decoderJacobians(decode, z, { method: "grad" });
  const central = await decoderJacobians(decode, z, { method: "central" });
  const auto = await decoderJacobians(decode, z);
  assertEquals(tf.memory().numTensors, before);
  for (const j of [grad, central, auto]) assertEquals([j.n, j.rows, j.cols], [37, 3, 2]);
  const exact = repeated(M1, 37);
  assertEquals(maxDiff(grad.jac, exact), 0);
  assertEquals(auto.jac, grad.jac);
  assert(maxDiff(central.jac, exact) < 5e-4, `central off by ${maxDiff(central.jac, exact)}`);
});

Deno.test("grad and central differences agree with the analytic Jacobian of a small tanh MLP", async () => {
  const rng = new Rng(2);
  const { decode, jacobian } = tanhMlp(rng);
  const z = points(rng, 50, 2);
  const before = tf.memory().numTensors;
  const grad = await decoderJacobians(decode, z, { method: "grad", chunk: 16 });
  const central = await decoderJacobians(decode, z, { method: "central", chunk: 7 });
  assertEquals(tf.memory().numTensors, before);
  const analytic = new Float64Array(50 * 3 * 2);
  for (let i = 0; i < 50; i++) analytic.set(jacobian(Array.from(z.data).slice(i * 2, i * 2 + 2)).flat(), i * 6);
  assert(maxDiff(grad.jac, analytic) < 1e-5, `grad off by ${maxDiff(grad.jac, analytic)}`);
  // h = 1e-2·sd: the O(h²) truncation and float32 rounding of the outputs / 2h stay near 1e-4.
  assert(maxDiff(central.jac, analytic) < 1e-3, `central off by ${maxDiff(central.jac, analytic)}`);
  // Chunking does not change the result.
  const whole = await decoderJacobians(decode, z, { method: "grad" });
  assert(maxDiff(whole.jac, grad.jac) < 1e-6);
});

Deno.test("auto takes central differences above 16 outputs; a constant latent still gets a step", async () => {
  const rng = new Rng(3);
  const wide = Array.from({ length: 20 }, () => Array.from(rng.normalArray(3)));
  const z = points(rng, 12, 3);
  for (let i = 0; i < 12; i++) (z.data as Float64Array)[i * 3 + 1] = 0.25; // sd 0 → h = 1e-2
  const before = tf.memory().numTensors;
  const auto: Jacobians = await decoderJacobians(linearDecoder(wide), z);
  assertEquals([auto.rows, auto.cols], [20, 3]);
  assert(maxDiff(auto.jac, repeated(wide, 12)) < 2e-3, `off by ${maxDiff(auto.jac, repeated(wide, 12))}`);
  await assertRejects(() => decoderJacobians(linearDecoder(wide), z, { method: "grad" }), Error, "at most 16");
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("the Jacobian of a linear ensemble member's decoder is its weight matrix", async () => {
  const model = new EnsembleLinearVae({ seeds: [11, 12], input: 3, latents: 2, kind: "vae", betas: [0.01, 0.01] });
  const w = await model.params.get("dec/w0").data(); // [K, d, input]
  const z = points(new Rng(4), 9, 2);
  const before = tf.memory().numTensors;
  for (const k of [0, 1]) {
    const j = await decoderJacobians(model.memberDecoder(k), z);
    // ∂out_r/∂z_c = W[k][c][r].
    const expected = Array.from({ length: 3 }, (_, r) => [0, 1].map((c) => w[k * 6 + c * 3 + r]));
    assert(maxDiff(j.jac, repeated(expected, 9)) < 1e-6, `member ${k}`);
  }
  assertEquals(tf.memory().numTensors, before);
  model.dispose();
});

/** E‖Jε‖² with ε ~ N(0, diag σ²), by Monte Carlo. */
function expectedSquaredNorm(j: number[][], sigma: number[], rng: Rng, draws: number): number {
  let sum = 0;
  for (let t = 0; t < draws; t++) {
    const eps = sigma.map((s) => s * rng.normal());
    for (const row of j) sum += row.reduce((a, v, c) => a + v * eps[c], 0) ** 2;
  }
  return sum / draws;
}

Deno.test("E‖Jε‖² = Σ_j ‖c_j‖²σ_j² (5.18) by Monte Carlo, on Jacobians decoderJacobians returns", async () => {
  const rng = new Rng(5);
  const m = Array.from({ length: 4 }, () => Array.from(rng.normalArray(3)));
  const { jac } = await decoderJacobians(linearDecoder(m), points(rng, 1, 3));
  const j = [0, 1, 2, 3].map((r) => [0, 1, 2].map((c) => jac[r * 3 + c]));
  const sigma = [0.3, 1.2, 0.7];
  const closed = [0, 1, 2].reduce((a, c) => a + j.reduce((s, row) => s + row[c] ** 2, 0) * sigma[c] ** 2, 0);
  const draws = 200_000;
  const mc = expectedSquaredNorm(j, sigma, rng, draws);
  // ‖Jε‖² is a weighted χ²: its sd is below √2·closed, so the mean's sd is below √2·closed/√draws.
  assertAlmostEquals(mc, closed, 4 * Math.SQRT2 * closed / Math.sqrt(draws), `${mc} vs ${closed}`);
});

Deno.test("the M₁ example: column norms² 50 and 3, optimal σx²/σy² = 3/50, rotation by 45° costs 2.1389×", async () => {
  const z = points(new Rng(6), 3, 2);
  const columnNorms = async (m: number[][]) => {
    const { jac, rows } = await decoderJacobians(linearDecoder(m), z);
    return [0, 1].map((c) => Array.from({ length: rows }, (_, r) => jac[r * 2 + c] ** 2).reduce((a, b) => a + b));
  };
  const [a1, b1] = await columnNorms(M1);
  assertAlmostEquals(a1, 50, 1e-9);
  assertAlmostEquals(b1, 3, 1e-9);
  // min 50σx² + 3σy² at a fixed σxσy = p: σx² = p√(3/50), σy² = p√(50/3), the ratio 3/50, the value 2√150·p.
  const p = 0.01;
  let best = { value: Infinity, ratio: 0 };
  for (let t = -6; t <= 6; t += 1e-4) {
    const sx2 = p * Math.exp(t), sy2 = p * p / sx2;
    const value = a1 * sx2 + b1 * sy2;
    if (value < best.value) best = { value, ratio: sx2 / sy2 };
  }
  assertAlmostEquals(best.ratio, 3 / 50, 1e-3);
  assertAlmostEquals(best.value, 2 * Math.sqrt(150) * p, 1e-9);
  // M₂ = M₁R₄₅ᵀ: the same decoder on a latent rotated by 45°.
  const c = Math.SQRT1_2;
  const m2 = M1.map(([x, y]) => [c * x - c * y, c * x + c * y]);
  const [a2, b2] = await columnNorms(m2);
  assertAlmostEquals(a2, 61 / 2, 1e-5);
  assertAlmostEquals(b2, 45 / 2, 1e-5);
  const ratio = Math.sqrt(a2 * b2) / Math.sqrt(a1 * b1);
  assertAlmostEquals(ratio, 2.1389, 1e-4);
  // The bound coefficients of the thesis (3.21–3.22): 24.5 and 52.4.
  assertAlmostEquals(2 * Math.sqrt(a1 * b1), 24.5, 0.05);
  assertAlmostEquals(2 * Math.sqrt(a2 * b2), 52.4, 0.05);
});
