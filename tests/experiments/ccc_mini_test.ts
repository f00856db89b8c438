/** The ccc-mini experiment refuses bad input with exit code 2 before writing anything. */
import { projectPath, scriptCommand } from "./cli.ts";
import { assert, assertEquals } from "../assert.ts";

const SCRIPT = projectPath("experiments/ccc_mini.ts");

Deno.test("ccc-mini refuses bad input with exit code 2 before writing anything", async () => {
  const root = Deno.makeTempDirSync();
  for (
    const [args, message] of [
      [["--target", "1"], "target accuracy must lie in (0, 1)"],
      [["--target", "0"], "target accuracy must lie in (0, 1)"],
      [["--corruptions", "gaussian_noise,fogg"], "gaussian_noise, shot_noise, impulse_noise"],
      [["--corruptions", "contrast"], "at least 2 corruptions"],
      [["--step", "0.3"], "divide 5"],
      [["--step", "0"], "divide 5"],
      [["--speed", "0"], "speed must be"],
      [["--calibration_digits", "300"], "calibration_digits = 300 exceeds test_digits = 256"],
      [["--cosine_margin", "0"], "cosine_margin must lie in (0, 1]"],
    ] as [string[], string][]
  ) {
    const out = await scriptCommand(SCRIPT, root, ["--preset", "smoke", ...args]).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 2, `${args.join(" ")}: ${stderr}`);
    assert(stderr.includes(message), `${args.join(" ")}: "${stderr}" lacks "${message}"`);
    assert(!stderr.includes("    at "), `${args.join(" ")}: a stack trace`);
  }
  assertEquals([...Deno.readDirSync(root)], []);
});
