/**
 * Image kernels of the ImageNet-C family of corruptions (bethgelab/imagecorruptions
 * `imagecorruptions/corruptions.py`, hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py`) and of MNIST-C
 * (google-research/mnist-c `corruptions.py`), written after the numpy/scipy/skimage/cv2/PIL calls they use.
 *
 * Every kernel takes one image, a row-major `[h, w, c]` Float32Array in [0, 1], and returns a new array (inputs are
 * never mutated, outputs never clipped unless said). Randomness enters only through arguments, so the corruption
 * suite (lib/data/corruptions.ts) decides which generator draws what. The two suites (corruptions.ts, mnist_c.ts)
 * also share from here how they run a corruption over a batch ({@linkcode ImageCursor}, {@linkcode corruptEach}).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import type { Observations } from "./ground_truth.ts";

/**
 * How samples beyond the image edge are found, after scipy.ndimage's `mode`: `nearest` repeats the edge pixel,
 * `reflect` mirrors about the pixel edge (d c b a | a b c d), `mirror` about the edge pixel's centre (cv2
 * BORDER_REFLECT_101: d c b | a b c d), `constant` gives `cval` for every coordinate outside [0, n − 1] and
 * `grid-constant` treats every pixel outside the image as `cval` (bilinear weights then fade towards it, as skimage
 * `warp` does with mode "constant").
 */
export type BorderMode = "nearest" | "reflect" | "mirror" | "constant" | "grid-constant";

/** The in-image index that index `i` of an axis of length `n` reads under `mode`; −1 means the constant. */
export function borderIndex(i: number, n: number, mode: BorderMode): number {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case "nearest":
      return i < 0 ? 0 : n - 1;
    case "reflect": {
      const period = 2 * n;
      const k = ((i % period) + period) % period;
      return k < n ? k : period - 1 - k;
    }
    case "mirror": {
      if (n === 1) return 0;
      const period = 2 * n - 2;
      const k = ((i % period) + period) % period;
      return k < n ? k : period - k;
    }
    default:
      return -1;
  }
}

/** scipy's `_gaussian_kernel1d(sigma, 0, radius)`: normalised exp(−x²/2σ²) on −radius..radius. Shared: not to be written. */
function gaussianKernel1d(sigma: number, radius: number): Float64Array {
  const key = `${sigma} ${radius}`;
  const cached = gaussianKernelCache.get(key);
  if (cached) return cached;
  const kernel = new Float64Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) {
    kernel[k + radius] = Math.exp(-0.5 / (sigma * sigma) * k * k);
    sum += kernel[k + radius];
  }
  for (let k = 0; k < kernel.length; k++) kernel[k] /= sum;
  gaussianKernelCache.set(key, kernel);
  return kernel;
}

/** Kernels per `${sigma} ${radius}`: a corruption blurs every image of a batch alike. */
const gaussianKernelCache = new Map<string, Float64Array>();

/**
 * Correlates a Float64 `[h, w, c]` image with a 1-D kernel along rows (axis 0) or columns (axis 1) into `out` (not
 * `img`), each output the sum over taps k = 0, 1, … of kernel[k] · sample, accumulated from 0 in that order.
 */
function correlate1d(
  img: Float64Array,
  h: number,
  w: number,
  c: number,
  kernel: Float64Array,
  axis: 0 | 1,
  mode: BorderMode,
  out: Float64Array,
  cval = 0,
): Float64Array {
  const radius = (kernel.length - 1) / 2, taps = kernel.length;
  const n = axis === 0 ? h : w;
  const index = new Int32Array(n + 2 * radius);
  for (let j = 0; j < index.length; j++) index[j] = borderIndex(j - radius, n, mode);
  const stride = w * c, size = h * stride;
  if (axis === 0) {
    // Row by row: every value of an output row takes the same input row per tap.
    out.fill(0, 0, size);
    for (let y = 0; y < h; y++) {
      const to = y * stride;
      for (let k = 0; k < taps; k++) {
        const source = index[y + k], weight = kernel[k];
        if (source < 0) {
          for (let j = 0; j < stride; j++) out[to + j] += weight * cval;
        } else {
          const from = source * stride;
          for (let j = 0; j < stride; j++) out[to + j] += weight * img[from + j];
        }
      }
    }
    return out;
  }
  for (let j = 0; j < index.length; j++) index[j] = index[j] < 0 ? -1 : index[j] * c;
  const constant = index.some((v) => v < 0);
  if (c === 1 && !constant) return correlateColumnsGray(img, h, w, kernel, index, out);
  for (let y = 0; y < h; y++) {
    const row = y * stride;
    for (let x = 0; x < w; x++) {
      // Away from the border the taps read consecutive pixels: no index lookups.
      const inside = !constant && x >= radius && x < w - radius;
      for (let ch = 0; ch < c; ch++) {
        let acc = 0;
        if (inside) {
          const from = row + (x - radius) * c + ch;
          for (let k = 0; k < taps; k++) acc += kernel[k] * img[from + k * c];
        } else {
          for (let k = 0; k < taps; k++) {
            const source = index[x + k];
            acc += kernel[k] * (source < 0 ? cval : img[row + source + ch]);
          }
        }
        out[row + x * c + ch] = acc;
      }
    }
  }
  return out;
}

/** {@linkcode correlate1d} along the columns of a one-channel image without constant borders, the common case. */
function correlateColumnsGray(
  img: Float64Array,
  h: number,
  w: number,
  kernel: Float64Array,
  index: Int32Array,
  out: Float64Array,
): Float64Array {
  const taps = kernel.length, radius = (taps - 1) / 2;
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let acc = 0;
      if (x >= radius && x < w - radius) {
        const from = row + x - radius;
        for (let k = 0; k < taps; k++) acc += kernel[k] * img[from + k];
      } else {
        for (let k = 0; k < taps; k++) acc += kernel[k] * img[row + index[x + k]];
      }
      out[row + x] = acc;
    }
  }
  return out;
}

/** Module-wide float64 scratch images for {@linkcode gaussianFilter}'s passes (contents undefined between calls). */
let blurScratch = [new Float64Array(0), new Float64Array(0)];

/**
 * Gaussian blur of each channel: scipy.ndimage.gaussian_filter with sigma `sigma` on the two image axes and 0 on the
 * channel axis (what skimage.filters.gaussian does with `channel_axis=-1`), mode "nearest", truncate 4.0 unless
 * `options` say otherwise. `sigma` in pixels, one for both axes or `[rows, cols]`; 0 returns a copy. Returns
 * `[h, w, c]`.
 */
