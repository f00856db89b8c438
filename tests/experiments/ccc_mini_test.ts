/** The ccc-mini experiment refuses bad input with exit code 2 before writing anything. */
import { assertRefusesBadInput, projectPath } from "./cli.ts";
import { findExperiment } from "../../experiments/mod.ts";

const experiment = findExperiment("ccc-mini")!;

Deno.test("ccc-mini refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, projectPath("experiments/ccc_mini.ts"), [
    [["--target", "1"], "target accuracy must lie in (0, 1)"],
    [["--target", "0"], "target accuracy must lie in (0, 1)"],
    [["--corruptions", "gaussian_noise,fogg"], "gaussian_noise, shot_noise, impulse_noise"],
    [["--corruptions", "contrast"], "at least 2 corruptions"],
    [["--step", "0.3"], "divide 5"],
    [["--step", "0"], "divide 5"],
    [["--speed", "0"], "speed must be"],
    [["--calibration_digits", "300"], "calibration_digits = 300 exceeds test_digits = 256"],
    [["--cosine_margin", "0"], "cosine_margin must lie in (0, 1]"],
  ], ["--preset", "smoke"]);
});
