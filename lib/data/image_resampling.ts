/**
 * Resampling kernels of the image corruptions, written after the scipy, skimage and PIL calls of the references:
 * bilinear samples at fractional positions (scipy.ndimage.map_coordinates), affine warps (skimage `warp`), the
 * centre zoom of zoom blur (imagecorruptions `clipped_zoom`) and PIL's BOX and NEAREST resizes (pixelate).
 *
 * Every kernel takes one row-major `[h, w, c]` Float32Array and returns a new array; inputs are never mutated.
 *
 * @module
 */
import { borderIndex, type BorderMode } from "./corruption_ops.ts";

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

/** The resampling filters of PIL's `Image.resize` that {@linkcode pilResize} has. */
export type PilResample = "box" | "nearest";

/**
 * PIL `Image.resize((outW, outH), resample)` of a `[h, w, c]` image. `box` (Image.BOX) averages each channel in
 * floating point (PIL's "F" mode; 8-bit images are rounded to integers after each pass there), columns first, then
 * rows, as PIL does; `nearest` (Image.NEAREST) takes the pixels PIL takes. Returns `[outH, outW, c]`.
 */
export function pilResize(
  img: Float32Array,
  h: number,
  w: number,
  c: number,
  outH: number,
  outW: number,
  resample: PilResample,
): Float32Array {
  return resample === "box" ? boxResize(img, h, w, c, outH, outW) : nearestResize(img, h, w, c, outH, outW);
}

function boxResize(img: Float32Array, h: number, w: number, c: number, outH: number, outW: number): Float32Array {
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

function nearestResize(img: Float32Array, h: number, w: number, c: number, outH: number, outW: number): Float32Array {
  const rows = nearestIndices(h, outH), cols = nearestIndices(w, outW);
  const out = new Float32Array(outH * outW * c);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      for (let ch = 0; ch < c; ch++) out[(y * outW + x) * c + ch] = img[(rows[y] * w + cols[x]) * c + ch];
    }
  }
  return out;
}
