/**
 * What tests/data/fixtures/make_corruption_reference.py computed with numpy, scipy and PIL, and the comparisons the
 * corruption kernel tests make against it.
 */
import { assert, assertEquals } from "../assert.ts";

/** What make_corruption_reference.py computed with numpy, scipy and PIL. */
export const REFERENCE = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/reference_corruption_ops.json", import.meta.url)),
);

/** One image of the reference, `[h, w, c]`. */
export interface TestImage {
  img: Float32Array;
  h: number;
  w: number;
  c: number;
}

/** The reference's image `name`. */
export function testImage(name: string): TestImage {
  const { shape, values } = REFERENCE.images[name];
  return { img: Float32Array.from(values), h: shape[0], w: shape[1], c: shape[2] };
}

/** Asserts equal lengths and every |actual − expected| ≤ `tolerance`. */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tolerance: number,
  what: string,
): void {
  assertEquals(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  assert(worst <= tolerance, `${what}: largest difference ${worst} > ${tolerance}`);
}

/** An `[h, w, c]` image of one value. */
export function constantImage(h: number, w: number, c: number, value: number): Float32Array {
  return new Float32Array(h * w * c).fill(value);
}
