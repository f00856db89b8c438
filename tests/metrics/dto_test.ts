import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { distanceToOrthogonality, dtoOfOrthogonal, HAAR_DTO_2 } from "../../lib/metrics/dto.ts";

/** J = U diag(s) Vᵀ with U = the first d columns of I_rows: right singular vectors V, singular values s. */
function jacobianOf(v: number[][], s: number[], rows = v.length + 1): number[] {
  const d = v.length;
  const jac = new Array(rows * d).fill(0);
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < d; c++) jac[r * d + c] = s[r] * v[c][r];
  }
  return jac;
}

const rotation = (theta: number) => [[Math.cos(theta), -Math.sin(theta)], [Math.sin(theta), Math.cos(theta)]];

Deno.test("DtO of a signed permutation is exactly 0, for V itself and for a Jacobian with those singular vectors", () => {
  const p = [[0, 0, -1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, -1, 0, 0]];
  assertEquals(dtoOfOrthogonal(p), 0);
  assertEquals(dtoOfOrthogonal([[-1]]), 0);
  const result = distanceToOrthogonality(jacobianOf(p, [4, 3, 2, 1], 6), 1, 6, 4);
  assertEquals(Array.from(result.perSample), [0]);
  assertEquals(result.dto, 0);
});

Deno.test("DtO of a 45° rotation in 2-D is √(4 − 2√2) = 1.0824, the largest possible for d = 2", () => {
  const expected = Math.sqrt(4 - 2 * Math.SQRT2);
  assertAlmostEquals(expected, 1.0824, 5e-5);
  assertAlmostEquals(dtoOfOrthogonal(rotation(Math.PI / 4)), expected, 1e-15);
  assertAlmostEquals(distanceToOrthogonality(jacobianOf(rotation(Math.PI / 4), [3, 1]), 1, 3, 2).dto, expected, 1e-14);
});

Deno.test("|V_kl| = 1/√d gives √(2d − 2√d): 2 for the 4×4 Hadamard matrix; 2.3511 for d = 5 bounds every 5×5 V", () => {
  const h = [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]].map((row) => row.map((x) => x / 2));
  assertAlmostEquals(dtoOfOrthogonal(h), 2, 1e-15);
  assertAlmostEquals(distanceToOrthogonality(jacobianOf(h, [4, 3, 2, 1]), 1, 5, 4).dto, 2, 1e-13);
  // No real orthogonal 5×5 matrix has |V_kl| = 1/√5 everywhere (that would be a Hadamard matrix of order 5), so the
  // formula's value at such a matrix is the bound the report quotes: max_π Σ|V_kπ(k)| ≥ √d for every orthogonal V.
  const flat = Array.from({ length: 5 }, (_, k) => Array.from({ length: 5 }, (_, l) => (k * l) % 3 === 1 ? -1 : 1));
  const bound = dtoOfOrthogonal(flat.map((row) => row.map((x) => x / Math.sqrt(5))));
  assertAlmostEquals(bound, Math.sqrt(10 - 2 * Math.sqrt(5)), 1e-14);
  assertAlmostEquals(bound, 2.3511, 5e-5);
  const fiveByFive = REFERENCE.cases.filter((c) => c.d === 5);
  assert(fiveByFive.length > 0 && fiveByFive.every((c) => dtoOfOrthogonal(c.v) < bound));
});

Deno.test("mean DtO over uniform 2-D rotations is (16√2/π)(1 − cos π/8) = 0.5483 (midpoint grid of angles)", () => {
  const closedForm = HAAR_DTO_2;
  assertAlmostEquals(closedForm, 0.548260, 1e-6);
  const m = 7200;
  const jac = new Float64Array(m * 3 * 2);
  for (let i = 0; i < m; i++) jac.set(jacobianOf(rotation((i + 0.5) * 2 * Math.PI / m), [2, 1]), i * 6);
  const result = distanceToOrthogonality(jac, m, 3, 2);
  // The integrand is smooth between its kinks at multiples of π/4, which the grid's midpoints straddle
  // symmetrically: the midpoint rule is O(h²), 4.3e-9 here.
  assertAlmostEquals(result.dto, closedForm, 1e-8);
  assertAlmostEquals(result.svGap, 0.5, 1e-14);
});

Deno.test("20,000 Gaussian 3×2 decoders: mean DtO agrees with the closed form and numpy's brute-force value", () => {
  const rng = Rng.derive(7, "dto-gaussian");
  const n = 20000;
  const jac = new Float64Array(n * 6);
  for (let i = 0; i < jac.length; i++) jac[i] = rng.normal();
  const { perSample, dto } = distanceToOrthogonality(jac, n, 3, 2);
  let squares = 0;
  for (const v of perSample) squares += (v - dto) ** 2;
  const se = Math.sqrt(squares / (n - 1) / n);
  // A Gaussian matrix's right singular vectors are Haar on O(2): the uniform-rotation mean.
  const closedForm = HAAR_DTO_2;
  assert(Math.abs(dto - closedForm) < 3 * se, `mean ${dto} ± ${se} vs ${closedForm}`);
  const numpy = REFERENCE.gaussian_3x2;
  assertEquals(numpy.n, n);
  assert(Math.abs(numpy.mean - closedForm) < 3 * numpy.se, `numpy ${numpy.mean} ± ${numpy.se} vs ${closedForm}`);
  assert(Math.abs(dto - numpy.mean) < 3 * Math.hypot(se, numpy.se), `mean ${dto} ± ${se} vs numpy ${numpy.mean}`);
});

