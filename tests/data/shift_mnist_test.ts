import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { loadMnist, type MnistSplit } from "../../lib/data/mnist.ts";
import { SHIFT_VARIANTS, shiftCue, shiftMnist, type ShiftVariant } from "../../lib/data/shift_mnist.ts";
import { fitLogisticRegression, type LogisticRegressionModel } from "../../lib/ml/logistic_regression.ts";

const { train, test } = loadMnist({ seed: 0, train: 1000, test: 500 });
const SIZE = 28 * 28;
/** The top four rows: the binary cue and a band of the grating, where the centred digits (rows 4–23) rarely reach. */
const PROBE_ROWS = 4;

function probeFeatures(split: MnistSplit) {
  const cols = PROBE_ROWS * 28;
  const data = new Float64Array(split.n * cols);
  for (let r = 0; r < split.n; r++) for (let p = 0; p < cols; p++) data[r * cols + p] = split.images[r * SIZE + p];
  return { data, rows: split.n, cols };
}

function accuracy(model: LogisticRegressionModel, split: MnistSplit, targets: Int32Array): number {
  const proba = model.predictProba(probeFeatures(split));
  const k = model.classes.length;
  let right = 0;
  for (let r = 0; r < split.n; r++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (proba[r * k + c] > proba[r * k + best]) best = c;
    if (model.classes[best] === targets[r]) right++;
  }
  return right / split.n;
}

Deno.test("cues: the grating in [0, 0.3] with its orientation, the binary block at row 0, column 2 + 2c", () => {
  const g0 = shiftCue("background", 0), g5 = shiftCue("background", 5);
  assertEquals(g0.length, SIZE);
  assert(g0.every((v) => v >= 0 && v <= 0.3 + 1e-7));
  // θ 0: the grating varies along rows only; θ 90° (class 5): along columns only.
  for (let j = 0; j < 28; j++) assertAlmostEquals(g0[3 * 28 + j], g0[3 * 28], 1e-6);
  for (let i = 0; i < 28; i++) assertAlmostEquals(g5[i * 28 + 3], g5[3], 1e-6);
  assertAlmostEquals(g0[2 * 28], 0.3, 1e-6); // sin(2π·2/8) = 1
  for (let c = 0; c < 10; c++) {
    const b = shiftCue("binary", c);
    const on = [...b.keys()].filter((p) => b[p] === 1);
    assertEquals(on, [2 + 2 * c, 3 + 2 * c, 28 + 2 + 2 * c, 28 + 3 + 2 * c]);
    assertEquals(b.reduce((a, v) => a + v, 0), 4);
  }
});

for (const variant of SHIFT_VARIANTS) {
  Deno.test(`${variant}: images are max(digit, cue of the true class) in train mode; a probe on the cue reads y`, () => {
    const shifted = shiftMnist(train, variant, "train", new Rng(1));
    assertEquals([...shifted.labels], [...train.labels]);
    assertEquals([...shifted.cues], [...train.labels]);
    for (const r of [0, 17, 999]) {
      const cue = shiftCue(variant, train.labels[r]);
      for (let p = 0; p < SIZE; p++) {
        assertEquals(shifted.images[r * SIZE + p], Math.max(train.images[r * SIZE + p], cue[p]));
      }
    }
    const probe = fitLogisticRegression(probeFeatures(shifted), shifted.labels, { maxIter: 30 });
    const trainAcc = accuracy(probe, shifted, shifted.labels);
    assert(trainAcc >= 0.99, `${variant}: probe train accuracy ${trainAcc}`);
    // Held out (train-mode test digits) it still reads the label off the cue…
    const clean = shiftMnist(test, variant, "train", new Rng(2));
    assert(accuracy(probe, clean, clean.labels) >= 0.99);
    // …and under the shift it follows the cue, not the digit.
    const moved = shiftMnist(test, variant, "shifted", new Rng(3));
    const followsCue = accuracy(probe, moved, moved.cues), followsLabel = accuracy(probe, moved, moved.labels);
    assert(followsCue >= 0.99 && followsLabel <= 0.01, `${variant}: cue ${followsCue}, label ${followsLabel}`);
  });
}

Deno.test("a shifted cue never equals y and is uniform over the other nine classes", () => {
  for (const variant of SHIFT_VARIANTS) {
    const moved = shiftMnist(train, variant, "shifted", new Rng(4));
    assert(moved.cues.every((c, r) => c !== moved.labels[r] && c >= 0 && c < 10));
    const counts = new Array(9).fill(0);
    for (let r = 0; r < moved.n; r++) counts[(moved.cues[r] - moved.labels[r] - 1 + 10) % 10]++;
    // Each offset 1..9 has p = 1/9: 111 ± 10 (s.d.); 4 s.d. bounds.
    assert(counts.every((n) => Math.abs(n - 1000 / 9) < 40), `offsets ${counts}`);
    for (const r of [0, 5]) {
      const cue = shiftCue(variant, moved.cues[r]);
      for (let p = 0; p < SIZE; p++) {
        assertEquals(moved.images[r * SIZE + p], Math.max(train.images[r * SIZE + p], cue[p]));
      }
    }
  }
  // Seeded, and the input split is untouched.
  const a = shiftMnist(test, "binary", "shifted", new Rng(5)), b = shiftMnist(test, "binary", "shifted", new Rng(5));
  assertEquals([...a.cues], [...b.cues]);
  assertEquals(test.images[0 * SIZE + 2], loadMnist({ seed: 0, train: 1000, test: 500 }).test.images[2]);
});

Deno.test("unknown variants, modes and classes are usage errors", () => {
  assertThrows(() => shiftMnist(test, "texture" as ShiftVariant, "train", new Rng(0)), UsageError, "background");
  assertThrows(() => shiftMnist(test, "binary", "test" as "train", new Rng(0)), UsageError, "shifted");
  assertThrows(() => shiftCue("binary", 10), UsageError, "0..9");
  assertThrows(() => shiftCue("binary", 1.5), UsageError, "0..9");
});
