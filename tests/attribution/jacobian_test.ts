/**
 * Jacobian attribution: the analytic MLP Jacobian against central
 * differences, the penalty against ½‖J‖²_F and its weight gradient against
 * finite differences of a float64 evaluation, the pseudo-inverse against a
 * matrix of known SVD, and the attribution baselines against closed forms.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  attributionAuc,
  type DenseActivation,
  type DenseLayer,
  featureAblation,
  integratedGradients,
  integratedGradientsPerSample,
  jacobianPenalty,
  mlpForward,
  mlpForward64,
  mlpJacobian,
  neuronGradient,
  pinv,
  pinvMap,
  sphereDirections,
} from "../../lib/attribution/jacobian.ts";

await selectBackend("cpu");

/** A random network with the given widths and activations (tensors the caller disposes). */
function randomNet(rng: Rng, widths: number[], activations: DenseActivation[], scale = 1): DenseLayer[] {
  return activations.map((activation, l) => {
    const fanIn = widths[l];
    const w = Float32Array.from({ length: fanIn * widths[l + 1] }, () => (scale * rng.normal()) / Math.sqrt(fanIn));
    const b = Float32Array.from({ length: widths[l + 1] }, () => 0.3 * rng.normal());
    return { w: tf.tensor2d(w, [fanIn, widths[l + 1]]), b: tf.tensor1d(b), activation, slope: 0.1 };
  });
}

function dispose(layers: DenseLayer[]): void {
  for (const layer of layers) tf.dispose([layer.w, layer.b]);
}

function randomMatrix(rng: Rng, rows: number, cols: number, scale = 1): Matrix {
  return { data: Float64Array.from({ length: rows * cols }, () => scale * rng.normal()), rows, cols };
}

const ALL: DenseActivation[] = ["gelu", "scaled_tanh", "leaky_relu", "linear"];

Deno.test("the float64 GELU matches x·Φ(x) from Python's math.erf on both erf branches", async () => {
  const layers = [{ w: tf.tensor2d([[1]]), b: tf.tensor1d([0]), activation: "gelu" as const }];
  // x·½(1 + erf(x/√2)) by /usr/bin/python3 math.erf (x/√2 ≥ 2.5 takes the continued fraction).
  const expected: [number, number][] = [
    [1, 0.8413447460685429],
    [-2, -0.04550026389635842],
    [3, 2.99595030590511],
    [-4, -0.00012668496733247991],
    [0.3, 0.18537342665668577],
    [2.4, 2.380325913780969],
    [3.5, 3.4991857982233756],
    [3.6, 3.599427209075433],
    [-3.55, -0.0006837852935065835],
    [5, 4.999998566742141],
  ];
  const y = await mlpForward64(layers, { data: expected.map(([x]) => x), rows: expected.length, cols: 1 });
  expected.forEach(([x, v], i) => assertAlmostEquals(y.data[i], v, 1e-14 * Math.max(1, Math.abs(v)), `gelu(${x})`));
  dispose(layers);
});

Deno.test("mlpForward64 agrees with the TF forward pass", async () => {
  const rng = new Rng(1);
  const layers = randomNet(rng, [7, 12, 9, 5, 3], ALL);
  const x = randomMatrix(rng, 6, 7);
  const y64 = (await mlpForward64(layers, x)).data;
  const y32Tensor = tf.tidy(() => mlpForward(layers, tf.tensor2d(Float32Array.from(x.data), [6, 7])));
  const y32 = await y32Tensor.data();
  y32Tensor.dispose();
  for (let e = 0; e < y64.length; e++) assertAlmostEquals(y32[e], y64[e], 1e-5 * Math.max(1, Math.abs(y64[e])));
  dispose(layers);
});

