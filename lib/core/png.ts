/**
 * PNG encoding for run media, through fast-png.
 *
 * @module
 */
import { encode } from "fast-png";

/** An 8-bit image: row-major pixels, `channels` interleaved (1 grey, 3 RGB, 4 RGBA). */
export interface Image {
  /** Columns, pixels. */
  width: number;
  /** Rows, pixels. */
  height: number;
  /** Values per pixel. */
  channels: 1 | 3 | 4;
  /** `height·width·channels` bytes, row-major, channels interleaved. */
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
