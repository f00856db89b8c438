/**
 * Preview images of a dataset: a grid of random samples and one traversal
 * row per factor (every value of the factor, or ten evenly spaced ones,
 * with the other factors fixed); and grids of the image corruptions.
 *
 * @module
 */
import type { Image } from "../core/png.ts";
import type { Rng } from "../core/rng.ts";
import { COMMON_CORRUPTIONS, corrupt, type CorruptionTableName, MNIST_C_CORRUPTIONS, mnistC } from "./corruptions.ts";
import type { Factors, GroundTruthDataset, Observations } from "./ground_truth.ts";

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

/**
 * MNIST-C at a glance: a row of clean digits, then one row per MNIST-C
 * corruption of the same digits (`[n, 28, 28, 1]`, seeded per image).
 */
export function mnistCPreview(digits: Observations, seed: number): Image {
  const rows = [digits.values, ...MNIST_C_CORRUPTIONS.map((name) => mnistC(digits, name, { seed }).values)];
  return imageGrid(concatRows(rows), rows.length * digits.n, digits.shape, digits.n);
}

/**
 * The common corruptions at a glance: per corruption one row of `digits`
 * (usually one or two images) at severities 1 to 5, under `table`'s constants.
 */
export function commonCorruptionPreview(digits: Observations, seed: number, table: CorruptionTableName): Image {
  const severities = [1, 2, 3, 4, 5] as const;
  const rows = COMMON_CORRUPTIONS.flatMap((name) =>
    severities.map((severity) => corrupt(digits, name, severity, { seed, table }).values)
  );
  // Row-major: one grid row per corruption, severities side by side, each with all digits.
  const perRow = severities.length * digits.n;
  const size = digits.shape[0] * digits.shape[1] * digits.shape[2];
  const ordered = new Float32Array(COMMON_CORRUPTIONS.length * perRow * size);
  COMMON_CORRUPTIONS.forEach((_, c) =>
    severities.forEach((_, s) => ordered.set(rows[c * severities.length + s], (c * perRow + s * digits.n) * size))
  );
  return imageGrid(ordered, COMMON_CORRUPTIONS.length * perRow, digits.shape, perRow);
}

function concatRows(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
