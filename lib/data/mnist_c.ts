/**
 * MNIST-C (Mu & Gilmer 2019; google-research/mnist-c `corruptions.py`): the 15 corruptions of the benchmark, each at
 * its function's default severity, on 28×28 grayscale digits. Constants and semantics are copied from the reference
 * and the skimage (≈0.15, the 2019 release it was written against), scipy and numpy calls it makes; the one
 * deliberate change is motion blur, whose ImageMagick call is replaced by imagecorruptions' `_motion_blur`.
 *
 * Every image draws its random parameters from its own generator, `Rng.derive(seed, "mnist_c", name, index)`, so the
 * result does not depend on how a set is split into batches. The reference saves uint8 images, so outputs are
 * clipped to [0, 1] and rounded to multiples of 1/255.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { checkCorruptionBatch, corruptEach, ImageCursor } from "./corruption_batch.ts";
import { gaussianFilter, motionBlur, plasmaFractal } from "./corruption_ops.ts";
import type { Observations } from "./ground_truth.ts";
import { affineWarp } from "./image_resampling.ts";
import { poissonVariate } from "./random_variates.ts";

/** The MNIST-C corruptions, in the reference's `CORRUPTIONS` order (without `identity`). */
export const MNIST_C_CORRUPTIONS = [
  "shot_noise",
  "impulse_noise",
  "glass_blur",
  "motion_blur",
  "shear",
  "scale",
  "rotate",
  "brightness",
  "translate",
  "stripe",
  "fog",
  "spatter",
  "dotted_line",
  "zigzag",
  "canny_edges",
] as const;

/** Name of an MNIST-C corruption. */
export type MnistCName = typeof MNIST_C_CORRUPTIONS[number];

/** Side of an MNIST digit in pixels. */
const SIDE = 28;
const PIXELS = SIDE * SIDE;
/** The point the reference's affine warps keep fixed: the image centre in (col, row) = (x, y) pixel coordinates. */
const CENTRE = 13.5;

/**
 * MNIST-C corruption `name` of every image of a batch.
 *
 * @param images `[n, 28, 28, 1]` digits in [0, 1].
 * @param opts `seed` of the corruption's randomness; `firstIndex` (default 0) is the global index of the batch's first
 *   image, so that image i draws from `Rng.derive(seed, "mnist_c", name, firstIndex + i)` whatever the batching.
 * @returns `[n, 28, 28, 1]` corrupted digits in [0, 1], on the 1/255 grid.
 */
export function mnistC(
  images: Observations,
  name: MnistCName,
  opts: { seed: number; firstIndex?: number },
): Observations {
  checkInput(images, name, opts);
  const firstIndex = opts.firstIndex ?? 0;
  const corruption = CORRUPTIONS[name];
  const input = new ImageCursor(PIXELS, opts.seed, ["mnist_c", name]);
  const values = corruptEach(images.values, images.n, input, corruption, firstIndex, true);
  return { values, n: images.n, shape: [SIDE, SIDE, 1] };
}

function checkInput(images: Observations, name: string, opts: { seed: number; firstIndex?: number }): void {
  if (!(MNIST_C_CORRUPTIONS as readonly string[]).includes(name)) {
    throw new UsageError(`mnistC: unknown corruption "${name}"; valid: ${MNIST_C_CORRUPTIONS.join(", ")}`);
  }
  const [h, w, c] = images.shape;
  if (h !== SIDE || w !== SIDE || c !== 1) {
    throw new UsageError(`mnistC: images must be [n, 28, 28, 1], got [${images.n}, ${images.shape.join(", ")}]`);
  }
  checkCorruptionBatch("mnistC", images, opts);
}

/** One corruption of one `[28, 28]` image in [0, 1] (not yet clipped or rounded). */
type Corruption = (input: ImageCursor) => Float64Array | Float32Array | Uint8Array;

