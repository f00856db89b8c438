/**
 * Image kernels of the ImageNet-C family of corruptions (bethgelab/imagecorruptions
 * `imagecorruptions/corruptions.py`, hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py`) and of MNIST-C
 * (google-research/mnist-c `corruptions.py`), written after the numpy/scipy/skimage/cv2 calls they use: border
 * modes, Gaussian and motion blur, plasma fractals, disk kernels and 2-D convolution, HSV conversion and the glass
 * blur's pixel shuffle. Resampling is in image_resampling.ts, the OpenCV calls of spatter in opencv_ops.ts, JPEG in
 * jpeg.ts.
 *
 * Every kernel takes one image, a row-major `[h, w, c]` Float32Array in [0, 1], and returns a new array (inputs are
 * never mutated, outputs never clipped unless said). Randomness enters only through arguments, so the corruption
 * suite (lib/data/corruptions.ts) decides which generator draws what.
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";

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
