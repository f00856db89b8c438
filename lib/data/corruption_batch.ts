/**
 * How the two corruption suites (lib/data/corruptions.ts, lib/data/mnist_c.ts) run a corruption over a batch: one
 * image at a time through an {@linkcode ImageCursor} that carries the image's own generator, so results do not
 * depend on batching, then clipped (and optionally rounded to bytes) into the output batch.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import type { Observations } from "./ground_truth.ts";

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
   * A cursor for images of `size` values whose generators derive from `seed` and `labels`.
   *
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
