/**
 * Image kernels of the ImageNet-C family of corruptions (bethgelab/imagecorruptions
 * `imagecorruptions/corruptions.py`, hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py`) and of MNIST-C
 * (google-research/mnist-c `corruptions.py`), written after the numpy/scipy/skimage/cv2/PIL calls they use.
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

/** scipy's `_gaussian_kernel1d(sigma, 0, radius)`: normalised exp(−x²/2σ²) on −radius..radius. */
function gaussianKernel1d(sigma: number, radius: number): Float64Array {
  const kernel = new Float64Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) {
    kernel[k + radius] = Math.exp(-0.5 / (sigma * sigma) * k * k);
    sum += kernel[k + radius];
  }
  for (let k = 0; k < kernel.length; k++) kernel[k] /= sum;
  return kernel;
}

/** Correlates a Float64 `[h, w, c]` image with a 1-D kernel along rows (axis 0) or columns (axis 1). */
function correlate1d(
  img: Float64Array,
  h: number,
  w: number,
  c: number,
  kernel: Float64Array,
  axis: 0 | 1,
  mode: BorderMode,
  cval = 0,
): Float64Array {
  const out = new Float64Array(img.length);
  const radius = (kernel.length - 1) / 2;
  const n = axis === 0 ? h : w;
  const index = new Int32Array(n + 2 * radius);
  for (let j = 0; j < index.length; j++) index[j] = borderIndex(j - radius, n, mode);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const along = axis === 0 ? y : x;
      for (let ch = 0; ch < c; ch++) {
        let acc = 0;
        for (let k = 0; k < kernel.length; k++) {
          const source = index[along + k];
          if (source < 0) {
            acc += kernel[k] * cval;
            continue;
          }
          const at = axis === 0 ? (source * w + x) * c + ch : (y * w + source) * c + ch;
          acc += kernel[k] * img[at];
        }
        out[(y * w + x) * c + ch] = acc;
      }
    }
  }
  return out;
}

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
  let data: Float64Array = Float64Array.from(img);
  // scipy filters only the axes whose sigma exceeds 1e-15, first axis first.
  if (sigmaRows > 1e-15) {
    data = correlate1d(data, h, w, c, gaussianKernel1d(sigmaRows, Math.trunc(truncate * sigmaRows + 0.5)), 0, mode);
  }
  if (sigmaCols > 1e-15) {
    data = correlate1d(data, h, w, c, gaussianKernel1d(sigmaCols, Math.trunc(truncate * sigmaCols + 0.5)), 1, mode);
  }
  return Float32Array.from(data);
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
    for (let ch = 0; ch < c; ch++) {
      const at = (y: number, x: number) => (y < 0 || x < 0 ? cval : img[(y * w + x) * c + ch]);
      const top = (1 - fq) * at(ra, qa) + fq * at(ra, qb);
      const bottom = (1 - fq) * at(rb, qa) + fq * at(rb, qb);
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