Deno.test("mlpJacobian equals central finite differences of the float64 forward pass", async () => {
  const rng = new Rng(2);
  for (const activations of [ALL, ["gelu", "gelu", "gelu", "scaled_tanh"] as DenseActivation[]]) {
    const layers = randomNet(rng, [7, 12, 9, 5, 3], activations, 1.5);
    const x = randomMatrix(rng, 4, 7);
    const jacobians = await mlpJacobian(layers, x);
    const h = 1e-5;
    for (let r = 0; r < x.rows; r++) {
      for (let i = 0; i < 7; i++) {
        const plus = Float64Array.from({ length: 7 }, (_, c) => x.data[r * 7 + c] + (c === i ? h : 0));
        const minus = Float64Array.from({ length: 7 }, (_, c) => x.data[r * 7 + c] - (c === i ? h : 0));
        const yp = (await mlpForward64(layers, { data: plus, rows: 1, cols: 7 })).data;
        const ym = (await mlpForward64(layers, { data: minus, rows: 1, cols: 7 })).data;
        for (let o = 0; o < 3; o++) {
          // Central differences err by O(h²·f‴) ≈ 1e-10 plus rounding ≈ 1e-16/h.
          assertAlmostEquals(jacobians[r][o * 7 + i], (yp[o] - ym[o]) / (2 * h), 1e-8, `sample ${r}, ∂y${o}/∂x${i}`);
        }
      }
    }
    dispose(layers);
  }
});

/** ½‖J‖²_F averaged over samples, from the float64 Jacobians. */
async function halfFrobenius(layers: DenseLayer[], x: Matrix): Promise<number> {
  let s = 0;
  for (const j of await mlpJacobian(layers, x)) for (const v of j) s += v * v;
  return s / (2 * x.rows);
}

Deno.test("the exact penalty is ½·mean‖J‖²_F and the random one has that mean over directions", async () => {
  const rng = new Rng(3);
  const layers = randomNet(rng, [6, 10, 8, 3], ["gelu", "gelu", "scaled_tanh"]);
  const x = randomMatrix(rng, 4, 6);
  const exact = await halfFrobenius(layers, x);
  const before = tf.memory().numTensors;
  const xt = tf.tensor2d(Float32Array.from(x.data), [4, 6]);
  const exactTf = jacobianPenalty(layers, xt, rng, { projections: "exact" });
  assertAlmostEquals((await exactTf.data())[0], exact, 1e-5 * exact);
  // The same four samples repeated: one call averages over 4·reps independent directions.
  const reps = 5000;
  const tiled = tf.tile(xt, [reps, 1]) as tf.Tensor2D;
  const random = jacobianPenalty(layers, tiled, rng);
  // Per sample, (k/2)‖Jᵀv‖² with v uniform on S^{k−1} has mean ½ tr(A) and variance
  // (k²/4)·2(tr A² − (tr A)²/k)/(k(k+2)), A = JJᵀ (moments of vᵀAv on the sphere).
  const k = 3;
  let variance = 0;
  for (const j of await mlpJacobian(layers, x)) {
    const a = [0, 1, 2].map((p) =>
      [0, 1, 2].map((q) => j.slice(p * 6, p * 6 + 6).reduce((s, v, i) => s + v * j[q * 6 + i], 0))
    );
    const tr = a[0][0] + a[1][1] + a[2][2];
    const tr2 = a.flat().reduce((s, v) => s + v * v, 0);
    variance += ((k * k) / 4) * (2 * (tr2 - (tr * tr) / k)) / (k * (k + 2)) / (x.rows * x.rows);
  }
  const se = Math.sqrt(variance / reps);
  assertAlmostEquals((await random.data())[0], exact, 5 * se + 1e-5 * exact, `se ${se}`);
  tf.dispose([xt, tiled, exactTf, random]);
  assertEquals(tf.memory().numTensors, before);
  dispose(layers);
});

