/**
 * The original dataset files, when a user has them in data/datasets/:
 * DeepMind's `dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz` and
 * `3dshapes.npz` (converted from `3dshapes.h5`, for which no HDF5 reader
 * runs here), and MPI3D-real's `mpi3d_real.npz` (Gondal et al. 2019), which
 * has no procedural stand-in. `.npz` is a zip of `.npy` arrays, read with fflate and
 * lib/core/npy.ts. The arrays are loaded whole: about 3 GB for dSprites'
 * images, 5.9 GB for 3dshapes' and 12.7 GB for MPI3D-real's, as numpy users
 * load them.
 *
 * @module
 */
import { unzipSync } from "fflate";
import { basename, join } from "node:path";
import type { Rng } from "../core/rng.ts";
import { type NpyArray, NpyError, parseNpy } from "../core/npy.ts";
import { DSPRITES_FACTORS, DSPRITES_SIZES, halve } from "./dsprites.ts";
import { type Factors, FactorSpace, type GroundTruthDataset } from "./ground_truth.ts";
import { SHAPES3D_FACTORS, SHAPES3D_SIZES } from "./shapes3d.ts";

/** File names looked for in the datasets folder. */
export const DSPRITES_FILE = "dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz";
/** 3dshapes as `.npz` with uint8 `images` `[480000, 64, 64, 3]` (from the `.h5` by {@linkcode SHAPES3D_CONVERSION}). */
export const SHAPES3D_FILE = "3dshapes.npz";
/** DeepMind's 3dshapes release, recognised only to suggest the conversion. */
export const SHAPES3D_H5 = "3dshapes.h5";
/** MPI3D-real as released (`.npz`). */
export const MPI3D_FILE = "mpi3d_real.npz";

/**
 * MPI3D factor names in the release's order (object colour, shape, size,
 * camera height, background colour, horizontal and vertical axis of the arm).
 */
export const MPI3D_FACTORS = [
  "object_color",
  "object_shape",
  "object_size",
  "camera_height",
  "background_color",
  "horizontal_axis",
  "vertical_axis",
] as const;
/** Values per MPI3D factor: 6·6·2·3·3·40·40 = 1,036,800 images. */
export const MPI3D_SIZES = [6, 6, 2, 3, 3, 40, 40] as const;

/** The one-line conversion of DeepMind's 3dshapes.h5, shown when only the .h5 is present. */
export const SHAPES3D_CONVERSION =
  `python3 -c "import h5py, numpy as np; f = h5py.File('3dshapes.h5', 'r'); np.savez('3dshapes.npz', images=f['images'][:], labels=f['labels'][:])"`;

/** A dataset file that is not what it should be. */
export class DatasetFileError extends Error {
  /** Error name, for messages and checks. */
  override name = "DatasetFileError";
}

/** Reads named arrays from `.npz` bytes; `file` names the file in errors. */
export function readNpz(bytes: Uint8Array, file: string, names: string[]): Record<string, NpyArray> {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, { filter: (entry) => names.includes(entry.name.replace(/\.npy$/, "")) });
  } catch (error) {
    throw new DatasetFileError(`${file}: not a readable .npz (zip) file: ${(error as Error).message}`);
  }
  const out: Record<string, NpyArray> = {};
  for (const name of names) {
    const entry = entries[`${name}.npy`];
    if (!entry) throw new DatasetFileError(`${file}: has no array "${name}" (expected ${names.join(", ")})`);
    try {
      out[name] = parseNpy(entry, `${basename(file)}/${name}.npy`);
    } catch (error) {
      if (error instanceof NpyError) throw new DatasetFileError(`${file}: ${error.message}`);
      throw error;
    }
  }
  return out;
}

function expectShape(file: string, name: string, array: NpyArray, shape: (number | null)[]): void {
  const ok = array.shape.length === shape.length && shape.every((d, i) => d === null || d === array.shape[i]);
  if (!ok) {
    throw new DatasetFileError(
      `${file}: "${name}" has shape [${array.shape}], expected [${shape.map((d) => d ?? "n")}]`,
    );
  }
}

/**
 * dSprites from DeepMind's npz: `imgs` uint8 `[n, 64, 64]` and
 * `latents_classes` int64 `[n, 6]` (colour, shape, scale, orientation, x, y).
 * Rows are looked up by their factor tuple, so a partial file serves the
 * tuples it holds and names any it lacks.
 */
export function dspritesFromFile(path: string, size: 64 | 32 = 64): GroundTruthDataset {
  const file = basename(path);
  const { imgs, latents_classes: classes } = readNpz(Deno.readFileSync(path), file, ["imgs", "latents_classes"]);
  expectShape(file, "imgs", imgs, [null, 64, 64]);
  expectShape(file, "latents_classes", classes, [imgs.shape[0], 6]);
  const space = new FactorSpace(DSPRITES_SIZES);
  const rowOf = new Int32Array(space.total).fill(-1);
  const tuple = new Int32Array(5);
  for (let r = 0; r < imgs.shape[0]; r++) {
    for (let i = 0; i < 5; i++) tuple[i] = Number(classes.data[r * 6 + 1 + i]);
    rowOf[space.indexOf(tuple)] = r;
  }
  const pixels = imgs.data as Uint8Array;
  return {
    name: "dsprites",
    description: `dSprites from ${file} (DeepMind's original images)${
      size === 32 ? ", 2×2 area-averaged to 32×32" : ""
    }`,
    factorNames: DSPRITES_FACTORS,
    factorSizes: DSPRITES_SIZES,
    imageShape: [size, size, 1],
    categorical: [0],
    sampleFactors: (n: number, rng: Rng) => space.sample(n, rng),
    observations(factors: Factors) {
      const full = new Float32Array(factors.n * 4096);
      for (let b = 0; b < factors.n; b++) {
        const row = rowOf[space.indexOf(factors.values.subarray(b * 5, b * 5 + 5))];
        if (row < 0) {
          throw new DatasetFileError(
            `${file}: holds no image for factors [${factors.values.subarray(b * 5, b * 5 + 5)}]`,
          );
        }
        for (let p = 0; p < 4096; p++) full[b * 4096 + p] = pixels[row * 4096 + p];
      }
      return { values: size === 64 ? full : halve(full, factors.n, 1), n: factors.n, shape: [size, size, 1] };
    },
  };
}

