/**
 * Ground-truth datasets by name: the original file from the datasets folder
 * when a user supplied it, else the procedural rendering.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

import { dsprites, type DspritesVariant } from "./dsprites.ts";
import type { GroundTruthDataset } from "./ground_truth.ts";
import { dspritesFromFile, findOriginalFiles, shapes3dFromFile } from "./original_files.ts";
import { shapes3d } from "./shapes3d.ts";

/** Names {@linkcode loadDataset} accepts. */
export const DATASET_NAMES = ["dsprites", "color-dsprites", "noisy-dsprites", "scream-dsprites", "shapes3d"] as const;
/** A dataset name. */
export type DatasetName = typeof DATASET_NAMES[number];

/** Where users put original dataset files: `data/datasets/` of the project. */
export const DATASETS_FOLDER = fileURLToPath(new URL("../../data/datasets/", import.meta.url));

/** Options of {@linkcode loadDataset}. */
export interface LoadOptions {
  /** Image side for the dSprites family: 64 or 32. */
  size?: 64 | 32;
  /** Folder searched for original files. */
  folder?: string;
}

/** The dataset called `name` (see {@linkcode DATASET_NAMES}). */
export function loadDataset(name: DatasetName, options: LoadOptions = {}): GroundTruthDataset {
  const files = findOriginalFiles(options.folder ?? DATASETS_FOLDER);
  if (name === "shapes3d") return files.shapes3d ? shapes3dFromFile(files.shapes3d) : shapes3d();
  if (name === "dsprites" && files.dsprites) return dspritesFromFile(files.dsprites, options.size);
  const variant = name === "dsprites" ? "dsprites" : name.replace("-dsprites", "") as DspritesVariant;
  return dsprites({ variant, size: options.size });
}
