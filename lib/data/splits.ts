/**
 * The train/test splits of the in-domain generalization benchmark (Schott2022
 * §4.2, Tables 2–3 and App. H): each dataset's full factor grid cut so that train and test
 * have disjoint support.
 *
 * - interpolation / extrapolation: a point is TEST if any factor takes one of
 *   the listed values, train otherwise;
 * - composition: a point is TRAIN if any factor takes one of the listed
 *   values, test otherwise (a corner of the factor hypercube);
 * - random: an i.i.d. split with about 30% train, the same for every run.
 *
 * Shape and object type (and MPI3D's two-valued size) are never split.
 * Splits hold ascending flat indices of the grid (last factor fastest, as
 * {@linkcode FactorSpace.indexOf}), in typed arrays: dSprites' four splits
 * take milliseconds, not per-point tuple objects.
 *
 * @module
 */
import { Rng } from "../core/rng.ts";
import { DSPRITES_SIZES } from "./dsprites.ts";
import type { Factors } from "./ground_truth.ts";
import { MPI3D_SIZES } from "./original_files.ts";
import { SHAPES3D_SIZES } from "./shapes3d.ts";

/** The split names of the benchmark. */
export const SPLIT_NAMES = ["random", "composition", "interpolation", "extrapolation"] as const;
/** The datasets whose splits the benchmark defines. */
export const SPLIT_DATASETS = ["dsprites", "shapes3d", "mpi3d"] as const;
/** A dataset with benchmark splits. */
export type SplitDataset = typeof SPLIT_DATASETS[number];

/** A train/test split of a factor grid: ascending flat indices of each part, together the whole grid. */
export interface Split {
  /** Which of {@linkcode SPLIT_NAMES}. */
  name: typeof SPLIT_NAMES[number];
  /** Values per factor of the grid. */
  sizes: readonly number[];
  /** Ascending flat indices of the training points. */
  train: Int32Array;
  /** Ascending flat indices of the test points (the complement of train). */
  test: Int32Array;
}

/** Factor sizes of each benchmark dataset, in its factor order. */
export const SPLIT_SIZES: Record<SplitDataset, readonly number[]> = {
  dsprites: DSPRITES_SIZES,
  shapes3d: SHAPES3D_SIZES,
  mpi3d: MPI3D_SIZES,
};

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const DSPRITES_XY_INTERPOLATION = [2, 7, 11, 15, 20, 24, 29];

/**
 * The listed values of Schott2022 Tables 2–3, per factor in the dataset's factor
 * order: test values for interpolation and extrapolation, train values for
 * composition. An empty list: the factor is not split.
 *
 * dSprites (shape, scale, orientation, x, y): interpolation orientation is
 * {2, 7, 12, 17, 22, 27, 32, 37} (every fifth index from 2, as the report
 * prints it). App. H.1's scale range {0,…,4} is a misprint: scale has 6
 * values and extrapolation removes {4, 5}.
 */
export const SPLIT_VALUES: Record<SplitDataset, Record<Exclude<Split["name"], "random">, readonly number[][]>> = {
  dsprites: {
    interpolation: [
      [],
      [1, 4],
      [2, 7, 12, 17, 22, 27, 32, 37],
      DSPRITES_XY_INTERPOLATION,
      DSPRITES_XY_INTERPOLATION,
    ],
    extrapolation: [[], [4, 5], range(32, 39), range(25, 31), range(25, 31)],
    composition: [[], [], range(0, 3), range(0, 2), range(0, 2)],
  },
  // floor hue, wall hue, object hue, scale, shape, orientation (azimuth)
  shapes3d: {
    interpolation: [[2, 7], [2, 7], [2, 7], [2, 5], [], [2, 7, 12]],
    extrapolation: [[8, 9], [8, 9], [8, 9], [6, 7], [], [12, 13, 14]],
    composition: [[0], [0], [0], [], [], [0]],
  },
  // colour, shape, size, height, background, x, y
  mpi3d: {
    interpolation: [[3], [], [], [1], [1], [5, 15, 24, 34], [5, 15, 24, 34]],
    extrapolation: [[5], [], [], [2], [2], range(36, 39), range(36, 39)],
    composition: [[], [], [], [], [], range(0, 5), range(0, 5)],
  },
};