export function gaussianFilter(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  sigma: number | readonly [number, number],
  options: { mode?: BorderMode; truncate?: number } = {},
): Float32Array {
  const [sigmaRows, sigmaCols] = typeof sigma === "number" ? [sigma, sigma] : sigma;
  const mode = options.mode ?? "nearest";
  const truncate = options.truncate ?? 4;
  const size = h * w * c;
  if (blurScratch[0].length < size) blurScratch = [new Float64Array(size), new Float64Array(size)];
  let data: Float64Array = blurScratch[0], spare: Float64Array = blurScratch[1];
  for (let k = 0; k < size; k++) data[k] = img[k];
  // scipy filters only the axes whose sigma exceeds 1e-15, first axis first.
  for (const [axis, axisSigma] of [[0, sigmaRows], [1, sigmaCols]] as const) {
    if (!(axisSigma > 1e-15)) continue;
    const kernel = gaussianKernel1d(axisSigma, Math.trunc(truncate * axisSigma + 0.5));
    const blurred = correlate1d(data, h, w, c, kernel, axis, mode, spare);
    spare = data;
    data = blurred;
  }
  const out = new Float32Array(size);
  for (let k = 0; k < size; k++) out[k] = data[k];
  return out;
}

/**
 * imagecorruptions `_motion_blur` (a port of ImageMagick's MotionBlurImage): the sum over i = 0..2·radius of
 * w_i · (the image shifted by −⌈i·(sin θ, cos θ) − 0.5⌉ rows and columns, edge pixels repeated), with w_i ∝ N(i; 0,
 * σ) normalised over the 2·radius + 1 taps. Like the reference it stops at the first shift that leaves the image
 * (|shift| ≥ side), without renormalising the weights. `angleDeg` in degrees, `radius` and `sigma` in pixels.
 * Returns `[h, w, c]`, not clipped.
 */
export function motionBlur(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  radius: number,
  sigma: number,
  angleDeg: number,
): Float32Array {
  const width = radius * 2 + 1;
  const weights = new Float64Array(width);
  let sum = 0;
  for (let i = 0; i < width; i++) {
    weights[i] = Math.exp(-(i * i) / (2 * sigma * sigma)) / (Math.sqrt(2 * Math.PI) * sigma);
    sum += weights[i];
  }
  const angle = angleDeg * (Math.PI / 180);
  const pointRow = width * Math.sin(angle), pointCol = width * Math.cos(angle);
  const hypot = Math.hypot(pointRow, pointCol);
  const blurred = new Float64Array(img.length);
  for (let i = 0; i < width; i++) {
    const dy = -Math.ceil((i * pointRow) / hypot - 0.5);
    const dx = -Math.ceil((i * pointCol) / hypot - 0.5);
    if (Math.abs(dy) >= h || Math.abs(dx) >= w) break; // the simulated motion left the image
    const weight = weights[i] / sum;
    // `shift(x, dx, dy)`: output (y, x) reads input (y − dy, x − dx), clamped to the image.
    for (let y = 0; y < h; y++) {
      const sy = Math.min(h - 1, Math.max(0, y - dy));
      for (let x = 0; x < w; x++) {
        const sx = Math.min(w - 1, Math.max(0, x - dx));
        const from = (sy * w + sx) * c, to = (y * w + x) * c;
        for (let ch = 0; ch < c; ch++) blurred[to + ch] += weight * img[from + ch];
      }
    }
  }
  return Float32Array.from(blurred);
}

/**
 * Bilinear samples of a `[h, w, c]` image at fractional (row, col) positions, scipy.ndimage.map_coordinates with
 * `order=1` under `mode` (see {@linkcode BorderMode}; `cval` for the constant modes). `rows` and `cols` hold one
 * position each per output pixel; returns `[rows.length, c]`.
 */
export function sampleBilinear(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  rows: ArrayLike<number>,
  cols: ArrayLike<number>,
  mode: BorderMode,
  cval = 0,
): Float32Array {
  const out = new Float32Array(rows.length * c);
  for (let p = 0; p < rows.length; p++) {
    const r = rows[p], q = cols[p];
    if (mode === "constant" && !(r >= 0 && r <= h - 1 && q >= 0 && q <= w - 1)) {
      out.fill(cval, p * c, (p + 1) * c);
      continue;
    }
    const r0 = Math.floor(r), q0 = Math.floor(q);
    const fr = r - r0, fq = q - q0;
    const ra = borderIndex(r0, h, mode), rb = borderIndex(r0 + 1, h, mode);
    const qa = borderIndex(q0, w, mode), qb = borderIndex(q0 + 1, w, mode);
    // Offsets of the four neighbours, −1 where the constant stands in.
    const aa = ra < 0 || qa < 0 ? -1 : (ra * w + qa) * c, ab = ra < 0 || qb < 0 ? -1 : (ra * w + qb) * c;
    const ba = rb < 0 || qa < 0 ? -1 : (rb * w + qa) * c, bb = rb < 0 || qb < 0 ? -1 : (rb * w + qb) * c;
    for (let ch = 0; ch < c; ch++) {
      const top = (1 - fq) * (aa < 0 ? cval : img[aa + ch]) + fq * (ab < 0 ? cval : img[ab + ch]);
      const bottom = (1 - fq) * (ba < 0 ? cval : img[ba + ch]) + fq * (bb < 0 ? cval : img[bb + ch]);
      out[p * c + ch] = (1 - fr) * top + fr * bottom;
    }
  }
  return out;
}

/**
 * Affine warp by inverse mapping: output pixel (row, col) takes the bilinear sample of the input at
 * `inverse · (row, col, 1)`, `inverse` a row-major 2×3 matrix whose first row gives the input row and second the
 * input column. Pixels outside the image count as `fill` (default 0) in the bilinear weights, as in skimage
 * `warp(order=1, mode="constant")`, which MNIST-C uses. Returns `[h, w, c]`.
 */
export function affineWarp(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  inverse: readonly number[],
  fill = 0,
): Float32Array {
  if (inverse.length !== 6) throw new RangeError(`affineWarp needs a 2×3 matrix (6 numbers), got ${inverse.length}`);
  const rows = new Float64Array(h * w), cols = new Float64Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      rows[y * w + x] = inverse[0] * y + inverse[1] * x + inverse[2];
      cols[y * w + x] = inverse[3] * y + inverse[4] * x + inverse[5];
    }
  }
  return sampleBilinear(img, h, w, c, rows, cols, "grid-constant", fill);
}

/**
 * imagecorruptions `plasma_fractal`: a `[mapSize, mapSize]` height map by the diamond-square algorithm, seeded with
 * 0 in the corner; each new point is the mean of its four neighbours (wrapping around) plus wibble · U(−wibble,
 * wibble), wibble starting at 100 and divided by `wibbleDecay` per level; finally scaled to [0, 1]. `mapSize` a power
 * of 2 (≥ 2). Draws mapSize² − 1 uniforms from `rng`, in the reference's order.
 */
