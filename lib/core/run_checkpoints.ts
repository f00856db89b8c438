/**
 * Arrays a run keeps on disk: checkpoints/step-<n>/ (the newest ones, for
 * `--resume`) and models/<name>/ (trained models, for `eval --run`), both
 * written as array folders (.npy files and a state.json) through a rename.
 *
 * Each folder also holds manifest.json, written last: the SHA-256 of every
 * file and of the config the arrays belong to. A reader checks them before it
 * parses anything, so an edited but well-formed file (weights multiplied by
 * 0, another RNG state, another dtype) is refused instead of trusted. Folders
 * written before manifests existed still load, unchecked.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { formatNpy, type NpyArray, type NpyData, parseNpy } from "./npy.ts";
import { UsageError } from "./errors.ts";
import { isObject, isString, readSmallFile, removeIfPresent } from "./run_files.ts";

/** A checkpoint as loaded back: its step, arrays and JSON state. */
export interface LoadedCheckpoint {
  /** The training step the checkpoint was taken at. */
  step: number;
  /** Name → array, as saved. */
  arrays: Record<string, NpyArray>;
  /** The JSON state saved beside the arrays (e.g. `Rng.state()`, optimiser counters). */
  state: unknown;
  /** False for a checkpoint written before manifests, whose content could not be checked. */
  checked?: boolean;
}

/** The folder name of the checkpoint of `step`: padded to 9 digits, so that names sort as steps do. */
export function checkpointName(step: number): string {
  return `step-${String(step).padStart(9, "0")}`;
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

/** Dtypes a checkpoint holds: what TF.js tensors read back as; a float64 or int64 array was put there by hand. */
const CHECKPOINT_DTYPES = new Set(["f4", "i4", "u1", "b1"]);

/**
 * A checkpoint folder read back and checked: its manifest's hashes (of each
 * file, and of `config` when given), state.json parses, its step is the
 * folder's, every array it names parses with a shape that matches its data
 * and a dtype TF.js writes, and no float array holds NaN or ±Inf (weights
 * saved after training diverged). Throws an Error saying what is wrong.
 */
function readCheckpoint(dir: string, name: string, config?: unknown): LoadedCheckpoint {
  const { arrays, json, checked } = readArrayFolder(join(dir, "checkpoints", name), { config });
  const step = json.step;
  if (!Number.isSafeInteger(step) || checkpointName(step as number) !== name) {
    throw new Error(`state.json says step ${JSON.stringify(step)}, the folder is ${name}`);
  }
  for (const [key, array] of Object.entries(arrays)) {
    const size = array.shape.reduce((a, b) => a * b, 1);
    if (array.data.length !== size) throw new Error(`${key}: ${array.data.length} values for shape [${array.shape}]`);
    if (!CHECKPOINT_DTYPES.has(array.dtype)) throw new Error(`${key}: dtype ${array.dtype}, not one TF.js writes`);
    if (array.data instanceof Float32Array || array.data instanceof Float64Array) {
      const bad = array.data.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) throw new Error(`${key}: value ${bad} is ${array.data[bad]}`);
    }
  }
  return { step: step as number, arrays, state: json.state, checked };
}

/**
 * Loads the newest intact checkpoint of a run, or null when it has none.
 * A damaged newer one (a file unlike its recorded hash, written for another
 * `config`, truncated, edited state.json, non-finite weights) is passed over
 * for the one before it, and named in `skipped`; when every checkpoint is
 * damaged, throws a UsageError naming the checkpoints folder and why.
 */
