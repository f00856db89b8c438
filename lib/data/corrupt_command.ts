/**
 * `corrupt`: one corruption of the ImageNet-C family (or of MNIST-C) applied to every image of a `.npy` file,
 * written as another `.npy` file.
 *
 * @module
 */
import { resolve } from "node:path";
import { checkOutputFile, closest, parseCommandLine } from "../core/cli.ts";
import { UsageError } from "../core/errors.ts";
import { formatNpy, type NpyArray, readNpy } from "../core/npy.ts";
import { checkOptions, flagValue } from "./gen_commands.ts";
import { corrupt, CORRUPTION_NAMES, type CorruptionName, defaultTable, type Severity } from "./corruptions.ts";
import type { Observations } from "./ground_truth.ts";
import { MNIST_C_CORRUPTIONS, mnistC, type MnistCName } from "./mnist_c.ts";

const TABLES = ["cifar", "imagenet", "mnist_c"] as const;

/** Smallest image side the command accepts (MNIST's). */
const MIN_SIDE = 28;

/** `corrupt`'s command line. */
export const CORRUPT_USAGE =
  `usage: corrupt --in <images.npy> --out <corrupted.npy> --name <corruption> --severity 1-5 [--table ${
    TABLES.join("|")
  }] [--seed k]
  images: [n, h, w] or [n, h, w, c] (c 1 or 3, sides ≥ ${MIN_SIDE}), float in [0, 1] or uint8 (0-255)
  writes the same shape: float32, or uint8 when the input is uint8; image i's randomness depends on --seed and i only
  --table: constants of cifar (default below 64 px) or imagenet; mnist_c takes an MNIST-C name on [n, 28, 28(, 1)]
    digits at the benchmark's fixed severity (--severity is then not needed)
  corruptions: ${CORRUPTION_NAMES.join(", ")}
  MNIST-C: ${MNIST_C_CORRUPTIONS.join(", ")}`;

/** `name` if it is one of `valid`, else UsageError with the closest one and the list. */
function oneOf<T extends string>(name: string, valid: readonly T[], what: string): T {
  if ((valid as readonly string[]).includes(name)) return name as T;
  throw new UsageError(`unknown ${what} "${name}"; did you mean ${closest(name, valid)}? valid: ${valid.join(", ")}`);
}

/** The images of an `.npy` array as [0, 1] floats; UsageError for a dtype, shape or value the command refuses. */
function imagesOf(array: NpyArray, path: string): { images: Observations; bytes: boolean } {
  const { dtype, shape, data } = array;
  if (dtype !== "f4" && dtype !== "f8" && dtype !== "u1") {
    throw new UsageError(`--in ${path}: dtype ${dtype} is not float32, float64 or uint8`);
  }
  if (shape.length !== 3 && shape.length !== 4) {
    throw new UsageError(`--in ${path}: shape [${shape.join(", ")}] is not [n, h, w] or [n, h, w, c]`);
  }
  const [n, h, w] = shape, c = shape.length === 4 ? shape[3] : 1;
  if (c !== 1 && c !== 3) throw new UsageError(`--in ${path}: ${c} channels; images need 1 or 3`);
  if (h < MIN_SIDE || w < MIN_SIDE) {
    throw new UsageError(`--in ${path}: images of ${h}×${w} pixels; both sides must be at least ${MIN_SIDE}`);
  }
  const bytes = dtype === "u1";
  const values = new Float32Array(data.length);
  for (let k = 0; k < data.length; k++) {
    const v = Number(data[k]);
    if (!bytes && !(v >= 0 && v <= 1)) {
      const [image, rest] = [Math.floor(k / (h * w * c)), k % (h * w * c)];
      throw new UsageError(
        `--in ${path}: value ${v} of image ${image} (flat index ${rest}) is not in [0, 1]; give floats in [0, 1] or uint8`,
      );
    }
    values[k] = bytes ? v / 255 : v;
  }
  return { images: { values, n, shape: [h, w, c] }, bytes };
}

