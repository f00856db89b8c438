/**
 * The synthetic spike data of pi-VAE (Zhou & Wei 2020) that CEBRA benchmarks
 * on (Schneider2023 Ch. 7; CEBRA
 * `cebra/datasets/generate_synthetic_data.py`, zhd96/pi-vae `pi_vae.py`
 * `simulate_cont_data_diff_var`): a label u ~ U[0, 2π), a 2-D latent
 * z ~ N((u, 2 sin u), diag(0.6 − 0.3|sin u|, 0.3|sin u|)) (variances: the
 * code scales unit normals by their square roots), zero-padded to `dims`,
 * mapped by a RealNVP flow of 4 blocks × 2 affine coupling layers with fixed
 * permutations between blocks, firing rates λ = exp(2.2 tanh(flow)), and
 * Poisson spike counts.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import { poissonVariate } from "./random_variates.ts";

/**
 * One affine coupling layer's networks (Keras `Dense` layers, kernels
 * row-major `[in, out]`): x₁ (first half, `half` wide) → `hidden` ReLU →
 * `hidden` ReLU → `2·half` linear, whose first half is s and second t.
 */
export interface CouplingWeights {
  /** Width of each half of x. */
  half: number;
  /** Width of the two hidden layers. */
  hidden: number;
  /** `[half, hidden]`. */
  w1: Float64Array;
  /** `[hidden]`. */
  b1: Float64Array;
  /** `[hidden, hidden]`. */
  w2: Float64Array;
  /** `[hidden]`. */
  b2: Float64Array;
  /** `[hidden, 2·half]`. */
  w3: Float64Array;
  /** `[2·half]`. */
  b3: Float64Array;
}

/** A RealNVP flow: coupling layers in order, `permutations[i]` applied after layer 2i + 1 (between blocks). */
export interface RealNvpFlow {
  /** Coupling layers, in the order they apply. */
  layers: CouplingWeights[];
  /** `out[:, j] = x[:, perm[j]]` (`tf.gather(x, perm, axis=-1)`). */
  permutations: Int32Array[];
}

/**
 * The permutations of pi_vae.py between blocks for 100 dimensions:
 * `np.random.seed(i); np.random.permutation(100)` for i = 0, 1, 2.
 */
const NUMPY_PERMUTATIONS_100 = [
  [
    26,
    86,
    2,
    55,
    75,
    93,
    16,
    73,
    54,
    95,
    53,
    92,
    78,
    13,
    7,
    30,
    22,
    24,
    33,
    8,
    43,
    62,
    3,
    71,
    45,
    48,
    6,
    99,
    82,
    76,
    60,
    80,
    90,
    68,
    51,
    27,
    18,
    56,
    63,
    74,
    1,
    61,
    42,
    41,
    4,
    15,
    17,
    40,
    38,
    5,
    91,
    59,
    0,
    34,
    28,
    50,
    11,
    35,
    23,
    52,
    10,
    31,
    66,
    57,
    79,
    85,
    32,
    84,
    14,
    89,
    19,
    29,
    49,
    97,
    98,
    69,
    20,
    94,
    72,
    77,
    25,
    37,
    81,
    46,
    39,
    65,
    58,
    12,
    88,
    70,
    87,
    36,
    21,
    83,
    9,
    96,
    67,
    64,
    47,
    44,
  ],
  [
    80,
    84,
    33,
    81,
    93,
    17,
    36,
    82,
    69,
    65,
    92,
    39,
    56,
    52,
    51,
    32,
    31,
    44,
    78,
    10,
    2,
    73,
    97,
    62,
    19,
    35,
    94,
    27,
    46,
    38,
    67,
    99,
    54,
    95,
    88,
    40,
    48,
    59,
    23,
    34,
    86,
    53,
    77,
    15,
    83,
    41,
    45,
    91,
    26,
    98,
    43,
    55,
    24,
    4,
    58,
    49,
    21,
    87,
    3,
    74,
    30,
    66,
    70,
    42,
    47,
    89,
    8,
    60,
    0,
    90,
    57,
    22,
    61,
    63,
    7,
    96,
    13,
    68,
    85,
    14,
    29,
    28,
    11,
    18,
    20,
    50,
    25,
    6,
    71,
    76,
    1,
    16,
    64,
    79,
    5,
    75,
    9,
    72,
    12,
    37,
  ],
  [
    83,
    30,
    56,
    24,
    16,
    23,
    2,
    27,
    28,
    13,
    99,
    92,
    76,
    14,
    0,
    21,
    3,
    29,
    61,
    79,
    35,
    11,
    84,
    44,
    73,
    5,
    25,
    77,
    74,
    62,
    65,
    1,
    18,
    48,
    36,
    78,
    6,
    89,
    91,
    10,
    12,
    53,
    87,
    54,
    95,
    32,
    19,
    26,
    60,
    55,
    9,
    96,
    17,
    59,
    57,
    41,
    64,
    45,
    97,
    8,
    71,
    94,
    90,
    98,
    86,
    80,
    50,
    52,
    66,
    88,
    70,
    46,
    68,
    69,
    81,
    58,
    33,
    38,
    51,
    42,
    4,
    67,
    39,
    37,
    20,
    31,
    63,
    47,
    85,
    93,
    49,
    34,
    7,
    75,
    82,
    43,
    22,
    72,
    15,
    40,
  ],
];

