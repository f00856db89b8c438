/**
 * Jacobian-based attribution for MLP encoders (RegCL, thesis §8 and App. G):
 * the analytic Jacobian J_f(x) of a dense network, the differentiable
 * Jacobian penalty ½‖J_f‖²_F that makes J_f⁺ an attribution map, the map
 * Σ_x |J_f⁺(x)| itself (float64 pseudo-inverse per sample), and the
 * baselines it is compared with: neuron gradient, feature ablation and
 * integrated gradients (zero baseline), scored by ROC-AUC against a mask.
 *
 * Shapes: a network maps `[n, in]` to `[n, out]`; per-sample Jacobians are
 * `[out, in]` row-major; attribution maps are `[in, out]` row-major, input
 * feature × output feature, the layout of a ground-truth mask.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { cholesky, choleskySolve, symmetricEigen } from "../ml/linalg.ts";
import { rocAuc } from "../ml/roc_auc.ts";

/** Activations a {@linkcode DenseLayer} may use. */
export type DenseActivation = "gelu" | "linear" | "scaled_tanh" | "leaky_relu";
/** The activations, for validation and listings. */
export const DENSE_ACTIVATIONS: readonly DenseActivation[] = ["gelu", "linear", "scaled_tanh", "leaky_relu"];
/** s in the scaled tanh s·tanh(a/s), which keeps outputs in (−5, 5) as CEBRA's clip-5-5 model. */
export const SCALED_TANH_SCALE = 5;
/** Default negative slope of "leaky_relu" (PyTorch's nn.LeakyReLU default). */
export const DEFAULT_LEAKY_SLOPE = 0.01;

/** One dense layer y = σ(x·W + b). */
export interface DenseLayer {
  /** Weights `[in, out]`. */
  w: tf.Tensor2D;
  /** Bias `[out]`. */
  b: tf.Tensor1D;
  /** σ: GELU (erf form), identity, 5·tanh(·/5) or leaky ReLU. */
  activation: DenseActivation;
  /** Negative slope for "leaky_relu", default {@linkcode DEFAULT_LEAKY_SLOPE}. */
  slope?: number;
}

// ---------------------------------------------------------------------------
// TF side: forward pass and the differentiable penalty.

/** σ(a) in TF ops. */
function activateTf(a: tf.Tensor, layer: DenseLayer): tf.Tensor {
  switch (layer.activation) {
    case "gelu":
      return tf.mul(tf.mul(a, 0.5), tf.add(1, tf.erf(tf.mul(a, Math.SQRT1_2))));
    case "linear":
      return a;
    case "scaled_tanh":
      return tf.mul(tf.tanh(tf.div(a, SCALED_TANH_SCALE)), SCALED_TANH_SCALE);
    case "leaky_relu":
      return tf.leakyRelu(a, layer.slope ?? DEFAULT_LEAKY_SLOPE);
  }
}

/** σ′(a) in TF ops, differentiable in a where σ′ is smooth (GELU, scaled tanh). */
function derivativeTf(a: tf.Tensor, layer: DenseLayer): tf.Tensor {
  switch (layer.activation) {
    case "gelu": {
      // Φ(a) + a·φ(a)
      const cdf = tf.mul(tf.add(1, tf.erf(tf.mul(a, Math.SQRT1_2))), 0.5);
      const pdf = tf.mul(tf.exp(tf.mul(tf.square(a), -0.5)), 1 / Math.sqrt(2 * Math.PI));
      return tf.add(cdf, tf.mul(a, pdf));
    }
    case "linear":
      return tf.onesLike(a);
    case "scaled_tanh":
      return tf.sub(1, tf.square(tf.tanh(tf.div(a, SCALED_TANH_SCALE))));
    case "leaky_relu": {
      // step(a) has a zero gradient registered, unlike a comparison op.
      const slope = layer.slope ?? DEFAULT_LEAKY_SLOPE;
      return tf.add(slope, tf.mul(tf.step(a), 1 - slope));
    }
  }
}

/** The network's output `[n, out]` for `x` `[n, in]` (TF, differentiable). */
export function mlpForward(layers: DenseLayer[], x: tf.Tensor2D): tf.Tensor2D {
  checkLayers(layers, x.shape[1]);
  return tf.tidy(() => {
    let h: tf.Tensor = x;
    for (const layer of layers) h = activateTf(tf.add(tf.matMul(h, layer.w), layer.b), layer);
    return h as tf.Tensor2D;
  });
}

