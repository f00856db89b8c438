import { assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import { nearestRows } from "../../lib/contrastive/nearest_rows.ts";
import { allRows, bruteNearest, plainArgmin, randomMatrix } from "./nearest_reference.ts";

Deno.test("nearestRows matches brute force in 1-D (sorted search) and 3-D (k-d tree), ties to the lowest row", () => {
  const rng = new Rng(1);
  for (const cols of [1, 3]) {
    // Rounded labels create exact ties between rows.
    const labels = randomMatrix(rng, 300, cols);
    labels.data = (labels.data as Float64Array).map((v) => Math.round(v * 4) / 4);
    const queries = randomMatrix(rng, 200, cols);
    const got = nearestRows(labels, queries);
    for (let i = 0; i < queries.rows; i++) {
      const q = (queries.data as Float64Array).subarray(i * cols, (i + 1) * cols);
      assertEquals(got[i], bruteNearest(labels, q), `cols ${cols}, query ${i}`);
    }
  }
  // Equidistant between 1 (row 2) and 3 (rows 0 and 3): the lowest row wins.
  assertEquals(
    Array.from(nearestRows({ data: [3, 5, 1, 3], rows: 4, cols: 1 }, { data: [2, 10, -1], rows: 3, cols: 1 })),
    [
      0,
      1,
      2,
    ],
  );
  assertThrows(() => nearestRows({ data: [1, 2], rows: 2, cols: 1 }, { data: [1, 2], rows: 1, cols: 2 }), UsageError);
});

function assertSameAsPlain(labels: Matrix, queries: Matrix, what: string): void {
  const got = nearestRows(labels, queries), rows = allRows(labels);
  for (let i = 0; i < queries.rows; i++) {
    assertEquals(got[i], plainArgmin(labels, rows, queries.data, i * queries.cols), `${what}, query ${i}`);
  }
}

Deno.test("nearestRows in 2-D and 3-D equals the plain argmin on random labels, also far outside them", () => {
  const rng = new Rng(21);
  for (const cols of [2, 3]) {
    const labels = randomMatrix(rng, 5000, cols);
    const queries = randomMatrix(rng, 2000, cols);
    const q = queries.data as Float64Array;
    for (let i = 0; i < q.length; i++) {
      const row = Math.floor(i / cols);
      // Rows 1500 on: 1e1 … 1e6 from the data, some along one axis only; the rest spread past the labels.
      if (row >= 1500) q[i] = row % 4 === 0 && i % cols !== 0 ? q[i] : q[i] * 10 ** (1 + (row % 6));
      else q[i] *= 1.5;
    }
    assertSameAsPlain(labels, queries, `${cols}-D random`);
  }
});

Deno.test("nearestRows in 2-D and 3-D equals the plain argmin on integer grids with exact ties and duplicate rows", () => {
  const rng = new Rng(22);
  for (const [cols, side] of [[2, 12], [3, 6]]) {
    // Every grid point three times over, shuffled: duplicates sit at unrelated rows.
    const points = side ** cols, copies = 3;
    const order = rng.permutation(points * copies);
    const data = new Float64Array(points * copies * cols);
    order.forEach((p, row) => {
      for (let c = 0, v = p % points; c < cols; c++, v = Math.floor(v / side)) data[row * cols + c] = v;
    });
    const labels = { data, rows: points * copies, cols };
    // Half-integer queries sit at equal distance from 2^cols grid points, integers on a point's copies, and
    // both reach past the grid on every side.
    const queries = {
      data: Float64Array.from({ length: 3000 * cols }, () => rng.int(4 * side) / 2 - side / 2),
      rows: 3000,
      cols,
    };
    assertSameAsPlain(labels, queries, `${cols}-D grid`);
    // A sparser grid (every other point left out) ties more queries between rows far apart.
    const sparse = Array.from({ length: labels.rows }, (_, r) => r).filter((r) =>
      (data[r * cols] + data[r * cols + 1]) % 2 === 0
    );
    const sub = {
      data: Float64Array.from(sparse.flatMap((r) => Array.from(data.subarray(r * cols, (r + 1) * cols)))),
      rows: sparse.length,
      cols,
    };
    assertSameAsPlain(sub, queries, `${cols}-D checkerboard`);
  }
  // Degenerate sets: one row; every row the same (row 0 wins); points on a line in 3-D.
  const one = { data: [4, -2], rows: 1, cols: 2 };
  assertEquals(Array.from(nearestRows(one, { data: [0, 0, 1e9, -1e9], rows: 2, cols: 2 })), [0, 0]);
  const same = { data: new Float64Array(300).fill(0.25), rows: 100, cols: 3 };
  assertEquals(Array.from(nearestRows(same, randomMatrix(rng, 50, 3))), new Array(50).fill(0));
  const line = { data: Float64Array.from({ length: 600 }, (_, i) => Math.floor(i / 3) % 20), rows: 200, cols: 3 };
  assertSameAsPlain(
    line,
    { data: Float64Array.from({ length: 900 }, () => rng.int(50) / 2 - 2), rows: 300, cols: 3 },
    "line",
  );
});
