import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  corrGap,
  disentanglementScore,
  type FactorKind,
  knnNeighbors1d,
  migBinned,
} from "../../lib/metrics/disentanglement_score.ts";
import { fromRows, permutedGridCopy } from "./helpers.ts";

interface DsCase {
  name: string;
  k: number;
  train_fraction: number;
  kinds: FactorKind[];
  codes: number[][];
  factors: number[][];
  expected: { ds: number; dsBounded: number; perFactor: number[]; scores: number[][]; vote_ties: number };
}
const REFERENCE: {
  ds: DsCase[];
  mig_corr: {
    codes: number[][];
    factors: number[][];
    mig_binned: { mig: number; perFactor: number[]; mutualInfo: number[][] };
    corr_gap: { gap: number; perFactor: number[] };
  };
} = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_ds.json", import.meta.url)));

for (const c of REFERENCE.ds) {
  Deno.test(`DS equals sklearn KNeighbors{Regressor,Classifier} on the "${c.name}" arrays (k ${c.k}, fit share ${c.train_fraction})`, () => {
    const result = disentanglementScore(fromRows(c.codes), fromRows(c.factors), c.kinds, {
      k: c.k,
      trainFraction: c.train_fraction,
    });
    c.expected.scores.forEach((row, i) =>
      row.forEach((a, j) => assertAlmostEquals(result.scores[i][j], a, 1e-14, `A[${i}][${j}]`))
    );
    c.expected.perFactor.forEach((v, i) => assertAlmostEquals(result.perFactorThesis[i], v, 1e-14, `factor ${i}`));
    assertAlmostEquals(result.dsThesis, c.expected.ds, 1e-14);
    // The bounded terms from sklearn's A: the normaliser is (best − second)/thesis term, each A floored at the
    // constant predictor's (0 for regression, acc_const for classification).
    c.expected.scores.forEach((row, i) => {
      const [best, second] = row.slice().sort((a, b) => b - a);
      const norm = (best - second) / c.expected.perFactor[i];
      const expected = c.kinds[i] === "regression"
        ? (Math.max(0, best) - Math.max(0, second)) / norm
        : (Math.max(best, norm) - Math.max(second, norm)) / (1 - norm);
      assertAlmostEquals(result.perFactor[i], expected, 1e-12, `bounded factor ${i}`);
      assert(result.perFactor[i] >= 0 && result.perFactor[i] <= 1);
    });
    // The classification scores went through sklearn's vote ties (smallest label wins).
    assert(c.expected.vote_ties > 0);
  });
}

Deno.test("DS defaults are k = 5 and trainFraction = 0.8", () => {
  const c = REFERENCE.ds.find((c) => c.name === "mixed")!;
  const codes = fromRows(c.codes);
  const factors = fromRows(c.factors);
  assertEquals(
    disentanglementScore(codes, factors, c.kinds),
    disentanglementScore(codes, factors, c.kinds, { k: 5, trainFraction: 0.8 }),
  );
});

/** Brute force: every fitting index ordered by (|x − q|, index), the first k. */
function bruteNeighbors(fit: number[], queries: number[], k: number): number[] {
  return queries.flatMap((q) =>
    fit.map((_, i) => i).sort((a, b) => Math.abs(fit[a] - q) - Math.abs(fit[b] - q) || a - b).slice(0, k)
  );
}

Deno.test("1-D kNN window = brute force by (distance, index) on values with many ties, in distance order", () => {
  const rng = Rng.derive(11, "knn-ties");
  for (const k of [1, 2, 5, 9]) {
    // Few distinct values: equal distances on one side and on both sides of a query are everywhere.
    const fit = Array.from({ length: 60 }, () => rng.int(9) - 4);
    const queries = Array.from({ length: 40 }, () => (rng.int(19) - 9) / 2);
    assertEquals(Array.from(knnNeighbors1d(fit, queries, k)), bruteNeighbors(fit, queries, k), `k = ${k}`);
  }
  const fit = Array.from({ length: 200 }, () => rng.normal());
  const queries = Array.from({ length: 50 }, () => 3 * rng.normal());
  assertEquals(Array.from(knnNeighbors1d(fit, queries, 5)), bruteNeighbors(fit, queries, 5));
});

