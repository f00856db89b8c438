/**
 * `gen-split`: the generalization benchmark's train/test split of a factor
 * grid as two `.npy` files, for training and scoring models anywhere; and the
 * command-line checks of dataset and split names that `gen-eval`
 * (lib/metrics/gen_eval.ts) shares.
 *
 * @module
 */
import { join } from "node:path";
import { checkFolder, closest, parseCommandLine } from "../core/cli.ts";
import { UsageError } from "../core/errors.ts";
import { formatNpy } from "../core/npy.ts";
import { DSPRITES_FACTORS } from "./dsprites.ts";
import { MPI3D_FACTORS } from "./original_files.ts";
import { SHAPES3D_FACTORS } from "./shapes3d.ts";
import { makeSplit, type Split, SPLIT_NAMES, SPLIT_SIZES, type SplitDataset } from "./splits.ts";

/** A benchmark dataset's factor grid as the commands see it. */
export interface BenchmarkGrid {
  /** Whose splits apply. */
  dataset: SplitDataset;
  /** Values per factor. */
  sizes: readonly number[];
  /** Factor names, in grid order. */
  factorNames: readonly string[];
}

/**
 * Dataset names the commands accept. dsprites-rot (orientation in [0°, 90°))
 * has dSprites' grid and splits: only the angles its indices stand for differ.
 */
export const BENCHMARK_GRIDS: Record<string, BenchmarkGrid> = {
  "dsprites": { dataset: "dsprites", sizes: SPLIT_SIZES.dsprites, factorNames: DSPRITES_FACTORS },
  "dsprites-rot": { dataset: "dsprites", sizes: SPLIT_SIZES.dsprites, factorNames: DSPRITES_FACTORS },
  "shapes3d": { dataset: "shapes3d", sizes: SPLIT_SIZES.shapes3d, factorNames: SHAPES3D_FACTORS },
  "mpi3d": { dataset: "mpi3d", sizes: SPLIT_SIZES.mpi3d, factorNames: MPI3D_FACTORS },
};

const GRID_NAMES = Object.keys(BENCHMARK_GRIDS);

/** `gen-split`'s command line. */
export const GEN_SPLIT_USAGE = `usage: gen-split --dataset ${GRID_NAMES.join("|")} --split ${
  SPLIT_NAMES.join("|")
} --out <new or empty folder>
  writes train.npy and test.npy there: int32 ascending flat indices of the factor grid (last factor fastest)`;

/** The value of `--key`; UsageError when it is missing (and required) or given without a value. */
export function flagValue(flags: Map<string, string | true>, key: string, what: string): string;
/** `flagValue(flags, key, what, false)`: the value of `--key` or undefined when absent. */
export function flagValue(
  flags: Map<string, string | true>,
  key: string,
  what: string,
  required: false,
): string | undefined;
export function flagValue(
  flags: Map<string, string | true>,
  key: string,
  what: string,
  required = true,
): string | undefined {
  const value = flags.get(key);
  if (value === true || (required && value === undefined)) throw new UsageError(`--${key} needs ${what}`);
  return value;
}

/** Throws UsageError for positionals or flags outside `valid`, naming the valid ones. */
export function checkOptions(
  command: string,
  parsed: { positionals: string[]; flags: Map<string, unknown> },
  valid: readonly string[],
): void {
  if (parsed.positionals.length) throw new UsageError(`${command}: unexpected argument "${parsed.positionals[0]}"`);
  for (const key of parsed.flags.keys()) {
    if (!valid.includes(key)) {
      throw new UsageError(`unknown option --${key} for ${command}; valid: ${valid.map((v) => `--${v}`).join(", ")}`);
    }
  }
}

/** `name` if it is one of `valid`, else UsageError with the closest one and the list. */
function oneOf<T extends string>(name: string, valid: readonly T[], what: string): T {
  if ((valid as readonly string[]).includes(name)) return name as T;
  throw new UsageError(
    `unknown ${what} "${name}"; did you mean ${closest(name, valid)}? valid: ${valid.join(", ")}`,
  );
}

/** The grid of `--dataset` (see {@linkcode BENCHMARK_GRIDS}); UsageError naming the valid ones otherwise. */
export function benchmarkGrid(name: string): BenchmarkGrid {
  return BENCHMARK_GRIDS[oneOf(name, GRID_NAMES, "dataset")];
}

/** A split name of `--split`; UsageError naming the valid ones otherwise. */
export function splitName(name: string): Split["name"] {
  return oneOf(name, SPLIT_NAMES, "split");
}

/** Throws UsageError unless `path` is a new folder or an empty one that can be written. */
function checkEmptyFolder(path: string, what: string): void {
  checkFolder(path, what);
  let entries: string[] = [];
  try {
    entries = [...Deno.readDirSync(path)].map((e) => e.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (entries.length) {
    throw new UsageError(
      `${what} ${JSON.stringify(path)}: the folder is not empty (it holds ${entries.slice(0, 3).join(", ")}${
        entries.length > 3 ? ", …" : ""
      }); give a new or empty folder`,
    );
  }
}

/**
 * `gen-split --dataset D --split S --out dir`: writes the split's
 * `train.npy` and `test.npy` (int32 `[count]` ascending flat indices) into a
 * new or empty folder and prints the counts, e.g.
 * `train 192312 (26.08%) test 544968`. Returns the exit code (0). A wrong
 * command line throws {@linkcode UsageError} before anything is computed or
 * written (the CLI exits with code 2).
 */
export async function genSplitCommand(
  args: string[],
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  const parsed = parseCommandLine(args);
  if (parsed.flags.has("help")) {
    print(GEN_SPLIT_USAGE);
    return 0;
  }
  checkOptions("gen-split", parsed, ["dataset", "split", "out"]);
  const grid = benchmarkGrid(flagValue(parsed.flags, "dataset", `a dataset: ${GRID_NAMES.join(", ")}`));
  const name = splitName(flagValue(parsed.flags, "split", `a split: ${SPLIT_NAMES.join(", ")}`));
  const out = flagValue(parsed.flags, "out", "a new or empty folder for train.npy and test.npy");
  checkEmptyFolder(out, "--out");
  const split = makeSplit(grid.dataset, name);
  await Deno.mkdir(out, { recursive: true });
  await Deno.writeFile(join(out, "train.npy"), formatNpy(split.train, [split.train.length]));
  await Deno.writeFile(join(out, "test.npy"), formatNpy(split.test, [split.test.length]));
  const share = 100 * split.train.length / (split.train.length + split.test.length);
  print(`train ${split.train.length} (${share.toFixed(2)}%) test ${split.test.length}`);
  return 0;
}
