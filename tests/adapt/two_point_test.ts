import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import {
  collapseBoundary,
  collapseMap,
  columnBoundaries,
  entLinearRate,
  gridPairs,
  maxCollapsedRatio,
  plLinearDeterminant,
  plLinearRate,
  tauGrid,
  TwoPointDynamics,
  twoPointGradient,
  twoPointLoss,
} from "../../lib/adapt/two_point.ts";

/** (τt, τs) pairs on both sides of both boundaries, away from them (the rates are not near 0). */
const PAIRS: [number, number][] = [[1, 1], [1, 0.3], [0.5, 2], [2, 0.5], [0.2, 0.7], [3, 0.1]];

Deno.test("twoPointGradient: ENT is the total derivative of L(y, y), PL the student partial (central differences)", () => {
  const h = 1e-6;
  for (const [tauT, tauS] of PAIRS) {
    for (const y of [-0.7, -0.05, 0.3, 1.2]) {
      const ent = (twoPointLoss(y + h, y + h, tauT, tauS) - twoPointLoss(y - h, y - h, tauT, tauS)) / (2 * h);
      const pl = (twoPointLoss(y + h, y, tauT, tauS) - twoPointLoss(y - h, y, tauT, tauS)) / (2 * h);
      assertAlmostEquals(twoPointGradient("ent", y, tauT, tauS), ent, 1e-7 * Math.max(1, Math.abs(ent)));
      assertAlmostEquals(twoPointGradient("pl", y, tauT, tauS), pl, 1e-7 * Math.max(1, Math.abs(pl)));
    }
  }
});

Deno.test("the linear rates are minus the loss curvature at y = 0 (second differences)", () => {
  const h = 1e-3;
  for (const [tauT, tauS] of PAIRS) {
    const ent =
      (twoPointLoss(h, h, tauT, tauS) - 2 * twoPointLoss(0, 0, tauT, tauS) + twoPointLoss(-h, -h, tauT, tauS)) /
      (h * h);
    const pl = (twoPointLoss(h, 0, tauT, tauS) - 2 * twoPointLoss(0, 0, tauT, tauS) + twoPointLoss(-h, 0, tauT, tauS)) /
      (h * h);
    // ∂²L/∂y_s∂y_t: the teacher's pull on the student, which the copied teacher adds to PL's rate.
    const mixed = (twoPointLoss(h, h, tauT, tauS) - twoPointLoss(h, -h, tauT, tauS) - twoPointLoss(-h, h, tauT, tauS) +
      twoPointLoss(-h, -h, tauT, tauS)) / (4 * h * h);
    const scale = 1 / (tauS * Math.min(tauT, tauS));
    assertAlmostEquals(entLinearRate(tauT, tauS), -ent, 1e-4 * scale);
    assertAlmostEquals(plLinearRate(tauT, tauS), -(pl + mixed), 1e-4 * scale);
    // PL with a teacher ẏ_t = α(y_s − y_t): Jacobian [[−∂²L/∂y_s², −∂²L/∂y_s∂y_t], [α, −α]].
    for (const alpha of [0.1, 1, 7]) {
      const det = pl * alpha + mixed * alpha;
      assertAlmostEquals(plLinearDeterminant(tauT, tauS, alpha), det, 1e-4 * alpha * scale);
    }
  }
});

Deno.test("growth of y from 1e-4 under plain GD matches the linear rate", () => {
  const lr = 1e-3, steps = 20, y0 = 1e-4;
  for (const [tauT, tauS] of PAIRS) {
    for (const objective of ["ent", "pl"] as const) {
      const rate = objective === "ent" ? entLinearRate(tauT, tauS) : plLinearRate(tauT, tauS);
      if (Math.abs(rate) < 0.05) continue; // tauT = tauS: PL has no two-point dynamics.
      // w = [y0, −y0] puts both points at y = y0 (y₁ = w₀, y₂ = −w₁).
      const dynamics = new TwoPointDynamics(objective, [tauT], [tauS], { lr, momentum: 0, init: [y0, -y0] });
      dynamics.step(steps);
      const [y1] = dynamics.outputs(0), [y2] = dynamics.outputs(1);
      assertAlmostEquals(y1, y2, 1e-18);
      // One GD step multiplies y by 1 + lr·rate in the linear regime (‖x_k‖ = 1, x₁ ⟂ x₂).
      const measured = ((y1 / y0) ** (1 / steps) - 1) / lr;
      assertAlmostEquals(measured, rate, 1e-6 * Math.abs(rate), `${objective} τt ${tauT} τs ${tauS}`);
    }
  }
});

Deno.test("the two points move as mirror images and momentum follows the PyTorch convention", () => {
  const tauT = 0.8, tauS = 0.5, lr = 0.1, mu = 0.9;
  const dynamics = new TwoPointDynamics("ent", [tauT], [tauS], { lr, momentum: mu });
  // The same recursion on one scalar output y₁ = w₀ (the loss is even in y, so y₂ = −y₁).
  let y = 0.5, v = 0;
  for (let step = 0; step < 30; step++) {
    dynamics.step();
    v = mu * v + twoPointGradient("ent", y, tauT, tauS);
    y -= lr * v;
    assertAlmostEquals(dynamics.outputs(0)[0], y, 1e-14);
    assertAlmostEquals(dynamics.outputs(1)[0], -y, 1e-14);
  }
  assertEquals(dynamics.steps, 30);
});