export function plasmaFractal(mapSize: number, wibbleDecay: number, rng: Rng): Float32Array {
  if (!Number.isInteger(mapSize) || mapSize < 2 || (mapSize & (mapSize - 1)) !== 0) {
    throw new RangeError(`plasmaFractal needs a power of 2 of at least 2 as mapSize, got ${mapSize}`);
  }
  const n = mapSize;
  const map = new Float64Array(n * n);
  let wibble = 100;
  const wibbled = (sum: number) => sum / 4 + wibble * (-wibble + 2 * wibble * rng.uniform());
  for (let step = n; step >= 2; step /= 2) {
    const half = step / 2, cells = n / step;
    const at = (i: number, j: number) => map[(((i % n) + n) % n) * n + (((j % n) + n) % n)];
    // Squares: the centre of each cell from its four corners.
    for (let i = 0; i < cells; i++) {
      for (let j = 0; j < cells; j++) {
        const y = i * step, x = j * step;
        map[(y + half) * n + x + half] = wibbled(at(y, x) + at(y + step, x) + at(y, x + step) + at(y + step, x + step));
      }
    }
    // Diamonds on the cell tops (from the centres below and above and the corners left and right), then on the
    // cell sides (centres right and left, corners above and below): two separate draws, as in the reference.
    for (let i = 0; i < cells; i++) {
      for (let j = 0; j < cells; j++) {
        const y = i * step, x = j * step;
        map[y * n + x + half] = wibbled(at(y + half, x + half) + at(y - half, x + half) + at(y, x) + at(y, x + step));
      }
    }
    for (let i = 0; i < cells; i++) {
      for (let j = 0; j < cells; j++) {
        const y = i * step, x = j * step;
        map[(y + half) * n + x] = wibbled(at(y + half, x + half) + at(y + half, x - half) + at(y, x) + at(y + step, x));
      }
    }
    wibble /= wibbleDecay;
  }
  let min = Infinity, max = -Infinity;
  for (const v of map) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const out = new Float32Array(n * n);
  for (let k = 0; k < out.length; k++) out[k] = (map[k] - min) / (max - min);
  return out;
}

/**
 * imagecorruptions `disk(radius, alias_blur)`: the normalised indicator of x² + y² ≤ radius² on the grid
 * −8..8 (radius ≤ 8) or −radius..radius, then cv2.GaussianBlur with a 3×3 (radius ≤ 8) or 5×5 kernel of σ
 * `aliasBlur` and cv2's default border (reflect-101). Returns the `[size, size]` kernel, row-major.
 */
export function diskKernel(radius: number, aliasBlur: number): { kernel: Float32Array; size: number } {
  const reach = radius <= 8 ? 8 : radius;
  if (!Number.isInteger(reach)) throw new RangeError(`diskKernel: a radius above 8 must be an integer, got ${radius}`);
  const size = 2 * reach + 1;
  const disk = new Float64Array(size * size);
  let count = 0;
  for (let y = -reach; y <= reach; y++) {
    for (let x = -reach; x <= reach; x++) {
      if (x * x + y * y <= radius * radius) {
        disk[(y + reach) * size + x + reach] = 1;
        count++;
      }
    }
  }
  for (let k = 0; k < disk.length; k++) disk[k] /= count;
  // cv2.getGaussianKernel(ksize, σ > 0): normalised exp(−x²/2σ²) taps; applied to rows, then columns.
  const ksize = radius <= 8 ? 3 : 5;
  const taps = gaussianKernel1d(aliasBlur, (ksize - 1) / 2);
  const across = correlate1d(disk, size, size, 1, taps, 0, "mirror", new Float64Array(disk.length));
  const blurred = correlate1d(across, size, size, 1, taps, 1, "mirror", new Float64Array(disk.length));
  return { kernel: Float32Array.from(blurred), size };
}

/**
 * cv2.filter2D(img, −1, kernel) per channel: correlation with a `[kernelSize, kernelSize]` row-major kernel anchored
 * at its centre (kernelSize odd), border reflect-101 (cv2's default). Returns `[h, w, c]`, not clipped.
 */
export function convolve2d(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  kernel: Float32Array,
  kernelSize: number,
): Float32Array {
  if (kernelSize % 2 !== 1 || kernel.length !== kernelSize * kernelSize) {
    throw new RangeError(`convolve2d needs an odd square kernel, got ${kernel.length} values for side ${kernelSize}`);
  }
  const half = (kernelSize - 1) / 2;
  const rowIndex = Int32Array.from({ length: h + 2 * half }, (_, j) => borderIndex(j - half, h, "mirror"));
  const colIndex = Int32Array.from({ length: w + 2 * half }, (_, j) => borderIndex(j - half, w, "mirror"));
  // Disk kernels are mostly exact zeros outside the disk: only the other taps are visited.
  const taps: [number, number, number][] = [];
  for (let ky = 0; ky < kernelSize; ky++) {
    for (let kx = 0; kx < kernelSize; kx++) {
      if (kernel[ky * kernelSize + kx] !== 0) taps.push([ky, kx, kernel[ky * kernelSize + kx]]);
    }
  }
  const out = new Float32Array(img.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let ch = 0; ch < c; ch++) {
        let acc = 0;
        for (const [ky, kx, weight] of taps) acc += weight * img[(rowIndex[y + ky] * w + colIndex[x + kx]) * c + ch];
        out[(y * w + x) * c + ch] = acc;
      }
    }
  }
  return out;
}

/** Python's round(): halves go to the even neighbour (scipy's zoom sizes its output with it). */
function roundHalfEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Side of the untrimmed {@linkcode clippedZoom} of an axis of `n` pixels: round(⌈n / zoom⌉ · zoom). */
export function clippedZoomSize(n: number, zoomFactor: number): number {
  return roundHalfEven(Math.ceil(n / zoomFactor) * zoomFactor);
}

/**
 * imagecorruptions `clipped_zoom`: the centre crop of ⌈side / zoomFactor⌉ pixels per axis, magnified by
 * scipy.ndimage.zoom(order=1) (output pixel i reads input i·(n_in − 1)/(n_out − 1)) to round(crop · zoomFactor)
 * pixels. `trim` then cuts it to `[h, w, c]`: "top-left" as imagecorruptions' callers do (`[:h, :w]`, the default),
 * "center" as make_cifar_c.py's `clipped_zoom` does, or "none" for the whole
 * `[clippedZoomSize(h), clippedZoomSize(w), c]` result. `zoomFactor` ≥ 1.
 */
export function clippedZoom(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  zoomFactor: number,
  options: { trim?: "top-left" | "center" | "none" } = {},
): Float32Array {
  if (!(zoomFactor >= 1)) throw new RangeError(`clippedZoom needs a zoom factor ≥ 1, got ${zoomFactor}`);
  const trim = options.trim ?? "top-left";
  const cropH = Math.ceil(h / zoomFactor), cropW = Math.ceil(w / zoomFactor);
  const top = Math.floor((h - cropH) / 2), left = Math.floor((w - cropW) / 2);
  const zoomedH = clippedZoomSize(h, zoomFactor), zoomedW = clippedZoomSize(w, zoomFactor);
  const [outH, outW] = trim === "none" ? [zoomedH, zoomedW] : [h, w];
  const [startRow, startCol] = trim === "center"
    ? [Math.floor((zoomedH - h) / 2), Math.floor((zoomedW - w) / 2)]
    : [0, 0];
  const stepRow = zoomedH > 1 ? (cropH - 1) / (zoomedH - 1) : 0;
  const stepCol = zoomedW > 1 ? (cropW - 1) / (zoomedW - 1) : 0;
  const rows = new Float64Array(outH * outW), cols = new Float64Array(outH * outW);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      // Positions inside the crop; "nearest" only guards the last one against round-off past the edge.
      rows[y * outW + x] = top + (startRow + y) * stepRow;
      cols[y * outW + x] = left + (startCol + x) * stepCol;
    }
  }
  return sampleBilinear(img, h, w, c, rows, cols, "nearest");
}