Deno.test("the penalty's weight gradient matches finite differences of a float64 evaluation", async () => {
  const rng = new Rng(4);
  const widths = [5, 8, 6, 3];
  const activations: DenseActivation[] = ["gelu", "leaky_relu", "scaled_tanh"];
  const layers = randomNet(rng, widths, activations, 1.5);
  const x = randomMatrix(rng, 7, 5);
  const xt = tf.tensor2d(Float32Array.from(x.data), [7, 5]);
  const seed = 99;
  const directions = sphereDirections(new Rng(seed), 7, 3);
  // (k/2)·mean‖Jᵀv‖² in float64 with the directions the TF penalty draws from the same seed.
  const penalty64 = async (net: DenseLayer[]) => {
    let s = 0;
    (await mlpJacobian(net, x)).forEach((j, r) => {
      for (let i = 0; i < 5; i++) {
        let u = 0;
        for (let o = 0; o < 3; o++) u += j[o * 5 + i] * directions[r * 3 + o];
        s += u * u;
      }
    });
    return (3 / 2) * s / 7;
  };
  const params = layers.flatMap((layer) => [layer.w, layer.b]);
  const rebuild = (tensors: tf.Tensor[]): DenseLayer[] =>
    activations.map((activation, l) => ({
      w: tensors[2 * l] as tf.Tensor2D,
      b: tensors[2 * l + 1] as tf.Tensor1D,
      activation,
      slope: 0.1,
    }));
  const before = tf.memory().numTensors;
  const grads = tf.grads((...tensors: tf.Tensor[]) => jacobianPenalty(rebuild(tensors), xt, new Rng(seed)))(params);
  const penaltyTf = jacobianPenalty(layers, xt, new Rng(seed));
  const expectedPenalty = await penalty64(layers);
  assertAlmostEquals((await penaltyTf.data())[0], expectedPenalty, 1e-5 * expectedPenalty);
  penaltyTf.dispose();
  const h = 1e-4;
  let checked = 0;
  for (const [p, param] of params.entries()) {
    const values = Float64Array.from(await param.data());
    const g = await grads[p].data();
    for (let e = 0; e < values.length; e += 3) {
      const shifted = async (delta: number) => {
        const copy = Float32Array.from(values);
        copy[e] += delta;
        const replaced = tf.tensor(copy, param.shape);
        const net = rebuild(params.map((q, i) => (i === p ? replaced : q)));
        const value = await penalty64(net);
        replaced.dispose();
        return value;
      };
      // The float32 perturbation is exact in float64, so the difference quotient uses the real step.
      const up = Math.fround(values[e] + h) - values[e], down = values[e] - Math.fround(values[e] - h);
      const fd = (await shifted(up) - await shifted(-down)) / (up + down);
      assertAlmostEquals(g[e], fd, 2e-4 * Math.max(1, Math.abs(fd)), `parameter ${p}[${e}]`);
      checked++;
    }
  }
  assert(checked > 30);
  tf.dispose(grads);
  assertEquals(tf.memory().numTensors, before);
  xt.dispose();
  dispose(layers);
});

Deno.test("tf.variableGrads of the penalty reaches every layer's variables without leaks", async () => {
  const rng = new Rng(5);
  const layers = randomNet(rng, [4, 6, 2], ["gelu", "scaled_tanh"]);
  const variables = layers.flatMap((layer) => [tf.variable(layer.w), tf.variable(layer.b)]);
  const net: DenseLayer[] = layers.map((layer, l) => ({
    w: variables[2 * l] as tf.Variable<tf.Rank.R2>,
    b: variables[2 * l + 1] as tf.Variable<tf.Rank.R1>,
    activation: layer.activation,
  }));
  const x = tf.tensor2d(Float32Array.from(randomMatrix(rng, 9, 4).data), [9, 4]);
  const before = tf.memory().numTensors;
  const { value, grads } = tf.variableGrads(() => jacobianPenalty(net, x, new Rng(1)));
  assertEquals(Object.keys(grads).length, 4);
  for (const g of Object.values(grads)) assert((await g.data()).some((v) => v !== 0));
  tf.dispose([value, ...Object.values(grads)]);
  assertEquals(tf.memory().numTensors, before);
  tf.dispose([x, ...variables]);
  dispose(layers);
});

/** An orthonormal n×n matrix from Gram–Schmidt on Gaussian columns, row-major. */
function orthonormal(rng: Rng, n: number): Float64Array {
  const q = new Float64Array(n * n);
  for (let c = 0; c < n; c++) {
    const v = Float64Array.from({ length: n }, () => rng.normal());
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let r = 0; r < n; r++) dot += v[r] * q[r * n + p];
      for (let r = 0; r < n; r++) v[r] -= dot * q[r * n + p];
    }
    const norm = Math.hypot(...v);
    for (let r = 0; r < n; r++) q[r * n + c] = v[r] / norm;
  }
  return q;
}

/** J = U diag(σ) Vᵀ `[out, in]` and its pseudo-inverse V diag(σ⁺) Uᵀ `[in, out]`, for out ≤ in. */
function fromSvd(rng: Rng, sigma: number[], inp: number): { j: Float64Array; plus: Float64Array } {
  const out = sigma.length;
  const u = orthonormal(rng, out), v = orthonormal(rng, inp);
  const j = new Float64Array(out * inp), plus = new Float64Array(inp * out);
  for (let a = 0; a < out; a++) {
    for (let i = 0; i < inp; i++) {
      for (let s = 0; s < out; s++) {
        j[a * inp + i] += u[a * out + s] * sigma[s] * v[i * inp + s];
        if (sigma[s] > 0) plus[i * out + a] += (v[i * inp + s] * u[a * out + s]) / sigma[s];
      }
    }
  }
  return { j, plus };
}