/** Keras' default kernel initializer, Glorot-uniform U(±√(6 / (in + out))), row-major `[in, out]`. */
function glorot(rng: Rng, fanIn: number, fanOut: number): Float64Array {
  const limit = Math.sqrt(6 / (fanIn + fanOut));
  return Float64Array.from({ length: fanIn * fanOut }, () => (2 * rng.uniform() - 1) * limit);
}

/**
 * pi_vae.py's simulation flow for `dims` (even) dimensions with fresh
 * Glorot-uniform kernels and zero biases: 4 blocks of 2 coupling layers,
 * hidden width (dims/2)/2. The permutations are numpy's for 100
 * dimensions, else drawn from streams fixed by the block index, as the
 * reference seeds numpy with it.
 */
export function pivaeFlow(rng: Rng, dims: number, blocks = 4): RealNvpFlow {
  if (!Number.isSafeInteger(dims) || dims < 4 || dims % 2 !== 0) {
    throw new UsageError(`dims must be an even integer ≥ 4 (the coupling layers split it in halves), got ${dims}`);
  }
  const half = dims / 2;
  const hidden = Math.max(1, Math.floor(half / 2));
  const layers: CouplingWeights[] = [];
  for (let l = 0; l < 2 * blocks; l++) {
    layers.push({
      half,
      hidden,
      w1: glorot(rng, half, hidden),
      b1: new Float64Array(hidden),
      w2: glorot(rng, hidden, hidden),
      b2: new Float64Array(hidden),
      w3: glorot(rng, hidden, dims),
      b3: new Float64Array(dims),
    });
  }
  const permutations = Array.from(
    { length: blocks - 1 },
    (_, i) => dims === 100 && i < 3 ? Int32Array.from(NUMPY_PERMUTATIONS_100[i]) : new Rng(i).permutation(dims),
  );
  return { layers, permutations };
}

/** Scratch rows of one coupling layer's networks, reused across rows and layers. */
interface Scratch {
  h1: Float64Array;
  h2: Float64Array;
  st: Float64Array;
}

function scratchFor(flow: RealNvpFlow): Scratch {
  const { half, hidden } = flow.layers[0];
  return { h1: new Float64Array(hidden), h2: new Float64Array(hidden), st: new Float64Array(2 * half) };
}

/** out = act(x W + b) on one row, W row-major `[inDim, outDim]`. */
function dense(
  x: Float64Array,
  xOffset: number,
  w: Float64Array,
  b: Float64Array,
  inDim: number,
  out: Float64Array,
  relu: boolean,
): void {
  const outDim = out.length;
  out.set(b);
  for (let i = 0; i < inDim; i++) {
    const xi = x[xOffset + i];
    if (xi === 0) continue;
    const row = i * outDim;
    for (let j = 0; j < outDim; j++) out[j] += xi * w[row + j];
  }
  if (relu) { for (let j = 0; j < outDim; j++) if (out[j] < 0) out[j] = 0; }
}

/** Fills `scratch.st` with [s, t] of one coupling layer from the kept half at `x[offset..]`; s = 0.1 tanh(·). */
function shiftScale(layer: CouplingWeights, x: Float64Array, offset: number, scratch: Scratch): void {
  const { half } = layer;
  dense(x, offset, layer.w1, layer.b1, half, scratch.h1, true);
  dense(scratch.h1, 0, layer.w2, layer.b2, layer.hidden, scratch.h2, true);
  dense(scratch.h2, 0, layer.w3, layer.b3, layer.hidden, scratch.st, false);
  for (let i = 0; i < half; i++) scratch.st[i] = 0.1 * Math.tanh(scratch.st[i]);
}

function checkFlowInput(flow: RealNvpFlow, x: Matrix): number {
  const dims = 2 * flow.layers[0].half;
  if (x.cols !== dims || x.data.length !== x.rows * dims) {
    throw new UsageError(`the flow maps [rows, ${dims}] matrices, got [${x.rows}, ${x.cols}]`);
  }
  return dims;
}

