/** Brute-force nearest-row searches and random labels, the references of the nearest-row and sampler tests. */
import type { Matrix } from "../../lib/core/matrix.ts";
import type { Rng } from "../../lib/core/rng.ts";

/** A `[rows, cols]` matrix of standard normal draws. */
export function randomMatrix(rng: Rng, rows: number, cols: number): Matrix {
  return { data: Float64Array.from({ length: rows * cols }, () => rng.normal()), rows, cols };
}

/** argmin_r ‖labels_r − q‖², first minimum (torch.argmin). */
export function bruteNearest(labels: Matrix, q: ArrayLike<number>): number {
  let best = Infinity, arg = -1;
  for (let r = 0; r < labels.rows; r++) {
    let d = 0;
    for (let c = 0; c < labels.cols; c++) d += (labels.data[r * labels.cols + c] - q[c]) ** 2;
    if (d < best) {
      best = d;
      arg = r;
    }
  }
  return arg;
}

/**
 * Position in `rows` of the label nearest to `query[offset …]`: squared euclidean distance summed over columns in
 * float64, the first minimum winning (torch.argmin); row 0 when no distance is finite.
 */
export function plainArgmin(labels: Matrix, rows: ArrayLike<number>, query: ArrayLike<number>, offset = 0): number {
  const d = labels.cols, data = labels.data;
  let best = Infinity, arg = 0;
  for (let i = 0; i < rows.length; i++) {
    let dist = 0;
    for (let c = 0; c < d; c++) {
      const diff = (data[rows[i] * d + c] as number) - (query[offset + c] as number);
      dist += diff * diff;
    }
    if (dist < best) {
      best = dist;
      arg = i;
    }
  }
  return arg;
}

/** Every row index of `m`, ascending. */
export function allRows(m: Matrix): Int32Array {
  return Int32Array.from({ length: m.rows }, (_, i) => i);
}