Deno.test("1-D kNN ties: equal distance either side or equal values go to the lower fitting index", () => {
  assertEquals(Array.from(knnNeighbors1d([1, -1, 3, -3], [0], 1)), [0]);
  assertEquals(Array.from(knnNeighbors1d([-1, 1], [0], 1)), [0]);
  assertEquals(Array.from(knnNeighbors1d([5, 2, 2, 2, -2], [0], 2)), [1, 2]);
  assertEquals(Array.from(knnNeighbors1d([5, 2, -2, 2, -2], [0], 3)), [1, 2, 3]);
  // 1 − 1e-17 and 1 − 2e-17 both round to 1: one distance from two distinct values, still lower index first.
  assertEquals(Array.from(knnNeighbors1d([2e-17, 1e-17, 3, 5], [1], 1)), [0]);
  assertThrows(() => knnNeighbors1d([1, 2], [0], 3), Error, "k must be an integer in 1..2");
  assertThrows(() => knnNeighbors1d([1, NaN], [0], 1), Error, "fit[1] is NaN");
});

Deno.test("classification DS: hand-computed accuracies, thesis and bounded normalisations", () => {
  // Latent 0 separates the classes, latent 1 interleaves them; k = 1, 8 fitting rows and 4 scored.
  const codes = fromRows([
    [0, 0],
    [1, 1],
    [2, 2],
    [10, 3],
    [11, 4],
    [12, 5],
    [13, 6],
    [3, 7],
    [0.5, 0.9],
    [11.5, 1.2],
    [12.5, 4.1],
    [2.6, 6.2],
  ]);
  const labels = [0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0];
  const factors = fromRows(labels.map((l) => [l]));
  const result = disentanglementScore(codes, factors, ["classification"], { k: 1, trainFraction: 8 / 12 });
  // Latent 0: all 4 right. Latent 1: 0.9 → row 1 (0) ✓, 1.2 → row 1 (0) ✗, 4.1 → row 4 (1) ✓, 6.2 → row 6 (1) ✗.
  assertEquals(result.scores, [[1, 0.5]]);
  // Majority of the fitting rows: 4 vs 4, the smaller label 0, right on 2 of 4 scored rows.
  assertEquals(result.perFactorThesis, [(1 - 0.5) / 0.5]);
  assertEquals(result.dsThesis, 1);
  // Bounded: (max(1, ½) − max(½, ½))/(1 − ½).
  assertEquals(result.ds, (1 - 0.5) / (1 - 0.5));
});

Deno.test("regression DS: hand-computed √Var − √mse with k = 2", () => {
  const codes = fromRows([[0, 5], [1, 0], [2, 1], [3, 3], [0.4, 0.2], [2.6, 4.9]]);
  const w = [0, 1, 2, 3, 0.5, 2.5];
  const factors = fromRows(w.map((v) => [v]));
  const result = disentanglementScore(codes, factors, ["regression"], { k: 2, trainFraction: 4 / 6 });
  // Scored w = (0.5, 2.5): √Var = 1. Latent 0 predicts mean(w0, w1) = 0.5 and mean(w3, w2) = 2.5: mse 0.
  // Latent 1: 0.2 → rows 1, 2 → 1.5; 4.9 → rows 0, 3 → 1.5: errors 1 and 1, mse 1.
  assertAlmostEquals(result.scores[0][0], 1, 1e-15);
  assertAlmostEquals(result.scores[0][1], 0, 1e-15);
  assertAlmostEquals(result.ds, 1, 1e-15);
  assertEquals(result.dsThesis, result.ds);
});