Deno.test("boundaries on a coarse grid: the first grid ratio at or above Prop. 1's (ENT 1/2, PL 1)", () => {
  const g = 25;
  const taus = tauGrid(g);
  assertAlmostEquals(taus[0], 1e-3, 1e-15);
  assertAlmostEquals(taus[g - 1], 10, 1e-12);
  // Adjacent grid ratios differ by 10^(4/24); Prop. 1's boundary lies between the two on either side of it.
  const ratio = (k: number) => 10 ** ((4 * k) / (g - 1));
  const ent = collapseMap("ent", taus, 1000);
  const pl = collapseMap("pl", taus, 1000);
  assertAlmostEquals(collapseBoundary(ent)!, ratio(-1), 1e-9); // 0.464 < 0.5 < 0.681
  assertAlmostEquals(collapseBoundary(pl)!, ratio(0), 1e-9); // PL at τs = τt does not move: 1 is clear
  for (const [map, limit] of [[ent, 0.5], [pl, 1]] as const) {
    const columns = columnBoundaries(map).filter((b) => b !== undefined);
    assert(columns.length >= 5, `only ${columns.length} columns collapse`);
    // No column collapses at or above the closed form; each is clear from one grid step above it.
    assert(columns.every((b) => b! <= limit * ratio(1) * (1 + 1e-12)), `a collapse at τs/τt ≥ ${limit}`);
    assert(maxCollapsedRatio(map)! < limit);
  }
});

Deno.test("where Prop. 1's boundary is a grid ratio, every column that collapses puts it there (closed form)", () => {
  // τ from 1/4 to 4 in steps of √2: the ratios 2^(k/2) hold ENT's 1/2 and PL's 1, and on this τ range the runs
  // one grid step below them finish collapsing within 2,000 steps of SGD with momentum.
  const taus = tauGrid(9, 0.25, 4);
  for (const [objective, closedForm] of [["ent", 0.5], ["pl", 1]] as const) {
    const map = collapseMap(objective, taus, 2000);
    const columns = columnBoundaries(map).filter((b) => b !== undefined);
    assert(columns.length >= 5, `${objective}: only ${columns.length} columns collapse`);
    for (const b of columns) assertAlmostEquals(b!, closedForm, 1e-12, objective);
    assertAlmostEquals(collapseBoundary(map)!, closedForm, 1e-12, objective);
    // The last collapsed ratio is one grid step (√2) below.
    assertAlmostEquals(maxCollapsedRatio(map)!, closedForm / Math.SQRT2, 1e-12, objective);
  }
});

Deno.test("collapseBoundary: the median of the columns with a collapse", () => {
  const taus = Float64Array.of(1, 2, 4);
  // Row = τs index, column = τt index. Column 0 (τt 1): collapse at τs 1; column 1 (τt 2): τs 1, 2; column 2: none.
  const collapsed = Uint8Array.of(1, 1, 0, 0, 1, 0, 0, 0, 0);
  // The first clear ratio above each column's last collapse: τs 2 / τt 1, τs 4 / τt 2.
  assertEquals(columnBoundaries({ taus, collapsed }), [2, 2, undefined]);
  assertEquals(maxCollapsedRatio({ taus, collapsed }), 1);
  assertEquals(collapseBoundary({ taus, collapsed: Uint8Array.of(1, 1, 0, 0, 0, 0, 0, 0, 0) }), 1.5);
  assertEquals(collapseBoundary({ taus, collapsed: new Uint8Array(9) }), undefined);
  // A column collapsed up to its largest τs: its boundary lies beyond the grid.
  assertEquals(columnBoundaries({ taus, collapsed: Uint8Array.of(0, 0, 1, 0, 0, 1, 0, 0, 1) }), [
    undefined,
    undefined,
    Infinity,
  ]);
  const { tauT, tauS } = gridPairs(taus);
  assertEquals([...tauT], [1, 2, 4, 1, 2, 4, 1, 2, 4]);
  assertEquals([...tauS], [1, 1, 1, 2, 2, 2, 4, 4, 4]);
});

Deno.test("bad input: τ ≤ 0, grid < 2, steps < 1", () => {
  assertThrows(() => tauGrid(1), UsageError, "≥ 2");
  assertThrows(() => tauGrid(10, 0, 1), UsageError, "> 0");
  assertThrows(() => tauGrid(10, 1, 0.5), UsageError, "below");
  assertThrows(() => collapseMap("pl", tauGrid(3), 0), UsageError, "steps");
  assertThrows(() => new TwoPointDynamics("ent", [1], [-1]), UsageError, "tauS[0]");
  assertThrows(() => new TwoPointDynamics("ent", [1, 2], [1]), UsageError, "equal lengths");
  assertThrows(() => twoPointLoss(0, 0, 0, 1), UsageError, "tauT");
  assertThrows(() => plLinearDeterminant(1, 1, 0), UsageError, "alpha");
});