/** Shapes3D from `3dshapes.npz`: `images` uint8 `[480000, 64, 64, 3]` in factor-grid order. */
export function shapes3dFromFile(path: string): GroundTruthDataset {
  const file = basename(path);
  const { images } = readNpz(Deno.readFileSync(path), file, ["images"]);
  expectShape(file, "images", images, [480_000, 64, 64, 3]);
  return gridImages(images.data as Uint8Array, {
    name: "shapes3d",
    description: `Shapes3D from ${file} (DeepMind's original images)`,
    factorNames: SHAPES3D_FACTORS,
    factorSizes: SHAPES3D_SIZES,
    categorical: [4],
  });
}

const MPI3D_TOTAL = MPI3D_SIZES.reduce((a, b) => a * b, 1);

/** The images array of an MPI3D npz: `images`, else the file's only array; listing what is there otherwise. */
function mpi3dArrayName(bytes: Uint8Array, path: string, expected: string): string {
  const names: string[] = [];
  try {
    // The filter sees every entry and declines it, so nothing is decompressed.
    unzipSync(bytes, {
      filter: (entry) => {
        names.push(entry.name.replace(/\.npy$/, ""));
        return false;
      },
    });
  } catch (error) {
    throw new DatasetFileError(`${path}: not a readable .npz (zip) file: ${(error as Error).message}`);
  }
  if (names.includes("images")) return "images";
  if (names.length === 1) return names[0];
  throw new DatasetFileError(
    `${path}: holds arrays [${names.join(", ")}], none named "images"; expected ${expected}`,
  );
}

/**
 * MPI3D-real from a user-supplied `mpi3d_real.npz`: `images` uint8
 * `[1036800, 64, 64, 3]` in factor-grid order (last factor fastest, see
 * {@linkcode MPI3D_SIZES}), the array name of the original release; a file
 * holding one array under another name (np.savez's `arr_0`) is read as well.
 * A missing file or an array of another shape throws
 * {@linkcode DatasetFileError} naming the path and the expected shape.
 */
export function mpi3dFromFile(path: string): GroundTruthDataset {
  const expected = `images uint8 [${MPI3D_TOTAL}, 64, 64, 3]`;
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    throw new DatasetFileError(
      `${path}: cannot be read (${(error as Error).message}); MPI3D-real needs this file with ${expected}`,
    );
  }
  const file = basename(path);
  const name = mpi3dArrayName(bytes, path, expected);
  const { [name]: images } = readNpz(bytes, path, [name]);
  if (images.dtype !== "u1") throw new DatasetFileError(`${path}: "${name}" is ${images.dtype}, expected ${expected}`);
  expectShape(path, name, images, [MPI3D_TOTAL, 64, 64, 3]);
  return gridImages(images.data as Uint8Array, {
    name: "mpi3d",
    description: `MPI3D-real from ${file} (the original photographs of the robot arm)`,
    factorNames: MPI3D_FACTORS,
    factorSizes: MPI3D_SIZES,
    // Shape is the factor without an order (Schott2022 never splits it); colours are split as ordered indices.
    categorical: [1],
  });
}

/** Which original files are present in `folder`: paths, or null. */
export function findOriginalFiles(
  folder: string,
): { dsprites: string | null; shapes3d: string | null; mpi3d: string | null } {
  const exists = (name: string) => {
    try {
      return Deno.statSync(join(folder, name)).isFile ? join(folder, name) : null;
    } catch {
      return null;
    }
  };
  const h5 = exists(SHAPES3D_H5), npz = exists(SHAPES3D_FILE);
  if (h5 && !npz) {
    throw new DatasetFileError(
      `${h5}: HDF5 cannot be read here; convert it once next to it with:\n  ${SHAPES3D_CONVERSION}`,
    );
  }
  return { dsprites: exists(DSPRITES_FILE), shapes3d: npz, mpi3d: exists(MPI3D_FILE) };
}

/**
 * A dataset of stored 64×64 RGB images, one per point of the factor grid in
 * flat-index order (last factor fastest), as DeepMind's Shapes3D and MPI3D
 * files hold them; `observations` scales bytes to [0, 1].
 */
function gridImages(
  pixels: Uint8Array,
  about: Pick<GroundTruthDataset, "name" | "description" | "factorNames" | "factorSizes" | "categorical">,
): GroundTruthDataset {
  const space = new FactorSpace(about.factorSizes);
  const k = about.factorSizes.length, size = 64 * 64 * 3;
  return {
    ...about,
    imageShape: [64, 64, 3],
    sampleFactors: (n: number, rng: Rng) => space.sample(n, rng),
    observations(factors: Factors) {
      const values = new Float32Array(factors.n * size);
      for (let b = 0; b < factors.n; b++) {
        const row = space.indexOf(factors.values.subarray(b * k, b * k + k));
        for (let p = 0; p < size; p++) values[b * size + p] = pixels[row * size + p] / 255;
      }
      return { values, n: factors.n, shape: [64, 64, 3] };
    },
  };
}