/** n rows of two independent U[0, 1] factors. */
function uniformFactors(n: number, seed: number): Matrix {
  const rng = Rng.derive(seed, "ds-bound");
  return { data: Float64Array.from({ length: 2 * n }, () => rng.uniform()), rows: n, cols: 2 };
}

Deno.test("DS stays in [0, 1] where the printed formula exceeds 1: perfect, permuted and uninformative runner-up", () => {
  const n = 5000;
  const w = uniformFactors(n, 1);
  // Perfect: the runner-up latent is an independent factor, whose kNN average of 5 unrelated values has
  // mse ≈ (1 + 1/5)·Var: A ≈ (1 − √1.2)·√Var < 0, and the printed formula gives ≈ 1.095.
  const perfect = disentanglementScore(w, w, ["regression", "regression"]);
  assert(perfect.dsThesis > 1.05, `thesis DS of a perfect code ${perfect.dsThesis}`);
  perfect.scores.forEach((row, i) => assert(row[1 - i] < 0, `runner-up A of factor ${i}: ${row[1 - i]}`));
  assert(perfect.ds <= 1 && perfect.ds > 0.98, `bounded DS of a perfect code ${perfect.ds}`);
  // Permuted, rescaled and sign-flipped: the same score.
  const permuted = {
    data: Float64Array.from({ length: 2 * n }, (_, e) => (e % 2 === 0 ? -3 * w.data[e + 1] : 0.5 * w.data[e - 1] + 7)),
    rows: n,
    cols: 2,
  };
  const p = disentanglementScore(permuted, w, ["regression", "regression"]);
  assert(p.dsThesis > 1.05 && p.ds <= 1 && p.ds > 0.98, `permuted: thesis ${p.dsThesis}, bounded ${p.ds}`);
  // Adversarial: both latents carry nothing (independent noise), so every A is ≤ 0 up to noise: bounded DS ≈ 0.
  const noise = uniformFactors(n, 2);
  const none = disentanglementScore(noise, w, ["regression", "regression"]);
  assert(none.ds >= 0 && none.ds < 0.02, `bounded DS of an uninformative code ${none.ds}`);
  // A 45° rotation: both latents inform both factors, so the gap and the score drop well below 1.
  const rotated = {
    data: Float64Array.from({ length: 2 * n }, (_, e) => {
      const r = e - (e % 2);
      return e % 2 === 0 ? w.data[r] - w.data[r + 1] : w.data[r] + w.data[r + 1];
    }),
    rows: n,
    cols: 2,
  };
  const mixed = disentanglementScore(rotated, w, ["regression", "regression"]);
  assert(mixed.ds >= 0 && mixed.ds < 0.1, `bounded DS of a 45° rotation ${mixed.ds}`);
});

Deno.test("classification DS with acc_const < ½: the printed formula reaches 2, the bounded one 1", () => {
  // Three balanced classes; latent 0 is the label, latent 1 noise. acc_const ≈ ⅓, acc₁ = 1, acc₂ ≈ ⅓.
  const n = 3000;
  const rng = Rng.derive(3, "ds-classes");
  const labels = Array.from({ length: n }, (_, i) => i % 3);
  const codes = fromRows(labels.map((l) => [l + 0.01 * rng.uniform(), rng.uniform()]));
  const factors = fromRows(labels.map((l) => [l]));
  const result = disentanglementScore(codes, factors, ["classification"]);
  assertEquals(result.scores[0][0], 1);
  assert(result.dsThesis > 1.5, `thesis DS ${result.dsThesis}`);
  assert(result.ds <= 1 && result.ds > 0.9, `bounded DS ${result.ds}`);
});