/**
 * Train fraction of the random split: Schott2022 Table 4's column headed
 * "% test", whose headers are swapped (recomputing the splits from Tables
 * 2–3 gives these as TRAIN fractions, and the text says "~30% train"). They
 * equal the interpolation splits' train fractions, 240,000 / 737,280 ≈
 * 0.3255, 0.3072 and 0.30; the random split keeps round(fraction · total)
 * points, 239,985 for dSprites.
 */
export const RANDOM_TRAIN_FRACTION: Record<SplitDataset, number> = { dsprites: 0.3255, shapes3d: 0.3072, mpi3d: 0.3 };

/** The seed of every random split, so that all runs share one split. */
export const RANDOM_SPLIT_SEED = 0;

/** Strides of the flat index: last factor fastest. */
function strides(sizes: readonly number[]): number[] {
  return sizes.map((_, i) => sizes.slice(i + 1).reduce((a, b) => a * b, 1));
}

function gridTotal(sizes: readonly number[]): number {
  return sizes.reduce((a, b) => a * b, 1);
}

/** Splits the grid by a per-point predicate on "some factor takes a listed value". */
function listedSplit(
  name: Split["name"],
  sizes: readonly number[],
  listed: readonly number[][],
  listedIsTest: boolean,
) {
  const k = sizes.length;
  const masks = sizes.map((n, j) => {
    const mask = new Uint8Array(n);
    for (const v of listed[j]) mask[v] = 1;
    return mask;
  });
  const total = gridTotal(sizes);
  const inTest = new Uint8Array(total);
  // Walk the grid in runs of the last factor: the other factors' verdict is found once per run,
  // advanced as an odometer so that no index is decoded by division.
  const last = k - 1, run = sizes[last], lastMask = masks[last];
  const prefix = new Int32Array(last);
  let trainCount = 0;
  for (let start = 0; start < total; start += run) {
    let prefixHit = false;
    for (let j = 0; j < last && !prefixHit; j++) prefixHit = masks[j][prefix[j]] === 1;
    for (let v = 0; v < run; v++) {
      const test = (prefixHit || lastMask[v] === 1) === listedIsTest;
      inTest[start + v] = test ? 1 : 0;
      if (!test) trainCount++;
    }
    for (let j = last - 1; j >= 0; j--) {
      if (++prefix[j] < sizes[j]) break;
      prefix[j] = 0;
    }
  }
  return fromMembership(name, sizes, inTest, trainCount);
}

/** A {@linkcode Split} from a per-point test flag `[total]`; both parts come out ascending. */
function fromMembership(name: Split["name"], sizes: readonly number[], inTest: Uint8Array, trainCount: number): Split {
  const train = new Int32Array(trainCount), test = new Int32Array(inTest.length - trainCount);
  let a = 0, b = 0;
  for (let index = 0; index < inTest.length; index++) {
    if (inTest[index]) test[b++] = index;
    else train[a++] = index;
  }
  return { name, sizes, train, test };
}

/** The random split: `round(fraction · total)` train points drawn without replacement with a fixed seed. */
function randomSplit(sizes: readonly number[], fraction: number): Split {
  const total = gridTotal(sizes);
  const trainCount = Math.round(fraction * total);
  const rng = new Rng(RANDOM_SPLIT_SEED);
  // Partial Fisher–Yates: the first trainCount slots end up a uniform sample without replacement.
  const order = new Int32Array(total);
  for (let i = 0; i < total; i++) order[i] = i;
  const inTest = new Uint8Array(total).fill(1);
  for (let i = 0; i < trainCount; i++) {
    const j = i + rng.int(total - i);
    const picked = order[j];
    order[j] = order[i];
    order[i] = picked;
    inTest[picked] = 0;
  }
  return fromMembership("random", sizes, inTest, trainCount);
}

/**
 * The benchmark split `name` of `dataset` (Schott2022 Tables 2–3; see
 * {@linkcode SPLIT_VALUES} and {@linkcode RANDOM_TRAIN_FRACTION}). The
 * procedural dSprites variants (dsprites-rot included) share dSprites' grid
 * and its splits.
 */
