/**
 * The ImageNet-C family of common corruptions (Hendrycks & Dietterich 2019) as a seeded, batch-independent suite:
 * the 15 benchmark corruptions and the 4 held-out ones, 5 severities each, with two constant tables copied whole
 * from the reference code: `imagenet` from bethgelab/imagecorruptions `imagecorruptions/corruptions.py` (224-px
 * images) and `cifar` from hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py` (32-px images; the default
 * below 64 px, since the ImageNet constants destroy small images, imagecorruptions issue #21).
 *
 * Each corruption follows the function of the table's file; the kernels are in corruption_ops.ts. Where the files
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
import { Rng } from "../core/rng.ts";
import { checkCorruptionBatch, corruptEach, ImageCursor } from "./corruption_batch.ts";
import {
  convolve2d,
  diskKernel,
  gaussianFilter,
  glassShuffle,
  hsvToRgb,
  motionBlur,
  plasmaFractal,
  rgbToHsv,
} from "./corruption_ops.ts";
import type { Observations } from "./ground_truth.ts";
import { clippedZoom, clippedZoomSize, pilResize, sampleBilinear } from "./image_resampling.ts";
import { jpegBatch } from "./jpeg.ts";
import { boxBlur3, cannyCv2, distanceTransform5, equalizeHist } from "./opencv_ops.ts";
import { poissonVariate } from "./random_variates.ts";

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

/**
 * Per-image input of a corruption: one `[h, w, c]` image, its table row and its own generator,
 * `Rng.derive(seed, name, severity, index)`.
 */
class CorruptionInput extends ImageCursor {
  /** The corruption's constants at this severity ({@linkcode interpolatedConstants}). */
  readonly constants: CorruptionConstants;

  constructor(
    readonly h: number,
    readonly w: number,
    readonly c: number,
    /** 1..5, or real in (0, 5] for {@linkcode corruptAt} */
    severity: number,
    readonly table: CorruptionTableName,
    seed: number,
    name: CorruptionName,
  ) {
    super(h * w * c, seed, [name, severity]);
    this.constants = interpolatedConstants(name, severity, table);
  }

  /** The constant of a corruption whose table holds one number per severity. */
  get value(): number {
    return this.constants as number;
  }

  /** The constants of a corruption whose table holds a tuple per severity. */
  get row(): readonly number[] {
    return this.constants as readonly number[];
  }
}

/** One corruption of one image; the result is clipped to [0, 1] afterwards. */
type Corruption = (input: CorruptionInput) => Float64Array | Float32Array;

/** np.arange(start, stop, step) as numpy fills it: n = ⌈(stop − start)/step⌉ values start + i·((start + step) − start). */
function arange(start: number, stop: number, step: number): number[] {
  const n = Math.ceil((stop - start) / step);
  const delta = (start + step) - start;
  return Array.from({ length: n }, (_, i) => start + i * delta);
}

/** np.random.uniform(low, high). */
function uniform(rng: Rng, low: number, high: number): number {
  return low + (high - low) * rng.uniform();
}

/** The smallest power of 2 ≥ n. */
function nextPowerOf2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** uint8 truncation of values in [0, 1] (np.uint8 of x·255); the 1e-4 absorbs float32 round-off of exact levels. */
function truncateToBytes(v: number): number {
  return Math.floor(Math.min(1, Math.max(0, v)) * 255 + 1e-4) / 255;
}

/** The luma weights of imagecorruptions' rgb2gray. */
const RGB2GRAY = [0.2989, 0.5870, 0.1140];

// The pointwise corruptions below fill `out` in plain loops: TypedArray.from with a map function costs about 0.1 µs
// a value, more than the corruption itself.

function gaussianNoise({ img, value: sigma, rng, out }: CorruptionInput): Float64Array {
  for (let k = 0; k < img.length; k++) out[k] = img[k] + sigma * rng.normal();
  return out;
}

function shotNoise({ img, value: c, rng, out }: CorruptionInput): Float64Array {
  for (let k = 0; k < img.length; k++) out[k] = poissonVariate(rng, img[k] * c) / c;
  return out;
}

/** skimage random_noise(mode="s&p", amount): each value flipped with probability amount, to 1 or 0 with equal odds. */
function impulseNoise({ img, value: amount, rng, out }: CorruptionInput): Float64Array {
  for (let k = 0; k < img.length; k++) {
    const flipped = rng.uniform() < amount;
    const salted = rng.uniform() < 0.5;
    out[k] = flipped ? (salted ? 1 : 0) : img[k];
  }
  return out;
}