const CORRUPTIONS: Record<MnistCName, Corruption> = {
  shot_noise: shotNoise,
  impulse_noise: impulseNoise,
  glass_blur: glassBlur,
  motion_blur: motionBlurred,
  shear: ({ img, rng }) => warp(img, shearMatrix(0.4 * randomSign(rng))),
  scale: ({ img }) => warp(img, scaleMatrix(1 / 0.7)),
  rotate: ({ img, rng }) => warp(img, rotationMatrix(0.4 * randomSign(rng))),
  brightness: brightness,
  translate: ({ img, rng }) => {
    // np.random.choice([-1, 1], 2): dx (columns) first, then dy (rows).
    const dx = 3 * randomSign(rng), dy = 3 * randomSign(rng);
    return warp(img, [1, 0, dx, 0, 1, dy]);
  },
  stripe: stripe,
  fog: fog,
  spatter: spatter,
  dotted_line: ({ img, rng, out }) => addOverlay(img, mnistCOverlay("dotted_line", rng.int(27), rng.int(27)), out),
  zigzag: ({ img, rng, out }) => {
    const r0 = rng.int(27);
    return addOverlay(img, mnistCOverlay("zigzag", r0, r0 - 5 + rng.int(10)), out);
  },
  canny_edges: ({ img }) => cannyEdges(img, SIDE, SIDE),
};

/** np.random.choice([-1, 1]). */
function randomSign(rng: Rng): number {
  return rng.int(2) === 0 ? -1 : 1;
}

/** Severity 5 (c = 3): Poisson(x·c)/c. */
function shotNoise({ img, rng, out }: ImageCursor): Float64Array {
  const c = 3;
  // Plain loops into `out` here and below: TypedArray.from with a map function costs more than these corruptions.
  for (let p = 0; p < PIXELS; p++) out[p] = poissonVariate(rng, img[p] * c) / c;
  return out;
}

/**
 * Severity 4 (amount 0.17): skimage `random_noise(mode="s&p")` since 0.12.4, each pixel flipped with probability
 * `amount`, a flipped pixel becoming 1 or 0 (low_clip of a non-negative image) with equal probability.
 */
function impulseNoise({ img, rng, out }: ImageCursor): Float64Array {
  const amount = 0.17, saltVsPepper = 0.5;
  for (let p = 0; p < PIXELS; p++) {
    const flipped = rng.uniform() < amount;
    const salted = rng.uniform() < saltVsPepper;
    out[p] = flipped ? (salted ? 1 : 0) : img[p];
  }
  return out;
}

/**
 * Severity 1 ((σ, max_delta, iterations) = (0.7, 1, 2)). The reference calls skimage `gaussian(multichannel=True)` on
 * a 2-D image, which appends σ = 0 for a channel axis that is really the columns: both blurs act along rows only, so
 * they run here as a blur of a [28, 1, 28] image. Between them the image is cast to uint8 (truncation), and twice
 * every pixel (h, w), both from 27 down to 2, is swapped with probability 1/2 with (h + dy, w + dx), dx and dy from
 * np.random.randint(−1, 1): −1 or 0.
 */
function glassBlur({ img, rng }: ImageCursor): Float32Array {
  const sigma = 0.7, maxDelta = 1, iterations = 2;
  const blurRows = (values: Float32Array) => gaussianFilter(values, SIDE, 1, SIDE, sigma);
  // uint8 truncation; the 1e-4 absorbs float32 round-off so that a blurred constant 1 stays 255, as in float64.
  const x = Float32Array.from(blurRows(img), (v) => Math.floor(v * 255 + 1e-4) / 255);
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (let h = SIDE - maxDelta; h > maxDelta; h--) {
      for (let w = SIDE - maxDelta; w > maxDelta; w--) {
        if (rng.int(2) !== 0) continue; // np.random.choice([True, False]): index 0 is True
        const dx = -maxDelta + rng.int(2 * maxDelta), dy = -maxDelta + rng.int(2 * maxDelta);
        const a = h * SIDE + w, b = (h + dy) * SIDE + (w + dx);
        const tmp = x[a];
        x[a] = x[b];
        x[b] = tmp;
      }
    }
  }
  return blurRows(x);
}

/**
 * Severity 1 ((radius, σ) = (10, 3), angle ~ U(−45°, 45°)). The reference blurs with ImageMagick's
 * MagickMotionBlurImage through Wand; this uses imagecorruptions' numpy `_motion_blur` (corruption_ops `motionBlur`)
 * instead, as the ImageNet-C suite here does, since ImageMagick is not available.
 */
