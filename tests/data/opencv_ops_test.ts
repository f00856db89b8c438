import { assertAlmostEquals, assertEquals } from "../assert.ts";
import { boxBlur3, cannyCv2, distanceTransform5, equalizeHist } from "../../lib/data/opencv_ops.ts";

Deno.test("boxBlur3 is the 3×3 mean with reflect-101 borders, rounded for bytes", () => {
  const img = [0, 9, 0, 9, 0, 9, 0, 9, 0]; // 3×3 checkerboard
  const out = boxBlur3(img, 3, 3);
  assertAlmostEquals(out[4], 36 / 9, 1e-12);
  // Corner (0, 0) reads rows 1, 0, 1 and columns 1, 0, 1: four of the nine are odd cells (nines).
  assertAlmostEquals(out[0], 36 / 9, 1e-12);
  // A centre impulse of 5 is read 4 times by a corner (20/9), twice by an edge (10/9), once by the centre (5/9).
  assertEquals(Array.from(boxBlur3([0, 0, 0, 0, 5, 0, 0, 0, 0], 3, 3, true)), [2, 1, 2, 1, 1, 1, 2, 1, 2]);
});

Deno.test("cannyCv2 finds a one-pixel line along a vertical step and nothing on a flat image", () => {
  const h = 12, w = 12;
  const step = Float64Array.from({ length: h * w }, (_, k) => (k % w < 6 ? 0 : 200));
  const edges = cannyCv2(step, h, w, 50, 150);
  for (let y = 0; y < h; y++) {
    const row = Array.from(edges.slice(y * w, (y + 1) * w));
    // Sobel responds equally in columns 5 and 6; suppression keeps the first (strictly above the left neighbour).
    assertEquals(row, row.map((_, x) => (x === 5 ? 255 : 0)), `row ${y}`);
  }
  assertEquals(cannyCv2(new Float64Array(h * w).fill(90), h, w, 50, 150).reduce((a, b) => a + b, 0), 0);
});

Deno.test("distanceTransform5: cv2's 5×5 chamfer distances from a single zero pixel", () => {
  const h = 7, w = 7;
  const img = new Uint8Array(h * w).fill(255);
  img[3 * w + 3] = 0;
  const d = distanceTransform5(img, h, w);
  const at = (dy: number, dx: number) => d[(3 + dy) * w + 3 + dx];
  assertEquals(at(0, 0), 0);
  assertAlmostEquals(at(0, 1), 1, 1e-12);
  assertAlmostEquals(at(1, 1), 1.4, 1e-12);
  assertAlmostEquals(at(1, 2), 2.1969, 1e-12);
  assertAlmostEquals(at(0, 3), 3, 1e-12);
  assertAlmostEquals(at(3, 3), 4.2, 1e-12);
  assertEquals(distanceTransform5(new Uint8Array(4).fill(1), 2, 2)[0], Infinity);
});

Deno.test("equalizeHist maps the cumulative histogram above the lowest value onto 0..255", () => {
  // Values 10 (×2), 20 (×1), 30 (×1): the lowest maps to 0, then 255·1/2 and 255·2/2.
  assertEquals(Array.from(equalizeHist([10, 20, 10, 30])), [0, 128, 0, 255]);
  assertEquals(Array.from(equalizeHist([7, 7, 7])), [7, 7, 7]);
});