/**
 * `rows` unit vectors of dimension `k`, uniform on the sphere (normalised
 * Gaussians), row-major; for k = 1 all ones, as CEBRA's `_random_vector`.
 */
export function sphereDirections(rng: Rng, rows: number, k: number): Float32Array {
  const v = new Float32Array(rows * k);
  if (k === 1) return v.fill(1);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    const g = new Float64Array(k);
    for (let j = 0; j < k; j++) {
      g[j] = rng.normal();
      s += g[j] * g[j];
    }
    const norm = Math.sqrt(s);
    for (let j = 0; j < k; j++) v[r * k + j] = g[j] / norm;
  }
  return v;
}

/** Options of {@linkcode jacobianPenalty}. */
export interface JacobianPenaltyOptions {
  /**
   * "random" (default): one direction per sample, (k/2)·mean‖J_fᵀv‖²
   * (CEBRA `JacobianReg(n=1)`, used by its xCEBRA training); "exact": the
   * k unit vectors, ½·mean‖J_f‖²_F (`JacobianReg(n=-1)`, its RegularizedSolver).
   */
  projections?: "random" | "exact";
}

/**
 * The Jacobian penalty ½‖J_f(x)‖²_F averaged over the batch, estimated as
 * CEBRA's `jacobian_regularizer.py`: R = ½ · k · Σ_b ‖J_f(x_b)ᵀ v_b‖² / B with
 * v_b uniform on the unit sphere of the k outputs, so E_v R = ½ mean‖J_f‖²_F
 * because E‖Jᵀv‖² = ‖J‖²_F / k. Jᵀv comes from a hand-written backward pass
 * in TF ops (v·diag(σ′)·Wᵀ layer by layer), so the result is an ordinary
 * function of the weights and `tf.grad`/`tf.variableGrads` give its
 * gradient with first-order autodiff only. `x` `[B, in]`; the directions
 * are drawn from `rng`.
 */
export function jacobianPenalty(
  layers: DenseLayer[],
  x: tf.Tensor2D,
  rng: Rng,
  options: JacobianPenaltyOptions = {},
): tf.Scalar {
  const projections = options.projections ?? "random";
  if (projections !== "random" && projections !== "exact") {
    throw new UsageError(`jacobianPenalty: projections must be "random" or "exact", got ${projections}`);
  }
  checkLayers(layers, x.shape[1]);
  const rows = x.shape[0];
  if (rows < 1) throw new UsageError("jacobianPenalty: the batch is empty");
  const k = layers[layers.length - 1].w.shape[1];
  const directions = projections === "random" ? sphereDirections(rng, rows, k) : null;
  return tf.tidy(() => {
    const pre: tf.Tensor[] = [];
    let h: tf.Tensor = x;
    for (const layer of layers) {
      const a = tf.add(tf.matMul(h, layer.w), layer.b);
      pre.push(a);
      h = activateTf(a, layer);
    }
    const slopes = layers.map((layer, l) => derivativeTf(pre[l], layer));
    const backward = (v: tf.Tensor): tf.Tensor => {
      let g = v;
      for (let l = layers.length - 1; l >= 0; l--) {
        g = tf.matMul(tf.mul(g, slopes[l]), layers[l].w, false, true);
      }
      return g;
    };
    if (directions) {
      const u = backward(tf.tensor2d(directions, [rows, k]));
      return tf.mul(tf.sum(tf.square(u)), k / (2 * rows)) as tf.Scalar;
    }
    let total: tf.Tensor = tf.scalar(0);
    for (let j = 0; j < k; j++) {
      const u = backward(tf.oneHot(tf.fill([rows], j, "int32"), k).toFloat());
      total = tf.add(total, tf.sum(tf.square(u)));
    }
    return tf.mul(total, 1 / (2 * rows)) as tf.Scalar;
  });
}

// ---------------------------------------------------------------------------
// Float64 side: Jacobians, pseudo-inverses and attribution maps.

interface Dense64 {
  w: Float64Array;
  b: Float64Array;
  inputs: number;
  outputs: number;
  activation: DenseActivation;
  slope: number;
}

/**
 * The layers' weights read once into float64, asynchronously: the WebGPU
 * backend offers no synchronous read. The shapes are checked before any read.
 */
