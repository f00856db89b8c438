import { join } from "node:path";
import { assertAlmostEquals, assertEquals, assertRejects } from "../assert.ts";
import { runCommand, writeNpy } from "../cli_helpers.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { NpyData } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { makeSplit, sampleSplit } from "../../lib/data/splits.ts";
import { GEN_EVAL_USAGE, genEvalCommand } from "../../lib/metrics/gen_eval.ts";
import { oodAnalysis, r2Scores } from "../../lib/metrics/r2.ts";

const SIZES = [10, 10, 10, 8, 4, 15]; // Shapes3D

/** Runs gen-eval in process; returns the exit code and the printed lines. */
const genEval = (args: string[]) => runCommand(genEvalCommand, args);

/** Test rows of Shapes3D interpolation with noisy predictions, written as .npy files. */
function fixture() {
  const folder = Deno.makeTempDirSync();
  const split = makeSplit("shapes3d", "interpolation");
  const rng = new Rng(3);
  const { values, n } = sampleSplit(split, "test", 300, rng);
  const pred = Float32Array.from(values, (v, i) => v / (SIZES[i % 6] - 1) + 0.1 * rng.normal());
  return {
    folder,
    split,
    values,
    pred,
    n,
    predictions: writeNpy(folder, "pred.npy", pred, [n, 6]),
    factors: writeNpy(folder, "factors.npy", values, [n, 6]),
  };
}

Deno.test("gen-eval prints R² per factor by name and, with --split, the one-OOD analysis", async () => {
  const f = fixture();
  const matrix = { data: Float64Array.from(f.pred), rows: f.n, cols: 6 };
  const { code, lines } = await genEval([
    "--predictions",
    f.predictions,
    "--factors",
    f.factors,
    "--dataset",
    "shapes3d",
    "--split",
    "interpolation",
  ]);
  assertEquals(code, 0);
  assertEquals(lines.length, 1);
  const printed = JSON.parse(lines[0]);
  const expected = r2Scores(matrix, f.values, SIZES);
  assertAlmostEquals(printed.r2, expected.r2, 1e-12);
  assertEquals(Object.keys(printed.factors), ["floor_hue", "wall_hue", "object_hue", "scale", "shape", "orientation"]);
  assertEquals(printed.factors.scale, { r2: expected.perFactor[3], mse: expected.mse[3] });
  assertEquals(printed.ood, JSON.parse(JSON.stringify(oodAnalysis(matrix, f.values, f.split))));
  assertEquals(printed.ood.oodPerFactor[4], null); // shape is never split
  const plain = JSON.parse(
    (await genEval(["--predictions", f.predictions, "--factors", f.factors, "--dataset", "shapes3d"])).lines[0],
  );
  assertEquals(Object.keys(plain), ["r2", "factors"]);
  assertEquals((await genEval(["-h"])).lines, [GEN_EVAL_USAGE]);
});

Deno.test("gen-eval refuses bad inputs before scoring, naming what is wrong and what is allowed", async () => {
  const f = fixture();
  const n = f.n;
  const at = (name: string, data: NpyData, shape: number[]) => writeNpy(f.folder, name, data, shape);
  const withValue = (index: number, value: number) => {
    const data = Float32Array.from(f.pred);
    data[index] = value;
    return data;
  };
  const factorsWith = (index: number, value: number) => {
    const data = Int32Array.from(f.values);
    data[index] = value;
    return data;
  };
  const notNpy = join(f.folder, "text.npy");
  Deno.writeTextFileSync(notNpy, "not an array");
  const run = (predictions: string, factors: string, ...rest: string[]) => [
    "--predictions",
    predictions,
    "--factors",
    factors,
    "--dataset",
    "shapes3d",
    ...rest,
  ];
  const cases: [string[], string][] = [
    [
      run(f.predictions, f.factors, "--split", "extrapolate"),
      'unknown split "extrapolate"; did you mean extrapolation?',
    ],
    [
      ["--predictions", f.predictions, "--factors", f.factors, "--dataset", "3dshapes"],
      "valid: dsprites, dsprites-rot, shapes3d, mpi3d",
    ],
    [["--factors", f.factors, "--dataset", "shapes3d"], "--predictions needs an .npy file"],
    [["--predictions", f.predictions, "--dataset", "shapes3d"], "--factors needs an .npy file"],
    [["--predictions", f.predictions, "--factors", f.factors], "--dataset needs a dataset: dsprites"],
    [run(f.predictions, f.factors, "--split"), "--split needs a split: random, composition"],
    [run(f.predictions, f.factors, "--out", "x.json"), "unknown option --out for gen-eval; valid: --predictions"],
    [run(join(f.folder, "missing.npy"), f.factors), "missing.npy: no such file"],
    [run(f.folder, f.factors), "a folder, not an .npy file"],
    [run(notNpy, f.factors), "--predictions: "],
    [run(at("flat.npy", f.pred, [n * 6]), f.factors), `--predictions has shape [${n * 6}]; shapes3d needs [n, 6]`],
    [run(at("k5.npy", f.pred.subarray(0, n * 5), [n, 5]), f.factors), "one column per factor (floor_hue, wall_hue"],
    [run(f.predictions, at("fk5.npy", f.values.subarray(0, n * 5), [n, 5])), `--factors has shape [${n}, 5]`],
    [run(at("empty.npy", new Float32Array(0), [0, 6]), f.factors), "with n ≥ 1"],
    [
      run(f.predictions, at("short.npy", f.values.subarray(0, 60), [10, 6])),
      `--predictions has ${n} rows, --factors 10`,
    ],
    [run(at("nan.npy", withValue(13, NaN), [n, 6]), f.factors), "predictions[2, 1] is NaN; predictions must be finite"],
    [run(at("inf.npy", withValue(0, Infinity), [n, 6]), f.factors), "predictions[0, 0] is Infinity"],
    [
      run(f.predictions, at("neg.npy", factorsWith(7, -1), [n, 6])),
      "factors[1, 1] = -1: wall_hue takes the indices 0..9",
    ],
    [
      run(f.predictions, at("big.npy", factorsWith(5, 15), [n, 6])),
      "factors[0, 5] = 15: orientation takes the indices 0..14",
    ],
    [
      run(f.predictions, at("half.npy", Float32Array.from(f.values, (v, i) => i === 3 ? 1.5 : v), [n, 6])),
      "factors[0, 3] = 1.5",
    ],
    [[...run(f.predictions, f.factors), "stray"], 'unexpected argument "stray"'],
  ];
  for (const [args, message] of cases) {
    const lines: string[] = [];
    await assertRejects(() => genEvalCommand(args, (line) => lines.push(line)), UsageError, message);
    assertEquals(lines, [], `${message}: printed something`);
  }
});