function speckleNoise({ img, value: sigma, rng, out }: CorruptionInput): Float64Array {
  for (let k = 0; k < img.length; k++) out[k] = img[k] + img[k] * sigma * rng.normal();
  return out;
}

function gaussianBlur({ img, h, w, c, value: sigma }: CorruptionInput): Float32Array {
  return gaussianFilter(img, h, w, c, sigma);
}

/** Blur, cast to uint8, shuffle pixels locally, blur again (make_cifar_c.py's 32-px loop bounds become h and w). */
function glassBlur({ img, h, w, c, row, rng }: CorruptionInput): Float32Array {
  const [sigma, maxDelta, iterations] = row;
  const bytes = gaussianFilter(img, h, w, c, sigma).map(truncateToBytes);
  return gaussianFilter(glassShuffle(bytes, h, w, c, maxDelta, iterations, rng), h, w, c, sigma);
}

function defocusBlur({ img, h, w, c, row }: CorruptionInput): Float32Array {
  const [radius, aliasBlur] = row;
  const { kernel, size } = diskKernel(radius, aliasBlur);
  return convolve2d(img, h, w, c, kernel, size);
}

function motionBlurred({ img, h, w, c, row, rng }: CorruptionInput): Float32Array {
  const [radius, sigma] = row;
  return motionBlur(img, h, w, c, radius, sigma, uniform(rng, -45, 45));
}

/** The mean of the image and its clipped zooms (imagecorruptions cuts them top-left, make_cifar_c.py centred). */
function zoomBlur({ img, h, w, c, row, table }: CorruptionInput): Float64Array {
  const [start, stop, step] = row;
  const factors = arange(start, stop, step);
  const trim = table === "cifar" ? "center" : "top-left";
  const out = Float64Array.from(img);
  for (const factor of factors) {
    const layer = clippedZoom(img, h, w, c, factor, { trim });
    for (let k = 0; k < out.length; k++) out[k] += layer[k];
  }
  return out.map((v) => v / (factors.length + 1));
}

/**
 * A snow layer: N(loc, scale²) noise, clipped-zoomed, thresholded, motion-blurred at an angle in (−135°, −45°) and
 * rounded to 1/255, added to the image twice (once rotated 180°) over a brightened image. make_cifar_c.py trims the
 * zoom to the image (centred) and saves the layer as 8-bit PNG before ImageMagick blurs it; imagecorruptions blurs the
 * untrimmed zoom and cuts it top-left afterwards.
 */
function snow({ img, h, w, c, row, table, rng }: CorruptionInput): Float64Array {
  const [loc, scale, zoom, threshold, radius, sigma, weight] = row;
  const noise = Float32Array.from({ length: h * w }, () => loc + scale * rng.normal());
  const cifar = table === "cifar";
  const [layerH, layerW] = cifar ? [h, w] : [clippedZoomSize(h, zoom), clippedZoomSize(w, zoom)];
  let layer = clippedZoom(noise, h, w, 1, zoom, { trim: cifar ? "center" : "none" });
  layer = layer.map((v) => (v < threshold ? 0 : Math.min(1, v)));
  if (cifar) layer = layer.map(truncateToBytes);
  const blurred = motionBlur(layer, layerH, layerW, 1, radius, sigma, uniform(rng, -135, -45));
  const flakes = new Float64Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) flakes[y * w + x] = Math.round(blurred[y * layerW + x] * 255) / 255;
  }
  const out = new Float64Array(img.length);
  for (let p = 0; p < h * w; p++) {
    // cv2 RGB2GRAY for colour images; a grayscale image is its own gray.
    const gray = c === 3 ? 0.299 * img[3 * p] + 0.587 * img[3 * p + 1] + 0.114 * img[3 * p + 2] : img[p];
    const rotated = flakes[h * w - 1 - p];
    for (let ch = 0; ch < c; ch++) {
      const x = img[p * c + ch];
      out[p * c + ch] = weight * x + (1 - weight) * Math.max(x, gray * 1.5 + 0.5) + flakes[p] + rotated;
    }
  }
  return out;
}

/**
 * Procedural stand-in for the frost photos (see {@linkcode PROCEDURAL_SUBSTITUTES}): cloudy plasma (wibble decay
 * 1.6) plus thin bright veins where a second plasma crosses 0.5 ((1 − |2p − 1|)⁶), tinted blue-white. Returns
 * `[h, w, 3]` RGB in [0, 1]; draws two plasma fractals of side nextPowerOf2(max(h, w)) from `rng`.
 */