/**
 * PIL's resampling weights along one axis (`precompute_coeffs` in Resample.c) for the box filter: output pixel i
 * averages the input pixels whose centres fall in [i·s, (i + 1)·s), s = n_in / n_out (at least the nearest one
 * when enlarging). Output pixel i weighs `taps[i]` inputs from `start[i]` by `weights[offset[i] + j]`.
 */
interface BoxCoefficients {
  start: Int32Array;
  taps: Int32Array;
  offset: Int32Array;
  weights: Float64Array;
}

/** Coefficients per `${inSize}→${outSize}`: a corruption resizes every image of a batch alike. */
const boxCoefficientCache = new Map<string, BoxCoefficients>();

function boxCoefficients(inSize: number, outSize: number): BoxCoefficients {
  const key = `${inSize}→${outSize}`;
  const cached = boxCoefficientCache.get(key);
  if (cached) return cached;
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = 0.5 * filterScale;
  const start = new Int32Array(outSize), taps = new Int32Array(outSize), offset = new Int32Array(outSize);
  const rows: Float64Array[] = [];
  for (let i = 0; i < outSize; i++) {
    const centre = (i + 0.5) * scale;
    const xmin = Math.max(Math.trunc(centre - support + 0.5), 0);
    const xmax = Math.min(Math.trunc(centre + support + 0.5), inSize) - xmin;
    const k = new Float64Array(xmax);
    let total = 0;
    for (let x = 0; x < xmax; x++) {
      const t = (x + xmin - centre + 0.5) / filterScale;
      k[x] = t > -0.5 && t <= 0.5 ? 1 : 0;
      total += k[x];
    }
    if (total !== 0) { for (let x = 0; x < xmax; x++) k[x] /= total; }
    start[i] = xmin;
    taps[i] = xmax;
    offset[i] = i === 0 ? 0 : offset[i - 1] + taps[i - 1];
    rows.push(k);
  }
  const weights = new Float64Array(rows.reduce((n, k) => n + k.length, 0));
  rows.forEach((k, i) => weights.set(k, offset[i]));
  const coefficients = { start, taps, offset, weights };
  boxCoefficientCache.set(key, coefficients);
  return coefficients;
}

/**
 * PIL `Image.resize((outW, outH), Image.BOX)` of each channel, in floating point (PIL's "F" mode; 8-bit images are
 * rounded to integers after each pass there). Columns first, then rows, as PIL does. Returns `[outH, outW, c]`.
 */
export function boxResize(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  outH: number,
  outW: number,
): Float32Array {
  const across = boxCoefficients(w, outW), down = boxCoefficients(h, outH);
  // PIL keeps the intermediate image in the image's own type: float32 here. Reused across calls (no callbacks).
  const wide = scratchFloat32(h * outW * c);
  const acrossWeights = across.weights, acrossTaps = across.taps, acrossOffset = across.offset;
  const acrossStart = across.start;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < outW; x++) {
      const taps = acrossTaps[x], first = acrossOffset[x], from = (y * w + acrossStart[x]) * c;
      for (let ch = 0; ch < c; ch++) {
        let acc = 0;
        for (let j = 0; j < taps; j++) acc += acrossWeights[first + j] * img[from + j * c + ch];
        wide[(y * outW + x) * c + ch] = acc;
      }
    }
  }
  const out = new Float32Array(outH * outW * c);
  const stride = outW * c, downWeights = down.weights;
  for (let y = 0; y < outH; y++) {
    const taps = down.taps[y], first = down.offset[y], from = down.start[y] * stride;
    for (let k = 0; k < stride; k++) {
      let acc = 0;
      for (let j = 0; j < taps; j++) acc += downWeights[first + j] * wide[from + j * stride + k];
      out[y * stride + k] = acc;
    }
  }
  return out;
}

let scratch32 = new Float32Array(0);

/** A module-wide float32 scratch of at least `n` values (contents undefined), for a kernel's intermediate image. */
function scratchFloat32(n: number): Float32Array {
  if (scratch32.length < n) scratch32 = new Float32Array(Math.max(n, 2 * scratch32.length));
  return scratch32;
}

/** Source indices of PIL's NEAREST resize along one axis (ImagingScaleAffine: ⌊(i + 0.5)·s⌋, accumulated as PIL does). */
function nearestIndices(inSize: number, outSize: number): Int32Array {
  const scale = inSize / outSize;
  const index = new Int32Array(outSize);
  let position = scale * 0.5;
  for (let i = 0; i < outSize; i++) {
    index[i] = Math.min(inSize - 1, Math.max(0, Math.trunc(position)));
    position += scale;
  }
  return index;
}

/** PIL `Image.resize((outW, outH), Image.NEAREST)`. Returns `[outH, outW, c]`. */
export function nearestResize(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  outH: number,
  outW: number,
): Float32Array {
  const rows = nearestIndices(h, outH), cols = nearestIndices(w, outW);
  const out = new Float32Array(outH * outW * c);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      for (let ch = 0; ch < c; ch++) out[(y * outW + x) * c + ch] = img[(rows[y] * w + cols[x]) * c + ch];
    }
  }
  return out;
}

/**
 * JPEG encode and decode at `quality` (1–100) as jpeg-js does it, the values first rounded to bytes. Grayscale images
 * are encoded as RGB and the decoded channels averaged back. jpeg-js does not subsample the chroma channels while PIL,
 * which the references call, uses 4:2:0 by default, so colour images lose a little less here. Returns `[h, w, c]`
 * on the 1/255 grid.
 */
export function jpeg(img: Float32Array, h: number, w: number, c: number, quality: number): Float32Array {
  return jpegBatch(img, 1, h, w, c, quality);
}

/** The JPEG standard's luma and chroma quantisation tables at quality 50, row-major (jpeg-js `YQT`, `UVQT`). */
// deno-fmt-ignore
const JPEG_LUMA_TABLE = [
  16, 11, 10, 16, 24, 40, 51, 61,
  12, 12, 14, 19, 26, 58, 60, 55,
  14, 13, 16, 24, 40, 57, 69, 56,
  14, 17, 22, 29, 51, 87, 80, 62,
  18, 22, 37, 56, 68, 109, 103, 77,
  24, 35, 55, 64, 81, 104, 113, 92,
  49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
];
// deno-fmt-ignore
const JPEG_CHROMA_TABLE = [
  17, 18, 24, 47, 99, 99, 99, 99,
  18, 21, 26, 66, 99, 99, 99, 99,
  24, 26, 56, 99, 99, 99, 99, 99,
  47, 66, 99, 99, 99, 99, 99, 99,
  ...new Array(32).fill(99),
];

/** jpeg-js's AAN scale factors of the forward DCT (`aasf`). */
const JPEG_AAN_SCALE = [1.0, 1.387039845, 1.306562965, 1.175875602, 1.0, 0.785694958, 0.5411961, 0.275899379];

