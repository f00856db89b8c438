/**
 * The JPEG compression corruption: a jpeg-js encode and decode at a quality, the images first rounded to bytes.
 *
 * @module
 */
import jpegJs from "jpeg-js";

/**
 * JPEG encode and decode at `quality` (1–100) with jpeg-js, the values first rounded to bytes. Grayscale images are
 * encoded as RGB and the decoded channels averaged back. jpeg-js does not subsample the chroma channels while PIL,
 * which the references call, uses 4:2:0 by default, so colour images lose a little less here. Returns `[h, w, c]`
 * on the 1/255 grid.
 */
export function jpeg(img: Float32Array, h: number, w: number, c: number, quality: number): Float32Array {
  return jpegBatch(img, 1, h, w, c, quality);
}

/** Images per mosaic in {@linkcode jpegBatch}: bounds the memory of one encode. */
const JPEG_MOSAIC = 256;

/**
 * {@linkcode jpeg} of `n` images `[n, h, w, c]` at once, with the same bytes per image: jpeg-js spends most of a
 * small image's time building its tables, so the images are tiled into one mosaic, each padded to whole 8×8 blocks
 * by repeating its last row and column as jpeg-js pads a lone image. Baseline JPEG codes every block on its own (DC
 * differences are lossless), so each image decodes as if encoded alone. Returns `[n, h, w, c]`.
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
  const tileH = Math.ceil(h / 8) * 8, tileW = Math.ceil(w / 8) * 8, size = h * w * c;
  const out = new Float32Array(n * size);
  for (let first = 0; first < n; first += JPEG_MOSAIC) {
    const count = Math.min(JPEG_MOSAIC, n - first);
    const columns = Math.ceil(Math.sqrt(count)), rows = Math.ceil(count / columns);
    const width = columns * tileW, height = rows * tileH;
    const rgba = new Uint8Array(width * height * 4).fill(255);
    const origin = (i: number) => (Math.floor(i / columns) * tileH * width + (i % columns) * tileW) * 4;
    for (let i = 0; i < count; i++) {
      const base = (first + i) * size, corner = origin(i);
      for (let y = 0; y < tileH; y++) {
        const sy = Math.min(y, h - 1);
        for (let x = 0; x < tileW; x++) {
          const source = base + (sy * w + Math.min(x, w - 1)) * c, target = corner + (y * width + x) * 4;
          for (let ch = 0; ch < 3; ch++) {
            rgba[target + ch] = Math.round(Math.min(1, Math.max(0, images[source + (c === 1 ? 0 : ch)])) * 255);
          }
        }
      }
    }
    const encoded = jpegJs.encode({ data: rgba, width, height }, quality);
    const decoded = jpegJs.decode(encoded.data, { useTArray: true, formatAsRGBA: true }).data;
    for (let i = 0; i < count; i++) {
      const base = (first + i) * size, corner = origin(i);
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const from = corner + (y * width + x) * 4, to = base + (y * w + x) * c;
          if (c === 3) {
            for (let ch = 0; ch < 3; ch++) out[to + ch] = decoded[from + ch] / 255;
          } else {
            out[to] = Math.round((decoded[from] + decoded[from + 1] + decoded[from + 2]) / 3) / 255;
          }
        }
      }
    }
  }
  return out;
}