function snapshot(layers: DenseLayer[], inputs: number): Promise<Dense64[]> {
  checkLayers(layers, inputs);
  return Promise.all(layers.map(async (layer) => {
    const [w, b] = await Promise.all([layer.w.data(), layer.b.data()]);
    return {
      w: Float64Array.from(w),
      b: Float64Array.from(b),
      inputs: layer.w.shape[0],
      outputs: layer.w.shape[1],
      activation: layer.activation,
      slope: layer.slope ?? DEFAULT_LEAKY_SLOPE,
    };
  }));
}

function checkLayers(layers: DenseLayer[], inputs: number): void {
  if (layers.length === 0) throw new UsageError("the network needs at least one layer");
  let width = inputs;
  for (const [l, layer] of layers.entries()) {
    if (!DENSE_ACTIVATIONS.includes(layer.activation)) {
      throw new UsageError(
        `layer ${l}: unknown activation ${layer.activation}; use one of ${DENSE_ACTIVATIONS.join(", ")}`,
      );
    }
    if (layer.w.rank !== 2 || layer.w.shape[0] !== width) {
      throw new UsageError(`layer ${l}: weights [${layer.w.shape}] do not take ${width} inputs`);
    }
    if (layer.b.rank !== 1 || layer.b.shape[0] !== layer.w.shape[1]) {
      throw new UsageError(`layer ${l}: bias [${layer.b.shape}] does not match ${layer.w.shape[1]} outputs`);
    }
    width = layer.w.shape[1];
  }
}