/**
 * `corrupt --in x.npy --out y.npy --name N --severity S [--table cifar|imagenet|mnist_c] [--seed k]`: corrupts every
 * image of `x.npy` (`[n, h, w]` or `[n, h, w, c]`, float in [0, 1] or uint8) with {@linkcode corrupt} (or
 * {@linkcode mnistC} for `--table mnist_c`) and writes `y.npy` in the same shape, float32 (uint8 for uint8 input);
 * prints one line saying what it wrote. Returns the exit code (0). A wrong command line or input file throws
 * {@linkcode UsageError} before anything is written (the CLI exits with code 2).
 */
export async function corruptCommand(
  args: string[],
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  const parsed = parseCommandLine(args);
  if (parsed.flags.has("help")) {
    print(CORRUPT_USAGE);
    return 0;
  }
  checkOptions("corrupt", parsed, ["in", "out", "name", "severity", "table", "seed"]);
  const input = flagValue(parsed.flags, "in", "an .npy file of images");
  const output = flagValue(parsed.flags, "out", "a path for the corrupted .npy file");
  const tableText = flagValue(parsed.flags, "table", `a table: ${TABLES.join(", ")}`, false);
  const table = tableText === undefined ? undefined : oneOf(tableText, TABLES, "table");
  const mnist = table === "mnist_c";
  const names: readonly string[] = mnist ? MNIST_C_CORRUPTIONS : CORRUPTION_NAMES;
  const name = oneOf(flagValue(parsed.flags, "name", `a corruption: ${names.join(", ")}`), names, "corruption");
  const severityText = mnist
    ? flagValue(parsed.flags, "severity", "a severity from 1 to 5", false)
    : flagValue(parsed.flags, "severity", "a severity from 1 to 5");
  if (severityText !== undefined && !/^[1-5]$/.test(severityText)) {
    throw new UsageError(`--severity must be 1, 2, 3, 4 or 5, got "${severityText}"`);
  }
  const seedText = flagValue(parsed.flags, "seed", "an integer", false) ?? "0";
  const seed = Number(seedText);
  // Seeds are 32-bit: a larger or negative one would wrap onto another seed's output.
  if (!/^\d+$/.test(seedText) || !Number.isSafeInteger(seed) || seed > 0xffffffff) {
    throw new UsageError(`--seed must be an integer from 0 to 4294967295, got "${seedText}"`);
  }
  checkOutputFile(output, "--out");
  if (sameFile(output, input)) {
    throw new UsageError(
      `--out ${output} is the --in file: it would be overwritten; write the corrupted images elsewhere`,
    );
  }
  let array: NpyArray;
  try {
    array = await readNpy(input);
  } catch (error) {
    throw new UsageError(`--in ${input}: ${(error as Error).message}`);
  }
  const { images, bytes } = imagesOf(array, input);
  const [h, w, c] = images.shape;
  if (mnist && (h !== 28 || w !== 28 || c !== 1)) {
    throw new UsageError(`--table mnist_c needs [n, 28, 28] or [n, 28, 28, 1] digits, got [${array.shape.join(", ")}]`);
  }
  let result: Observations, what: string;
  if (mnist) {
    result = mnistC(images, name as MnistCName, { seed });
    what = `MNIST-C ${name}`;
  } else {
    const severity = Number(severityText) as Severity;
    const used = table ?? defaultTable(h, w);
    result = corrupt(images, name as CorruptionName, severity, { seed, table: used });
    what = `${name} severity ${severity} (${used} table)`;
  }
  const data = bytes ? Uint8Array.from(result.values, (v) => Math.round(v * 255)) : result.values;
  await Deno.writeFile(output, formatNpy(data, array.shape));
  print(`${output}: ${images.n} images of ${h}×${w}×${c}, ${what}, seed ${seed}, ${bytes ? "uint8" : "float32"}`);
  return 0;
}

/** Whether two paths name one file (through links too), so that writing one would overwrite the other. */
function sameFile(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return Deno.realPathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}