export function makeSplit(dataset: SplitDataset, name: Split["name"]): Split {
  const sizes = SPLIT_SIZES[dataset];
  if (sizes === undefined) throw new Error(`no benchmark splits for "${dataset}"; valid: ${SPLIT_DATASETS.join(", ")}`);
  if (name === "random") return randomSplit(sizes, RANDOM_TRAIN_FRACTION[dataset]);
  const listed = SPLIT_VALUES[dataset][name];
  if (listed === undefined) throw new Error(`unknown split "${name}"; valid: ${SPLIT_NAMES.join(", ")}`);
  return listedSplit(name, sizes, listed, name !== "composition");
}

/** Factor tuples `[indices.length, k]` of flat grid indices. */
export function factorsOf(sizes: readonly number[], indices: ArrayLike<number>): Factors {
  const k = sizes.length, stride = strides(sizes);
  const values = new Int32Array(indices.length * k);
  for (let r = 0; r < indices.length; r++) {
    let rest = indices[r];
    for (let j = 0; j < k; j++) {
      const v = Math.floor(rest / stride[j]);
      values[r * k + j] = v;
      rest -= v * stride[j];
    }
  }
  return { values, n: indices.length };
}

/** Per split, derived once: which factor values never occur in train, and the one-OOD points. */
interface Derived {
  /** `exclusive[j][v]` = 1 where value v of factor j is an exclusive test value. */
  exclusive: Uint8Array[];
  strides: number[];
  oneOod?: Int32Array;
}

const derived = new WeakMap<Split, Derived>();

function derive(split: Split): Derived {
  let d = derived.get(split);
  if (d) return d;
  const { sizes, train } = split;
  const k = sizes.length, stride = strides(sizes);
  // Eq. 3's "a value no training point has", read off the training part itself, so hand-made splits work too.
  const seen = sizes.map((n) => new Uint8Array(n));
  for (let r = 0; r < train.length; r++) {
    let rest = train[r];
    for (let j = 0; j < k; j++) {
      const v = Math.floor(rest / stride[j]);
      seen[j][v] = 1;
      rest -= v * stride[j];
    }
  }
  d = { exclusive: seen.map((s) => s.map((x) => 1 - x)), strides: stride };
  derived.set(split, d);
  return d;
}

/**
 * The factor of grid point `flatIndex` that takes an exclusive test value
 * (a value no training point has, Eq. 3), when exactly one factor does;
 * −1 when none does (every training point, every random-split point) or
 * when several do. Composition splits have no exclusive test value (each
 * value occurs in train; only the combinations are new), so this is −1 for
 * every point of a composition split and its D_one-ood is empty.
 */
export function oodFactor(split: Split, flatIndex: number): number {
  const { exclusive, strides: stride } = derive(split);
  let found = -1;
  let rest = flatIndex;
  for (let j = 0; j < stride.length; j++) {
    const v = Math.floor(rest / stride[j]);
    rest -= v * stride[j];
    if (exclusive[j][v]) {
      if (found >= 0) return -1;
      found = j;
    }
  }
  return found;
}

/** D_one-ood (Eq. 3): ascending flat indices of the test points with exactly one exclusive test value. */
export function oneOodIndices(split: Split): Int32Array {
  const d = derive(split);
  if (d.oneOod) return d.oneOod;
  const picked = new Int32Array(split.test.length);
  let count = 0;
  for (const index of split.test) if (oodFactor(split, index) >= 0) picked[count++] = index;
  d.oneOod = picked.slice(0, count);
  return d.oneOod;
}

/**
 * `n` factor tuples `[n, k]` drawn uniformly, with replacement, from one part
 * of the split: "train", "test" or "one_ood" (D_one-ood). Throws when the
 * part is empty (one_ood of a random or composition split).
 */
export function sampleSplit(split: Split, part: "train" | "test" | "one_ood", n: number, rng: Rng): Factors {
  const pool = part === "one_ood" ? oneOodIndices(split) : split[part];
  if (pool.length === 0) throw new Error(`the ${part} part of the ${split.name} split is empty; nothing to sample`);
  const picked = new Int32Array(n);
  for (let i = 0; i < n; i++) picked[i] = pool[rng.int(pool.length)];
  return factorsOf(split.sizes, picked);
}
