/**
 * cebra-place-cells: bad command lines are refused before any run directory exists; the smoke preset trains every
 * model, logs decoding and goodness of fit along training, and measures every target and claim.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { parseInvocation } from "../../lib/core/experiment.ts";
import { parseMetrics } from "../../lib/core/run_metrics.ts";
import { projectPath, runInProcess, scriptCommand } from "./cli.ts";

const experiment = findExperiment("cebra-place-cells")!;

Deno.test("cebra-place-cells: bad input is a UsageError that names what is allowed, before any run directory", async () => {
  const root = Deno.makeTempDirSync();
  const cases: [string[], RegExp][] = [
    [["--models", "behavior,hybrid"], /hybrid not allowed.*behavior, time, shuffled/],
    [["--model", "offset40-model"], /offset40-model: not allowed; model must be one of offset10-model/],
    [["--rats", "120", "--models", "behavior,multi"], /multi model needs at least 2 rats/],
    [["--bins", "1000"], /out of range; bins must be an integer ≥ 3200/],
    [["--time_offsets", "2000", "--bins", "3200"], /time_offsets = 2000 must be below half the bins/],
    [["--neighbors", "1,5000"], /5000 out of range/],
    [["--consistency_label", "speed"], /speed: not allowed.*position_direction, position/],
    [["--rats", "0,10"], /0 out of range/],
  ];
  for (const [args, message] of cases) {
    const error = assertThrows(() => parseInvocation(experiment, [...args, "--runs", root]), UsageError);
    assert(message.test(error.message), `${args.join(" ")}: ${error.message}`);
  }
  const out = await scriptCommand(projectPath("experiments/cebra_place_cells.ts"), root, ["--models", "hybrid"])
    .output();
  assertEquals(out.code, 2);
  assert(new TextDecoder().decode(out.stderr).includes("hybrid not allowed"));
  assertEquals([...Deno.readDirSync(root)], []);
});

Deno.test("cebra-place-cells --preset smoke: every model trained, curves logged, targets and claims measured", async () => {
  const { dir, summary } = await runInProcess("cebra-place-cells", Deno.makeTempDirSync(), ["--preset", "smoke"]);
  const m = summary.metrics;
  for (const model of ["behavior", "time", "shuffled", "position", "direction", "multi"]) {
    assert(m[`place/${model}/median_err_cm`] >= 0 && m[`place/${model}/median_err_cm`] <= 160, model);
    assert(Number.isFinite(m[`place/${model}/gof_bits`]), model);
  }
  // Two rats: one ordered pair each way per model; the behaviour seeds of rat 0 once each way.
  for (const key of ["behavior", "time", "multi", "runs_behavior_rat0"]) {
    assert(m[`place/consistency/${key}`] <= 1, key);
  }
  const details = summary.details as { consistency: Record<string, { pairs: number[][] }> };
  assertEquals(details.consistency.behavior.pairs, [[0, 1], [1, 0]]);
  const { rows } = parseMetrics(Deno.readTextFileSync(join(dir, "metrics.jsonl")));
  const steps = (key: string) => rows.filter((r) => typeof r[key] === "number").map((r) => r.step);
  assertEquals(steps("place/behavior/rat0_seed1/median_err_cm"), [10, 20, 30]);
  assertEquals(steps("place/shuffled/rat0_seed0/gof_bits"), [10, 20, 30]);
  assertEquals(steps("place/multi/rat1/r2"), [10, 20, 30]);
  assertEquals(steps("place/multi/all/consistency"), [10, 20, 30]);
  assertEquals(steps("place/time/rat1_seed0/loss"), [5, 10, 15, 20, 25, 30]);
  assertEquals(summary.targets.map((t) => t.ours === null), [false, false]);
  assert(summary.targets.every((t) => (t.curve?.points.length ?? 0) === 3));
  assertEquals(summary.claims.map((c) => c.verdict === "not measured"), [false, false, false, false, false]);
});