export function frostLayer(h: number, w: number, rng: Rng): Float32Array {
  const side = nextPowerOf2(Math.max(h, w));
  const clouds = plasmaFractal(side, 1.6, rng), veins = plasmaFractal(side, 1.9, rng);
  const tint = [0.85, 0.93, 1];
  const out = new Float32Array(h * w * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const ridge = (1 - Math.abs(2 * veins[y * side + x] - 1)) ** 6;
      const ice = Math.min(1, 0.6 * clouds[y * side + x] + 0.8 * ridge);
      for (let ch = 0; ch < 3; ch++) out[(y * w + x) * 3 + ch] = ice * tint[ch];
    }
  }
  return out;
}

function frost({ img, h, w, c, row, rng }: CorruptionInput): Float64Array {
  const [imageWeight, frostWeight] = row;
  const layer = frostLayer(h, w, rng);
  const out = new Float64Array(img.length);
  for (let p = 0; p < h * w; p++) {
    for (let ch = 0; ch < c; ch++) {
      const ice = c === 3
        ? layer[3 * p + ch]
        : RGB2GRAY[0] * layer[3 * p] + RGB2GRAY[1] * layer[3 * p + 1] + RGB2GRAY[2] * layer[3 * p + 2];
      out[p * c + ch] = imageWeight * img[p * c + ch] + frostWeight * ice;
    }
  }
  return out;
}

/** Plasma fog of side nextPowerOf2(max(h, w)) (make_cifar_c.py's fixed 32), rescaled to keep the image maximum. */
function fog({ img, h, w, c, row, rng }: CorruptionInput): Float64Array {
  const [weight, decay] = row;
  let maxValue = 0;
  for (const v of img) maxValue = Math.max(maxValue, v);
  const side = nextPowerOf2(Math.max(h, w));
  const plasma = plasmaFractal(side, decay, rng);
  const out = new Float64Array(img.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let ch = 0; ch < c; ch++) {
        const k = (y * w + x) * c + ch;
        out[k] = (img[k] + weight * plasma[y * side + x]) * maxValue / (maxValue + weight);
      }
    }
  }
  return out;
}

/** HSV value + c; on grayscale imagecorruptions adds c directly, which is the same. */
function brightness({ img, c, value: shift, out }: CorruptionInput): Float64Array {
  if (c === 1) {
    for (let k = 0; k < img.length; k++) out[k] = img[k] + shift;
    return out;
  }
  const hsv = rgbToHsv(img);
  for (let p = 2; p < hsv.length; p += 3) hsv[p] = Math.min(1, Math.max(0, hsv[p] + shift));
  return hsvToRgb(hsv);
}

function contrast({ img, h, w, c, value: factor, out }: CorruptionInput): Float64Array {
  const means = [0, 0, 0];
  for (let k = 0; k < img.length; k++) means[k % c] += img[k] / (h * w);
  for (let k = 0; k < img.length; k++) out[k] = (img[k] - means[k % c]) * factor + means[k % c];
  return out;
}

/**
 * HSV saturation · a + b (clipped). A grayscale image goes through RGB and keeps the red channel, as in
 * imagecorruptions: gray pixels have hue 0, so red is their value and the image comes back unchanged.
 */
function saturate({ img, c, row }: CorruptionInput): Float64Array {
  const [scale, offset] = row;
  const rgb = c === 3 ? img : Float32Array.from({ length: img.length * 3 }, (_, k) => img[Math.floor(k / 3)]);
  const hsv = rgbToHsv(rgb);
  for (let p = 1; p < hsv.length; p += 3) hsv[p] = Math.min(1, Math.max(0, hsv[p] * scale + offset));
  const out = hsvToRgb(hsv);
  return c === 3 ? out : Float64Array.from(img, (_, p) => out[3 * p]);
}

/** Box-downsample by the factor, then back up: nearest neighbour in imagecorruptions, box in make_cifar_c.py. */
function pixelate({ img, h, w, c, value: factor, table }: CorruptionInput): Float32Array {
  const smallH = Math.trunc(h * factor), smallW = Math.trunc(w * factor);
  const small = pilResize(img, h, w, c, smallH, smallW, "box");
  return pilResize(small, smallH, smallW, c, h, w, table === "cifar" ? "box" : "nearest");
}

