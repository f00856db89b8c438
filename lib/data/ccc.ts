/**
 * Continually Changing Corruptions (CCC; Schneider2023 Ch. 4, App. C Algorithms 1–2, oripress/CCC
 * `generate.py`) at digit scale: a stream in which every image carries two corruptions in sequence, (c1 at s1, then
 * c2 at s2), whose severities walk along a path chosen so that a pretrained model's accuracy stays near a target.
 *
 * 1. {@linkcode calibrate}: the model's accuracy on fixed calibration digits for every ordered pair (c1, c2) and every
 *    severity pair (s1, s2) ∈ {0, step, …, 5}², real severities by `corruptAt` (level 0 the identity).
 * 2. {@linkcode findPath}: generate.py's `find_path` / `traverse_graph` on one pair's grid: a path from (s1, 0) to
 *    s1 = 0, each step lowering s1 or raising s2 by one step, built from the end so that each point takes the
 *    successor whose path mean accuracy, this point included, is nearer the target; the start is the s1 whose path
 *    mean is nearest.
 * 3. {@linkcode cccStream}: `speed` images per path point (digits drawn uniformly from a pool, shifted by up to ±2 px
 *    in place of the reference's random crop; digits are not flipped), then c1 ← c2, c2 uniform among the others, and
 *    the next pair's path; cut into batches of 64.
 *
 * Every draw derives from the seed and the global image index (digit, shift and corruption noise) or from the seed
 * alone (the sequence of pairs), so a batch depends on its index only and a stream resumes from any batch index.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import {
  corruptAt,
  CORRUPTION_NAMES,
  type CorruptionName,
  type CorruptionTableName,
  isCorruptionName,
} from "./corruptions.ts";
import type { Observations } from "./ground_truth.ts";

/** The highest severity of the corruption tables. */
export const MAX_SEVERITY = 5;
/** CCC-Hard's corruptions (generate.py, baseline < 20): the three noises and contrast. */
export const CCC_HARD_CORRUPTIONS: readonly CorruptionName[] = [
  "gaussian_noise",
  "shot_noise",
  "impulse_noise",
  "contrast",
];
/** Images per batch of the CCC evaluations (thesis §4 setup). */
export const CCC_BATCH = 64;
/** Largest shift in pixels of a stream image along each axis (stands in for the reference's random crop). */
export const CCC_MAX_SHIFT = 2;
/** generate.py's cost of a step past the last s2 column (a path of length 1 with this cost). */
const OUT_OF_GRID_COST = 9999999999999;
/** generate.py's initial "nearest distance" when choosing the start. */
const NO_START_YET = 99999999999;

/** A corruption at a real severity in [0, 5] of a batch (the shape of `corruptAt` in corruptions.ts). */
export type CorruptAtFn = (
  images: Observations,
  name: CorruptionName,
  severity: number,
  opts: { seed: number; table?: CorruptionTableName; firstIndex?: number },
) => Observations;

/** Labelled square grayscale images: `images` row-major `[n, side, side, 1]` in [0, 1], `labels` `[n]`. */
export interface CccDigits {
  /** Row-major `[n, side, side, 1]` in [0, 1]. */
  images: Float32Array;
  /** Classes `[n]`. */
  labels: Int32Array;
  /** Number of images. */
  n: number;
}

/** Predicted classes `[n]` of images `[n, side, side, 1]` (the model being calibrated). */
export type Classify = (images: Float32Array, n: number) => Int32Array | Promise<Int32Array>;

/** A point of a severity path and the calibrated accuracy there. */
export interface SeverityPoint {
  /** Severity of the first corruption, in [0, 5]. */
  s1: number;
  /** Severity of the second corruption, in [0, 5]. */
  s2: number;
  /** The grid's accuracy at (s1, s2). */
  accuracy: number;
}

