/**
 * Preview images of a dataset: a grid of random samples and one traversal
 * row per factor (every value of the factor, or ten evenly spaced ones,
 * with the other factors fixed).
 *
 * @module
 */
import type { Image } from "../core/png.ts";
import type { Rng } from "../core/rng.ts";
import type { Factors, GroundTruthDataset } from "./ground_truth.ts";

const GAP = 2;

/** Pastes `[n, h, w, c]` images into an RGB grid with `columns` columns; row labels are left to the caller. */
export function imageGrid(values: Float32Array, n: number, shape: [number, number, number], columns: number): Image {
  const [h, w, c] = shape;
  const rows = Math.ceil(n / columns);
  const width = columns * (w + GAP) + GAP, height = rows * (h + GAP) + GAP;
  const data = new Uint8Array(width * height * 3).fill(200);
  for (let i = 0; i < n; i++) {
    const top = GAP + Math.floor(i / columns) * (h + GAP), left = GAP + (i % columns) * (w + GAP);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        for (let k = 0; k < 3; k++) {
          const v = values[((i * h + y) * w + x) * c + (c === 1 ? 0 : k)];
          data[((top + y) * width + left + x) * 3 + k] = Math.round(Math.min(1, Math.max(0, v)) * 255);
        }
      }
    }
  }
  return { width, height, channels: 3, data };
}

/**
 * Random samples (`samples` of them, in rows of `columns`) followed by one
 * row per factor traversing its values, all in one image.
 */
export function datasetPreview(dataset: GroundTruthDataset, rng: Rng, samples = 20, columns = 10): Image {
  const k = dataset.factorSizes.length;
  const random = dataset.sampleFactors(samples, rng);
  const base = dataset.sampleFactors(1, rng).values;
  const traversal = new Int32Array(k * columns * k);
  for (let factor = 0; factor < k; factor++) {
    const size = dataset.factorSizes[factor];
    for (let j = 0; j < columns; j++) {
      const row = factor * columns + j;
      traversal.set(base, row * k);
      // Every value when they fit in a row; else evenly spaced ones, ends included.
      traversal[row * k + factor] = size <= columns
        ? Math.min(j, size - 1)
        : Math.round((j * (size - 1)) / (columns - 1));
    }
  }
  const all: Factors = { values: new Int32Array([...random.values, ...traversal]), n: samples + k * columns };
  const images = dataset.observations(all, rng);
  return imageGrid(images.values, all.n, images.shape, columns);
}