/** A smooth random displacement field: alpha · gaussian(U(−amplitude, amplitude), σ, mode reflect, truncate 3). */
function displacement(
  h: number,
  w: number,
  amplitude: number,
  sigma: number | [number, number],
  alpha: number,
  rng: Rng,
): Float32Array {
  const noise = Float32Array.from({ length: h * w }, () => uniform(rng, -amplitude, amplitude));
  // The reference draws in float64; float32 keeps 7 digits of a field later scaled to a few pixels.
  return gaussianFilter(noise, h, w, 1, sigma, { mode: "reflect", truncate: 3 }).map((v) => v * alpha);
}

/** The 2×3 affine map through three point pairs, `from[k]` → `to[k]` (cv2.getAffineTransform), row-major. */
function affineThrough(from: number[][], to: number[][]): number[] {
  const [[x0, y0], [x1, y1], [x2, y2]] = from;
  const det = x0 * (y1 - y2) - y0 * (x1 - x2) + (x1 * y2 - x2 * y1);
  const solve = (v0: number, v1: number, v2: number) => [
    (v0 * (y1 - y2) - y0 * (v1 - v2) + (v1 * y2 - v2 * y1)) / det,
    (x0 * (v1 - v2) - v0 * (x1 - x2) + (x1 * v2 - x2 * v1)) / det,
    (x0 * (y1 * v2 - y2 * v1) - y0 * (x1 * v2 - x2 * v1) + v0 * (x1 * y2 - x2 * y1)) / det,
  ];
  return [...solve(to[0][0], to[1][0], to[2][0]), ...solve(to[0][1], to[1][1], to[2][1])];
}

/**
 * Elastic deformation: each pixel reads the image at (row + dy, col + dx), bilinear, mode reflect, dx and dy smooth
 * random fields. make_cifar_c.py first applies a random affine map (cv2.warpAffine, reflect-101) that moves three
 * points by up to the jitter, and scales its constants by the image side.
 */
function elasticTransform({ img, h, w, c, constants, table, rng }: CorruptionInput): Float32Array {
  let image = img;
  let dx: Float32Array, dy: Float32Array;
  if (table === "cifar") {
    const [alpha, sigma, jitter] = (constants as readonly number[]).map((v) => v * h);
    // Points as make_cifar_c.py builds them from (h // 2, w // 2); cv2 reads each pair as (x, y).
    const centre = [Math.floor(h / 2), Math.floor(w / 2)], square = Math.floor(Math.min(h, w) / 3);
    const from = [
      [centre[0] + square, centre[1] + square],
      [centre[0] + square, centre[1] - square],
      [centre[0] - square, centre[1] - square],
    ];
    const to = from.map((point) => point.map((v) => v + Math.fround(uniform(rng, -jitter, jitter))));
    // warpAffine samples the source at M⁻¹(x, y): the map from the moved points back to the original ones.
    const [a, b, tx, d, e, ty] = affineThrough(to, from);
    const rows = new Float64Array(h * w), cols = new Float64Array(h * w);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        cols[y * w + x] = a * x + b * y + tx;
        rows[y * w + x] = d * x + e * y + ty;
      }
    }
    image = sampleBilinear(img, h, w, c, rows, cols, "mirror");
    dx = displacement(h, w, 1, sigma, alpha, rng);
    dy = displacement(h, w, 1, sigma, alpha, rng);
  } else {
    const alpha = constants as number;
    const sigma: [number, number] = [h * 0.01, w * 0.01];
    const amplitude = h * 0.005; // the reference uses shape[0] for both axes
    dx = displacement(h, w, amplitude, sigma, alpha, rng);
    dy = displacement(h, w, amplitude, sigma, alpha, rng);
  }
  const rows = Float64Array.from(dy, (v, p) => Math.floor(p / w) + v);
  const cols = Float64Array.from(dx, (v, p) => (p % w) + v);
  return sampleBilinear(image, h, w, c, rows, cols, "reflect");
}

/**
 * Spatter: a thresholded blurred noise layer becomes either water (c5 = 0: Canny edges of the layer, their distance
 * transform, equalised and embossed, shade pale turquoise (175, 238, 238)/255 added) or mud (c5 = 1: the blurred
 * mask darkens the image towards brown (63, 42, 20)/255), following the cv2 calls of the references.
 */
