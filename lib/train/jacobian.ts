/**
 * Decoder Jacobians J_i = ∂Dec(z)/∂z at many latent points, the input of the
 * distance to orthogonality (Zietlow2022 §3.2.6): by automatic
 * differentiation when the decoder has few outputs, by central differences
 * along the d latent axes otherwise (2d decoder passes per chunk instead of
 * one backward pass per output, which matters for images).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { checkMatrix, column, type Matrix, meanSd } from "../core/matrix.ts";
import { stopPoint } from "../core/run_guard.ts";

/**
 * Jacobians of `n` points, `[n, rows = outputs, cols = latents]` row-major:
 * jac[i·rows·cols + r·cols + c] = ∂out_r/∂z_c at point i (the layout of lib/metrics/dto.ts).
 */
export interface Jacobians {
  /** The entries, `n · rows · cols`. */
  jac: Float64Array;
  /** Number of points. */
  n: number;
  /** Outputs per point. */
  rows: number;
  /** Latents per point. */
  cols: number;
}

/** How {@linkcode decoderJacobians} differentiates. */
export type JacobianMethod = "grad" | "central" | "auto";

/** Most outputs for which "auto" takes gradients (one backward pass covers every output, tiled). */
export const GRAD_MAX_OUTPUTS = 16;

/**
 * Decoder Jacobians at the rows of z (`[n, d]`). "grad": automatic
 * differentiation, one backward pass per chunk with the chunk tiled once per
 * output (≤ 16 outputs); "central": (Dec(z + h_j e_j) − Dec(z − h_j e_j)) / 2h_j
 * with h_j = 1e-2·std(z_j) (sample sd over the n rows; 1e-2 if it is 0), the
 * differences taken in float64; "auto" (default): grad when outputs ≤ 16.
 * Rows are processed in chunks of `chunk` (default 500). The decoder must map
 * each row independently (no batch statistics).
 */
export async function decoderJacobians(
  decode: (z: tf.Tensor2D) => tf.Tensor2D,
  z: Matrix,
  options: { method?: JacobianMethod; chunk?: number } = {},
): Promise<Jacobians> {
  const method = options.method ?? "auto", chunk = options.chunk ?? 500;
  if (!["grad", "central", "auto"].includes(method)) throw new Error(`decoderJacobians: unknown method "${method}"`);
  if (!Number.isInteger(chunk) || chunk < 1) throw new Error(`decoderJacobians: chunk must be ≥ 1, got ${chunk}`);
  checkMatrix(z, "decoderJacobians z", 1);
  const { rows: n, cols: d } = z;
  const points = Float32Array.from(z.data);
  const rows = tf.tidy(() => decode(tf.tensor2d(points.subarray(0, d), [1, d])).shape[1]);
  const useGrad = method === "grad" || (method === "auto" && rows <= GRAD_MAX_OUTPUTS);
  if (method === "grad" && rows > GRAD_MAX_OUTPUTS) {
    throw new Error(`decoderJacobians: "grad" takes at most ${GRAD_MAX_OUTPUTS} outputs, the decoder has ${rows}`);
  }
  const steps = useGrad ? null : Array.from({ length: d }, (_, j) => {
    const sd = n > 1 ? meanSd(column(z.data, n, d, j)).sd : 0;
    return sd > 0 ? 1e-2 * sd : 1e-2;
  });
  const jac = new Float64Array(n * rows * d);
  for (let start = 0; start < n; start += chunk) {
    stopPoint();
    const m = Math.min(chunk, n - start);
    const block = points.subarray(start * d, (start + m) * d);
    if (steps) await centralChunk(decode, block, m, d, rows, steps, jac.subarray(start * rows * d));
    else await gradChunk(decode, block, m, d, rows, jac.subarray(start * rows * d));
  }
  return { jac, n, rows, cols: d };
}

/** ∂out_r/∂z for m points: the points tiled r times, output r of tile r summed, one gradient. */
async function gradChunk(
  decode: (z: tf.Tensor2D) => tf.Tensor2D,
  block: Float32Array,
  m: number,
  d: number,
  rows: number,
  out: Float64Array,
): Promise<void> {
  const grads = tf.tidy(() => {
    const tiled = tf.tile(tf.tensor2d(block, [m, d]), [rows, 1]) as tf.Tensor2D;
    // select[r·m + i, r] = 1: tile r keeps output r only.
    const select = new Float32Array(rows * m * rows);
    for (let r = 0; r < rows; r++) for (let i = 0; i < m; i++) select[(r * m + i) * rows + r] = 1;
    const mask = tf.tensor2d(select, [rows * m, rows]);
    return tf.grad((zz: tf.Tensor) => {
      const y = decode(zz as tf.Tensor2D);
      if (y.shape[1] !== rows) {
        throw new Error(`decoderJacobians: the decoder gave ${y.shape[1]} outputs, then ${rows}`);
      }
      return tf.sum(tf.mul(y, mask));
    })(tiled);
  });
  const values = await grads.data();
  grads.dispose();
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < m; i++) {
      for (let c = 0; c < d; c++) out[i * rows * d + r * d + c] = values[(r * m + i) * d + c];
    }
  }
}

/** Central differences for m points: one decoder pass over the 2d shifted copies of the chunk. */
async function centralChunk(
  decode: (z: tf.Tensor2D) => tf.Tensor2D,
  block: Float32Array,
  m: number,
  d: number,
  rows: number,
  steps: number[],
  out: Float64Array,
): Promise<void> {
  // Copy 2j holds z + h_j e_j, copy 2j + 1 holds z − h_j e_j.
  const shifted = new Float32Array(2 * d * m * d);
  for (let j = 0; j < d; j++) {
    for (let sign = 0; sign < 2; sign++) {
      const copy = shifted.subarray((2 * j + sign) * m * d, (2 * j + sign + 1) * m * d);
      copy.set(block);
      for (let i = 0; i < m; i++) copy[i * d + j] += sign === 0 ? steps[j] : -steps[j];
    }
  }
  const y = tf.tidy(() => decode(tf.tensor2d(shifted, [2 * d * m, d])));
  if (y.shape[1] !== rows) {
    y.dispose();
    throw new Error(`decoderJacobians: the decoder gave ${y.shape[1]} outputs, then ${rows}`);
  }
  const values = await y.data();
  y.dispose();
  for (let j = 0; j < d; j++) {
    const plus = (2 * j) * m * rows, minus = (2 * j + 1) * m * rows;
    for (let i = 0; i < m; i++) {
      // Divide by the float32 distance between the two evaluated points, not the nominal 2h.
      const width = shifted[(2 * j) * m * d + i * d + j] - shifted[(2 * j + 1) * m * d + i * d + j];
      for (let r = 0; r < rows; r++) {
        out[i * rows * d + r * d + j] = (values[plus + i * rows + r] - values[minus + i * rows + r]) / width;
      }
    }
  }
}