/** Accuracy grids of a model per ordered corruption pair, from {@linkcode calibrate}. */
export interface CccCalibration {
  /** The corruptions whose ordered pairs were calibrated. */
  corruptions: CorruptionName[];
  /** Severity step of the grids. */
  step: number;
  /** 0, step, …, 5. */
  severities: number[];
  /** Calibration digits per grid cell. */
  digits: number;
  /** {@linkcode pairKey}(c1, c2) → accuracy[s1 index][s2 index], c1 applied first. */
  grids: Record<string, number[][]>;
}

/** The key of an ordered pair in {@linkcode CccCalibration.grids}: `c1/c2`. */
export function pairKey(c1: CorruptionName, c2: CorruptionName): string {
  return `${c1}/${c2}`;
}

/** Every ordered pair of distinct corruptions of `names`, c1-major. */
export function orderedPairs(names: readonly CorruptionName[]): [CorruptionName, CorruptionName][] {
  return names.flatMap((c1) =>
    names.filter((c2) => c2 !== c1).map((c2) => [c1, c2] as [CorruptionName, CorruptionName])
  );
}

/**
 * The severities 0, step, …, 5 (as i·5/k with k = 5/step, so that the last is exactly 5). Throws a UsageError
 * unless step > 0 divides 5.
 */
export function severityLevels(step: number): number[] {
  const k = 5 / step;
  if (!(step > 0) || !Number.isFinite(k) || k < 1 - 1e-9 || Math.abs(k - Math.round(k)) > 1e-9 * k) {
    throw new UsageError(`severity step must be > 0 and divide 5 (e.g. 0.25, 0.5, 1, 2.5), got ${step}`);
  }
  const steps = Math.round(k);
  return Array.from({ length: steps + 1 }, (_, i) => (i * MAX_SEVERITY) / steps);
}

/** Throws a UsageError unless the stream's target accuracy lies in (0, 1). */
export function checkTarget(target: number): void {
  if (!(target > 0 && target < 1)) throw new UsageError(`target accuracy must lie in (0, 1), got ${target}`);
}

/** Throws a UsageError unless `speed` (images per path point) is an integer ≥ 1. */
export function checkSpeed(speed: number): void {
  if (!Number.isInteger(speed) || speed < 1) {
    throw new UsageError(`speed (images per severity point) must be an integer ≥ 1, got ${speed}`);
  }
}

/** Throws a UsageError unless `names` are at least two distinct known corruptions (the message lists the names). */
export function checkCorruptions(names: readonly string[]): asserts names is readonly CorruptionName[] {
  const unknown = names.filter((name) => !isCorruptionName(name));
  if (unknown.length) {
    throw new UsageError(
      `unknown corruption ${unknown.map((n) => `"${n}"`).join(", ")}; valid: ${CORRUPTION_NAMES.join(", ")}`,
    );
  }
  if (new Set(names).size !== names.length) throw new UsageError(`corruptions repeat a name: ${names.join(", ")}`);
  if (names.length < 2) throw new UsageError(`CCC needs at least 2 corruptions (pairs c1 ≠ c2), got ${names.length}`);
}

