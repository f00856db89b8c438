import { assert, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { FactorSpace } from "../../lib/data/ground_truth.ts";
import {
  factorsOf,
  makeSplit,
  oneOodIndices,
  oodFactor,
  sampleSplit,
  type Split,
  SPLIT_DATASETS,
  SPLIT_NAMES,
  SPLIT_SIZES,
} from "../../lib/data/splits.ts";

/** Train counts worked out by hand from Schott2022 Tables 2–3 (the grid minus or within the listed values). */
const TRAIN_COUNTS = {
  dsprites: {
    // shape 3 · scale 6−2 · orientation 40−8 · x 32−7 · y 32−7, for both interpolation and extrapolation.
    interpolation: 3 * 4 * 32 * 25 * 25,
    extrapolation: 3 * 4 * 32 * 25 * 25,
    // Test is the corner: orientation ≥ 4, x ≥ 3 and y ≥ 3.
    composition: 737_280 - 3 * 6 * 36 * 29 * 29,
  },
  shapes3d: {
    // hues 10−2 each, scale 8−2, shape 4, azimuth 15−3: 147,456.
    interpolation: 8 * 8 * 8 * 6 * 4 * 12,
    extrapolation: 8 * 8 * 8 * 6 * 4 * 12,
    // Test: every hue and the azimuth ≠ 0, so train = 480,000 − 9·9·9·8·4·14 = 153,408.
    composition: 480_000 - 9 * 9 * 9 * 8 * 4 * 14,
  },
  mpi3d: {
    // colour 6−1, shape 6, size 2, height 3−1, background 3−1, x and y 40−4: 311,040.
    interpolation: 5 * 6 * 2 * 2 * 2 * 36 * 36,
    extrapolation: 5 * 6 * 2 * 2 * 2 * 36 * 36,
    // Test: x ≥ 6 and y ≥ 6, so train = 1,036,800 − 6·6·2·3·3·34·34 = 287,712.
    composition: 1_036_800 - 6 * 6 * 2 * 3 * 3 * 34 * 34,
  },
};

Deno.test("the hand-counted train sizes: 240,000 / 192,312, 147,456 / 153,408, 311,040 / 287,712", () => {
  assertEquals(TRAIN_COUNTS.dsprites.interpolation, 240_000);
  assertEquals(TRAIN_COUNTS.dsprites.composition, 192_312);
  assertEquals(TRAIN_COUNTS.shapes3d.interpolation, 147_456);
  assertEquals(TRAIN_COUNTS.shapes3d.composition, 153_408);
  assertEquals(TRAIN_COUNTS.mpi3d.interpolation, 311_040);
  assertEquals(TRAIN_COUNTS.mpi3d.composition, 287_712);
  for (const dataset of SPLIT_DATASETS) {
    for (const name of ["interpolation", "extrapolation", "composition"] as const) {
      assertEquals(makeSplit(dataset, name).train.length, TRAIN_COUNTS[dataset][name], `${dataset} ${name}`);
    }
  }
});

/** Checks that train and test are ascending, disjoint and together the grid. */
function checkPartition(split: Split, label: string) {
  const total = new FactorSpace(split.sizes).total;
  const seen = new Uint8Array(total);
  for (const part of [split.train, split.test]) {
    for (let i = 0; i < part.length; i++) {
      if (i > 0 && part[i] <= part[i - 1]) throw new Error(`${label}: not ascending at ${i}`);
      seen[part[i]]++;
    }
  }
  assert(seen.every((v) => v === 1), `${label}: train ∩ test = ∅ and train ∪ test = grid`);
}

Deno.test("every split of every dataset partitions its grid into ascending train and test", () => {
  for (const dataset of SPLIT_DATASETS) {
    for (const name of SPLIT_NAMES) checkPartition(makeSplit(dataset, name), `${dataset} ${name}`);
  }
});

Deno.test("the listed values decide membership: spot checks against Tables 2–3", () => {
  const space = new FactorSpace(SPLIT_SIZES.dsprites);
  const has = (split: Split, tuple: number[]) => {
    const index = space.indexOf(tuple);
    const inTrain = split.train.includes(index), inTest = split.test.includes(index);
    assert(inTrain !== inTest);
    return inTrain ? "train" : "test";
  };
  const interpolation = makeSplit("dsprites", "interpolation");
  assertEquals(has(interpolation, [2, 0, 0, 0, 0]), "train");
  assertEquals(has(interpolation, [0, 0, 37, 0, 0]), "test"); // orientation 37 ends the step-5 list
  assertEquals(has(interpolation, [0, 0, 36, 0, 0]), "train");
  assertEquals(has(interpolation, [0, 0, 0, 0, 29]), "test");
  const extrapolation = makeSplit("dsprites", "extrapolation");
  assertEquals(has(extrapolation, [0, 3, 31, 24, 24]), "train");
  assertEquals(has(extrapolation, [0, 5, 0, 0, 0]), "test");
  const composition = makeSplit("dsprites", "composition");
  assertEquals(has(composition, [0, 5, 3, 31, 31]), "train"); // orientation 3 is a train value
  assertEquals(has(composition, [2, 0, 4, 3, 3]), "test"); // every listed factor beyond its train values
});

Deno.test("the random split is seeded (the same every call) with round(fraction · total) train points", () => {
  const a = makeSplit("shapes3d", "random"), b = makeSplit("shapes3d", "random");
  assertEquals(a.train, b.train);
  assertEquals(a.train.length, 147_456); // 0.3072 · 480,000
  assertEquals(makeSplit("mpi3d", "random").train.length, 311_040); // 0.30 · 1,036,800
  assertEquals(makeSplit("dsprites", "random").train.length, 239_985); // round(0.3255 · 737,280)
  // Every value of every factor occurs in train, so no point is out of distribution.
  assertEquals(oneOodIndices(a).length, 0);
});

/** A hand-made split over a 3 × 4 grid: test when factor 0 is 2 or factor 1 is 3 (interpolation-like). */
function smallSplit(): Split {
  const train: number[] = [], test: number[] = [];
  for (let a = 0; a < 3; a++) for (let b = 0; b < 4; b++) (a === 2 || b === 3 ? test : train).push(a * 4 + b);
  return { name: "interpolation", sizes: [3, 4], train: Int32Array.from(train), test: Int32Array.from(test) };
}

Deno.test("D_one-ood on a 3 × 4 grid: the test points with exactly one exclusive value, by hand", () => {
  const split = smallSplit();
  // Test points: (2,0) (2,1) (2,2) (2,3) (0,3) (1,3); (2,3) has two exclusive values.
  assertEquals([...split.test], [3, 7, 8, 9, 10, 11]);
  assertEquals([...oneOodIndices(split)], [3, 7, 8, 9, 10]);
  assertEquals([3, 7, 8, 9, 10, 11].map((i) => oodFactor(split, i)), [1, 1, 0, 0, 0, -1]);
  assertEquals([...split.train].map((i) => oodFactor(split, i)), [-1, -1, -1, -1, -1, -1]);
});

Deno.test("D_one-ood is empty for composition (no value is exclusive) and counted for dSprites interpolation", () => {
  assertEquals(oneOodIndices(makeSplit("dsprites", "composition")).length, 0);
  // shape 3 × [scale OOD 2·32·25·25 + scale ID 4 · (orientation OOD 8·25·25 + orientation ID 32 · 2·7·25)].
  const expected = 3 * (2 * 32 * 25 * 25 + 4 * (8 * 25 * 25 + 32 * 2 * 7 * 25));
  assertEquals(oneOodIndices(makeSplit("dsprites", "interpolation")).length, expected);
});

Deno.test("sampleSplit draws factor tuples only from its part", () => {
  const split = smallSplit();
  const rng = new Rng(7);
  const space = new FactorSpace(split.sizes);
  const parts = { train: new Set(split.train), test: new Set(split.test), one_ood: new Set(oneOodIndices(split)) };
  for (const part of ["train", "test", "one_ood"] as const) {
    const { values, n } = sampleSplit(split, part, 500, rng);
    assertEquals(n, 500);
    const drawn = new Set(Array.from({ length: n }, (_, r) => space.indexOf(values.subarray(r * 2, r * 2 + 2))));
    assertEquals([...drawn].sort((a, b) => a - b), [...parts[part]], part); // only, and (500 draws) all of them
  }
  const big = makeSplit("mpi3d", "extrapolation");
  const { values } = sampleSplit(big, "one_ood", 200, rng);
  const test = new Set(big.test);
  const bigSpace = new FactorSpace(big.sizes);
  for (let r = 0; r < 200; r++) {
    const index = bigSpace.indexOf(values.subarray(r * 7, r * 7 + 7));
    assert(test.has(index) && oodFactor(big, index) >= 0);
  }
  assertThrows(() => sampleSplit(makeSplit("dsprites", "composition"), "one_ood", 1, rng), Error, "empty");
});

Deno.test("factorsOf decodes flat indices as FactorSpace does (last factor fastest)", () => {
  const space = new FactorSpace(SPLIT_SIZES.shapes3d);
  const indices = [0, 1, 14, 15, 479_999, 123_456];
  const { values, n } = factorsOf(space.sizes, indices);
  assertEquals(n, 6);
  indices.forEach((index, r) => assertEquals(values.subarray(r * 6, r * 6 + 6), space.tupleOf(index)));
});