function motionBlurred({ img, rng }: ImageCursor): Float32Array {
  const angle = -45 + 90 * rng.uniform();
  return motionBlur(img, SIDE, SIDE, 1, 10, 3, angle);
}

/**
 * skimage `warp(x, inverse_map=aff)` (order 1, mode "constant", cval 0, clip=True) of a 28×28 image, `aff` given as
 * the top two rows of its params [[a0, a1, a2], [b0, b1, b2]], which map output (x = col, y = row) to input (x, y).
 * `clip` clips to the input's [min, max], keeping exact zeros where 0 lies outside that range.
 */
function warp(image: Float32Array, params: readonly number[]): Float32Array {
  const [a0, a1, a2, b0, b1, b2] = params;
  // image_resampling's affineWarp maps output (row, col, 1) to input (row, col): rows first.
  const out = affineWarp(image, SIDE, SIDE, 1, [b1, b0, b2, a1, a0, a2], 0);
  let min = Infinity, max = -Infinity;
  for (const v of image) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const preserveZeros = !(min <= 0 && 0 <= max);
  for (let p = 0; p < PIXELS; p++) {
    if (preserveZeros && out[p] === 0) continue;
    out[p] = Math.min(max, Math.max(min, out[p]));
  }
  return out;
}

/** `AffineTransform(M)` params with the translation that keeps (13.5, 13.5) fixed: t = 13.5·(1 − row sum of M). */
function centred(a0: number, a1: number, b0: number, b1: number): number[] {
  return [a0, a1, CENTRE * (1 - a0 - a1), b0, b1, CENTRE * (1 - b0 - b1)];
}

/** skimage ≤ 0.20 `AffineTransform(shear=s)`: [[1, −sin s], [0, cos s]], centred. */
function shearMatrix(shear: number): number[] {
  return centred(1, -Math.sin(shear), 0, Math.cos(shear));
}

/** `AffineTransform(rotation=θ)`: [[cos θ, −sin θ], [sin θ, cos θ]], centred. */
function rotationMatrix(angle: number): number[] {
  return centred(Math.cos(angle), -Math.sin(angle), Math.sin(angle), Math.cos(angle));
}

/** `AffineTransform(scale=(s, s))`, centred: the inverse map samples s times farther out; the digit shrinks. */
function scaleMatrix(scale: number): number[] {
  return centred(scale, 0, 0, scale);
}

/**
 * Severity 5 (c = 0.5): gray → RGB → HSV, V + c clipped, → RGB → gray. A gray pixel has S = 0 and V = x, and
 * rgb2gray's weights (0.2125, 0.7154, 0.0721) sum to 1, so this is clip(x + c).
 */
function brightness({ img, out }: ImageCursor): Float64Array {
  for (let p = 0; p < PIXELS; p++) out[p] = Math.min(1, img[p] + 0.5);
  return out;
}

/** Columns 0–6 and 21–27 inverted (x[:, :7] and x[:, 21:]). */
function stripe({ img, out }: ImageCursor): Float64Array {
  for (let p = 0; p < PIXELS; p++) {
    const col = p % SIDE;
    out[p] = col < 7 || col >= 21 ? 1 - img[p] : img[p];
  }
  return out;
}

/**
 * Severity 5 ((c0, decay) = (3.0, 1.4)): clip((x + c0·plasma)·max x / (max x + c0)), the plasma a 256-map (the
 * reference's default mapsize) cropped to its top-left 28×28.
 */
function fog({ img, rng, out }: ImageCursor): Float64Array {
  const strength = 3.0, decay = 1.4, mapSize = 256;
  const plasma = plasmaFractal(mapSize, decay, rng);
  let maxVal = 0;
  for (const v of img) maxVal = Math.max(maxVal, v);
  const gain = maxVal / (maxVal + strength);
  for (let p = 0; p < PIXELS; p++) {
    const row = Math.floor(p / SIDE), col = p % SIDE;
    out[p] = (img[p] + strength * plasma[row * mapSize + col]) * gain;
  }
  return out;
}

/**
 * Severity 4 ((loc, scale, σ, threshold, σ_mud, mud) = (0.65, 0.3, 1, 0.65, 1.5, 1)): a N(0.65, 0.3²) liquid layer,
 * blurred (σ 1), cut at 0.65; its mask blurred (σ 1.5) and cut below 0.8 gives m; x·(1 − m) + (63/255)·m.
 */