function spatter({ img, h, w, c, row, rng }: CorruptionInput): Float64Array {
  const [loc, scale, sigma, threshold, strength, mud] = row;
  const noise = Float32Array.from({ length: h * w }, () => loc + scale * rng.normal());
  const liquid = gaussianFilter(noise, h, w, 1, sigma).map((v) => (v < threshold ? 0 : v));
  const out = Float64Array.from(img);
  if (mud === 0) {
    // (liquid · 255).astype(uint8); saturated here where the reference's cast would wrap values above 1.
    const bytes = Float64Array.from(liquid, (v) => Math.min(255, Math.floor(v * 255)));
    const edges = cannyCv2(bytes, h, w, 50, 150);
    const distance = distanceTransform5(edges.map((v) => 255 - v), h, w).map((v) => Math.min(v, 20));
    const equalised = equalizeHist(boxBlur3(distance, h, w).map(Math.floor));
    const emboss = [-2, -1, 0, -1, 1, 1, 0, 1, 2];
    const embossed = convolve2d(Float32Array.from(equalised), h, w, 1, Float32Array.from(emboss), 3)
      .map((v) => Math.min(255, Math.max(0, Math.round(v))));
    const shade = boxBlur3(embossed, h, w, true);
    const m = Float64Array.from(shade, (v, p) => bytes[p] * v);
    const peak = m.reduce((a, b) => Math.max(a, b), 0);
    if (peak === 0) return out;
    const colour = [175 / 255, 238 / 255, 238 / 255];
    for (let p = 0; p < h * w; p++) {
      const wet = m[p] / peak * strength;
      if (c === 3) {
        for (let ch = 0; ch < 3; ch++) out[p * 3 + ch] += wet * colour[ch];
      } else {
        out[p] += RGB2GRAY.reduce((sum, weight, ch) => sum + weight * Math.min(1, Math.max(0, wet * colour[ch])), 0);
      }
    }
    return out;
  }
  const mask = Float32Array.from(liquid, (v) => (v > threshold ? 1 : 0));
  const m = gaussianFilter(mask, h, w, 1, strength).map((v) => (v < 0.8 ? 0 : v));
  const brown = [63 / 255, 42 / 255, 20 / 255];
  for (let p = 0; p < h * w; p++) {
    if (c === 3) {
      for (let ch = 0; ch < 3; ch++) out[p * 3 + ch] = out[p * 3 + ch] * (1 - m[p]) + brown[ch] * m[p];
    } else {
      out[p] = out[p] * (1 - m[p]) + RGB2GRAY.reduce((sum, weight, ch) => sum + weight * brown[ch] * m[p], 0);
    }
  }
  return out;
}

/** Every corruption that works image by image (JPEG runs on the whole batch, see `corrupt`). */
const CORRUPTIONS: Record<Exclude<CorruptionName, "jpeg_compression">, Corruption> = {
  gaussian_noise: gaussianNoise,
  shot_noise: shotNoise,
  impulse_noise: impulseNoise,
  defocus_blur: defocusBlur,
  glass_blur: glassBlur,
  motion_blur: motionBlurred,
  zoom_blur: zoomBlur,
  snow,
  frost,
  fog,
  brightness,
  contrast,
  elastic_transform: elasticTransform,
  pixelate,
  speckle_noise: speckleNoise,
  gaussian_blur: gaussianBlur,
  spatter,
  saturate,
};

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
  seed: number;
  table?: CorruptionTableName;
  quantize?: boolean;
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
  const input = new CorruptionInput(h, w, c, severity, table, opts.seed, name);
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
    gaussian_noise: 0,
    shot_noise: 0, // 1/c
    impulse_noise: 0,
    speckle_noise: 0,
    gaussian_blur: 0,
    glass_blur: [0, 0, 0],
    defocus_blur: [0, 0],
    motion_blur: [0, 0],
    zoom_blur: [1, 1, 0.01],
    fog: [0, 2],
    frost: [1, 0],
    snow: [0.1, 0.3, 3, 1, 10, 4, 1],
    spatter: [0.65, 0.3, 4, 0.69, 0, 0],
    contrast: 1,
    brightness: 0,
    saturate: [1, 0],
    jpeg_compression: 85,
    pixelate: 1,
    elastic_transform: 0,
  },
  cifar: {
    gaussian_noise: 0,
    shot_noise: 0, // 1/c
    impulse_noise: 0,
    speckle_noise: 0,
    gaussian_blur: 0,
    glass_blur: [0, 0, 0],
    defocus_blur: [0, 0],
    motion_blur: [0, 0],
    zoom_blur: [1, 1, 0.01],
    fog: [0, 3],
    frost: [1, 0],
    snow: [0.1, 0.2, 1, 1, 8, 3, 1],
    spatter: [0.62, 0.1, 0.7, 0.7, 0, 0],
    contrast: 1,
    brightness: 0,
    saturate: [1, 0],
    jpeg_compression: 100,
    pixelate: 1,
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