Deno.test("DtO and the singular-value gap are invariant to the sign and order of J's columns", () => {
  const rng = Rng.derive(3, "dto-invariance");
  const [n, rows, cols] = [40, 7, 4];
  const jac = Float64Array.from({ length: n * rows * cols }, () => rng.normal());
  const order = [2, 0, 3, 1];
  const signs = [1, -1, -1, 1];
  const changed = new Float64Array(jac.length);
  for (let e = 0; e < jac.length; e++) {
    const c = e % cols;
    changed[e] = signs[c] * jac[e - c + order[c]];
  }
  const a = distanceToOrthogonality(jac, n, rows, cols);
  const b = distanceToOrthogonality(changed, n, rows, cols);
  for (let i = 0; i < n; i++) assertAlmostEquals(b.perSample[i], a.perSample[i], 1e-12, `sample ${i}`);
  assertAlmostEquals(b.svGap, a.svGap, 1e-14);
  assert(a.dto > 0.5, "random Jacobians are far from orthogonal to the axes");
});

interface DtoCase {
  d: number;
  rows: number;
  v: number[][];
  jac: number[];
  dto: number;
  sv_gap: number;
}
const REFERENCE: { cases: DtoCase[]; gaussian_3x2: { n: number; mean: number; sd: number; se: number } } = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/reference_dto.json", import.meta.url)),
);

Deno.test("DtO equals numpy's brute force over all signed permutations (L1-closest P, then ‖V − P‖_F), d = 1..5", () => {
  for (const [index, c] of REFERENCE.cases.entries()) {
    assertAlmostEquals(dtoOfOrthogonal(c.v), c.dto, 1e-14, `case ${index} (d = ${c.d}): V`);
    const result = distanceToOrthogonality(c.jac, 1, c.rows, c.d);
    assertAlmostEquals(result.perSample[0], c.dto, 1e-13, `case ${index} (d = ${c.d}): J`);
    assertAlmostEquals(result.svGap, c.sv_gap, 1e-14, `case ${index} (d = ${c.d}): gap`);
  }
});

Deno.test("all samples in one call: perSample in order, dto their mean, svGap the median (even count: middle mean)", () => {
  for (let d = 2; d <= 5; d++) {
    const cases = REFERENCE.cases.filter((c) => c.d === d);
    const rows = cases[0].rows;
    const result = distanceToOrthogonality(cases.flatMap((c) => c.jac), cases.length, rows, d);
    cases.forEach((c, i) => assertAlmostEquals(result.perSample[i], c.dto, 1e-13));
    assertAlmostEquals(result.dto, cases.reduce((s, c) => s + c.dto, 0) / cases.length, 1e-13);
    const gaps = cases.map((c) => c.sv_gap).sort((a, b) => a - b);
    assertAlmostEquals(result.svGap, gaps[(gaps.length - 1) / 2], 1e-14);
  }
  const two = distanceToOrthogonality(
    [...jacobianOf(rotation(0.3), [3, 1]), ...jacobianOf(rotation(1), [4, 2])],
    2,
    3,
    2,
  );
  assertAlmostEquals(two.svGap, (2 / 3 + 1 / 2) / 2, 1e-14);
  assertEquals(distanceToOrthogonality([0.5, -2, 1], 1, 3, 1).svGap, 1);
  assertEquals(distanceToOrthogonality([0, 0, 0, 0, 0, 0], 1, 3, 2).svGap, 0);
});

Deno.test("distanceToOrthogonality refuses rows < cols, a wrong length and non-finite entries (naming the sample)", () => {
  assertThrows(() => distanceToOrthogonality(new Float64Array(6), 1, 2, 3), Error, "rows (outputs) ≥ cols");
  assertThrows(() => distanceToOrthogonality(new Float64Array(11), 2, 3, 2), Error, "expected n·rows·cols = 2·3·2");
  const jac = new Float64Array(3 * 4 * 2).fill(1);
  jac[2 * 8 + 5] = NaN;
  assertThrows(() => distanceToOrthogonality(jac, 3, 4, 2), Error, "sample 2 has a non-finite entry NaN");
  jac[2 * 8 + 5] = Infinity;
  assertThrows(() => distanceToOrthogonality(jac, 3, 4, 2), Error, "sample 2");
  assertThrows(() => distanceToOrthogonality([], 0, 3, 2), Error, "n must be a positive integer");
  assertThrows(() => dtoOfOrthogonal([[1, 0], [0]]), Error, "square");
});
