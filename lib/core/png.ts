/**
 * PNG encoding for run media, through fast-png.
 *
 * @module
 */
import { encode } from "fast-png";

/** An 8-bit image: row-major pixels, `channels` interleaved (1 grey, 3 RGB, 4 RGBA). */
export interface Image {
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  data: Uint8Array;
}

/** Encodes an {@linkcode Image} as PNG bytes. */
export function encodePng(image: Image): Uint8Array {
  if (image.data.length !== image.width * image.height * image.channels) {
    throw new Error(
      `image data has ${image.data.length} bytes, expected ${image.width}×${image.height}×${image.channels}`,
    );
  }
  return encode({ width: image.width, height: image.height, channels: image.channels, depth: 8, data: image.data });
}

/**
 * Converts float pixels in [0, 1] (`[height, width, channels]`, C order) to
 * an 8-bit {@linkcode Image}, clipping out-of-range values.
 */
export function imageFromFloats(values: Float32Array, height: number, width: number, channels: 1 | 3 | 4): Image {
  const data = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) data[i] = Math.round(Math.min(1, Math.max(0, values[i])) * 255);
  return { width, height, channels, data };
}
