import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { clipPerturbation, type DistanceName, distanceOf, l0, l2, linf } from "../../lib/attacks/distances.ts";

/** numpy reference values from fixtures/make_distances_reference.py (foolbox test_distances.py cases). */
interface ReferenceCase {
  name: string;
  n: number;
  shape: number[];
  x?: number[];
  adv?: number[];
  distances: Record<DistanceName, number[]>;
  clipped_median: Record<Exclude<DistanceName, "l0">, { epsilon: number; distances: number[] }>;
}
const reference: { cases: ReferenceCase[] } = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/distances_reference.json", import.meta.url)),
);

function inputsOf(c: ReferenceCase): { x: Float32Array; adv: Float32Array } {
  if (c.x && c.adv) return { x: Float32Array.from(c.x), adv: Float32Array.from(c.adv) };
  // example_4d: 0.2 against 0.2 + 0.6 in float32, as foolbox builds it.
  const size = c.n * c.shape.reduce((a, b) => a * b, 1);
  const x = new Float32Array(size).fill(0.2);
  return { x, adv: new Float32Array(size).fill(Math.fround(Math.fround(0.2) + Math.fround(0.6))) };
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, rtol: number, label: string): void {
  assertEquals(actual.length, expected.length, label);
  for (let i = 0; i < expected.length; i++) {
    assertAlmostEquals(actual[i], expected[i], rtol * Math.abs(expected[i]) + 1e-12, `${label}[${i}]`);
  }
}

for (const c of reference.cases) {
  Deno.test(`distances match numpy norms: ${c.name}`, () => {
    const { x, adv } = inputsOf(c);
    for (const name of ["l0", "l1", "l2", "linf"] as const) {
      // numpy accumulates in float32 (about 1e-7 relative per term); we accumulate in float64.
      assertClose(distanceOf(name)(x, adv, c.n), c.distances[name], 1e-5, `${c.name} ${name}`);
    }
  });

  Deno.test(`clipping to the median distance gives min(d, ε): ${c.name}`, () => {
    const { x, adv } = inputsOf(c);
    for (const name of ["l1", "l2", "linf"] as const) {
      const { epsilon, distances } = c.clipped_median[name];
      const before = distanceOf(name)(x, adv, c.n);
      const clipped = clipPerturbation(name, x, adv, c.n, epsilon);
      const after = distanceOf(name)(x, clipped, c.n);
      assertClose(after, distances, 1e-5, `${c.name} ${name} vs numpy`);
      assertClose(after, Array.from(before, (d) => Math.min(d, epsilon)), 1e-5, `${c.name} ${name} vs min(d, ε)`);
    }
  });
}

Deno.test("the random case clips some samples and keeps others exactly", () => {
  const c = reference.cases.find((k) => k.name === "random")!;
  const { x, adv } = inputsOf(c);
  const { epsilon } = c.clipped_median.l2;
  const before = l2(x, adv, c.n);
  const clipped = clipPerturbation("l2", x, adv, c.n, epsilon);
  const size = x.length / c.n;
  let kept = 0, shrunk = 0;
  for (let r = 0; r < c.n; r++) {
    const row = clipped.subarray(r * size, (r + 1) * size), orig = adv.subarray(r * size, (r + 1) * size);
    if (before[r] <= epsilon) {
      assertEquals(Array.from(row), Array.from(orig));
      kept++;
    } else {
      // Shrunk along the same direction: (clipped − x) = factor·(adv − x), factor = ε/d.
      const factor = epsilon / before[r];
      for (let i = 0; i < size; i++) {
        assertAlmostEquals(row[i] - x[r * size + i], factor * (orig[i] - x[r * size + i]), 1e-6);
      }
      shrunk++;
    }
  }
  assert(kept >= 4 && shrunk >= 3, `kept ${kept}, shrunk ${shrunk}`);
});

Deno.test("L0 counts changed entries; linf of a single change is its size", () => {
  const x = new Float32Array([0, 0, 0, 0, 1, 1, 1, 1]);
  const adv = new Float32Array([0, 0.5, 0, -0.25, 1, 1, 1, 1]);
  assertEquals(Array.from(l0(x, adv, 2)), [2, 0]);
  assertEquals(Array.from(linf(x, adv, 2)), [0.5, 0]);
});

Deno.test("clipPerturbation: null and ∞ leave the input, L0 with a finite ε and ε < 0 are usage errors", () => {
  const x = new Float32Array([0, 0, 0, 0]), adv = new Float32Array([1, 2, 3, 4]);
  assertEquals(Array.from(clipPerturbation("l2", x, adv, 1, null)), [1, 2, 3, 4]);
  assertEquals(Array.from(clipPerturbation("linf", x, adv, 1, Infinity)), [1, 2, 3, 4]);
  assertEquals(Array.from(clipPerturbation("l0", x, adv, 1, null)), [1, 2, 3, 4]);
  assertThrows(() => clipPerturbation("l0", x, adv, 1, 3), UsageError, "reducing L0 norms is not supported");
  assertThrows(() => clipPerturbation("l2", x, adv, 1, -1), UsageError, "ε must be ≥ 0");
  assertEquals(Array.from(clipPerturbation("linf", x, adv, 1, 1.5)), [1, 1.5, 1.5, 1.5]);
  // A zero perturbation stays zero (foolbox floors the norm at 1e-12).
  assertEquals(Array.from(clipPerturbation("l2", x, x, 1, 0)), [0, 0, 0, 0]);
});