/**
 * One component's tables at one quality: `quantizer` the quantisation step per row-major coefficient (what the
 * decoder multiplies by), `scale` the factor jpeg-js's encoder multiplies the unnormalised DCT output by.
 */
interface JpegComponentTables {
  quantizer: Int32Array;
  scale: Float64Array;
}

/**
 * Tables per quality as jpeg-js's `setQuality` and `initQuantTables` build them. jpeg-js keeps and writes the steps
 * in zig-zag order and its decoder puts them back in row-major order, so here they stay row-major throughout.
 */
const jpegTableCache = new Map<number, { luma: JpegComponentTables; chroma: JpegComponentTables }>();

function jpegTables(quality: number): { luma: JpegComponentTables; chroma: JpegComponentTables } {
  const cached = jpegTableCache.get(quality);
  if (cached) return cached;
  // encode(): a falsy quality means 50; setQuality() clamps to 1..100.
  let q = quality || 50;
  if (q <= 0) q = 1;
  if (q > 100) q = 100;
  const sf = q < 50 ? Math.floor(5000 / q) : Math.floor(200 - q * 2);
  const build = (base: number[]): JpegComponentTables => {
    const quantizer = new Int32Array(64), scale = new Float64Array(64);
    for (let k = 0; k < 64; k++) quantizer[k] = Math.min(255, Math.max(1, Math.floor((base[k] * sf + 50) / 100)));
    for (let row = 0, k = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++, k++) {
        scale[k] = 1.0 / (quantizer[k] * JPEG_AAN_SCALE[row] * JPEG_AAN_SCALE[col] * 8.0);
      }
    }
    return { quantizer, scale };
  };
  const tables = { luma: build(JPEG_LUMA_TABLE), chroma: build(JPEG_CHROMA_TABLE) };
  jpegTableCache.set(quality, tables);
  return tables;
}

/**
 * jpeg-js's encoder `fDCTQuant`: the AAN float forward DCT of an 8×8 block (row-major, level-shifted samples; the
 * block is overwritten), rows then columns, then each coefficient times its `scale`, rounded half away from zero.
 */
function jpegForwardQuantize(data: Float64Array, scale: Float64Array, coefficients: Int32Array): void {
  for (let pass = 0; pass < 2; pass++) {
    // Pass 0 transforms the rows (elements 1 apart, rows 8 apart), pass 1 the columns.
    const step = pass === 0 ? 1 : 8, next = pass === 0 ? 8 : 1;
    for (let i = 0, at = 0; i < 8; i++, at += next) {
      const d0 = data[at], d1 = data[at + step], d2 = data[at + 2 * step], d3 = data[at + 3 * step];
      const d4 = data[at + 4 * step], d5 = data[at + 5 * step], d6 = data[at + 6 * step], d7 = data[at + 7 * step];
      const tmp0 = d0 + d7, tmp7 = d0 - d7, tmp1 = d1 + d6, tmp6 = d1 - d6;
      const tmp2 = d2 + d5, tmp5 = d2 - d5, tmp3 = d3 + d4, tmp4 = d3 - d4;
      // Even part.
      let tmp10 = tmp0 + tmp3;
      const tmp13 = tmp0 - tmp3;
      let tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
      data[at] = tmp10 + tmp11;
      data[at + 4 * step] = tmp10 - tmp11;
      const z1 = (tmp12 + tmp13) * 0.707106781;
      data[at + 2 * step] = tmp13 + z1;
      data[at + 6 * step] = tmp13 - z1;
      // Odd part.
      tmp10 = tmp4 + tmp5;
      tmp11 = tmp5 + tmp6;
      tmp12 = tmp6 + tmp7;
      const z5 = (tmp10 - tmp12) * 0.382683433;
      const z2 = 0.5411961 * tmp10 + z5;
      const z4 = 1.306562965 * tmp12 + z5;
      const z3 = tmp11 * 0.707106781;
      const z11 = tmp7 + z3, z13 = tmp7 - z3;
      data[at + 5 * step] = z13 + z2;
      data[at + 3 * step] = z13 - z2;
      data[at + step] = z11 + z4;
      data[at + 7 * step] = z11 - z4;
    }
  }
  for (let i = 0; i < 64; i++) {
    const v = data[i] * scale[i];
    coefficients[i] = v > 0.0 ? (v + 0.5) | 0 : (v - 0.5) | 0;
  }
}

/** Fixed-point constants of jpeg-js's decoder (poppler's IDCT, Loeffler et al. 1989): × 4096, sqrt(2) × 4096. */
const IDCT_COS1 = 4017, IDCT_SIN1 = 799, IDCT_COS3 = 3406, IDCT_SIN3 = 2276;
const IDCT_COS6 = 1567, IDCT_SIN6 = 3784, IDCT_SQRT2 = 5793, IDCT_SQRT1D2 = 2896;

/**
 * jpeg-js's decoder `quantizeAndInverse`: dequantise the coefficients, integer inverse DCT of rows then columns
 * (`p` is its Int32Array workspace), level shift, and saturate to bytes in `samples`.
 */
function jpegDequantizeInverse(coefficients: Int32Array, quantizer: Int32Array, p: Int32Array, samples: Uint8Array) {
  for (let i = 0; i < 64; i++) p[i] = coefficients[i] * quantizer[i];
  let v0, v1, v2, v3, v4, v5, v6, v7, t;
  for (let pass = 0; pass < 2; pass++) {
    // Pass 0 transforms the rows (elements 1 apart, rows 8 apart), pass 1 the columns. The row pass keeps 4 more
    // fraction bits: its rounding shifts are 4 shorter, and it scales the two odd inputs it does not multiply by 16.
    const step = pass === 0 ? 1 : 8, next = pass === 0 ? 8 : 1;
    const shift = pass === 0 ? 8 : 12, half = 1 << (shift - 1), oddScale = pass === 0 ? 4 : 0;
    const dcShift = shift + 2, dcHalf = 1 << (dcShift - 1);
    for (let i = 0, at = 0; i < 8; i++, at += next) {
      if (
        p[at + step] === 0 && p[at + 2 * step] === 0 && p[at + 3 * step] === 0 && p[at + 4 * step] === 0 &&
        p[at + 5 * step] === 0 && p[at + 6 * step] === 0 && p[at + 7 * step] === 0
      ) {
        t = (IDCT_SQRT2 * p[at] + dcHalf) >> dcShift;
        for (let j = 0; j < 8; j++) p[at + j * step] = t;
        continue;
      }
      // Stage 4.
      v0 = (IDCT_SQRT2 * p[at] + half) >> shift;
      v1 = (IDCT_SQRT2 * p[at + 4 * step] + half) >> shift;
      v2 = p[at + 2 * step];
      v3 = p[at + 6 * step];
      v4 = (IDCT_SQRT1D2 * (p[at + step] - p[at + 7 * step]) + half) >> shift;
      v7 = (IDCT_SQRT1D2 * (p[at + step] + p[at + 7 * step]) + half) >> shift;
      v5 = p[at + 3 * step] << oddScale;
      v6 = p[at + 5 * step] << oddScale;
      // Stage 3.
      t = (v0 - v1 + 1) >> 1;
      v0 = (v0 + v1 + 1) >> 1;
      v1 = t;
      t = (v2 * IDCT_SIN6 + v3 * IDCT_COS6 + half) >> shift;
      v2 = (v2 * IDCT_COS6 - v3 * IDCT_SIN6 + half) >> shift;
      v3 = t;
      t = (v4 - v6 + 1) >> 1;
      v4 = (v4 + v6 + 1) >> 1;
      v6 = t;
      t = (v7 + v5 + 1) >> 1;
      v5 = (v7 - v5 + 1) >> 1;
      v7 = t;
      // Stage 2.
      t = (v0 - v3 + 1) >> 1;
      v0 = (v0 + v3 + 1) >> 1;
      v3 = t;
      t = (v1 - v2 + 1) >> 1;
      v1 = (v1 + v2 + 1) >> 1;
      v2 = t;
      t = (v4 * IDCT_SIN3 + v7 * IDCT_COS3 + 2048) >> 12;
      v4 = (v4 * IDCT_COS3 - v7 * IDCT_SIN3 + 2048) >> 12;
      v7 = t;
      t = (v5 * IDCT_SIN1 + v6 * IDCT_COS1 + 2048) >> 12;
      v5 = (v5 * IDCT_COS1 - v6 * IDCT_SIN1 + 2048) >> 12;
      v6 = t;
      // Stage 1.
      p[at] = v0 + v7;
      p[at + 7 * step] = v0 - v7;
      p[at + step] = v1 + v6;
      p[at + 6 * step] = v1 - v6;
      p[at + 2 * step] = v2 + v5;
      p[at + 5 * step] = v2 - v5;
      p[at + 3 * step] = v3 + v4;
      p[at + 4 * step] = v3 - v4;
    }
  }
  for (let i = 0; i < 64; i++) {
    const sample = 128 + ((p[i] + 8) >> 4);
    samples[i] = sample < 0 ? 0 : sample > 0xFF ? 0xFF : sample;
  }
}