Deno.test("pinv gives J·J⁺ = I at full row rank and V·Σ⁺·Uᵀ when J is rank-deficient", () => {
  const rng = new Rng(6);
  for (const sigma of [[3, 1.5, 0.2], [2, 1, 0.5, 1e-3], [4, 0, 1]]) {
    const out = sigma.length, inp = 7;
    const { j, plus } = fromSvd(rng, sigma, inp);
    const p = pinv(j, out, inp);
    // The Gram matrix squares the condition number: relative error ≈ 1e-16·(σ_max/σ_min)².
    const scale = Math.max(...plus.map(Math.abs));
    for (let e = 0; e < p.length; e++) assertAlmostEquals(p[e], plus[e], 1e-9 * scale, `σ = ${sigma}: entry ${e}`);
    if (sigma.every((s) => s > 0)) {
      for (let a = 0; a < out; a++) {
        for (let c = 0; c < out; c++) {
          let s = 0;
          for (let i = 0; i < inp; i++) s += j[a * inp + i] * p[i * out + c];
          assertAlmostEquals(s, a === c ? 1 : 0, 1e-9, `σ = ${sigma}: (JJ⁺)[${a},${c}]`);
        }
      }
    }
  }
});

Deno.test("pinv cuts a singular value far below rounding and keeps J⁺JJ⁺ = J⁺", () => {
  const rng = new Rng(7);
  const { j } = fromSvd(rng, [2, 1e-12, 0.5], 6);
  const p = pinv(j, 3, 6);
  for (const v of p) assert(Math.abs(v) < 10, `entry ${v}: the tiny singular value was inverted`);
  // J⁺ J J⁺ = J⁺
  const pj = new Float64Array(36);
  for (let i = 0; i < 6; i++) {
    for (let c = 0; c < 6; c++) for (let a = 0; a < 3; a++) pj[i * 6 + c] += p[i * 3 + a] * j[a * 6 + c];
  }
  for (let i = 0; i < 6; i++) {
    for (let a = 0; a < 3; a++) {
      let s = 0;
      for (let c = 0; c < 6; c++) s += pj[i * 6 + c] * p[c * 3 + a];
      assertAlmostEquals(s, p[i * 3 + a], 1e-9);
    }
  }
});

Deno.test("pinvMap sums |J⁺| over samples", () => {
  const rng = new Rng(8);
  const a = fromSvd(rng, [1, 2], 4), b = fromSvd(rng, [0.5, 3], 4);
  const map = pinvMap([a.j, b.j], 2, 4);
  for (let e = 0; e < 8; e++) assertAlmostEquals(map[e], Math.abs(a.plus[e]) + Math.abs(b.plus[e]), 1e-12);
});

Deno.test("on a linear map the baselines have closed forms", async () => {
  const rng = new Rng(9);
  const w = randomMatrix(rng, 4, 3);
  const layers: DenseLayer[] = [{
    w: tf.tensor2d(Float32Array.from(w.data), [4, 3]),
    b: tf.tensor1d([0.5, -1, 2]),
    activation: "linear",
  }];
  const wf = Float32Array.from(w.data);
  const x = randomMatrix(rng, 5, 4);
  const grad = await neuronGradient(layers, x);
  const ablation = await featureAblation((m) => mlpForward64(layers, m), x);
  const ig = await integratedGradients(layers, x, 3);
  // A synchronous f is accepted too: x·W + b written out.
  const linear = (m: Matrix): Matrix => {
    const data = new Float64Array(m.rows * 3);
    for (let r = 0; r < m.rows; r++) {
      for (let o = 0; o < 3; o++) {
        data[r * 3 + o] = [0.5, -1, 2][o];
        for (let i = 0; i < 4; i++) data[r * 3 + o] += m.data[r * 4 + i] * wf[i * 3 + o];
      }
    }
    return { data, rows: m.rows, cols: 3 };
  };
  const ablationSync = await featureAblation(linear, x);
  for (let i = 0; i < 4; i++) {
    let absX = 0;
    for (let r = 0; r < 5; r++) absX += Math.abs(x.data[r * 4 + i]);
    for (let o = 0; o < 3; o++) {
      assertAlmostEquals(grad[i * 3 + o], 5 * Math.abs(wf[i * 3 + o]), 1e-12);
      // f(x) − f(x with xᵢ = 0) = xᵢ·W[i, o]; the same is IG's exact value on a linear map.
      assertAlmostEquals(ablation[i * 3 + o], absX * Math.abs(wf[i * 3 + o]), 1e-12);
      assertAlmostEquals(ablationSync[i * 3 + o], absX * Math.abs(wf[i * 3 + o]), 1e-12);
      assertAlmostEquals(ig[i * 3 + o], absX * Math.abs(wf[i * 3 + o]), 1e-12);
    }
  }
  dispose(layers);
});

