/**
 * The ImageNet-C family of common corruptions (Hendrycks & Dietterich 2019) as a seeded, batch-independent suite:
 * the 15 benchmark corruptions and the 4 held-out ones, 5 severities each, with two constant tables copied whole
 * from the reference code: `imagenet` from bethgelab/imagecorruptions `imagecorruptions/corruptions.py` (224-px
 * images) and `cifar` from hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py` (32-px images; the default
 * below 64 px, since the ImageNet constants destroy small images, imagecorruptions issue #21).
 *
 * Each corruption follows the function of the table's file (image_corruptions.ts, JPEG in jpeg.ts). Where the files
 * call ImageMagick (make_cifar_c.py's motion blur and snow) the imagecorruptions port `_motion_blur` replaces it, as
 * imagecorruptions itself does; frost photos cannot ship, so frost is procedural (see {@linkcode PROCEDURAL_SUBSTITUTES});
 * JPEG gives what a jpeg-js round trip gives, which does not subsample chroma as PIL does.
 * {@linkcode CORRUPTION_NOTES} lists these per corruption for a run's JSON.
 *
 * Grayscale (c = 1) images take imagecorruptions' grayscale branches where it has one (brightness adds to the value,
 * saturate converts to RGB and keeps the red channel, which leaves gray pixels as they are, snow uses the image as its
 * own gray, frost and spatter add the luma (0.2989, 0.587, 0.114) of their colour layer, JPEG averages the decoded
 * RGB channels); every other corruption acts per channel.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkCorruptionBatch, corruptEach } from "./corruption_batch.ts";
import type { Observations } from "./ground_truth.ts";
import { CorruptionInput, IMAGE_CORRUPTIONS, type ImageCorruption } from "./image_corruptions.ts";
import { jpegBatch } from "./jpeg.ts";

/** The 15 benchmark corruptions, in imagecorruptions' order (noise, blur, weather, digital). */
export const COMMON_CORRUPTIONS = [
  "gaussian_noise",
  "shot_noise",
  "impulse_noise",
  "defocus_blur",
  "glass_blur",
  "motion_blur",
  "zoom_blur",
  "snow",
  "frost",
  "fog",
  "brightness",
  "contrast",
  "elastic_transform",
  "pixelate",
  "jpeg_compression",
] as const;

/** The 4 held-out corruptions (validation set of ImageNet-C). */
export const HOLDOUT_CORRUPTIONS = ["speckle_noise", "gaussian_blur", "spatter", "saturate"] as const;

/** Name of a corruption of the ImageNet-C family. */
export type CorruptionName = typeof COMMON_CORRUPTIONS[number] | typeof HOLDOUT_CORRUPTIONS[number];

/** Every corruption name, common ones first. */
export const CORRUPTION_NAMES: readonly CorruptionName[] = [...COMMON_CORRUPTIONS, ...HOLDOUT_CORRUPTIONS];

/** Corruption severity, 1 (mild) to 5. */
export type Severity = 1 | 2 | 3 | 4 | 5;

/** The constant tables a corruption can use. */
export type CorruptionTableName = "imagenet" | "cifar";

/** Corruptions that replace reference data which cannot ship by a procedural stand-in (frost: no photos of ice). */
export const PROCEDURAL_SUBSTITUTES: readonly CorruptionName[] = ["frost"];

/**
 * Each corruption's constants per severity (index severity − 1), copied whole from the two reference files,
 * with their meaning. Values in [0, 1] image units unless said; pixel sizes are of the reference's images.
 */
