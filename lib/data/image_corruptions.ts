/**
 * The corruptions of the ImageNet-C family (lib/data/corruptions.ts) one image at a time, each after the function of
 * its reference file: bethgelab/imagecorruptions `imagecorruptions/corruptions.py` with the `imagenet` table,
 * hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py` with `cifar`. JPEG is not here: it runs on a whole batch
 * (lib/data/jpeg.ts).
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";
import { ImageCursor } from "./corruption_batch.ts";
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
import { clippedZoom, clippedZoomSize, pilResize, sampleBilinear } from "./image_resampling.ts";
import { boxBlur3, cannyCv2, distanceTransform5, equalizeHist } from "./opencv_ops.ts";
import { poissonVariate } from "./random_variates.ts";

/**
 * Per-image input of a corruption: one `[h, w, c]` image, the corruption's constants at its severity and the image's
 * own generator, `Rng.derive(seed, ...labels, index)` (the suite's labels are the corruption's name and severity).
 */
export class CorruptionInput extends ImageCursor {
  /** One image `[h, w, c]` at a time; `seed` and `labels` derive each image's generator. */
  constructor(
    readonly h: number,
    readonly w: number,
    readonly c: number,
    /** The reference whose functions and constants apply (`CorruptionTableName` of corruptions.ts). */
    readonly table: "imagenet" | "cifar",
    /** The constants at this severity: one number or a table row. */
    readonly constants: number | readonly number[],
    seed: number,
    labels: readonly (string | number)[],
  ) {
    super(h * w * c, seed, labels);
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
export type ImageCorruption = (input: CorruptionInput) => Float64Array | Float32Array;

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

/** Every corruption of the suite but JPEG, which runs on the whole batch (lib/data/jpeg.ts), by name. */
export const IMAGE_CORRUPTIONS = {
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
} satisfies Record<string, ImageCorruption>;