function spatter({ img, rng, out }: ImageCursor): Float64Array {
  const loc = 0.65, scale = 0.3, sigma = 1, threshold = 0.65, maskSigma = 1.5, mud = 63 / 255;
  const liquid = new Float32Array(PIXELS);
  for (let p = 0; p < PIXELS; p++) liquid[p] = loc + scale * rng.normal();
  const blurred = gaussianFilter(liquid, SIDE, SIDE, 1, sigma);
  // liquid[liquid < t] = 0, then m = liquid > t: only values above the threshold survive either step.
  const mask = liquid; // the noise is spent: its array takes the mask
  for (let p = 0; p < PIXELS; p++) mask[p] = blurred[p] > threshold ? 1 : 0;
  const m = gaussianFilter(mask, SIDE, SIDE, 1, maskSigma);
  for (let p = 0; p < PIXELS; p++) {
    const weight = m[p] < 0.8 ? 0 : m[p];
    out[p] = img[p] * (1 - weight) + mud * weight;
  }
  return out;
}

/** clip(x + overlay), into `out`. */
function addOverlay(image: Float32Array, overlay: Float64Array, out: Float64Array): Float64Array {
  for (let p = 0; p < PIXELS; p++) out[p] = Math.min(1, image[p] + overlay[p]);
  return out;
}

/**
 * The pattern MNIST-C's `dotted_line` or `zigzag` adds to a digit (row-major `[28, 28]`, ≥ 0; the digit becomes
 * clip(x + pattern)), given the reference's random rows: `dotted_line` joins (col 0, row r0) to (col 27, row r1), r0
 * and r1 from randint(0, 27); `zigzag` runs from (col 2, row r0) towards (col 25, row r1), r0 from randint(0, 27)
 * and r1 − r0 from randint(−5, 5).
 */
export function mnistCOverlay(name: "dotted_line" | "zigzag", r0: number, r1: number): Float64Array {
  if (name === "dotted_line") {
    const line = lineFromPoints(0, r0, 27, r1);
    // idx = arange(0, 30, 2); every other pair of columns, starting with 0–1, is blanked.
    for (let col = 0; col < SIDE; col++) {
      if (Math.floor(col / 2) % 2 === 0) { for (let row = 0; row < SIDE; row++) line[row * SIDE + col] = 0; }
    }
    return line;
  }
  return zigzagOverlay(r0, r1);
}

/**
 * The reference's `line_from_points`: intensity log(1 − d/2.3) + 1 (clipped to [0, 1]) at vertical distance d from
 * the line through (c0, r0) and (c1, r1), zero left of column ⌊c0⌋ and from column ⌈c1⌉ on (Python slices).
 */
function lineFromPoints(c0: number, r0: number, c1: number, r1: number): Float64Array {
  const out = new Float64Array(PIXELS);
  if (c1 === c0) return out;
  const slope = (r1 - r0) / (c1 - c0);
  const left = pythonSliceIndex(Math.floor(c0)), right = pythonSliceIndex(Math.ceil(c1));
  for (let row = 0; row < SIDE; row++) {
    for (let col = 0; col < SIDE; col++) {
      if (col < left || col >= right) continue;
      const distance = Math.min(Math.abs(row - (slope * (col - c0) + r0)), 2.3 - 1e-10);
      out[row * SIDE + col] = Math.min(1, Math.max(0, Math.log(1 - distance / 2.3) + 1));
    }
  }
  return out;
}

/** Where a Python slice bound lands on an axis of 28: negative counts from the end, then clamped to 0..28. */
function pythonSliceIndex(i: number): number {
  return Math.min(SIDE, Math.max(0, i < 0 ? i + SIDE : i));
}

/**
 * The reference's zigzag: teeth of length a = 2 and height b = 2 along a straight line of length d from (2, r0) to
 * (25, r1), rotated by θ = atan((r1 − r0)/23), each segment a `line_from_points`. The segments are summed here;
 * clipping after each addition, as the reference does, equals clipping the sum since every segment is ≥ 0.
 */
