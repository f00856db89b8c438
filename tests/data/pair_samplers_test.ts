import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { logGamma } from "../../lib/core/special_functions.ts";
import {
  adaPairs,
  type FactorPairs,
  genLaplace,
  lapPairs,
  NATURAL_AREA_RANGE,
  NATURAL_TRANSITIONS,
  naturalSequences,
  type PairSpace,
  reflect,
  truncatedLaplaceWeights,
  uniPairs,
} from "../../lib/data/pair_samplers.ts";

/** dSprites-like: a constant colour factor, categorical shape, then scale, orientation, x, y. */
const SPRITES: PairSpace = { sizes: [1, 3, 6, 40, 32, 32], categorical: [0, 1] };

/** Number of factors in which each pair differs. */
function changedCounts(pairs: FactorPairs, k: number): Int32Array {
  const counts = new Int32Array(pairs.first.n);
  for (let r = 0; r < pairs.first.n; r++) {
    for (let i = 0; i < k; i++) if (pairs.first.values[r * k + i] !== pairs.second.values[r * k + i]) counts[r]++;
  }
  return counts;
}

function inRange(pairs: FactorPairs, sizes: readonly number[]): boolean {
  const k = sizes.length;
  return [pairs.first.values, pairs.second.values].every((v) => v.every((x, p) => x >= 0 && x < sizes[p % k]));
}

/** Total variation distance between a histogram of counts and a pmf. */
function totalVariation(counts: ArrayLike<number>, pmf: ArrayLike<number>): number {
  let total = 0, tv = 0;
  for (let j = 0; j < counts.length; j++) total += counts[j];
  for (let j = 0; j < counts.length; j++) tv += Math.abs(counts[j] / total - pmf[j]) / 2;
  return tv;
}