/**
 * {@linkcode jpeg} of `n` images `[n, h, w, c]`, each as jpeg-js encodes it alone (padded to whole 8×8 blocks by
 * repeating its last row and column) and decodes it back: jpeg-js's RGB → YCbCr in fixed point, its float forward
 * DCT and rounding, its decoder's dequantisation, integer inverse DCT and YCbCr → RGB. The Huffman coding in
 * between is lossless and skipped, which makes this many times faster than a jpeg-js round trip and gives the same
 * bytes (tests/data/corruption_ops_test.ts checks them against jpeg-js); the 8-bit inputs keep every coefficient
 * inside the baseline Huffman tables. For a gray image (R = G = B = v) the encoder's fixed-point conversion gives
 * Y = v and Cb = Cr = 128 exactly, whose blocks decode to 128 again and colour-convert to R = G = B = Y, so only the
 * luma is computed. Returns `[n, h, w, c]`.
 */
export function jpegBatch(
  images: Float32Array,
  n: number,
  h: number,
  w: number,
  c: number,
  quality: number,
): Float32Array {
  if (c !== 1 && c !== 3) throw new RangeError(`jpeg needs 1 or 3 channels, got ${c}`);
  const { luma, chroma } = jpegTables(quality);
  const size = h * w * c;
  const out = new Float32Array(n * size);
  const block = new Float64Array(64), coefficients = new Int32Array(64), workspace = new Int32Array(64);
  const planes = [new Uint8Array(64), new Uint8Array(64), new Uint8Array(64)];
  const ycc = [new Float64Array(64), new Float64Array(64), new Float64Array(64)];
  const rgb = new Uint8Array(3);
  const byteAt = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 255);
  for (let i = 0; i < n; i++) {
    const base = i * size;
    for (let top = 0; top < h; top += 8) {
      for (let left = 0; left < w; left += 8) {
        for (let y = 0, k = 0; y < 8; y++) {
          const row = base + Math.min(top + y, h - 1) * w * c;
          for (let x = 0; x < 8; x++, k++) {
            const at = row + Math.min(left + x, w - 1) * c;
            if (c === 1) {
              block[k] = byteAt(images[at]) - 128;
              continue;
            }
            const r = byteAt(images[at]), g = byteAt(images[at + 1]), b = byteAt(images[at + 2]);
            // jpeg-js's RGB_YUV_TABLE sums, 16-bit fixed point.
            ycc[0][k] = ((19595 * r + 38470 * g + (7471 * b + 0x8000)) >> 16) - 128;
            ycc[1][k] = ((-11059 * r + -21709 * g + (32768 * b + 0x807FFF)) >> 16) - 128;
            ycc[2][k] = (((32768 * r + 0x807FFF) + -27439 * g + -5329 * b) >> 16) - 128;
          }
        }
        if (c === 1) {
          jpegForwardQuantize(block, luma.scale, coefficients);
          jpegDequantizeInverse(coefficients, luma.quantizer, workspace, planes[0]);
        } else {
          for (let component = 0; component < 3; component++) {
            const tables = component === 0 ? luma : chroma;
            jpegForwardQuantize(ycc[component], tables.scale, coefficients);
            jpegDequantizeInverse(coefficients, tables.quantizer, workspace, planes[component]);
          }
        }
        const rows = Math.min(8, h - top), cols = Math.min(8, w - left);
        for (let y = 0; y < rows; y++) {
          for (let x = 0; x < cols; x++) {
            const k = y * 8 + x, to = base + ((top + y) * w + left + x) * c;
            if (c === 1) {
              out[to] = planes[0][k] / 255;
              continue;
            }
            // The decoder's getData: float YCbCr → RGB, clamped, stored as bytes (truncated).
            const luminance = planes[0][k], cb = planes[1][k] - 128, cr = planes[2][k] - 128;
            rgb[0] = clampByte(luminance + 1.402 * cr);
            rgb[1] = clampByte(luminance - 0.3441363 * cb - 0.71413636 * cr);
            rgb[2] = clampByte(luminance + 1.772 * cb);
            for (let ch = 0; ch < 3; ch++) out[to + ch] = rgb[ch] / 255;
          }
        }
      }
    }
  }
  return out;
}

