/**
 * A representation as the interventional metrics (BetaVAE, FactorVAE, IRS)
 * see it: any async encoder of observations, called on chunks of at most
 * 1,024 images (disentanglement_lib calls it once per batch; chunking only
 * changes speed, not the numbers).
 *
 * @module
 */
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import type { Factors, GroundTruthDataset, Observations } from "../data/ground_truth.ts";

/**
 * An encoder: observations `[n, h, w, c]` → codes `[n, d]`. Async because
 * TF.js reads tensors back asynchronously.
 */
export type Representation = (observations: Observations) => Promise<Matrix>;

/** The most images passed to one `represent` call by these metrics. */
export const MAX_ENCODE_CHUNK = 1024;

/**
 * Codes of the images of `factors`, encoded in chunks of at most
 * {@linkcode MAX_ENCODE_CHUNK} rows; `rng` drives the dataset's image noise.
 * Returns row-major codes `[factors.n, cols]`.
 */
export async function encodeFactors(
  dataset: GroundTruthDataset,
  represent: Representation,
  factors: Factors,
  rng: Rng,
): Promise<Matrix & { data: Float64Array }> {
  const k = dataset.factorSizes.length;
  if (factors.values.length !== factors.n * k) {
    throw new Error(`factors: ${factors.values.length} values do not match [${factors.n}, ${k}]`);
  }
  let out: Float64Array | undefined;
  let cols = 0;
  for (let start = 0; start < factors.n; start += MAX_ENCODE_CHUNK) {
    const n = Math.min(MAX_ENCODE_CHUNK, factors.n - start);
    const chunk: Factors = { values: factors.values.subarray(start * k, (start + n) * k), n };
    const codes = await represent(dataset.observations(chunk, rng));
    if (!codes || codes.rows !== n) throw new Error(`represent returned ${codes?.rows} rows for ${n} observations`);
    if (!Number.isInteger(codes.cols) || codes.cols < 1) throw new Error(`represent returned ${codes.cols} columns`);
    if (codes.data.length !== n * codes.cols) {
      throw new Error(`represent returned ${codes.data.length} values for shape [${n}, ${codes.cols}]`);
    }
    if (out === undefined) {
      cols = codes.cols;
      out = new Float64Array(factors.n * cols);
    } else if (codes.cols !== cols) {
      throw new Error(`represent returned ${codes.cols} columns after ${cols}`);
    }
    for (let i = 0; i < codes.data.length; i++) {
      const v = codes.data[i];
      if (!Number.isFinite(v)) throw new Error(`represent returned a non-finite code (${v})`);
      out[start * cols + i] = v;
    }
  }
  return { data: out ?? new Float64Array(0), rows: factors.n, cols };
}