/** The flow's forward map `[rows, dims]` → `[rows, dims]`: each layer [x₁, x₂] ↦ [x₂ eˢ⁽ˣ¹⁾ + t(x₁), x₁]. */
export function flowForward(flow: RealNvpFlow, x: Matrix): Matrix {
  const dims = checkFlowInput(flow, x);
  const half = dims / 2;
  const out = new Float64Array(x.rows * dims);
  const scratch = scratchFor(flow);
  let row = new Float64Array(dims);
  let next = new Float64Array(dims);
  for (let r = 0; r < x.rows; r++) {
    for (let i = 0; i < dims; i++) row[i] = x.data[r * dims + i];
    for (let l = 0; l < flow.layers.length; l++) {
      shiftScale(flow.layers[l], row, 0, scratch);
      const st = scratch.st;
      for (let i = 0; i < half; i++) next[i] = row[half + i] * Math.exp(st[i]) + st[half + i];
      for (let i = 0; i < half; i++) next[half + i] = row[i];
      [row, next] = [next, row];
      const perm = l % 2 === 1 ? flow.permutations[(l - 1) / 2] : undefined;
      if (perm) {
        for (let j = 0; j < dims; j++) next[j] = row[perm[j]];
        [row, next] = [next, row];
      }
    }
    out.set(row, r * dims);
  }
  return { data: out, rows: x.rows, cols: dims };
}

/** The inverse of {@linkcode flowForward}. */
export function flowInverse(flow: RealNvpFlow, y: Matrix): Matrix {
  const dims = checkFlowInput(flow, y);
  const half = dims / 2;
  const out = new Float64Array(y.rows * dims);
  const scratch = scratchFor(flow);
  let row = new Float64Array(dims);
  let prev = new Float64Array(dims);
  for (let r = 0; r < y.rows; r++) {
    for (let i = 0; i < dims; i++) row[i] = y.data[r * dims + i];
    for (let l = flow.layers.length - 1; l >= 0; l--) {
      const perm = l % 2 === 1 ? flow.permutations[(l - 1) / 2] : undefined;
      if (perm) {
        for (let j = 0; j < dims; j++) prev[perm[j]] = row[j];
        [row, prev] = [prev, row];
      }
      // The kept half x₁ is the second half of the layer's output.
      shiftScale(flow.layers[l], row, half, scratch);
      const st = scratch.st;
      for (let i = 0; i < half; i++) prev[i] = row[half + i];
      for (let i = 0; i < half; i++) prev[half + i] = (row[i] - st[half + i]) * Math.exp(-st[i]);
      [row, prev] = [prev, row];
    }
    out.set(row, r * dims);
  }
  return { data: out, rows: y.rows, cols: dims };
}

/** Options of {@linkcode pivaeSynthetic}. */
export interface PivaeSyntheticOptions {
  /** Time points (default 15,000, CEBRA's `--n-samples`). */
  samples?: number;
  /** Neurons, even (default 100, `--neurons`). */
  dims?: number;
}

/** The pi-VAE synthetic dataset. */
export interface PivaeSynthetic {
  /** Labels u ∈ [0, 2π), one per time point. */
  u: Float64Array;
  /** The 2-D latent `[samples, 2]` (the flow's input is it zero-padded to `dims`). */
  z: Matrix;
  /** Firing rates λ = exp(2.2 tanh(flow(z))) `[samples, dims]`. */
  rates: Matrix;
  /** Poisson spike counts with those rates `[samples, dims]`. */
  spikes: Matrix;
  /** The flow that generated the rates. */
  flow: RealNvpFlow;
}

/** Draws the pi-VAE synthetic dataset (module notes); everything from `rng`, in the order u, z, flow, spikes. */
export function pivaeSynthetic(rng: Rng, options: PivaeSyntheticOptions = {}): PivaeSynthetic {
  const samples = options.samples ?? 15_000;
  const dims = options.dims ?? 100;
  if (!Number.isSafeInteger(samples) || samples < 1) {
    throw new UsageError(`samples must be an integer ≥ 1, got ${samples}`);
  }
  if (!Number.isSafeInteger(dims) || dims < 4 || dims % 2 !== 0) {
    throw new UsageError(`dims must be an even integer ≥ 4, got ${dims}`);
  }
  const u = Float64Array.from({ length: samples }, () => 2 * Math.PI * rng.uniform());
  const z = new Float64Array(samples * 2);
  for (let t = 0; t < samples; t++) {
    const abs = Math.abs(Math.sin(u[t]));
    z[2 * t] = u[t] + rng.normal() * Math.sqrt(0.6 - 0.3 * abs);
    z[2 * t + 1] = 2 * Math.sin(u[t]) + rng.normal() * Math.sqrt(0.3 * abs);
  }
  const flow = pivaeFlow(rng, dims);
  const padded = new Float64Array(samples * dims);
  for (let t = 0; t < samples; t++) padded.set(z.subarray(2 * t, 2 * t + 2), t * dims);
  const mean = flowForward(flow, { data: padded, rows: samples, cols: dims });
  const rates = Float64Array.from(mean.data, (m) => Math.exp(2.2 * Math.tanh(m)));
  const spikes = Float64Array.from(rates, (lambda) => poissonVariate(rng, lambda));
  return {
    u,
    z: { data: z, rows: samples, cols: 2 },
    rates: { data: rates, rows: samples, cols: dims },
    spikes: { data: spikes, rows: samples, cols: dims },
    flow,
  };
}