export const CORRUPTION_TABLES = {
  /** bethgelab/imagecorruptions `imagecorruptions/corruptions.py` (ImageNet-C, 224 px). */
  imagenet: {
    source: "bethgelab/imagecorruptions imagecorruptions/corruptions.py",
    gaussian_noise: [.08, .12, 0.18, 0.26, 0.38], // σ
    shot_noise: [60, 25, 12, 5, 3], // c: Poisson(x·c)/c
    impulse_noise: [.03, .06, .09, 0.17, 0.27], // s&p amount
    speckle_noise: [.15, .2, 0.35, 0.45, 0.6], // σ of x·N(0, σ²)
    gaussian_blur: [1, 2, 3, 4, 6], // σ, px
    glass_blur: [[0.7, 1, 2], [0.9, 2, 1], [1, 2, 3], [1.1, 3, 2], [1.5, 4, 2]], // σ, max_delta, iterations
    defocus_blur: [[3, 0.1], [4, 0.5], [6, 0.5], [8, 0.5], [10, 0.5]], // disk radius, alias_blur
    motion_blur: [[10, 3], [15, 5], [15, 8], [15, 12], [20, 15]], // radius, σ
    // np.arange(start, stop, step) of zoom factors
    zoom_blur: [[1, 1.11, 0.01], [1, 1.16, 0.01], [1, 1.21, 0.02], [1, 1.26, 0.02], [1, 1.31, 0.03]],
    fog: [[1.5, 2], [2., 2], [2.5, 1.7], [2.5, 1.5], [3., 1.4]], // plasma weight, wibble decay
    frost: [[1, 0.4], [0.8, 0.6], [0.7, 0.7], [0.65, 0.7], [0.6, 0.75]], // image weight, frost weight
    // loc, scale of the snow layer, zoom, threshold, blur radius, blur σ, image weight
    snow: [
      [0.1, 0.3, 3, 0.5, 10, 4, 0.8],
      [0.2, 0.3, 2, 0.5, 12, 4, 0.7],
      [0.55, 0.3, 4, 0.9, 12, 8, 0.7],
      [0.55, 0.3, 4.5, 0.85, 12, 8, 0.65],
      [0.55, 0.3, 2.5, 0.85, 12, 12, 0.55],
    ],
    // loc, scale, σ of the liquid layer, threshold, colour scale (water) or mud blur σ, 0 water / 1 mud
    spatter: [
      [0.65, 0.3, 4, 0.69, 0.6, 0],
      [0.65, 0.3, 3, 0.68, 0.6, 0],
      [0.65, 0.3, 2, 0.68, 0.5, 0],
      [0.65, 0.3, 1, 0.65, 1.5, 1],
      [0.67, 0.4, 1, 0.65, 1.5, 1],
    ],
    contrast: [0.4, .3, .2, .1, .05], // factor on the deviation from the channel mean
    brightness: [.1, .2, .3, .4, .5], // added to the HSV value
    saturate: [[0.3, 0], [0.1, 0], [2, 0], [5, 0.1], [20, 0.2]], // HSV saturation · a + b
    jpeg_compression: [25, 18, 15, 10, 7], // quality
    pixelate: [0.6, 0.5, 0.4, 0.3, 0.25], // box-downsampling factor (back up by nearest neighbour)
    // alpha; σ = 0.01 · side and displacement amplitude 0.005 · side are fixed
    elastic_transform: [250 * 0.05, 250 * 0.065, 250 * 0.085, 250 * 0.1, 250 * 0.12],
  },
  /** hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py` (CIFAR-10-C, 32 px). */
  cifar: {
    source: "hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py",
    gaussian_noise: [0.04, 0.06, .08, .09, .10],
    shot_noise: [500, 250, 100, 75, 50],
    impulse_noise: [.01, .02, .03, .05, .07],
    speckle_noise: [.06, .1, .12, .16, .2],
    gaussian_blur: [.4, .6, 0.7, .8, 1],
    glass_blur: [[0.05, 1, 1], [0.25, 1, 1], [0.4, 1, 1], [0.25, 1, 2], [0.4, 1, 2]],
    defocus_blur: [[0.3, 0.4], [0.4, 0.5], [0.5, 0.6], [1, 0.2], [1.5, 0.1]],
    motion_blur: [[6, 1], [6, 1.5], [6, 2], [8, 2], [9, 2.5]],
    zoom_blur: [[1, 1.06, 0.01], [1, 1.11, 0.01], [1, 1.16, 0.01], [1, 1.21, 0.01], [1, 1.26, 0.01]],
    fog: [[.2, 3], [.5, 3], [0.75, 2.5], [1, 2], [1.5, 1.75]],
    frost: [[1, 0.2], [1, 0.3], [0.9, 0.4], [0.85, 0.4], [0.75, 0.45]],
    snow: [
      [0.1, 0.2, 1, 0.6, 8, 3, 0.95],
      [0.1, 0.2, 1, 0.5, 10, 4, 0.9],
      [0.15, 0.3, 1.75, 0.55, 10, 4, 0.9],
      [0.25, 0.3, 2.25, 0.6, 12, 6, 0.85],
      [0.3, 0.3, 1.25, 0.65, 14, 12, 0.8],
    ],
    spatter: [
      [0.62, 0.1, 0.7, 0.7, 0.5, 0],
      [0.65, 0.1, 0.8, 0.7, 0.5, 0],
      [0.65, 0.3, 1, 0.69, 0.5, 0],
      [0.65, 0.1, 0.7, 0.69, 0.6, 1],
      [0.65, 0.1, 0.5, 0.68, 0.6, 1],
    ],
    contrast: [.75, .5, .4, .3, 0.15],
    brightness: [.05, .1, .15, .2, .3],
    saturate: [[0.3, 0], [0.1, 0], [1.5, 0], [2, 0.1], [2.5, 0.2]],
    jpeg_compression: [80, 65, 58, 50, 40],
    pixelate: [0.95, 0.9, 0.85, 0.75, 0.65], // box down, then box back up
    // (alpha, σ, affine jitter) × IMSIZE (32 in the file; the image height here)
    elastic_transform: [[0, 0, 0.08], [0.05, 0.2, 0.07], [0.08, 0.06, 0.06], [0.1, 0.04, 0.05], [0.1, 0.03, 0.03]],
  },
} as const;