function zigzagOverlay(r0: number, r1: number): Float64Array {
  const a = 2, b = 2, c0 = 2, c1 = 25;
  const theta = Math.atan((r1 - r0) / (c1 - c0));
  const d = (c1 - c0) / Math.cos(theta);
  const ends: [number, number][] = [[0, 0]];
  const teeth = Math.floor((d - a) / (2 * a)) + 1;
  let rLast = 0;
  for (let i = 0; i < teeth; i++) {
    rLast = (-1) ** i * b;
    ends.push([(2 * i + 1) * a, rLast]);
  }
  const maxC = 2 * a * Math.floor(d / (2 * a));
  if (d !== maxC) ends.push([d, rLast / (2 * (d - maxC))]);
  const cos = Math.cos(theta), sin = Math.sin(theta);
  const points = ends.map(([c, r]) => [cos * c - sin * r + c0, sin * c + cos * r + r0]);
  const out = new Float64Array(PIXELS);
  for (let i = 1; i < points.length; i++) {
    const segment = lineFromPoints(points[i - 1][0], points[i - 1][1], points[i][0], points[i][1]);
    for (let p = 0; p < PIXELS; p++) out[p] += segment[p];
  }
  return out;
}

/**
 * Canny edges of a 2-D image after skimage.feature.canny (0.15, the reference's `canny_edges`): Gaussian smoothing
 * (σ, zero padding, renormalised by the smoothed all-ones mask), Sobel gradients (scipy, mode "reflect"), non-maximum
 * suppression interpolating the magnitude along the gradient in four direction sectors on the interior pixels,
 * then hysteresis: 8-connected runs of maxima ≥ `low` that contain one ≥ `high`.
 *
 * @param image row-major `[h, w]` in [0, 1].
 * @returns row-major `[h, w]`, 1 on edges, 0 elsewhere.
 */
export function cannyEdges(
  image: ArrayLike<number>,
  h: number,
  w: number,
  sigma = 1,
  low = 0.1,
  high = 0.2,
): Uint8Array {
  if (h < 3 || w < 3 || image.length !== h * w) {
    throw new UsageError(
      `cannyEdges: need an [h, w] image with h, w ≥ 3 and h·w values, got ${image.length} for ${h}×${w}`,
    );
  }
  const smoothed = smoothWithMask(image, h, w, sigma);
  const at = (r: number, c: number) => smoothed[reflect(r, h) * w + reflect(c, w)];
  // scipy.ndimage.sobel(axis): central difference along axis, then [1, 2, 1] across it.
  const gi = new Float64Array(h * w), gj = new Float64Array(h * w), magnitude = new Float64Array(h * w);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      let di = 0, dj = 0;
      for (let k = -1; k <= 1; k++) {
        const weight = k === 0 ? 2 : 1;
        di += weight * (at(r + 1, c + k) - at(r - 1, c + k));
        dj += weight * (at(r + k, c + 1) - at(r + k, c - 1));
      }
      gi[r * w + c] = di;
      gj[r * w + c] = dj;
      magnitude[r * w + c] = Math.hypot(di, dj);
    }
  }
  const maxima = nonMaximumSuppression(gi, gj, magnitude, h, w);
  return hysteresis(maxima, magnitude, h, w, low, high);
}

/** scipy "reflect" (d c b a | a b c d) for the one-pixel overhang the Sobel operator needs. */
function reflect(i: number, n: number): number {
  return i < 0 ? -i - 1 : i >= n ? 2 * n - 1 - i : i;
}

/**
 * skimage `smooth_with_function_and_mask` with an all-ones mask and `gaussian(mode="constant")`: the zero-padded
 * blur divided by the zero-padded blur of ones (+ float eps). The constant mode is had from corruption_ops'
 * nearest-mode `gaussianFilter` on an image padded with zeros at least as wide as the kernel's radius.
 */
function smoothWithMask(image: ArrayLike<number>, h: number, w: number, sigma: number): Float64Array {
  const pad = Math.floor(4 * sigma + 0.5) + 1;
  const ph = h + 2 * pad, pw = w + 2 * pad;
  const padded = new Float32Array(ph * pw), ones = new Float32Array(ph * pw);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      padded[(r + pad) * pw + c + pad] = image[r * w + c];
      ones[(r + pad) * pw + c + pad] = 1;
    }
  }
  const blurred = gaussianFilter(padded, ph, pw, 1, sigma), bleedOver = gaussianFilter(ones, ph, pw, 1, sigma);
  const out = new Float64Array(h * w);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      const q = (r + pad) * pw + c + pad;
      out[r * w + c] = blurred[q] / (bleedOver[q] + Number.EPSILON);
    }
  }
  return out;
}

