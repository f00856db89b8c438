/**
 * The JPEG compression corruption: jpeg-js's lossy steps (RGB → YCbCr, forward DCT and quantisation, dequantisation,
 * inverse DCT, YCbCr → RGB) block by block, without the lossless Huffman coding and byte stream between them. It
 * gives the same bytes as a jpeg-js encode and decode (tests/data/jpeg_test.ts checks them against jpeg-js) and is
 * several times faster on small images, where jpeg-js spends its time building tables and coding bits.
 *
 * @module
 */

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
 * between is lossless and skipped, so the bytes are the round trip's; the 8-bit inputs keep every coefficient inside
 * the baseline Huffman tables. For a gray image (R = G = B = v) the encoder's fixed-point conversion gives Y = v and
 * Cb = Cr = 128 exactly, whose blocks decode to 128 again and colour-convert to R = G = B = Y, so only the luma is
 * computed. Returns `[n, h, w, c]`.
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