Deno.test("integrated gradients are complete: Σᵢ IG_{i,o}(x) = f_o(x) − f_o(0)", async () => {
  const rng = new Rng(10);
  const layers = randomNet(rng, [6, 10, 8, 3], ["gelu", "gelu", "scaled_tanh"], 1.5);
  const x = randomMatrix(rng, 3, 6);
  const fx = (await mlpForward64(layers, x)).data;
  const f0 = (await mlpForward64(layers, { data: new Float64Array(6), rows: 1, cols: 6 })).data;
  for (const [steps, tolerance] of [[50, 2e-3], [2000, 2e-6]] as const) {
    const perSample = await integratedGradientsPerSample(layers, x, steps);
    for (let r = 0; r < 3; r++) {
      for (let o = 0; o < 3; o++) {
        let s = 0;
        for (let i = 0; i < 6; i++) s += perSample[r][i * 3 + o];
        // The midpoint rule errs by O(1/steps²).
        assertAlmostEquals(s, fx[r * 3 + o] - f0[o], tolerance, `steps ${steps}, sample ${r}, output ${o}`);
      }
    }
  }
  dispose(layers);
});

Deno.test("attributionAuc is 1 for a map that ranks the mask, 0 reversed, rocAuc otherwise", () => {
  const truth = [1, 0, 1, 1, 0, 0];
  assertEquals(attributionAuc([0.9, 0.1, 0.8, 0.7, 0.2, 0.3], truth), 1);
  assertEquals(attributionAuc([0.1, 0.9, 0.2, 0.3, 0.8, 0.7], truth), 0);
  // Positives at ranks 2, 5, 6 of 6: (13 − 6)/9.
  assertAlmostEquals(attributionAuc([0.2, 0.1, 0.8, 0.7, 0.3, 0.4], truth), 7 / 9, 1e-15);
  assertThrows(() => attributionAuc([1, 2], [1]), UsageError, "must match");
  assertThrows(() => attributionAuc([1, 2], [1, 2]), UsageError, "not 0 or 1");
});

Deno.test("bad shapes and options throw UsageError before any work", async () => {
  const layers: DenseLayer[] = [{ w: tf.zeros([3, 2]), b: tf.zeros([2]), activation: "gelu" }];
  await assertRejects(
    () => mlpJacobian(layers, { data: new Float64Array(8), rows: 2, cols: 4 }),
    UsageError,
    "[n ≥ 1, 3]",
  );
  await assertRejects(
    () => mlpJacobian([{ ...layers[0], b: tf.zeros([3]) as tf.Tensor1D }], { data: [1, 2, 3], rows: 1, cols: 3 }),
    UsageError,
    "bias",
  );
  await assertRejects(
    () => mlpJacobian([{ ...layers[0], activation: "relu" as DenseActivation }], { data: [1, 2, 3], rows: 1, cols: 3 }),
    UsageError,
    "unknown activation",
  );
  await assertRejects(() => integratedGradients(layers, { data: [1, 2, 3], rows: 1, cols: 3 }, 0), UsageError, "steps");
  let calls = 0;
  const counted = (m: Matrix): Matrix => (calls++, m);
  await assertRejects(() => featureAblation(counted, { data: [], rows: 0, cols: 3 }), UsageError, "non-empty");
  assertEquals(calls, 0);
  assertThrows(() => pinv([1, 2, 3], 2, 2), UsageError, "expected 2×2");
  const x = tf.zeros([2, 4]) as tf.Tensor2D;
  assertThrows(() => jacobianPenalty(layers, x, new Rng(0)), UsageError, "do not take 4 inputs");
  tf.dispose([x, layers[0].w, layers[0].b]);
});
