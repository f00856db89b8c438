/**
 * Ground-truth datasets by name: the original file from the datasets folder
 * when a user supplied it, else the procedural rendering.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

import { dsprites, type DspritesOrientation, type DspritesVariant, halve } from "./dsprites.ts";
import type { GroundTruthDataset } from "./ground_truth.ts";
import { dspritesFromFile, findOriginalFiles, shapes3dFromFile } from "./original_files.ts";
import { shapes3d } from "./shapes3d.ts";

/** Names {@linkcode loadDataset} accepts. */
export const DATASET_NAMES = [
  "dsprites",
  "dsprites-rot",
  "color-dsprites",
  "noisy-dsprites",
  "scream-dsprites",
  "shapes3d",
] as const;
/** A dataset name. */
export type DatasetName = typeof DATASET_NAMES[number];

/** Where users put original dataset files: `data/datasets/` of the project. */
export const DATASETS_FOLDER: string = fileURLToPath(new URL("../../data/datasets/", import.meta.url));

/** Options of {@linkcode loadDataset}. */
export interface LoadOptions {
  /** Image side: 64 or 32 (2×2 area-averaged). */
  size?: 64 | 32;
  /** Folder searched for original files. */
  folder?: string;
  /**
   * dSprites datasets only: the orientation grid ("quarter" is [0°, 90°), as
   * "dsprites-rot"); any other dataset throws.
   */
  orientation?: DspritesOrientation;
}

/** The dataset called `name` (see {@linkcode DATASET_NAMES}). */
export function loadDataset(name: DatasetName, options: LoadOptions = {}): GroundTruthDataset {
  if (options.orientation !== undefined && !name.includes("dsprites")) {
    throw new Error(
      `orientation applies to the dSprites datasets only, not ${name}; ` +
        `it is one of: ${DATASET_NAMES.filter((n) => n.includes("dsprites")).join(", ")}`,
    );
  }
  if (name === "dsprites-rot" && options.orientation === "full") {
    throw new Error(`dsprites-rot has the quarter orientation grid; for the full one load "dsprites"`);
  }
  const files = findOriginalFiles(options.folder ?? DATASETS_FOLDER);
  if (name === "shapes3d") {
    const full = files.shapes3d ? shapes3dFromFile(files.shapes3d) : shapes3d();
    return options.size === 32 ? halved(full) : full;
  }
  const orientation = name === "dsprites-rot" ? "quarter" : options.orientation ?? "full";
  // DeepMind's file holds the full rotation grid only; the quarter grid is always rendered.
  if (name === "dsprites" && orientation === "full" && files.dsprites) {
    return dspritesFromFile(files.dsprites, options.size);
  }
  const variant = name === "dsprites" || name === "dsprites-rot"
    ? "dsprites"
    : name.replace("-dsprites", "") as DspritesVariant;
  return dsprites({ variant, size: options.size, orientation });
}

/** A 64×64 dataset with every image 2×2 area-averaged to 32×32, for datasets rendered or stored at 64×64 only. */
function halved(dataset: GroundTruthDataset): GroundTruthDataset {
  const channels = dataset.imageShape[2];
  return {
    name: dataset.name,
    description: `${dataset.description}, 2×2 area-averaged to 32×32`,
    factorNames: dataset.factorNames,
    factorSizes: dataset.factorSizes,
    imageShape: [32, 32, channels],
    categorical: dataset.categorical,
    sampleFactors: (n, rng) => dataset.sampleFactors(n, rng),
    observations(factors, rng) {
      const full = dataset.observations(factors, rng);
      return { values: halve(full.values, full.n, channels), n: full.n, shape: [32, 32, channels] };
    },
  };
}