Deno.test("disentanglementScore refuses one latent, mismatched kinds, bad options and undefined normalisations", () => {
  const codes = fromRows(Array.from({ length: 20 }, (_, i) => [i, (i * 7) % 5]));
  const factors = fromRows(Array.from({ length: 20 }, (_, i) => [i % 3]));
  assertThrows(
    () => disentanglementScore(fromRows([[1], [2], [3]]), fromRows([[1], [2], [3]]), ["regression"]),
    Error,
    "≥ 2 latents",
  );
  assertThrows(() => disentanglementScore(codes, factors, []), Error, "kinds names 0 factors");
  assertThrows(() => disentanglementScore(codes, factors, ["ordinal" as FactorKind]), Error, "kind must be");
  assertThrows(() => disentanglementScore(codes, factors, ["regression"], { trainFraction: 1 }), Error, "(0, 1)");
  assertThrows(() => disentanglementScore(codes, factors, ["regression"], { k: 0 }), Error, "positive integer");
  assertThrows(() => disentanglementScore(codes, factors, ["regression"], { k: 17 }), Error, "≥ k = 17");
  const constantTail = fromRows(Array.from({ length: 20 }, (_, i) => [i < 16 ? i % 2 : 1]));
  assertThrows(() => disentanglementScore(codes, constantTail, ["regression"]), Error, "constant on the 4 scored rows");
  assertThrows(() => disentanglementScore(codes, constantTail, ["classification"]), Error, "DS is undefined");
  assertThrows(() => disentanglementScore(codes, fromRows([[1], [2]]), ["regression"]), Error, "row counts differ");
});

Deno.test("MIG-binned equals disentanglement_lib's MIG on 20-bin histogram-discretised factors (numpy/sklearn)", () => {
  const { codes, factors, mig_binned: expected } = REFERENCE.mig_corr;
  const result = migBinned(fromRows(codes), fromRows(factors));
  assertAlmostEquals(result.mig, expected.mig, 1e-14);
  expected.perFactor.forEach((v, j) => assertAlmostEquals(result.perFactor[j], v, 1e-14));
  expected.mutualInfo.forEach((row, i) => row.forEach((v, j) => assertAlmostEquals(result.mutualInfo[i][j], v, 1e-14)));
});

Deno.test("MIG-binned of an identity code of uniform factors is near 1 and drops under a 45° rotation", () => {
  const rng = Rng.derive(5, "mig-binned");
  const n = 10000;
  const w = Float64Array.from({ length: 2 * n }, () => rng.uniform());
  const factors: Matrix = { data: w, rows: n, cols: 2 };
  const identity = migBinned(factors, factors);
  // Code j falls in factor j's very bins: I = H; the other, independent code carries only the finite-sample bias
  // ≈ (20 − 1)²/(2n) nats against H ≈ log 20.
  assert(identity.mig > 0.98, `MIG-binned ${identity.mig}`);
  const rotated = Float64Array.from({ length: 2 * n }, (_, e) => {
    const r = e - (e % 2);
    return (e % 2 === 0 ? w[r] - w[r + 1] : w[r] + w[r + 1]) / Math.SQRT2;
  });
  const mixed = migBinned({ data: rotated, rows: n, cols: 2 }, factors);
  assert(mixed.mig < 0.1, `rotated MIG-binned ${mixed.mig}`);
});

Deno.test("corrGap equals numpy's |corrcoef| top-two gap; a permuted, rescaled, sign-flipped copy scores 1", () => {
  const { codes, factors, corr_gap: expected } = REFERENCE.mig_corr;
  const result = corrGap(fromRows(codes), fromRows(factors));
  assertAlmostEquals(result.gap, expected.gap, 1e-14);
  expected.perFactor.forEach((v, j) => assertAlmostEquals(result.perFactor[j], v, 1e-14));
  // The full factorial grid makes the factors exactly uncorrelated: top |corr| 1, runner-up 0.
  const copy = permutedGridCopy();
  const perfect = corrGap(copy.codes, copy.factors);
  assertAlmostEquals(perfect.gap, 1, 1e-14);
  perfect.perFactor.forEach((v) => assertAlmostEquals(v, 1, 1e-14));
  // One latent: the runner-up is 0.
  const single = corrGap(fromRows([[1], [2], [4]]), fromRows([[-2], [-4], [-8]]));
  assertAlmostEquals(single.gap, 1, 1e-15);
});
