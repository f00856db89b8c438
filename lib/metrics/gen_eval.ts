/**
 * `gen-eval`: the generalization benchmark's scores (lib/metrics/r2.ts) of
 * any model's predictions, read from `.npy` files.
 *
 * @module
 */
import { parseCommandLine } from "../core/cli.ts";
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { type NpyArray, NpyError, readNpy } from "../core/npy.ts";
import {
  BENCHMARK_GRIDS,
  type BenchmarkGrid,
  benchmarkGrid,
  checkOptions,
  flagValue,
  splitName,
} from "../data/gen_commands.ts";
import { makeSplit, SPLIT_NAMES } from "../data/splits.ts";
import { oodAnalysis, r2Scores } from "./r2.ts";

/** `gen-eval`'s command line. */
export const GEN_EVAL_USAGE = `usage: gen-eval --predictions p.npy --factors f.npy --dataset ${
  Object.keys(BENCHMARK_GRIDS).join("|")
} [--split ${SPLIT_NAMES.join("|")}]
  predictions: float [n, k], each factor normalized to index/(size − 1); factors: integer indices [n, k]
  prints {"r2", "factors": {name: {r2, mse}}, "ood"}: R² against the full-grid variance; with --split, the
  OOD/ID-factor R² and the towards-the-mean ratio on the rows in D_one-ood`;

/** Reads the `.npy` file of `--key`; UsageError naming the file and the problem. */
async function readArray(path: string, key: string): Promise<NpyArray> {
  try {
    if (Deno.statSync(path).isDirectory) throw new UsageError(`--${key} ${path}: a folder, not an .npy file`);
    return await readNpy(path);
  } catch (error) {
    if (error instanceof NpyError) throw new UsageError(`--${key}: ${error.message}`);
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      throw new UsageError(`--${key} ${path}: no such file`);
    }
    if (error instanceof Deno.errors.PermissionDenied) {
      throw new UsageError(`--${key} ${path}: cannot be read (${error.message})`);
    }
    throw error;
  }
}

/** The `[n, k]` shape of a 2-D array with k = the grid's factor count and n ≥ 1; UsageError otherwise. */
function checkShape(array: NpyArray, key: string, grid: BenchmarkGrid, dataset: string): [number, number] {
  const k = grid.sizes.length;
  const [n, cols] = array.shape;
  if (array.shape.length !== 2 || n < 1 || cols !== k) {
    throw new UsageError(
      `--${key} has shape [${array.shape.join(", ")}]; ${dataset} needs [n, ${k}] with n ≥ 1, one column per factor ` +
        `(${grid.factorNames.join(", ")})`,
    );
  }
  return [n, k];
}

/** Predictions and factor indices checked against the grid and each other; UsageError naming the first problem. */
function checkInputs(
  predictions: NpyArray,
  factors: NpyArray,
  grid: BenchmarkGrid,
  dataset: string,
): { pred: Matrix; indices: Int32Array } {
  const [n, k] = checkShape(predictions, "predictions", grid, dataset);
  const [m] = checkShape(factors, "factors", grid, dataset);
  if (n !== m) {
    throw new UsageError(`row counts differ: --predictions has ${n} rows, --factors ${m}; they pair row for row`);
  }
  const pred = Float64Array.from(predictions.data as ArrayLike<number | bigint>, Number);
  const bad = pred.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) {
    throw new UsageError(`predictions[${Math.floor(bad / k)}, ${bad % k}] is ${pred[bad]}; predictions must be finite`);
  }
  const raw = Array.from(factors.data as ArrayLike<number | bigint>, Number);
  const indices = new Int32Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const j = i % k, size = grid.sizes[j];
    if (!(Number.isInteger(raw[i]) && raw[i] >= 0 && raw[i] < size)) {
      throw new UsageError(
        `factors[${Math.floor(i / k)}, ${j}] = ${raw[i]}: ${grid.factorNames[j]} takes the indices 0..${size - 1}`,
      );
    }
    indices[i] = raw[i];
  }
  return { pred: { data: pred, rows: n, cols: k }, indices };
}

/**
 * `gen-eval --predictions p.npy --factors f.npy --dataset D [--split S]`:
 * prints one JSON object `{"r2", "factors": {name: {r2, mse}}, "ood"}`, the
 * last only with `--split` ({@linkcode oodAnalysis} of that split). Returns
 * the exit code (0). A wrong command line or input throws
 * {@linkcode UsageError} before anything is scored (the CLI exits with code 2).
 */
export async function genEvalCommand(
  args: string[],
  print: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  const parsed = parseCommandLine(args);
  if (parsed.flags.has("help")) {
    print(GEN_EVAL_USAGE);
    return 0;
  }
  checkOptions("gen-eval", parsed, ["predictions", "factors", "dataset", "split"]);
  const predictionsPath = flagValue(parsed.flags, "predictions", "an .npy file of predictions [n, k]");
  const factorsPath = flagValue(parsed.flags, "factors", "an .npy file of factor indices [n, k]");
  const dataset = flagValue(parsed.flags, "dataset", `a dataset: ${Object.keys(BENCHMARK_GRIDS).join(", ")}`);
  const grid = benchmarkGrid(dataset);
  const rawSplit = flagValue(parsed.flags, "split", `a split: ${SPLIT_NAMES.join(", ")}`, false);
  const name = rawSplit === undefined ? undefined : splitName(rawSplit);
  const { pred, indices } = checkInputs(
    await readArray(predictionsPath, "predictions"),
    await readArray(factorsPath, "factors"),
    grid,
    dataset,
  );
  const scores = r2Scores(pred, indices, grid.sizes);
  const perFactor = Object.fromEntries(
    grid.factorNames.map((factor, j) => [factor, { r2: scores.perFactor[j], mse: scores.mse[j] }]),
  );
  const ood = name === undefined ? {} : { ood: oodAnalysis(pred, indices, makeSplit(grid.dataset, name)) };
  print(JSON.stringify({ r2: scores.r2, factors: perFactor, ...ood }));
  return 0;
}