/** Where a corruption departs from its reference file, for the record of a run. */
export const CORRUPTION_NOTES: Partial<Record<CorruptionName, string>> = {
  frost: "procedural ice texture (two plasma fractals: clouds and ridged veins, tinted blue-white) instead of the " +
    "reference's six frost photos, which cannot ship",
  motion_blur: "cifar table: imagecorruptions' _motion_blur port of ImageMagick's MotionBlurImage instead of the " +
    "ImageMagick call",
  snow: "cifar table: the snow layer is blurred with imagecorruptions' _motion_blur instead of ImageMagick",
  jpeg_compression: "jpeg-js at the reference quality; it keeps full-resolution chroma where PIL subsamples 4:2:0",
  pixelate: "in floating point; PIL rounds the 8-bit image between the two resizes",
  spatter: "water: an all-dry liquid layer leaves the image as it is where the reference divides 0 by 0",
};

/** Every corruption that works image by image (JPEG runs on the whole batch, see `corrupt`). */
const CORRUPTIONS: Record<Exclude<CorruptionName, "jpeg_compression">, ImageCorruption> = IMAGE_CORRUPTIONS;

/** The table `corrupt` uses by default for images of this size: `cifar` when both sides are below 64 px. */
export function defaultTable(h: number, w: number): CorruptionTableName {
  return Math.max(h, w) < 64 ? "cifar" : "imagenet";
}

/** Whether `name` is a corruption of this suite. */
export function isCorruptionName(name: string): name is CorruptionName {
  return (CORRUPTION_NAMES as readonly string[]).includes(name);
}

/** The options of {@linkcode corrupt} and {@linkcode corruptAt}. */
export interface CorruptOptions {
  /** Image i draws from `Rng.derive(seed, name, severity, firstIndex + i)`. */
  seed: number;
  /** Constants to use (default {@linkcode defaultTable}). */
  table?: CorruptionTableName;
  /** Round outputs to multiples of 1/255, as the references save uint8 images (default true). */
  quantize?: boolean;
  /** Global index of the batch's first image, so results do not depend on batching (default 0). */
  firstIndex?: number;
}

function checkArguments(
  images: Observations,
  name: string,
  opts: { seed: number; table?: string; firstIndex?: number },
): void {
  if (!isCorruptionName(name)) {
    throw new UsageError(`unknown corruption "${name}"; valid: ${CORRUPTION_NAMES.join(", ")}`);
  }
  checkTableName(opts.table);
  const [h, w, c] = images.shape;
  if (c !== 1 && c !== 3) throw new UsageError(`corrupt needs 1 or 3 channels, got ${c}`);
  if (!(Number.isInteger(h) && Number.isInteger(w) && h >= 8 && w >= 8)) {
    throw new UsageError(`corrupt needs images of at least 8×8 pixels, got ${h}×${w}`);
  }
  checkCorruptionBatch("corrupt", images, opts);
}

function checkTableName(table: string | undefined): void {
  if (table !== undefined && table !== "imagenet" && table !== "cifar") {
    throw new UsageError(`unknown corruption table "${table}"; valid: imagenet, cifar`);
  }
}

/** Throws a UsageError unless `severity` is a real number in [0, 5]. */
function checkRealSeverity(severity: number): void {
  if (typeof severity !== "number" || !(severity >= 0 && severity <= 5)) {
    throw new UsageError(`corruption severity must be a real number in [0, 5], got ${severity}`);
  }
}