/** erf in float64: the all-positive series below 2.5, the erfc continued fraction above (≈1e-15). */
function erf64(x: number): number {
  const ax = Math.abs(x);
  if (ax >= 6) return Math.sign(x);
  if (ax < 2.5) {
    // erf x = 2/√π · e^{−x²} Σ 2ⁿ x^{2n+1} / (1·3·…·(2n+1))
    let term = ax, sum = ax;
    for (let n = 1; n < 200 && term > 1e-17 * sum; n++) {
      term *= (2 * ax * ax) / (2 * n + 1);
      sum += term;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * Math.exp(-ax * ax) * sum;
  }
  // erfc x = e^{−x²}/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …))))
  let t = ax;
  for (let n = 80; n >= 1; n--) t = ax + n / 2 / t;
  return Math.sign(x) * (1 - Math.exp(-ax * ax) / (Math.sqrt(Math.PI) * t));
}

/** Replaces the pre-activations `a` by σ(a) in place and writes σ′(a) into `d`. */
function activate64(a: Float64Array, d: Float64Array, layer: Dense64): void {
  const n = a.length;
  switch (layer.activation) {
    case "gelu": {
      const norm = 1 / Math.sqrt(2 * Math.PI);
      for (let e = 0; e < n; e++) {
        const v = a[e];
        const cdf = 0.5 * (1 + erf64(v * Math.SQRT1_2));
        a[e] = v * cdf;
        d[e] = cdf + v * Math.exp(-0.5 * v * v) * norm;
      }
      return;
    }
    case "linear":
      d.fill(1);
      return;
    case "scaled_tanh":
      for (let e = 0; e < n; e++) {
        const t = Math.tanh(a[e] / SCALED_TANH_SCALE);
        a[e] = SCALED_TANH_SCALE * t;
        d[e] = 1 - t * t;
      }
      return;
    case "leaky_relu":
      for (let e = 0; e < n; e++) {
        if (a[e] > 0) d[e] = 1;
        else {
          a[e] *= layer.slope;
          d[e] = layer.slope;
        }
      }
  }
}

/** Forward pass of `rows` samples `x` `[rows, in]`: the output `[rows, out]` and σ′ of each layer `[rows, width]`. */
function forwardBatch(net: Dense64[], x: Float64Array, rows: number): { y: Float64Array; slopes: Float64Array[] } {
  let h = x;
  const slopes: Float64Array[] = [];
  for (const layer of net) {
    const { w, b, inputs, outputs } = layer;
    const a = new Float64Array(rows * outputs);
    for (let r = 0; r < rows; r++) {
      const aRow = r * outputs, hRow = r * inputs;
      a.set(b, aRow);
      for (let i = 0; i < inputs; i++) {
        const hv = h[hRow + i];
        if (hv === 0) continue;
        const wRow = i * outputs;
        for (let o = 0; o < outputs; o++) a[aRow + o] += hv * w[wRow + o];
      }
    }
    const d = new Float64Array(rows * outputs);
    activate64(a, d, layer);
    slopes.push(d);
    h = a;
  }
  return { y: h, slopes };
}

/**
 * Jacobians `[rows, out, in]` of a batch from its σ′ values, by the reverse
 * chain diag(σ′_L)·W_Lᵀ·…·diag(σ′_1)·W_1ᵀ applied to all samples at once.
 */
function jacobianBatch(net: Dense64[], slopes: Float64Array[], rows: number): Float64Array {
  const k = net[net.length - 1].outputs;
  let width = k;
  let m = new Float64Array(rows * k * k);
  const last = slopes[net.length - 1];
  for (let r = 0; r < rows; r++) for (let o = 0; o < k; o++) m[(r * k + o) * k + o] = last[r * k + o];
  for (let l = net.length - 1; l >= 0; l--) {
    const { w, inputs, outputs } = net[l];
    const next = new Float64Array(rows * k * inputs);
    const d = l > 0 ? slopes[l - 1] : null;
    for (let q = 0; q < rows * k; q++) {
      const mRow = q * width, nRow = q * inputs;
      for (let i = 0; i < inputs; i++) {
        const wRow = i * outputs;
        let s = 0;
        for (let o = 0; o < outputs; o++) s += m[mRow + o] * w[wRow + o];
        next[nRow + i] = s;
      }
      if (d) {
        const dRow = Math.floor(q / k) * inputs;
        for (let i = 0; i < inputs; i++) next[nRow + i] *= d[dRow + i];
      }
    }
    m = next;
    width = inputs;
  }
  return m;
}

/** Rows per float64 batch: large enough for tight loops, small enough for the cache. */
const CHUNK = 128;

function checkInput(x: Matrix, inputs: number, what: string): void {
  if (x.cols !== inputs || x.data.length !== x.rows * x.cols || x.rows < 1) {
    throw new UsageError(`${what}: x must be [n ≥ 1, ${inputs}], got [${x.rows}, ${x.cols}]`);
  }
}

function rowsOf(x: Matrix, start: number, end: number): Float64Array {
  const out = new Float64Array((end - start) * x.cols);
  for (let e = 0; e < out.length; e++) out[e] = x.data[start * x.cols + e];
  return out;
}

/** The network's output `[n, out]` for `x` `[n, in]`, in float64. */
export async function mlpForward64(layers: DenseLayer[], x: Matrix): Promise<Matrix> {
  const inputs = layers[0]?.w.shape[0] ?? 0;
  checkInput(x, inputs, "mlpForward64");
  const net = await snapshot(layers, inputs);
  const k = net[net.length - 1].outputs;
  const out = new Float64Array(x.rows * k);
  for (let start = 0; start < x.rows; start += CHUNK) {
    const end = Math.min(x.rows, start + CHUNK);
    out.set(forwardBatch(net, rowsOf(x, start, end), end - start).y, start * k);
  }
  return { data: out, rows: x.rows, cols: k };
}

/**
 * Per-sample Jacobians of the network at the rows of `x` `[n, in]`, each
 * `[out, in]` row-major, computed in float64 from the analytic per-layer
 * chain (σ′ of GELU in erf form, 5·tanh(·/5), leaky ReLU, identity).
 */
export async function mlpJacobian(layers: DenseLayer[], x: Matrix): Promise<Float64Array[]> {
  const inputs = layers[0]?.w.shape[0] ?? 0;
  checkInput(x, inputs, "mlpJacobian");
  const net = await snapshot(layers, inputs);
  const size = net[net.length - 1].outputs * inputs;
  const out: Float64Array[] = [];
  for (let start = 0; start < x.rows; start += CHUNK) {
    const end = Math.min(x.rows, start + CHUNK);
    const { slopes } = forwardBatch(net, rowsOf(x, start, end), end - start);
    const j = jacobianBatch(net, slopes, end - start);
    for (let r = 0; r < end - start; r++) out.push(j.slice(r * size, (r + 1) * size));
  }
  return out;
}

/**
 * Moore–Penrose pseudo-inverse `[in, out]` of one J `[out, in]` in float64:
 * Jᵀ(JJᵀ)⁻¹ by Cholesky when J has full row rank, else Jᵀ(JJᵀ)⁺ from the
 * eigendecomposition of JJᵀ, eigenvalues below 1e-13·λ_max counted as 0
 * (singular values below ≈3e-7·σ_max: the Gram matrix squares the condition
 * number, so smaller ones are rounding noise).
 */
export function pinv(j: ArrayLike<number>, out: number, inp: number): Float64Array {
  if (j.length !== out * inp) throw new UsageError(`pinv: J holds ${j.length} values, expected ${out}×${inp}`);
  const gram: number[][] = Array.from({ length: out }, () => new Array<number>(out).fill(0));
  let maxDiag = 0;
  for (let a = 0; a < out; a++) {
    for (let b = a; b < out; b++) {
      let s = 0;
      for (let i = 0; i < inp; i++) s += j[a * inp + i] * j[b * inp + i];
      gram[a][b] = gram[b][a] = s;
    }
    maxDiag = Math.max(maxDiag, gram[a][a]);
  }
  // Gram inverse (or pseudo-inverse) `[out, out]`.
  const inv: number[][] = Array.from({ length: out }, () => new Array<number>(out).fill(0));
  const l = maxDiag > 0 ? cholesky(gram) : null;
  let fullRank = l !== null;
  if (l) { for (let a = 0; a < out; a++) if (l[a][a] * l[a][a] <= 1e-10 * maxDiag) fullRank = false; }
  if (fullRank) {
    for (let c = 0; c < out; c++) {
      const e = new Float64Array(out);
      e[c] = 1;
      const col = choleskySolve(l!, e);
      for (let a = 0; a < out; a++) inv[a][c] = col[a];
    }
  } else if (maxDiag > 0) {
    const { values, vectors } = symmetricEigen(gram);
    const cutoff = 1e-13 * Math.max(...values);
    for (let e = 0; e < out; e++) {
      if (!(values[e] > cutoff)) continue;
      for (let a = 0; a < out; a++) {
        for (let c = 0; c < out; c++) inv[a][c] += (vectors[a][e] * vectors[c][e]) / values[e];
      }
    }
  }
  const p = new Float64Array(inp * out);
  for (let i = 0; i < inp; i++) {
    for (let c = 0; c < out; c++) {
      let s = 0;
      for (let a = 0; a < out; a++) s += j[a * inp + i] * inv[a][c];
      p[i * out + c] = s;
    }
  }
  return p;
}

/** The J_f⁺ attribution map Σ_x |J_f⁺(x)| `[in, out]` from per-sample Jacobians `[out, in]` (float64). */
export function pinvMap(jacobians: Float64Array[], out: number, inp: number): Float64Array {
  const map = new Float64Array(inp * out);
  for (const j of jacobians) {
    const p = pinv(j, out, inp);
    for (let e = 0; e < map.length; e++) map[e] += Math.abs(p[e]);
  }
  return map;
}

/** Neuron-gradient map Σ_x |J_f(x)|ᵀ `[in, out]` over the rows of `x` `[n, in]`. */
export async function neuronGradient(layers: DenseLayer[], x: Matrix): Promise<Float64Array> {
  return neuronGradientMap(await mlpJacobian(layers, x), layers[layers.length - 1].w.shape[1], x.cols);
}

/** Σ_x |J_f(x)|ᵀ `[in, out]` from per-sample Jacobians `[out, in]` (the neuron gradient of Jacobians already at hand). */
export function neuronGradientMap(jacobians: Float64Array[], out: number, inp: number): Float64Array {
  const map = new Float64Array(inp * out);
  for (const j of jacobians) {
    if (j.length !== out * inp) {
      throw new UsageError(`neuronGradientMap: a Jacobian holds ${j.length} values, expected ${out}×${inp}`);
    }
    for (let o = 0; o < out; o++) for (let i = 0; i < inp; i++) map[i * out + o] += Math.abs(j[o * inp + i]);
  }
  return map;
}

/**
 * Feature-ablation map `[in, out]` with a zero baseline: for each input i,
 * Σ_x |f(x) − f(x with xᵢ = 0)| per output (captum `NeuronFeatureAblation`
 * per output neuron, absolute values summed over samples). `f` maps
 * `[n, in]` to `[n, out]`, directly or through a promise (as
 * {@linkcode mlpForward64}), and is called in + 1 times on all of `x`, one
 * call at a time: the ablated copy it receives is reused for the next input.
 */
export async function featureAblation(
  f: (x: Matrix) => Matrix | Promise<Matrix>,
  x: Matrix,
): Promise<Float64Array> {
  if (x.rows < 1 || x.cols < 1 || x.data.length !== x.rows * x.cols) {
    throw new UsageError(`featureAblation: x must be a non-empty matrix, got [${x.rows}, ${x.cols}]`);
  }
  const base = await f(x);
  const out = base.cols;
  if (base.rows !== x.rows) throw new UsageError(`featureAblation: f returned ${base.rows} rows for ${x.rows}`);
  const map = new Float64Array(x.cols * out);
  const ablated = Float64Array.from(x.data);
  for (let i = 0; i < x.cols; i++) {
    for (let r = 0; r < x.rows; r++) ablated[r * x.cols + i] = 0;
    const y = await f({ data: ablated, rows: x.rows, cols: x.cols });
    for (let r = 0; r < x.rows; r++) {
      for (let o = 0; o < out; o++) map[i * out + o] += Math.abs(base.data[r * out + o] - y.data[r * out + o]);
    }
    for (let r = 0; r < x.rows; r++) ablated[r * x.cols + i] = x.data[r * x.cols + i];
  }
  return map;
}

/**
 * Integrated gradients per sample with a zero baseline, `[in, out]` each:
 * IG_{i,o}(x) = xᵢ · (1/m) Σ_{s<m} ∂f_o/∂xᵢ((s + ½)/m · x), the midpoint
 * Riemann sum over `steps` = m points, so Σᵢ IG_{i,o} → f_o(x) − f_o(0).
 */
export async function integratedGradientsPerSample(
  layers: DenseLayer[],
  x: Matrix,
  steps = 50,
): Promise<Float64Array[]> {
  if (!Number.isInteger(steps) || steps < 1) {
    throw new UsageError(`integratedGradients: steps must be an integer ≥ 1, got ${steps}`);
  }
  const inputs = layers[0]?.w.shape[0] ?? 0;
  checkInput(x, inputs, "integratedGradients");
  const net = await snapshot(layers, inputs);
  const out = net[net.length - 1].outputs;
  const size = out * inputs;
  const path = new Float64Array(steps * inputs);
  const result: Float64Array[] = [];
  for (let r = 0; r < x.rows; r++) {
    // All points of the path at once: rows (s + ½)/m · x.
    for (let s = 0; s < steps; s++) {
      const alpha = (s + 0.5) / steps;
      for (let i = 0; i < inputs; i++) path[s * inputs + i] = alpha * x.data[r * inputs + i];
    }
    const { slopes } = forwardBatch(net, path, steps);
    const j = jacobianBatch(net, slopes, steps);
    const ig = new Float64Array(inputs * out);
    for (let o = 0; o < out; o++) {
      for (let i = 0; i < inputs; i++) {
        let mean = 0;
        for (let s = 0; s < steps; s++) mean += j[s * size + o * inputs + i];
        ig[i * out + o] = (x.data[r * inputs + i] * mean) / steps;
      }
    }
    result.push(ig);
  }
  return result;
}

/** Integrated-gradients map Σ_x |IG(x)| `[in, out]` (zero baseline, midpoint rule, `steps` points). */
export async function integratedGradients(layers: DenseLayer[], x: Matrix, steps = 50): Promise<Float64Array> {
  const perSample = await integratedGradientsPerSample(layers, x, steps);
  const map = new Float64Array(perSample[0].length);
  for (const ig of perSample) for (let e = 0; e < map.length; e++) map[e] += Math.abs(ig[e]);
  return map;
}

/**
 * ROC-AUC of an attribution map against a binary mask of the same layout
 * (both `[in, out]` row-major): the thesis' AUC over thresholds ε of Â = 1{map > ε}.
 */
export function attributionAuc(map: ArrayLike<number>, truth: ArrayLike<number>): number {
  if (map.length !== truth.length || map.length === 0) {
    throw new UsageError(`attributionAuc: map has ${map.length} entries, truth ${truth.length}; they must match`);
  }
  for (let e = 0; e < map.length; e++) {
    if (!Number.isFinite(map[e])) throw new UsageError(`attributionAuc: map entry ${e} is not finite`);
    if (truth[e] !== 0 && truth[e] !== 1) {
      throw new UsageError(`attributionAuc: truth entry ${e} is ${truth[e]}, not 0 or 1`);
    }
  }
  return rocAuc(truth, map);
}