/**
 * Magnitudes closer than this count as equal in non-maximum suppression. `gaussianFilter` returns float32, whose
 * round-off (≤ 2⁻²⁴ per smoothed value, ≤ 8 of them per Sobel response) would otherwise break ties that the
 * reference's float64 keeps, e.g. the two equal maxima on either side of a step edge.
 */
const TIE = 1e-6;

/**
 * skimage canny's local maxima: for each interior pixel with a nonzero gradient, in the four sectors checked in the
 * reference's order (a later sector overwrites an earlier one on their shared boundary), the magnitude must be ≥ the
 * bilinear mix of the two neighbours on each side along the gradient.
 */
function nonMaximumSuppression(
  gi: Float64Array,
  gj: Float64Array,
  magnitude: Float64Array,
  h: number,
  w: number,
): Uint8Array {
  const maxima = new Uint8Array(h * w);
  const mag = (r: number, c: number) => magnitude[r * w + c];
  for (let r = 1; r < h - 1; r++) {
    for (let c = 1; c < w - 1; c++) {
      const p = r * w + c, i = gi[p], j = gj[p], m = magnitude[p];
      if (!(m > 0)) continue;
      const ai = Math.abs(i), aj = Math.abs(j);
      const sameSign = (i >= 0 && j >= 0) || (i <= 0 && j <= 0);
      const oppositeSign = (i <= 0 && j >= 0) || (i >= 0 && j <= 0);
      const keeps = (w1: number, plus1: number, plus2: number, minus1: number, minus2: number) =>
        plus2 * w1 + plus1 * (1 - w1) <= m + TIE && minus2 * w1 + minus1 * (1 - w1) <= m + TIE ? 1 : 0;
      let kept = -1;
      if (sameSign && ai >= aj) { // 0–45°
        kept = keeps(aj / ai, mag(r + 1, c), mag(r + 1, c + 1), mag(r - 1, c), mag(r - 1, c - 1));
      }
      if (sameSign && ai <= aj) { // 45–90°
        kept = keeps(ai / aj, mag(r, c + 1), mag(r + 1, c + 1), mag(r, c - 1), mag(r - 1, c - 1));
      }
      if (oppositeSign && ai <= aj) { // 90–135°
        kept = keeps(ai / aj, mag(r, c + 1), mag(r - 1, c + 1), mag(r, c - 1), mag(r + 1, c - 1));
      }
      if (oppositeSign && ai >= aj) { // 135–180°
        kept = keeps(aj / ai, mag(r - 1, c), mag(r - 1, c + 1), mag(r + 1, c), mag(r + 1, c - 1));
      }
      if (kept >= 0) maxima[p] = kept;
    }
  }
  return maxima;
}

/** Keeps the 8-connected components of {maxima ≥ low} that hold a pixel ≥ high. */
function hysteresis(
  maxima: Uint8Array,
  magnitude: Float64Array,
  h: number,
  w: number,
  low: number,
  high: number,
): Uint8Array {
  const edges = new Uint8Array(h * w);
  const stack: number[] = [];
  for (let p = 0; p < h * w; p++) {
    if (maxima[p] && magnitude[p] >= high && !edges[p]) {
      edges[p] = 1;
      stack.push(p);
    }
    while (stack.length > 0) {
      const q = stack.pop()!;
      const r = Math.floor(q / w), c = q % w;
      for (let dr = -1; dr <= 1; dr++) {
        for (let dc = -1; dc <= 1; dc++) {
          const rr = r + dr, cc = c + dc;
          if (rr < 0 || rr >= h || cc < 0 || cc >= w) continue;
          const n = rr * w + cc;
          if (!edges[n] && maxima[n] && magnitude[n] >= low) {
            edges[n] = 1;
            stack.push(n);
          }
        }
      }
    }
  }
  return edges;
}