/** The checked batch corrupted at a severity in (0, 5] with the constants of {@linkcode interpolatedConstants}. */
function corruptBatch(
  images: Observations,
  name: CorruptionName,
  severity: number,
  opts: CorruptOptions,
): Observations {
  const [h, w, c] = images.shape;
  const table = opts.table ?? defaultTable(h, w);
  const quantize = opts.quantize ?? true;
  const firstIndex = opts.firstIndex ?? 0;
  if (name === "jpeg_compression") {
    // JPEG draws nothing and works block by block on the whole batch; its bytes/255 are already clipped and on the
    // 1/255 grid, so they are the values with or without `quantize`.
    const quality = interpolatedConstants(name, severity, table) as number;
    return { values: jpegBatch(images.values, images.n, h, w, c, quality), n: images.n, shape: [h, w, c] };
  }
  const constants = interpolatedConstants(name, severity, table);
  const input = new CorruptionInput(h, w, c, table, constants, opts.seed, [name, severity]);
  const values = corruptEach(images.values, images.n, input, CORRUPTIONS[name], firstIndex, quantize);
  return { values, n: images.n, shape: [h, w, c] };
}

/**
 * Corruption `name` at `severity` of every image of a batch. `frost` is a procedural substitute for the reference's
 * photos ({@linkcode PROCEDURAL_SUBSTITUTES}); other departures are listed in {@linkcode CORRUPTION_NOTES}.
 *
 * @param images `[n, h, w, c]` images in [0, 1], c = 1 or 3.
 * @param opts `seed` of the randomness: image i draws from `Rng.derive(seed, name, severity, firstIndex + i)`, so
 *   results do not depend on batching (`firstIndex`, default 0, is the global index of the batch's first image);
 *   `table` (default {@linkcode defaultTable}); `quantize` (default true) rounds outputs to multiples of 1/255, as the
 *   references save uint8 images (their np.uint8 cast truncates; rounding here is unbiased).
 * @returns `[n, h, w, c]` corrupted images in [0, 1].
 */
export function corrupt(
  images: Observations,
  name: CorruptionName,
  severity: Severity,
  opts: CorruptOptions,
): Observations {
  checkArguments(images, name, opts);
  if (!(Number.isInteger(severity) && severity >= 1 && severity <= 5)) {
    throw new UsageError(`corruption severity must be 1, 2, 3, 4 or 5, got ${severity}`);
  }
  return corruptBatch(images, name, severity, opts);
}

/** The level-0 constants the two tables share (see {@linkcode LEVEL_ZERO_CONSTANTS}). */
const LEVEL_ZERO_SHARED = {
  gaussian_noise: 0,
  shot_noise: 0, // 1/c
  impulse_noise: 0,
  speckle_noise: 0,
  gaussian_blur: 0,
  glass_blur: [0, 0, 0],
  defocus_blur: [0, 0],
  motion_blur: [0, 0],
  zoom_blur: [1, 1, 0.01],
  frost: [1, 0],
  contrast: 1,
  brightness: 0,
  saturate: [1, 0],
  pixelate: 1,
} as const;

/**
 * Each corruption's constants at level 0, the row that real severities in (0, 1) interpolate from (oripress/CCC
 * `make_imagenet_c.py`; level 0 itself is the identity, see {@linkcode corruptAt}). The rule: a constant that sets
 * the strength takes its identity value (σ, amount, weight of an added layer 0; contrast factor, pixelate factor,
 * image weight, saturation scale 1; zoom stop 1); a constant that only shapes the corruption copies level 1. The
 * `imagenet` rows of the 15 corruptions CCC has are CCC's level-0 tuples as printed; the 4 held-out ones and the
 * `cifar` table follow the same rule. Exceptions, per corruption:
 * - shot_noise: the value is 1/c (CCC interpolates the Poisson noise scale 1/c, level 0 has 1/c = 0).
 * - snow: the threshold at level 0 is 1 (CCC), which keeps only saturated flakes; image weight 1.
 * - jpeg_compression: quality 85 for `imagenet` (CCC's choice); 100, the least lossy quality, for `cifar`.
 * - elastic_transform: alpha (and for `cifar` σ and the affine jitter) 0; CCC interpolates another table
 *   (hendrycks' make_imagenet_c.py constants), this suite keeps its own so that integer levels stay `corrupt`'s.
 * - spatter: level 1's water row with colour scale 0.
 */
export const LEVEL_ZERO_CONSTANTS = {
  imagenet: {
    ...LEVEL_ZERO_SHARED,
    fog: [0, 2],
    snow: [0.1, 0.3, 3, 1, 10, 4, 1],
    spatter: [0.65, 0.3, 4, 0.69, 0, 0],
    jpeg_compression: 85,
    elastic_transform: 0,
  },
  cifar: {
    ...LEVEL_ZERO_SHARED,
    fog: [0, 3],
    snow: [0.1, 0.2, 1, 1, 8, 3, 1],
    spatter: [0.62, 0.1, 0.7, 0.7, 0, 0],
    jpeg_compression: 100,
    elastic_transform: [0, 0, 0],
  },
} as const satisfies Record<CorruptionTableName, Record<CorruptionName, number | readonly number[]>>;

