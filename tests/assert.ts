/**
 * Assertions for tests. JSR (and with it @std/assert) is unreachable from the
 * build machines, so node:assert backs a few std-like helpers.
 *
 * @module
 */
import nodeAssert from "node:assert/strict";

/** Asserts that `value` is truthy. */
export function assert(value: unknown, message?: string): asserts value {
  nodeAssert.ok(value, message);
}

/** Asserts deep equality. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Asserts deep inequality. */
export function assertNotEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.notDeepStrictEqual(actual, expected, message);
}

/** Asserts |actual − expected| ≤ tolerance. */
export function assertAlmostEquals(actual: number, expected: number, tolerance = 1e-7, message?: string): void {
  if (!(Math.abs(actual - expected) <= tolerance)) {
    throw new nodeAssert.AssertionError({
      message: message ?? `expected ${actual} to be within ${tolerance} of ${expected}`,
      actual,
      expected,
    });
  }
}

/** Asserts that `fn` throws an error of class `type` whose message includes `includes`. */
export function assertThrows(fn: () => unknown, type: new (...args: never[]) => Error, includes?: string): Error {
  try {
    fn();
  } catch (error) {
    return checkError(error, type, includes);
  }
  throw new nodeAssert.AssertionError({ message: `expected ${type.name} to be thrown` });
}

function checkError(error: unknown, type: new (...args: never[]) => Error, includes?: string): Error {
  nodeAssert.ok(error instanceof type, `expected ${type.name}, got ${error}`);
  if (includes) {
    nodeAssert.ok((error as Error).message.includes(includes), `"${(error as Error).message}" lacks "${includes}"`);
  }
  return error as Error;
}

/** Asserts that the promise `fn` returns rejects with `type`; returns the error. */
export async function assertRejects(
  fn: () => Promise<unknown>,
  type: new (...args: never[]) => Error,
  includes?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return checkError(error, type, includes);
  }
  throw new nodeAssert.AssertionError({ message: `expected ${type.name} to be thrown` });
}

/** Each array's largest absolute difference relative to its largest value in `a`, the largest over arrays. */
export function largestRelativeDifference(a: Float32Array[], b: Float32Array[]): number {
  return Math.max(...a.map((p, i) => {
    let diff = 0, scale = 0;
    p.forEach((v, j) => {
      diff = Math.max(diff, Math.abs(v - b[i][j]));
      scale = Math.max(scale, Math.abs(v));
    });
    return diff / scale;
  }));
}