/** The side of square one-channel images, after checking `digits` (count, labels, values in [0, 1]). */
function checkDigits(digits: CccDigits, what: string): number {
  const { images, labels, n } = digits;
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${what}: need at least one image, got n = ${n}`);
  const side = Math.round(Math.sqrt(images.length / n));
  if (side * side * n !== images.length || side < 8) {
    throw new UsageError(`${what}: ${images.length} values are not ${n} square one-channel images [n, h, w, 1]`);
  }
  if (labels.length !== n) throw new UsageError(`${what}: ${labels.length} labels for ${n} images`);
  for (let k = 0; k < images.length; k++) {
    if (!(images[k] >= 0 && images[k] <= 1)) {
      throw new UsageError(`${what}: pixel values must lie in [0, 1], got ${images[k]} at ${k}`);
    }
  }
  return side;
}

/** Options of {@linkcode calibrate}. */
export interface CalibrateOptions {
  /** The corruptions; every ordered pair of distinct ones is calibrated. */
  corruptions: readonly string[];
  /** Severity step (dividing 5). */
  step: number;
  /** Seed of the corruption noise (the same draws for every cell of a severity). */
  seed: number;
  /** Corruption constants (default: corruptAt's default for the image size). */
  table?: CorruptionTableName;
  /** Called after each pair with its key and the pairs done so far. */
  onPair?: (key: string, done: number, total: number) => void;
  /** Replaces `corruptAt` (tests). */
  corrupt?: CorruptAtFn;
}

/**
 * The accuracy grid of `classify` on `digits` for every ordered pair (c1, c2) of `corruptions` and every (s1, s2) ∈
 * {0, step, …, 5}²: c1 at s1, then c2 at s2, each skipped at severity 0 (generate.py applies a corruption only when
 * its severity is > 0). The digits are used as they are (no shift), the same for every cell.
 */
export async function calibrate(
  classify: Classify,
  digits: CccDigits,
  options: CalibrateOptions,
): Promise<CccCalibration> {
  const { corruptions, step, seed, table } = options;
  checkCorruptions(corruptions);
  const severities = severityLevels(step);
  const side = checkDigits(digits, "calibrate");
  if (!Number.isInteger(seed)) throw new UsageError(`calibrate: seed must be an integer, got ${seed}`);
  const corrupt = options.corrupt ?? corruptAt;
  const [seed1, seed2] = stageSeeds(seed, "calibration");
  const n = digits.n, size = side * side;
  const clean: Observations = { values: digits.images, n, shape: [side, side, 1] };
  const pairs = orderedPairs(corruptions);
  const grids: Record<string, number[][]> = {};
  let done = 0;
  for (const c1 of corruptions) {
    // c1 at s1 is shared by every c2: corrupted once per severity.
    const first = severities.map((s1) => s1 > 0 ? corrupt(clean, c1, s1, { seed: seed1, table }) : clean);
    for (const c2 of corruptions.filter((c) => c !== c1)) {
      const grid: number[][] = [];
      for (const stage1 of first) {
        const row = new Float32Array(severities.length * n * size);
        severities.forEach((s2, j) => {
          const out = s2 > 0 ? corrupt(stage1, c2, s2, { seed: seed2, table }) : stage1;
          row.set(out.values, j * n * size);
        });
        const predicted = await classify(row, severities.length * n);
        grid.push(severities.map((_, j) => {
          let correct = 0;
          for (let k = 0; k < n; k++) correct += predicted[j * n + k] === digits.labels[k] ? 1 : 0;
          return correct / n;
        }));
      }
      grids[pairKey(c1, c2)] = grid;
      options.onPair?.(pairKey(c1, c2), ++done, pairs.length);
    }
  }
  return { corruptions: [...corruptions], step, severities, digits: n, grids };
}

/** Two corruption seeds (first and second corruption of an image) for one purpose, from one seed. */
function stageSeeds(seed: number, purpose: string): [number, number] {
  return [Rng.derive(seed, "ccc", purpose, 1).int32(), Rng.derive(seed, "ccc", purpose, 2).int32()];
}

/**
 * generate.py's `find_path` on `grid` (accuracy[s1 index][s2 index], severities 0, step, …, 5 along both axes): the
 * severity path from some (s1 > 0, 0) to s1 = 0 whose mean accuracy is near `target`, each step either lowering s1
 * or raising s2 by one step. Built from the end: at (i, j), with the successors' paths already chosen, the point
 * takes the successor whose path mean, this point included, is nearer the target (a tie raises s2; a step past the
 * last column costs 9999999999999 with a path of length 1, as in the reference); the start is the i ≥ 1 whose path
 * mean is nearest the target (a tie keeps the smaller i). Sums run in the reference's order, so the comparisons
 * are the same in float64.
 */
export function findPath(grid: readonly (readonly number[])[], target: number, step: number): SeverityPoint[] {
  checkTarget(target);
  const severities = severityLevels(step);
  const size = severities.length;
  if (grid.length !== size || grid.some((row) => row.length !== size)) {
    throw new UsageError(`findPath: a step of ${step} needs a ${size}×${size} accuracy grid`);
  }
  if (grid.some((row) => row.some((v) => !Number.isFinite(v)))) {
    throw new UsageError("findPath: grid accuracies must be finite numbers");
  }
  const cost = grid.map((row) => row.map(() => 0));
  const length = grid.map((row) => row.map(() => 0));
  // 0: the path ends here (s1 = 0); 1: lower s1 (i − 1); 2: raise s2 (j + 1).
  const next = grid.map((row) => row.map(() => 0));
  for (let i = 0; i < size; i++) {
    for (let j = size - 1; j >= 0; j--) {
      const a = grid[i][j];
      if (i === 0) {
        cost[i][j] = a;
        length[i][j] = 1;
        continue;
      }
      const downCost = cost[i - 1][j], downLength = length[i - 1][j];
      const inGrid = j + 1 < size;
      const rightCost = inGrid ? cost[i][j + 1] : OUT_OF_GRID_COST, rightLength = inGrid ? length[i][j + 1] : 1;
      if (
        Math.abs((downCost + a) / (downLength + 1) - target) < Math.abs((rightCost + a) / (rightLength + 1) - target)
      ) {
        cost[i][j] = downCost + a;
        length[i][j] = downLength + 1;
        next[i][j] = 1;
      } else {
        // Past the last column the reference's sentinel would enter the path; its mean (≈ 5e12) never wins.
        cost[i][j] = rightCost + a;
        length[i][j] = rightLength + 1;
        next[i][j] = 2;
      }
    }
  }
  let best = NO_START_YET, start = 1;
  for (let i = 1; i < size; i++) {
    const distance = Math.abs(cost[i][0] / length[i][0] - target);
    if (distance < best) {
      best = distance;
      start = i;
    }
  }
  const path: SeverityPoint[] = [];
  for (let i = start, j = 0;;) {
    path.push({ s1: severities[i], s2: severities[j], accuracy: grid[i][j] });
    if (next[i][j] === 0) break;
    if (next[i][j] === 1) i--;
    else j++;
  }
  return path;
}

/** One point of a stream: the pair, the severities, and where it sits in the stream. */
export interface CccPoint {
  /** Corruption applied first. */
  c1: CorruptionName;
  /** Its severity, in [0, 5]. */
  s1: number;
  /** Corruption applied second. */
  c2: CorruptionName;
  /** Its severity, in [0, 5]. */
  s2: number;
  /** Calibrated accuracy of the point. */
  accuracy: number;
  /** Index of the point in the stream (images [index·speed, (index + 1)·speed)). */
  index: number;
  /** Index of its pair (path) in the stream. */
  segment: number;
}

/** One batch of a stream. */
export interface CccBatch {
  /** Batch index in the stream (images [index·batchSize, (index + 1)·batchSize)). */
  index: number;
  /** `[batchSize, side, side, 1]` in [0, 1]. */
  images: Float32Array;
  /** Classes `[batchSize]`. */
  labels: Int32Array;
  /** Per image, the point it was corrupted at. */
  points: CccPoint[];
}

/** Options of {@linkcode cccStream}. */
export interface CccStreamOptions {
  /** Accuracy grids that the severity paths are walked on. */
  calibration: CccCalibration;
  /** Target accuracy of the paths, in (0, 1). */
  target: number;
  /** Images per path point (the transition speed k). */
  speed: number;
  /** Digits drawn uniformly, with replacement. */
  pool: CccDigits;
  /** Seeds the pair sequence and every image's digit, shift and corruption noise. */
  seed: number;
  /** Images per batch (default 64). */
  batchSize?: number;
  /** Largest shift in pixels along each axis (default 2; 0: none). */
  maxShift?: number;
  /** Corruption constants (default: corruptAt's default for the image size). */
  table?: CorruptionTableName;
  /** Replaces `corruptAt` (tests). */
  corrupt?: CorruptAtFn;
}

/** A pair's path placed in the stream. */
interface Segment {
  c1: CorruptionName;
  c2: CorruptionName;
  path: SeverityPoint[];
  /** Stream index of the path's first point. */
  firstPoint: number;
}

/**
 * A CCC stream with random access by batch index. The sequence of pairs comes from one generator seeded by the
 * seed (c1, then c2 ≠ c1, uniform; then c1 ← c2 and a new c2 ≠ c1 at each path's end, as generate.py); image g
 * draws its digit and shift from `Rng.derive(seed, "ccc/image", g)` and its corruption noise from corruptAt with
 * `firstIndex` g. A batch is thus a function of (options, index) alone.
 */
export class CccStream {
  /** Images per batch. */
  readonly batchSize: number;
  /** Image side, pixels (the pool's). */
  readonly side: number;
  readonly #options: CccStreamOptions;
  readonly #maxShift: number;
  readonly #paths = new Map<string, SeverityPoint[]>();
  readonly #segments: Segment[] = [];
  readonly #pairs: Rng;
  readonly #seeds: [number, number];
  readonly #corrupt: CorruptAtFn;

  /** Checks the options and that the calibration covers every ordered pair; throws a UsageError otherwise. */
  constructor(options: CccStreamOptions) {
    const { calibration, target, speed, seed, batchSize = CCC_BATCH, maxShift = CCC_MAX_SHIFT } = options;
    checkTarget(target);
    checkSpeed(speed);
    checkCorruptions(calibration.corruptions);
    severityLevels(calibration.step);
    if (!Number.isInteger(seed)) throw new UsageError(`cccStream: seed must be an integer, got ${seed}`);
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new UsageError(`cccStream: batchSize must be an integer ≥ 1, got ${batchSize}`);
    }
    const missing = orderedPairs(calibration.corruptions).map(([a, b]) => pairKey(a, b))
      .filter((key) => !calibration.grids[key]);
    if (missing.length) throw new UsageError(`cccStream: the calibration lacks the pairs ${missing.join(", ")}`);
    this.side = checkDigits(options.pool, "cccStream pool");
    if (!Number.isInteger(maxShift) || maxShift < 0 || maxShift >= this.side) {
      throw new UsageError(`cccStream: maxShift must be an integer in [0, ${this.side}), got ${maxShift}`);
    }
    this.#options = options;
    this.#maxShift = maxShift;
    this.batchSize = batchSize;
    this.#pairs = Rng.derive(seed, "ccc/pairs");
    this.#seeds = stageSeeds(seed, "stream");
    this.#corrupt = options.corrupt ?? corruptAt;
  }

  /** The path of the pair (c1, c2) for the stream's target. */
  path(c1: CorruptionName, c2: CorruptionName): SeverityPoint[] {
    const key = pairKey(c1, c2);
    let path = this.#paths.get(key);
    if (!path) {
      const { calibration, target } = this.#options;
      path = findPath(calibration.grids[key], target, calibration.step);
      this.#paths.set(key, path);
    }
    return path;
  }

  /** The point at stream index `index` (the pair sequence is extended as far as needed). */
  point(index: number): CccPoint {
    if (!Number.isInteger(index) || index < 0) throw new RangeError(`point index must be an integer ≥ 0, got ${index}`);
    while (this.#end() <= index) this.#extend();
    let lo = 0, hi = this.#segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#segments[mid].firstPoint <= index) lo = mid;
      else hi = mid - 1;
    }
    const { c1, c2, path, firstPoint } = this.#segments[lo];
    const { s1, s2, accuracy } = path[index - firstPoint];
    return { c1, s1, c2, s2, accuracy, index, segment: lo };
  }

  /** The batch at `index`: images [index·batchSize, (index + 1)·batchSize) of the stream. */
  batch(index: number): CccBatch {
    if (!Number.isInteger(index) || index < 0) throw new RangeError(`batch index must be an integer ≥ 0, got ${index}`);
    const { batchSize, side } = this;
    const { pool, speed, seed, table } = this.#options;
    const size = side * side;
    const images = new Float32Array(batchSize * size);
    const labels = new Int32Array(batchSize);
    const points: CccPoint[] = [];
    const first = index * batchSize;
    for (let start = first; start < first + batchSize;) {
      // The run of images sharing one point.
      const point = this.point(Math.floor(start / speed));
      const end = Math.min(first + batchSize, (point.index + 1) * speed);
      const n = end - start;
      const values = new Float32Array(n * size);
      for (let g = start; g < end; g++) {
        const rng = Rng.derive(seed, "ccc/image", g);
        const digit = rng.int(pool.n);
        const dy = rng.int(2 * this.#maxShift + 1) - this.#maxShift;
        const dx = rng.int(2 * this.#maxShift + 1) - this.#maxShift;
        shiftInto(pool.images.subarray(digit * size, (digit + 1) * size), side, dy, dx, values, (g - start) * size);
        labels[g - first] = pool.labels[digit];
        points.push(point);
      }
      let run: Observations = { values, n, shape: [side, side, 1] };
      if (point.s1 > 0) {
        run = this.#corrupt(run, point.c1, point.s1, { seed: this.#seeds[0], table, firstIndex: start });
      }
      if (point.s2 > 0) {
        run = this.#corrupt(run, point.c2, point.s2, { seed: this.#seeds[1], table, firstIndex: start });
      }
      images.set(run.values, (start - first) * size);
      start = end;
    }
    return { index, images, labels, points };
  }

  /** Points placed so far. */
  #end(): number {
    const last = this.#segments.at(-1);
    return last ? last.firstPoint + last.path.length : 0;
  }

  /** Places the next pair's path: c1 ← the last c2 (the first time: uniform), c2 uniform among the others. */
  #extend(): void {
    const names = this.#options.calibration.corruptions;
    const last = this.#segments.at(-1);
    const c1 = last ? last.c2 : names[this.#pairs.int(names.length)];
    let c2 = c1;
    while (c2 === c1) c2 = names[this.#pairs.int(names.length)];
    this.#segments.push({ c1, c2, path: this.path(c1, c2), firstPoint: this.#end() });
  }
}

/**
 * The CCC stream of `options` from batch `start` on (endless): batch b holds images [b·64, (b + 1)·64) whatever
 * the start, so a run resumes by starting at its next batch index. See {@linkcode CccStream}.
 */
export function cccStream(options: CccStreamOptions, start = 0): Generator<CccBatch, never> {
  // Checked here, before the first batch is asked for (a generator body would only run then).
  const stream = new CccStream(options);
  if (!Number.isInteger(start) || start < 0) {
    throw new UsageError(`cccStream: start must be an integer ≥ 0, got ${start}`);
  }
  return (function* () {
    for (let index = start;; index++) yield stream.batch(index);
  })();
}

/** Writes `image` (`side`×`side`) moved by (dy, dx) pixels into `out` at `offset`; uncovered pixels are 0. */
function shiftInto(image: Float32Array, side: number, dy: number, dx: number, out: Float32Array, offset: number): void {
  for (let y = 0; y < side; y++) {
    const sy = y - dy;
    if (sy < 0 || sy >= side) continue;
    for (let x = 0; x < side; x++) {
      const sx = x - dx;
      if (sx >= 0 && sx < side) out[offset + y * side + x] = image[sy * side + sx];
    }
  }
}