/** A corruption's constants at one severity: one number or a tuple, as its table row. */
export type CorruptionConstants = number | readonly number[];

/** Python's round(): to the nearest integer, halves to even (CCC rounds its integer constants this way). */
function roundHalfEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * The constants corruption `name` uses at a real severity s ∈ [0, 5] with `table`: at an integer s ≥ 1 the table's row as it is; otherwise scipy `interp1d(kind="linear")` between the rows
 * of ⌊s⌋ and ⌈s⌉, level 0 from {@linkcode LEVEL_ZERO_CONSTANTS}, then per corruption:
 * - shot_noise: 1/c is interpolated and c returned (CCC);
 * - glass_blur: max_delta rounded half to even, at least 1, and iterations rounded half to even (CCC);
 * - jpeg_compression: quality rounded half to even (CCC);
 * - motion_blur, snow: the motion-blur radius rounded half to even (the kernel has 2·radius + 1 whole taps;
 *   imagecorruptions' `_motion_blur` loops over `range(2 * radius + 1)`, which needs an integer);
 * - defocus_blur: a radius above 8 rounded half to even (the disk kernel of a larger radius needs an integer; the
 *   reference's `np.arange(-r, r + 1)` grid would be off-centre);
 * - spatter: the water (0) / mud (1) flag rounded half to even, so water up to s = 3.5 and mud above, the fifth
 *   constant (colour scale of water, blur σ of mud) interpolated regardless.
 * Level 0 itself is the identity in {@linkcode corruptAt}; its constants here are only the interpolation's end.
 */
export function interpolatedConstants(
  name: CorruptionName,
  severity: number,
  table: CorruptionTableName,
): CorruptionConstants {
  if (!isCorruptionName(name)) {
    throw new UsageError(`unknown corruption "${name}"; valid: ${CORRUPTION_NAMES.join(", ")}`);
  }
  checkTableName(table);
  checkRealSeverity(severity);
  const rowAt = (level: number): CorruptionConstants =>
    level === 0 ? LEVEL_ZERO_CONSTANTS[table][name] : CORRUPTION_TABLES[table][name][level - 1];
  if (Number.isInteger(severity) && severity >= 1) {
    const row = rowAt(severity);
    return typeof row === "number" ? row : [...row];
  }
  const lower = Math.floor(severity), upper = Math.min(5, lower + 1), t = severity - lower;
  const end = (level: number, k: number): number => {
    const row = rowAt(level);
    const v = typeof row === "number" ? row : row[k];
    return name === "shot_noise" && level > 0 ? 1 / v : v; // level 0 holds 1/c already
  };
  const mix = (k: number) => end(lower, k) + (end(upper, k) - end(lower, k)) * t;
  const shape = rowAt(1);
  if (typeof shape === "number") {
    const v = mix(0);
    if (name === "shot_noise") return v === 0 ? Infinity : 1 / v;
    return name === "jpeg_compression" ? roundHalfEven(v) : v;
  }
  const row = shape.map((_, k) => mix(k));
  if (name === "glass_blur") {
    row[1] = Math.max(1, roundHalfEven(row[1]));
    row[2] = roundHalfEven(row[2]);
  } else if (name === "motion_blur") {
    row[0] = roundHalfEven(row[0]);
  } else if (name === "snow") {
    row[4] = roundHalfEven(row[4]);
  } else if (name === "defocus_blur" && row[0] > 8) {
    row[0] = roundHalfEven(row[0]);
  } else if (name === "spatter") {
    row[5] = roundHalfEven(row[5]);
  }
  return row;
}

/**
 * A corruption at a real severity s ∈ [0, 5] (oripress/CCC `make_imagenet_c.py`): level 0 is the identity (a copy
 * of the images), any other s uses {@linkcode interpolatedConstants} (the table's constants interpolated linearly
 * between integer levels, level 0's from {@linkcode LEVEL_ZERO_CONSTANTS}). Same options as {@linkcode corrupt}, and
 * the same randomness: image i draws from `Rng.derive(seed, name, s, firstIndex + i)`, so an integer s gives exactly
 * `corrupt(images, name, s, opts)`.
 */
export function corruptAt(
  images: Observations,
  name: CorruptionName,
  severity: number,
  opts: CorruptOptions,
): Observations {
  checkArguments(images, name, opts);
  checkRealSeverity(severity);
  if (severity === 0) return { values: images.values.slice(), n: images.n, shape: [...images.shape] };
  return corruptBatch(images, name, severity, opts);
}

export { MNIST_C_CORRUPTIONS, mnistC, type MnistCName } from "./mnist_c.ts";
