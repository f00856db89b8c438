/**
 * cebra-synthetic: bad command lines are refused before any run directory exists; the smoke preset logs the
 * reconstruction score along training for every seed, scores PCA, measures its claim, and repeats exactly.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { parseInvocation } from "../../lib/core/experiment.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { projectPath, runInProcess, scriptCommand } from "./cli.ts";

const experiment = findExperiment("cebra-synthetic")!;

Deno.test("cebra-synthetic: bad input is a UsageError that names what is allowed, before any run directory", async () => {
  const root = Deno.makeTempDirSync();
  const cases: [string[], RegExp][] = [
    [["--model", "offset10-model"], /offset10-model: not allowed.*offset1-model-mse, offset1-model/],
    [["--distance", "manhattan"], /manhattan: not allowed.*euclidean, cosine/],
    [["--delta", "0"], /out of range; delta must be a number ≥ 0.000001/],
    [["--neurons", "101"], /neurons must be even/],
    [["--samples", "100", "--train_fraction", "0.95"], /95 training and 5 held-out/],
    [["--pca_components", "200"], /pca_components = 200 exceeds neurons = 100/],
    [["--steps", "0"], /out of range/],
    [["--batchsize", "3"], /did you mean --batch\?/],
  ];
  for (const [args, message] of cases) {
    const error = assertThrows(() => parseInvocation(experiment, [...args, "--runs", root]), UsageError);
    assert(message.test(error.message), `${args.join(" ")}: ${error.message}`);
  }
  const out = await scriptCommand(projectPath("experiments/cebra_synthetic.ts"), root, ["--neurons", "7"]).output();
  assertEquals(out.code, 2);
  assert(new TextDecoder().decode(out.stderr).includes("neurons"));
  assertEquals([...Deno.readDirSync(root)], []);
});

Deno.test("cebra-synthetic --preset smoke: curves per seed, PCA floor, claim measured, same numbers for the same seed", async () => {
  const { dir, summary } = await runInProcess("cebra-synthetic", Deno.makeTempDirSync(), ["--preset", "smoke"]);
  const m = summary.metrics;
  for (
    const key of [
      "synthetic/pca/r2",
      "synthetic/cebra/r2_median",
      "synthetic/cebra/seed0/r2",
      "synthetic/cebra/seed1/r2",
    ]
  ) {
    assert(m[key] > 0 && m[key] <= 1, `${key} = ${m[key]}`);
  }
  assertEquals(m["synthetic/cebra_minus_pca"], m["synthetic/cebra/r2_median"] - m["synthetic/pca/r2"]);
  const { rows } = parseMetrics(Deno.readTextFileSync(join(dir, "metrics.jsonl")));
  const curve = (key: string) => rows.filter((r) => typeof r[key] === "number").map((r) => r.step);
  // eval_every 10 over 30 steps; losses every 5.
  assertEquals(curve("synthetic/cebra/seed0/r2"), [10, 20, 30]);
  assertEquals(curve("synthetic/cebra/seed1/r2"), [10, 20, 30]);
  assertEquals(curve("synthetic/cebra/seed0/loss"), [5, 10, 15, 20, 25, 30]);
  assertEquals(curve("synthetic/pca/r2"), [0]);
  assertEquals(summary.claims.length, 1);
  assert(["reproduced", "not reproduced"].includes(summary.claims[0].verdict));
  const again = await runInProcess("cebra-synthetic", Deno.makeTempDirSync(), ["--preset", "smoke"]);
  assertEquals(again.summary.metrics, m);
});
