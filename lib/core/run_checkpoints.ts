/**
 * Arrays a run keeps on disk: checkpoints/step-<n>/ (the newest ones, for
 * `--resume`) and models/<name>/ (trained models, for `eval --run`), both
 * written as array folders (.npy files and a state.json) through a rename.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { formatNpy, type NpyArray, type NpyData, parseNpy } from "./npy.ts";
import { isObject, isString, removeIfPresent } from "./run_files.ts";

/** A checkpoint as loaded back: its step, arrays and JSON state. */
export interface LoadedCheckpoint {
  /** The training step the checkpoint was taken at. */
  step: number;
  /** Name → array, as saved. */
  arrays: Record<string, NpyArray>;
  /** The JSON state saved beside the arrays (e.g. `Rng.state()`, optimiser counters). */
  state: unknown;
}

/** Names of the complete checkpoints of a run, oldest first. */
export function checkpointNames(dir: string): string[] {
  try {
    return [...Deno.readDirSync(join(dir, "checkpoints"))]
      .filter((e) => e.isDirectory && /^step-\d+$/.test(e.name))
      .map((e) => e.name)
      // By number: names are padded to 9 digits, and a step beyond that has more.
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/**
 * A checkpoint folder read back and checked: state.json parses, its step is
 * the folder's, every array it names parses with a shape that matches its
 * data, and no float array holds NaN or ±Inf (weights saved after training
 * diverged). Throws an Error saying what is wrong.
 */
function readCheckpoint(dir: string, name: string): LoadedCheckpoint {
  const { arrays, json } = readArrayFolder(join(dir, "checkpoints", name));
  const step = json.step;
  if (!Number.isSafeInteger(step) || `step-${String(step).padStart(9, "0")}` !== name) {
    throw new Error(`state.json says step ${JSON.stringify(step)}, the folder is ${name}`);
  }
  for (const [key, array] of Object.entries(arrays)) {
    const size = array.shape.reduce((a, b) => a * b, 1);
    if (array.data.length !== size) throw new Error(`${key}: ${array.data.length} values for shape [${array.shape}]`);
    if (array.data instanceof Float32Array || array.data instanceof Float64Array) {
      const bad = array.data.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw new Error(`${key}: value ${bad} is ${array.data[bad]}`);
    }
  }
  return { step: step as number, arrays, state: json.state };
}

/**
 * Loads the newest intact checkpoint of a run, or null when it has none.
 * A damaged newer one (truncated file, edited state.json, non-finite
 * weights) is passed over for the one before it, and named in `skipped`;
 * when every checkpoint is damaged, throws an Error listing why.
 */
export function loadLatestCheckpoint(dir: string): (LoadedCheckpoint & { skipped?: string[] }) | null {
  const names = checkpointNames(dir);
  const skipped: string[] = [];
  for (const name of names.toReversed()) {
    try {
      const checkpoint = readCheckpoint(dir, name);
      return skipped.length ? { ...checkpoint, skipped } : checkpoint;
    } catch (error) {
      skipped.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (skipped.length) throw new Error(`no intact checkpoint in ${join(dir, "checkpoints")}: ${skipped.join("; ")}`);
  return null;
}

/** A model name as saved under models/: other characters become "_". */
export function safeModelName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.@=-]/g, "_");
}

/** Names of the models a run saved with `RunWriter.saveModel` (run_writer.ts), sorted. */
export function savedModels(dir: string): string[] {
  try {
    return [...Deno.readDirSync(join(dir, "models"))].filter((e) => e.isDirectory && !e.name.startsWith("."))
      .map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** A model saved by `RunWriter.saveModel` (run_writer.ts): its arrays and info. */
export function loadSavedModel(dir: string, name: string): { arrays: Record<string, NpyArray>; info: unknown } {
  const { arrays, json } = readArrayFolder(join(dir, "models", name));
  return { arrays, info: (json as { info: unknown }).info };
}

/**
 * Writes arrays as 0.npy, 1.npy, … and `json` plus the array names as
 * state.json into `folder`, through a temp folder and a rename, so that a
 * reader sees the whole folder or none of it.
 */
export function writeArrayFolder(
  folder: string,
  arrays: Record<string, { data: NpyData; shape: number[] }>,
  json: Record<string, unknown>,
): void {
  const temp = join(dirname(folder), `.${basename(folder)}.tmp-${Deno.pid}`);
  try {
    Deno.mkdirSync(temp, { recursive: true });
    const names = Object.keys(arrays);
    names.forEach((key, i) =>
      Deno.writeFileSync(join(temp, `${i}.npy`), formatNpy(arrays[key].data, arrays[key].shape))
    );
    Deno.writeTextFileSync(join(temp, "state.json"), JSON.stringify({ ...json, names }));
  } catch (error) {
    // A full disk keeps the folder as it was, and no partial temp folder.
    removeIfPresent(temp);
    throw error;
  }
  removeIfPresent(folder);
  try {
    Deno.renameSync(temp, folder);
  } catch (error) {
    // Another writer's folder landed between the removal and the rename: leave no temp folder behind.
    removeIfPresent(temp);
    throw error;
  }
}

/** Reads a folder written by {@linkcode writeArrayFolder}. */
export function readArrayFolder(folder: string): { arrays: Record<string, NpyArray>; json: Record<string, unknown> } {
  const json = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
  if (!isObject(json) || !Array.isArray(json.names) || !json.names.every(isString)) {
    throw new Error(`${join(folder, "state.json")} lacks the list of array names`);
  }
  const arrays: Record<string, NpyArray> = {};
  (json.names as string[]).forEach((key, i) => {
    arrays[key] = parseNpy(Deno.readFileSync(join(folder, `${i}.npy`)), `${basename(folder)}/${key}`);
  });
  return { arrays, json };
}