/** jpeg-js's `clampTo8bit`: a value outside [0, 255] to the nearer end (the byte store then truncates). */
function clampByte(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/**
 * skimage.color.rgb2hsv of `[pixels, 3]` RGB values in [0, 1]: hue in [0, 1) (0 where the pixel is gray),
 * saturation (max − min)/max, value max; where channels tie for the maximum, blue wins over green over red, as in
 * skimage. Returns `[pixels, 3]`.
 */
export function rgbToHsv(rgb: ArrayLike<number>): Float64Array {
  const out = new Float64Array(rgb.length);
  for (let p = 0; p < rgb.length; p += 3) {
    const r = rgb[p], g = rgb[p + 1], b = rgb[p + 2];
    const v = Math.max(r, g, b), delta = v - Math.min(r, g, b);
    let hue = 0;
    if (delta !== 0) {
      if (b === v) hue = 4 + (r - g) / delta;
      else if (g === v) hue = 2 + (b - r) / delta;
      else hue = (g - b) / delta;
      hue = (((hue / 6) % 1) + 1) % 1;
    }
    out[p] = hue;
    out[p + 1] = delta === 0 ? 0 : delta / v;
    out[p + 2] = v;
  }
  return out;
}

/** skimage.color.hsv2rgb of `[pixels, 3]` HSV values (see {@linkcode rgbToHsv}). Returns `[pixels, 3]`. */
export function hsvToRgb(hsv: ArrayLike<number>): Float64Array {
  const out = new Float64Array(hsv.length);
  for (let p = 0; p < hsv.length; p += 3) {
    const hue = hsv[p], s = hsv[p + 1], v = hsv[p + 2];
    const hi = Math.floor(hue * 6);
    const f = hue * 6 - hi;
    const pp = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
    const sector = ((hi % 6) + 6) % 6;
    const [r, g, b] = [[v, t, pp], [q, v, pp], [pp, v, t], [pp, q, v], [t, pp, v], [v, pp, q]][sector];
    out[p] = r;
    out[p + 1] = g;
    out[p + 2] = b;
  }
  return out;
}

/**
 * The local pixel shuffle of imagecorruptions `glass_blur`: `iterations` times, for every row h from
 * `h − maxDelta` down to `maxDelta + 1` and, inside, every column likewise, the pixel swaps places with the one at
 * (h + dy, w + dx), dx then dy drawn from np.random.randint(−maxDelta, maxDelta), i.e. −maxDelta..maxDelta − 1.
 * Returns a shuffled copy, `[h, w, c]`.
 */
export function glassShuffle(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  maxDelta: number,
  iterations: number,
  rng: Rng,
): Float32Array {
  const x = img.slice();
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (let row = h - maxDelta; row > maxDelta; row--) {
      for (let col = w - maxDelta; col > maxDelta; col--) {
        const dx = rng.int(2 * maxDelta) - maxDelta, dy = rng.int(2 * maxDelta) - maxDelta;
        const a = (row * w + col) * c, b = ((row + dy) * w + col + dx) * c;
        for (let ch = 0; ch < c; ch++) {
          const tmp = x[a + ch];
          x[a + ch] = x[b + ch];
          x[b + ch] = tmp;
        }
      }
    }
  }
  return x;
}

/**
 * cv2.blur(img, (3, 3)): the mean of each 3×3 neighbourhood, border reflect-101, on a `[h, w]` image. With
 * `toBytes` the result is rounded and saturated to 0..255 as cv2 does for uint8 images. Returns `[h, w]`.
 */
export function boxBlur3(img: ArrayLike<number>, h: number, w: number, toBytes = false): Float64Array {
  const out = new Float64Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const row = borderIndex(y + dy, h, "mirror") * w;
        for (let dx = -1; dx <= 1; dx++) sum += img[row + borderIndex(x + dx, w, "mirror")];
      }
      out[y * w + x] = toBytes ? Math.min(255, Math.max(0, Math.round(sum / 9))) : sum / 9;
    }
  }
  return out;
}

/**
 * cv2.Canny(img, low, high) of a `[h, w]` uint8 image (values 0..255) with the default 3×3 Sobel aperture and L1
 * gradient |∂x| + |∂y| (Sobel with replicated borders): non-maximum suppression along the gradient direction
 * quantised to 0°, 45°, 90° or 135° (cv2's tan 22.5° tests), then hysteresis, 8-connected, from magnitudes above
 * `high` through those above `low`. Returns `[h, w]` with 255 on edges, 0 elsewhere.
 */
export function cannyCv2(img: ArrayLike<number>, h: number, w: number, low: number, high: number): Uint8Array {
  const at = (y: number, x: number) => img[Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))];
  const dxs = new Int32Array(h * w), dys = new Int32Array(h * w), mag = new Int32Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dx = at(y - 1, x + 1) + 2 * at(y, x + 1) + at(y + 1, x + 1) - at(y - 1, x - 1) - 2 * at(y, x - 1) -
        at(y + 1, x - 1);
      const dy = at(y + 1, x - 1) + 2 * at(y + 1, x) + at(y + 1, x + 1) - at(y - 1, x - 1) - 2 * at(y - 1, x) -
        at(y - 1, x + 1);
      dxs[y * w + x] = dx;
      dys[y * w + x] = dy;
      mag[y * w + x] = Math.abs(dx) + Math.abs(dy);
    }
  }
  // Outside the image the magnitude counts as 0, as in cv2's padded magnitude buffer.
  const m = (y: number, x: number) => (y < 0 || y >= h || x < 0 || x >= w ? 0 : mag[y * w + x]);
  const lowT = Math.floor(low), highT = Math.floor(high);
  const TG22 = Math.round(0.4142135623730950488016887242097 * (1 << 15)); // cv2's fixed-point tan 22.5°
  const state = new Uint8Array(h * w); // 0 not an edge, 1 candidate, 2 edge
  const stack: number[] = [];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = mag[y * w + x];
      if (v <= lowT) continue;
      const dx = dxs[y * w + x], dy = dys[y * w + x];
      const xs = Math.abs(dx), ys = Math.abs(dy) * (1 << 15);
      const tg22x = xs * TG22;
      let peak: boolean;
      if (ys < tg22x) peak = v > m(y, x - 1) && v >= m(y, x + 1);
      else if (ys > tg22x + xs * (1 << 16)) peak = v > m(y - 1, x) && v >= m(y + 1, x);
      else {
        const s = (dx ^ dy) < 0 ? -1 : 1;
        peak = v > m(y - 1, x - s) && v > m(y + 1, x + s);
      }
      if (!peak) continue;
      if (v > highT) {
        state[y * w + x] = 2;
        stack.push(y * w + x);
      } else state[y * w + x] = 1;
    }
  }
  while (stack.length) {
    const p = stack.pop()!, y = Math.floor(p / w), x = p % w;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const yy = y + dy, xx = x + dx;
        if (yy < 0 || yy >= h || xx < 0 || xx >= w || state[yy * w + xx] !== 1) continue;
        state[yy * w + xx] = 2;
        stack.push(yy * w + xx);
      }
    }
  }
  return Uint8Array.from(state, (s) => (s === 2 ? 255 : 0));
}

/**
 * cv2.distanceTransform(img, DIST_L2, 5): for every non-zero pixel of a `[h, w]` image, the chamfer distance to the
 * nearest zero pixel with cv2's 5×5 mask (steps 1, diagonal 1.4, knight 2.1969), two raster passes; pixels
 * beyond the border are not zeros. Infinity where the image has no zero pixel. Returns `[h, w]`.
 */
