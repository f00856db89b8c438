/**
 * The ground-truth dataset interface of disentanglement_lib in TypeScript:
 * images generated from known discrete factors. Images are produced per
 * batch, so memory stays O(batch), never O(dataset).
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";

/** A batch of factor tuples: row-major `[n, factorCount]` integer class indices. */
export interface Factors {
  /** The factor classes, row-major. */
  values: Int32Array;
  /** Number of tuples. */
  n: number;
}

/** A batch of images: row-major `[n, height, width, channels]`, floats in [0, 1]. */
export interface Observations {
  /** The pixels, row-major. */
  values: Float32Array;
  /** Number of images. */
  n: number;
  /** Shape of one image, `[height, width, channels]`. */
  shape: [number, number, number];
}

/** A dataset whose images are a function of discrete factors (plus, for some, noise). */
export interface GroundTruthDataset {
  /** Short name, e.g. "dsprites". */
  readonly name: string;
  /** One line: what it is and how it deviates from the original. */
  readonly description: string;
  /** Name of each factor. */
  readonly factorNames: readonly string[];
  /** Number of values of each factor. */
  readonly factorSizes: readonly number[];
  /** Image shape `[height, width, channels]`. */
  readonly imageShape: [number, number, number];
  /** Factors that are categorical (kept fixed by transition samplers), by index. */
  readonly categorical: readonly number[];
  /** Uniform, independent factor tuples. */
  sampleFactors(n: number, rng: Rng): Factors;
  /** Images of the given factors; `rng` drives per-image noise for the stochastic variants. */
  observations(factors: Factors, rng: Rng): Observations;
}

/** The factor grid: sizes, flat index ↔ tuple, uniform sampling. */
export class FactorSpace {
  /** Values per factor; the last factor varies fastest in flat indices. */
  readonly sizes: readonly number[];
  /** Number of factor combinations. */
  readonly total: number;
  #strides: number[];

  /** A grid of `sizes[i]` values per factor. */
  constructor(sizes: readonly number[]) {
    this.sizes = sizes;
    this.total = sizes.reduce((a, b) => a * b, 1);
    this.#strides = sizes.map((_, i) => sizes.slice(i + 1).reduce((a, b) => a * b, 1));
  }

  /** Flat index of a factor tuple (row-major over the factors, last factor fastest). */
  indexOf(tuple: ArrayLike<number>): number {
    let index = 0;
    for (let i = 0; i < this.sizes.length; i++) {
      if (tuple[i] < 0 || tuple[i] >= this.sizes[i] || !Number.isInteger(tuple[i])) {
        throw new RangeError(`factor ${i} = ${tuple[i]} is outside 0..${this.sizes[i] - 1}`);
      }
      index += tuple[i] * this.#strides[i];
    }
    return index;
  }

  /** The factor tuple of a flat index. */
  tupleOf(index: number): Int32Array {
    if (index < 0 || index >= this.total || !Number.isInteger(index)) {
      throw new RangeError(`index ${index} is outside 0..${this.total - 1}`);
    }
    return Int32Array.from(this.sizes, (_, i) => Math.floor(index / this.#strides[i]) % this.sizes[i]);
  }

  /** `n` uniform, independent factor tuples. */
  sample(n: number, rng: Rng): Factors {
    const k = this.sizes.length;
    const values = new Int32Array(n * k);
    for (let r = 0; r < n; r++) for (let i = 0; i < k; i++) values[r * k + i] = rng.int(this.sizes[i]);
    return { values, n };
  }
}

/** Uniform factors and their images in one call. */
export function sampleBatch(dataset: GroundTruthDataset, n: number, rng: Rng): {
  factors: Factors;
  observations: Observations;
} {
  const factors = dataset.sampleFactors(n, rng);
  return { factors, observations: dataset.observations(factors, rng) };
}