export function loadLatestCheckpoint(
  dir: string,
  config?: unknown,
): (LoadedCheckpoint & { skipped?: string[] }) | null {
  const names = checkpointNames(dir);
  const skipped: string[] = [];
  for (const name of names.toReversed()) {
    try {
      const checkpoint = readCheckpoint(dir, name, config);
      return skipped.length ? { ...checkpoint, skipped } : checkpoint;
    } catch (error) {
      skipped.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (skipped.length) {
    throw new UsageError(`no intact checkpoint in ${join(dir, "checkpoints")}: ${skipped.join("; ")}`);
  }
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

/**
 * A model saved by `RunWriter.saveModel` (run_writer.ts): its arrays and
 * info, checked against its manifest (each file, and the run's config.json)
 * and for non-finite weights. Throws a UsageError naming the file at fault.
 */
export function loadSavedModel(dir: string, name: string): { arrays: Record<string, NpyArray>; info: unknown } {
  const folder = join(dir, "models", name);
  const configPath = join(dir, "config.json");
  let config: unknown;
  try {
    config = JSON.parse(readSmallFile(configPath));
  } catch (error) {
    throw new UsageError(`${configPath}: cannot be read as JSON (${messageOf(error)})`);
  }
  try {
    const { arrays, json } = readArrayFolder(folder, { config });
    for (const [key, array] of Object.entries(arrays)) {
      if (array.data instanceof Float32Array || array.data instanceof Float64Array) {
        const bad = array.data.findIndex((v) => !Number.isFinite(v));
        if (bad >= 0) throw new ArrayFolderError(`${key}: value ${bad} is ${array.data[bad]}`);
      }
    }
    return { arrays, info: (json as { info: unknown }).info };
  } catch (error) {
    throw new UsageError(`saved model ${folder} cannot be used: ${messageOf(error)}`);
  }
}

/** An array folder that cannot be used: a file unlike its recorded hash, missing, or malformed. */
export class ArrayFolderError extends Error {
  /** The name stack traces and messages show. */
  override name = "ArrayFolderError";
}

/** The message of a thrown value. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The file of an array folder that records its files' hashes; written last. */
export const MANIFEST_FILE = "manifest.json";
/** The manifest's format, so that a later layout is not misread. */
const MANIFEST_FORMAT = 1;

/** The SHA-256 of bytes or text, in hex. */
export function sha256Hex(content: Uint8Array | string): string {
  return createHash("sha256").update(content).digest("hex");
}

/** JSON with every object's keys sorted, so that equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) => isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v,
  );
}

/** The SHA-256 of a config (any JSON value), independent of its keys' order. */
export function configHash(config: unknown): string {
  return sha256Hex(canonicalJson(config));
}

/** What manifest.json holds. */
interface Manifest {
  format: number;
  /** File name → SHA-256 (hex) of its bytes. */
  files: Record<string, string>;
  /** {@linkcode configHash} of the config the arrays belong to, or null when none was given. */
  config: string | null;
}

/**
 * Writes arrays as 0.npy, 1.npy, … and `json` plus the array names as
 * state.json into `folder`, then manifest.json with the SHA-256 of each file
 * and of `options.config`, through a temp folder and a rename, so that a
 * reader sees the whole folder or none of it.
 */
export function writeArrayFolder(
  folder: string,
  arrays: Record<string, { data: NpyData; shape: number[] }>,
  json: Record<string, unknown>,
  options: { config?: unknown } = {},
): void {
  const temp = join(dirname(folder), `.${basename(folder)}.tmp-${Deno.pid}`);
  try {
    Deno.mkdirSync(temp, { recursive: true });
    const names = Object.keys(arrays);
    const files: Record<string, string> = {};
    const write = (file: string, bytes: Uint8Array) => {
      Deno.writeFileSync(join(temp, file), bytes);
      files[file] = sha256Hex(bytes);
    };
    names.forEach((key, i) => write(`${i}.npy`, formatNpy(arrays[key].data, arrays[key].shape)));
    write("state.json", new TextEncoder().encode(JSON.stringify({ ...json, names })));
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      files,
      config: options.config === undefined ? null : configHash(options.config),
    };
    Deno.writeTextFileSync(join(temp, MANIFEST_FILE), JSON.stringify(manifest));
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

/** The folder's manifest, or null when it has none (written before manifests); throws when it is malformed. */
function readManifest(folder: string): Manifest | null {
  let text;
  try {
    text = Deno.readTextFileSync(join(folder, MANIFEST_FILE));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new ArrayFolderError(`${MANIFEST_FILE} does not parse (${messageOf(error)})`);
  }
  if (
    !isObject(manifest) || manifest.format !== MANIFEST_FORMAT || !isObject(manifest.files) ||
    !Object.values(manifest.files).every((h) => isString(h) && /^[0-9a-f]{64}$/.test(h)) ||
    !(manifest.config === null || (isString(manifest.config) && /^[0-9a-f]{64}$/.test(manifest.config)))
  ) {
    throw new ArrayFolderError(`${MANIFEST_FILE} is not a format-${MANIFEST_FORMAT} manifest of file hashes`);
  }
  return manifest as unknown as Manifest;
}

/**
 * Reads a folder written by {@linkcode writeArrayFolder}. With a manifest,
 * every file is checked against its recorded SHA-256 before it is parsed,
 * and `options.config` (when given) against the recorded config's; a folder
 * without one (written before manifests) is read unchecked, with `checked`
 * false. Throws an {@linkcode ArrayFolderError} (or the parse error) naming
 * the file at fault; a missing file throws `Deno.errors.NotFound`.
 */
export function readArrayFolder(
  folder: string,
  options: { config?: unknown } = {},
): { arrays: Record<string, NpyArray>; json: Record<string, unknown>; checked: boolean } {
  const manifest = readManifest(folder);
  if (manifest && options.config !== undefined && manifest.config !== configHash(options.config)) {
    throw new ArrayFolderError(`${MANIFEST_FILE}: written for another config than this run's`);
  }
  const read = (file: string, label = file): Uint8Array => {
    const bytes = Deno.readFileSync(join(folder, file));
    if (manifest) {
      const recorded = manifest.files[file];
      if (recorded === undefined) throw new ArrayFolderError(`${label} is not recorded in ${MANIFEST_FILE}`);
      if (sha256Hex(bytes) !== recorded) throw new ArrayFolderError(`${label} differs from its recorded SHA-256`);
    }
    return bytes;
  };
  let json;
  try {
    json = JSON.parse(new TextDecoder().decode(read("state.json")));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new ArrayFolderError(`state.json does not parse (${error.message})`);
  }
  if (!isObject(json) || !Array.isArray(json.names) || !json.names.every(isString)) {
    throw new ArrayFolderError(`state.json lacks the list of array names`);
  }
  const arrays: Record<string, NpyArray> = {};
  (json.names as string[]).forEach((key, i) => {
    arrays[key] = parseNpy(read(`${i}.npy`, `${i}.npy (${key})`), `${basename(folder)}/${key}`);
  });
  return { arrays, json, checked: manifest !== null };
}