export function distanceTransform5(img: ArrayLike<number>, h: number, w: number): Float64Array {
  const a = 1, b = 1.4, knight = 2.1969;
  const d = Float64Array.from({ length: h * w }, (_, k) => (img[k] === 0 ? 0 : Infinity));
  const get = (y: number, x: number) => (y < 0 || y >= h || x < 0 || x >= w ? Infinity : d[y * w + x]);
  const forward: [number, number, number][] = [
    [-2, -1, knight],
    [-2, 1, knight],
    [-1, -2, knight],
    [-1, -1, b],
    [-1, 0, a],
    [-1, 1, b],
    [-1, 2, knight],
    [0, -1, a],
  ];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let best = d[y * w + x];
      for (const [dy, dx, cost] of forward) best = Math.min(best, get(y + dy, x + dx) + cost);
      d[y * w + x] = best;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      let best = d[y * w + x];
      for (const [dy, dx, cost] of forward) best = Math.min(best, get(y - dy, x - dx) + cost);
      d[y * w + x] = best;
    }
  }
  return d;
}

/**
 * cv2.equalizeHist of a uint8 image (values 0..255, any shape): value v becomes round(255 · (#pixels ≤ v −
 * #pixels at the lowest value) / (#pixels − #pixels at the lowest value)); a constant image stays as it is.
 */
export function equalizeHist(img: ArrayLike<number>): Uint8Array {
  const histogram = new Int32Array(256);
  for (let k = 0; k < img.length; k++) histogram[img[k]]++;
  let lowest = 0;
  while (lowest < 255 && histogram[lowest] === 0) lowest++;
  const total = img.length;
  if (histogram[lowest] === total) return Uint8Array.from(img);
  const scale = 255 / (total - histogram[lowest]);
  const lut = new Uint8Array(256);
  let sum = 0;
  for (let v = lowest + 1; v < 256; v++) {
    sum += histogram[v];
    lut[v] = Math.min(255, Math.round(sum * scale));
  }
  return Uint8Array.from(img, (v) => lut[v]);
}

/**
 * One image of a batch at a time, as a corruption suite hands it to its corruptions: a view of the image, scratch for
 * a pointwise result, and the image's own generator, `Rng.derive(seed, ...labels, index)` with the image's global
 * index, so results do not depend on batching. One object serves a whole batch, moved from image to image by `next`:
 * a fresh object per image costs more than a pointwise corruption of a digit, and so does deriving a generator that a
 * corruption never draws from.
 */
export class ImageCursor {
  /** The current image, a view into the batch: read, never written. */
  img: Float32Array = new Float32Array(0);
  /** Scratch of one image's size that a pointwise corruption may fill and return; reused for the next image. */
  readonly out: Float64Array;
  #index = 0;
  #rng: Rng | null = null;

  /**
   * @param size values per image
   * @param seed the run's seed
   * @param labels what the suite and the corruption add to the seed before the image's index
   */
  constructor(size: number, readonly seed: number, readonly labels: readonly (string | number)[]) {
    this.out = new Float64Array(size);
  }

  /** Moves to image `img`, global index `index`. */
  next(img: Float32Array, index: number): this {
    this.img = img;
    this.#index = index;
    this.#rng = null;
    return this;
  }

  /** The image's generator, `Rng.derive(seed, ...labels, index)`, derived on first use. */
  get rng(): Rng {
    return this.#rng ??= Rng.derive(this.seed, ...this.labels, this.#index);
  }
}

/**
 * `corruption` of each of the `n` images of a batch, image i given to it through `cursor` with global index
 * `firstIndex + i`, clipped (and with `quantize` rounded) by {@linkcode storeClipped}.
 *
 * @param values `n` images of `cursor.out.length` values each, concatenated
 * @returns the corrupted images, laid out as `values`
 */
export function corruptEach<Cursor extends ImageCursor>(
  values: Float32Array,
  n: number,
  cursor: Cursor,
  corruption: (input: Cursor) => Float64Array | Float32Array | Uint8Array,
  firstIndex: number,
  quantize: boolean,
): Float32Array {
  const size = cursor.out.length;
  const batch = new Float32Array(n * size);
  for (let i = 0; i < n; i++) {
    const out = corruption(cursor.next(values.subarray(i * size, (i + 1) * size), firstIndex + i));
    storeClipped(out, batch, i * size, quantize);
  }
  return batch;
}

/**
 * What both suites require of a batch once its image shape is accepted: `n` whole images, values in [0, 1], an
 * integer `seed` and a non-negative integer `firstIndex` (default 0). Throws a UsageError whose message starts with
 * `caller`.
 */
export function checkCorruptionBatch(
  caller: string,
  images: Observations,
  opts: { seed: number; firstIndex?: number },
): void {
  const [h, w, c] = images.shape;
  if (!Number.isInteger(images.n) || images.n < 0 || images.values.length !== images.n * h * w * c) {
    throw new UsageError(`${caller}: ${images.values.length} values do not make ${images.n} images of ${h}×${w}×${c}`);
  }
  const outside = firstOutsideUnitInterval(images.values);
  if (outside >= 0) {
    throw new UsageError(`${caller}: pixel values must lie in [0, 1], got ${images.values[outside]} at ${outside}`);
  }
  if (!Number.isInteger(opts.seed)) throw new UsageError(`${caller}: seed must be an integer, got ${opts.seed}`);
  const first = opts.firstIndex ?? 0;
  if (!Number.isInteger(first) || first < 0) {
    throw new UsageError(`${caller}: firstIndex must be a non-negative integer, got ${first}`);
  }
}

/**
 * Clips one corrupted image to [0, 1] and writes it into a float32 batch from index `offset`; with `quantize` each
 * value is first rounded to a multiple of 1/255, as the references save uint8 images.
 */
export function storeClipped(
  image: Float64Array | Float32Array | Uint8Array,
  batch: Float32Array,
  offset: number,
  quantize: boolean,
): void {
  // One loop per array type: the loop shared by every corruption would otherwise read several element kinds, which
  // makes it several times slower than a pointwise corruption of a digit.
  if (image instanceof Float64Array) storeClipped64(image, batch, offset, quantize);
  else if (image instanceof Float32Array) storeClipped32(image, batch, offset, quantize);
  else storeClippedBytes(image, batch, offset, quantize);
}

function storeClipped64(image: Float64Array, batch: Float32Array, offset: number, quantize: boolean): void {
  for (let k = 0; k < image.length; k++) {
    const v = Math.min(1, Math.max(0, image[k]));
    batch[offset + k] = quantize ? Math.round(v * 255) / 255 : v;
  }
}

function storeClipped32(image: Float32Array, batch: Float32Array, offset: number, quantize: boolean): void {
  for (let k = 0; k < image.length; k++) {
    const v = Math.min(1, Math.max(0, image[k]));
    batch[offset + k] = quantize ? Math.round(v * 255) / 255 : v;
  }
}

function storeClippedBytes(image: Uint8Array, batch: Float32Array, offset: number, quantize: boolean): void {
  for (let k = 0; k < image.length; k++) {
    const v = Math.min(1, Math.max(0, image[k]));
    batch[offset + k] = quantize ? Math.round(v * 255) / 255 : v;
  }
}

/** Index of the first value of `values` outside [0, 1] (NaN included), −1 if there is none. */
export function firstOutsideUnitInterval(values: ArrayLike<number>): number {
  for (let k = 0; k < values.length; k++) {
    const v = values[k];
    if (!(v >= 0 && v <= 1)) return k;
  }
  return -1;
}