/** The truncated-Laplace pmf from `start` over 0..size−1, optionally excluding `start`. */
function lapPmf(size: number, start: number, rate: number, excludeStart = false): number[] {
  const b = Math.log(size) / rate;
  const w = Array.from(
    { length: size },
    (_, j) => (excludeStart && j === start ? 0 : Math.exp(-Math.abs(j - start) / b)),
  );
  const z = w.reduce((a, c) => a + c, 0);
  return w.map((x) => x / z);
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

Deno.test("UNI changes k ~ U{1..D−1} factors, each to a different value; constant factors never change", () => {
  const n = 10_000;
  const pairs = uniPairs(SPRITES, n, new Rng(1));
  assert(inRange(pairs, SPRITES.sizes));
  const counts = changedCounts(pairs, 6);
  // D = 6 factors but only 5 can change, so k ~ U{1..5}.
  const histogram = new Array(6).fill(0);
  for (const c of counts) histogram[c]++;
  assertEquals(histogram[0], 0);
  for (let k = 1; k <= 5; k++) assertAlmostEquals(histogram[k] / n, 0.2, 0.02, `P(k = ${k}) = ${histogram[k] / n}`);
  // Each changeable factor changes with probability E[k]/5 = 3/5; the size-1 colour never does.
  for (let i = 0; i < 6; i++) {
    let changed = 0;
    for (let r = 0; r < n; r++) if (pairs.first.values[r * 6 + i] !== pairs.second.values[r * 6 + i]) changed++;
    if (i === 0) assertEquals(changed, 0);
    else assertAlmostEquals(changed / n, 0.6, 0.02, `factor ${i} changed in ${changed / n}`);
  }
  // With all factors changeable, k ranges over 1..D−1 and never reaches D.
  const all = changedCounts(uniPairs({ sizes: [4, 5, 6], categorical: [] }, 5000, new Rng(2)), 3);
  assert(all.every((c) => c === 1 || c === 2));
  assertAlmostEquals(all.filter((c) => c === 1).length / 5000, 0.5, 0.03);
  assertThrows(() => uniPairs({ sizes: [5], categorical: [] }, 1, new Rng(0)), RangeError, "≥ 2 factors");
});

Deno.test("UNI's new values are uniform over the other values", () => {
  const n = 40_000;
  const pairs = uniPairs({ sizes: [4, 2], categorical: [] }, n, new Rng(3));
  // k is always 1 here; count transitions of factor 0 from value 0.
  const to = new Array(4).fill(0);
  for (let r = 0; r < n; r++) {
    if (pairs.first.values[r * 2] === 0 && pairs.second.values[r * 2] !== 0) to[pairs.second.values[r * 2]]++;
  }
  assert(totalVariation(to, [0, 1 / 3, 1 / 3, 1 / 3]) < 0.02, `${to}`);
});

Deno.test("Ada pairs with fixed k differ in exactly k factors; 'random' in 1..D−1", () => {
  for (let k = 1; k <= 4; k++) {
    const pairs = adaPairs(SPRITES, 2000, new Rng(10 + k), { k });
    assert(inRange(pairs, SPRITES.sizes));
    assert(changedCounts(pairs, 6).every((c) => c === k), `k = ${k}`);
    // The constant colour factor never changes.
    for (let r = 0; r < 2000; r++) assertEquals(pairs.second.values[r * 6], 0);
  }
  const random = changedCounts(adaPairs(SPRITES, 5000, new Rng(20), { k: "random" }), 6);
  const histogram = new Array(6).fill(0);
  for (const c of random) histogram[c]++;
  assertEquals(histogram[0], 0);
  for (let k = 1; k <= 5; k++) assertAlmostEquals(histogram[k] / 5000, 0.2, 0.03);
  assertThrows(() => adaPairs(SPRITES, 1, new Rng(0), { k: 6 }), RangeError, "k must be an integer in 1..5");
  assertThrows(() => adaPairs(SPRITES, 1, new Rng(0), { k: 0 }), RangeError, "k must be");
  assertThrows(() => adaPairs(SPRITES, 1, new Rng(0), { k: 1.5 }), RangeError, "k must be");
});

Deno.test("LAP's moves of a size-32 factor follow the truncated Laplace pmf (TV < 0.02 over 50,000)", () => {
  const n = 50_000, size = 32;
  const pairs = lapPairs({ sizes: [size], categorical: [] }, n, new Rng(4), { keepNoChange: true });
  assert(inRange(pairs, [size]));
  // Histogram of the move j − start; its pmf averages the truncated pmf over the uniform start.
  const counts = new Array(2 * size - 1).fill(0);
  for (let r = 0; r < n; r++) counts[pairs.second.values[r] - pairs.first.values[r] + size - 1]++;
  const pmf = new Array(2 * size - 1).fill(0);
  for (let s = 0; s < size; s++) lapPmf(size, s, 1).forEach((p, j) => (pmf[j - s + size - 1] += p / size));
  const tv = totalVariation(counts, pmf);
  assert(tv < 0.02, `total variation ${tv}`);
  // A wrong scale (b = ln 32 / 2) is clearly distinguished.
  const narrow = new Array(2 * size - 1).fill(0);
  for (let s = 0; s < size; s++) lapPmf(size, s, 2).forEach((p, j) => (narrow[j - s + size - 1] += p / size));
  assert(totalVariation(counts, narrow) > 0.1);
});

Deno.test("LAP matches the truncated pmf per start value, for another rate too", () => {
  for (const rate of [1, 0.5]) {
    const size = 4, n = 40_000;
    const pairs = lapPairs({ sizes: [size], categorical: [] }, n, new Rng(5), { rate, keepNoChange: true });
    for (let s = 0; s < size; s++) {
      const counts = new Array(size).fill(0);
      for (let r = 0; r < n; r++) if (pairs.first.values[r] === s) counts[pairs.second.values[r]]++;
      const tv = totalVariation(counts, lapPmf(size, s, rate));
      assert(tv < 0.02, `rate ${rate}, start ${s}: total variation ${tv}`);
    }
  }
  const w = truncatedLaplaceWeights(3, 1);
  assertAlmostEquals(w[0 * 3 + 2], Math.exp(-2 / Math.log(3)), 1e-12);
  assertEquals(w[1 * 3 + 1], 1);
});

Deno.test("LAP keeps categorical factors fixed and, unless keepNoChange, every pair differs", () => {
  const n = 20_000;
  const pairs = lapPairs(SPRITES, n, new Rng(6));
  assert(inRange(pairs, SPRITES.sizes));
  for (let r = 0; r < n; r++) {
    assertEquals(pairs.second.values[r * 6], pairs.first.values[r * 6]);
    assertEquals(pairs.second.values[r * 6 + 1], pairs.first.values[r * 6 + 1]);
  }
  assert(changedCounts(pairs, 6).every((c) => c >= 1));
  // λ = 1 moves most factors most of the time (Klindt2021 Fig. 8), so no-change pairs exist but are rare.
  const kept = changedCounts(lapPairs(SPRITES, n, new Rng(6), { keepNoChange: true }), 6);
  const unchanged = kept.filter((c) => c === 0).length;
  assert(unchanged > 0 && unchanged < n * 0.05, `${unchanged} unchanged pairs`);
  // Categorical-only or constant spaces cannot force a change.
  assertThrows(() => lapPairs({ sizes: [3, 1], categorical: [0] }, 1, new Rng(0)), RangeError, "non-categorical");
  assertThrows(() => lapPairs(SPRITES, 1, new Rng(0), { rate: 0 }), RangeError, "rate");
});

Deno.test("LAP's forced change follows the truncated pmf with the current value excluded", () => {
  // One factor: every pair is a forced-or-natural change, whose law is p(j) / (1 − p(start)), j ≠ start.
  const size = 5, n = 50_000;
  const pairs = lapPairs({ sizes: [size], categorical: [] }, n, new Rng(7), { rate: 2 });
  for (let s = 0; s < size; s++) {
    const counts = new Array(size).fill(0);
    for (let r = 0; r < n; r++) if (pairs.first.values[r] === s) counts[pairs.second.values[r]]++;
    assertEquals(counts[s], 0);
    const tv = totalVariation(counts, lapPmf(size, s, 2, true));
    assert(tv < 0.02, `start ${s}: total variation ${tv}`);
  }
  // Size 2: the only change flips the value.
  const flips = lapPairs({ sizes: [2, 3], categorical: [1] }, 1000, new Rng(8));
  for (let r = 0; r < 1000; r++) assertEquals(flips.second.values[r * 2], 1 - flips.first.values[r * 2]);
});

Deno.test("genLaplace: E|x − loc| = s·Γ(2/α)/Γ(1/α) within 2% over 200,000 draws, symmetric about loc", () => {
  const rng = new Rng(10);
  for (const source of ["youtube", "kitti"] as const) {
    for (const [name, p] of Object.entries(NATURAL_TRANSITIONS[source])) {
      const n = 200_000;
      let absMean = 0, above = 0;
      for (let i = 0; i < n; i++) {
        const x = genLaplace(rng, p.alpha, p.loc, p.scale);
        absMean += Math.abs(x - p.loc) / n;
        if (x > p.loc) above++;
      }
      const expected = p.scale * Math.exp(logGamma(2 / p.alpha) - logGamma(1 / p.alpha));
      assertAlmostEquals(absMean / expected, 1, 0.02, `${source} Δ${name}: E|x − loc| ${absMean} vs ${expected}`);
      assertAlmostEquals(above / n, 0.5, 0.005, `${source} Δ${name}: P(x > loc) = ${above / n}`);
    }
  }
  // α = 2 is a normal with variance s²/2; α = 1 a Laplace with E|x| = s.
  let sq = 0, abs = 0;
  for (let i = 0; i < 200_000; i++) {
    sq += genLaplace(rng, 2, 0, 1) ** 2 / 200_000;
    abs += Math.abs(genLaplace(rng, 1, 0, 3)) / 200_000;
  }
  assertAlmostEquals(sq, 0.5, 0.01);
  assertAlmostEquals(abs, 3, 0.03);
});

Deno.test("the natural-transition constants are those of Klindt2021 Tables 11–13", () => {
  assertEquals(NATURAL_TRANSITIONS.youtube, {
    area: { alpha: 0.444, loc: 0, scale: 5.04 },
    x: { alpha: 0.515, loc: 0, scale: 0.257 },
    y: { alpha: 0.548, loc: 0, scale: 0.308 },
  });
  assertEquals(NATURAL_TRANSITIONS.kitti, {
    area: { alpha: 0.455, loc: 1.0, scale: 1.01 },
    x: { alpha: 0.587, loc: 0.0476, scale: 0.169 },
    y: { alpha: 0.694, loc: 0.0102, scale: 0.232 },
  });
});

Deno.test("reflect folds values into the range, repeatedly for long jumps", () => {
  assertEquals(reflect(5, 0, 64), 5);
  assertEquals(reflect(-3, 0, 64), 3);
  assertEquals(reflect(70, 0, 64), 58);
  assertEquals(reflect(130, 0, 64), 2);
  assertEquals(reflect(-130, 0, 64), 2);
  assertEquals(reflect(25, 30, 100), 35);
});

Deno.test("natural sequences: shape, ranges, and steps with the fitted increment law", () => {
  const n = 400, length = 101;
  const [areaMin, areaMax] = NATURAL_AREA_RANGE;
  for (const source of ["youtube", "kitti"] as const) {
    const seq = naturalSequences(n, length, new Rng(11), { source });
    assertEquals(seq.length, n * length * 3);
    for (let p = 0; p < seq.length; p += 3) {
      assert(seq[p] >= 0 && seq[p] < 1 && seq[p + 1] >= 0 && seq[p + 1] < 1, `position at ${p / 3}`);
      const area = (seq[p + 2] * 64) ** 2;
      assert(area >= areaMin * (1 - 1e-5) && area <= areaMax * (1 + 1e-5), `area ${area}`);
    }
    // Steps away from the borders are unreflected draws: compare medians of |Δ − loc| with the law's.
    const rng = new Rng(12);
    for (const [c, name] of [[0, "x"], [1, "y"]] as const) {
      const p = NATURAL_TRANSITIONS[source][name];
      const steps: number[] = [];
      for (let s = 0; s < n; s++) {
        for (let t = 1; t < length; t++) {
          const a = seq[(s * length + t - 1) * 3 + c] * 64, b = seq[(s * length + t) * 3 + c] * 64;
          if (a > 16 && a < 48) steps.push(Math.abs(b - a - p.loc));
        }
      }
      const law = Array.from({ length: 100_000 }, () => Math.abs(genLaplace(rng, p.alpha, p.loc, p.scale) - p.loc));
      const ratio = median(steps) / median(law);
      assert(steps.length > 10_000 && Math.abs(ratio - 1) < 0.05, `${source} Δ${name}: median ratio ${ratio}`);
    }
  }
  // Positions move a little each frame, not in jumps across the frame.
  const seq = naturalSequences(50, 20, new Rng(13), { source: "youtube" });
  let moved = 0;
  for (let s = 0; s < 50; s++) {
    for (let t = 1; t < 20; t++) moved += Math.abs(seq[(s * 20 + t) * 3] - seq[(s * 20 + t - 1) * 3]);
  }
  assert(moved / (50 * 19) < 0.1, `mean |Δx| ${moved / (50 * 19)} of the frame`);
  assertThrows(() => naturalSequences(1, 0, new Rng(0), { source: "kitti" }), RangeError, "length");
  assertThrows(
    () => naturalSequences(1, 2, new Rng(0), { source: "kitti", areaRange: [10, 5] }),
    RangeError,
    "areaRange",
  );
});

Deno.test("same seed gives the same output, another seed another", () => {
  const samplers: ((rng: Rng) => unknown)[] = [
    (rng) => uniPairs(SPRITES, 100, rng),
    (rng) => lapPairs(SPRITES, 100, rng),
    (rng) => lapPairs(SPRITES, 100, rng, { keepNoChange: true, rate: 2 }),
    (rng) => adaPairs(SPRITES, 100, rng, { k: 2 }),
    (rng) => adaPairs(SPRITES, 100, rng, { k: "random" }),
    (rng) => naturalSequences(10, 8, rng, { source: "youtube" }),
    (rng) => naturalSequences(10, 8, rng, { source: "kitti" }),
    (rng) => Array.from({ length: 50 }, () => genLaplace(rng, 0.5, 0, 1)),
  ];
  for (const sample of samplers) {
    assertEquals(sample(new Rng(42)), sample(new Rng(42)));
    assertNotEquals(sample(new Rng(42)), sample(new Rng(43)));
  }
});
