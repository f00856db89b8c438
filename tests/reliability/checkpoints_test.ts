/**
 * Checkpoints are checked before a run continues from them: a damaged
 * newest one (truncated array, state.json edited, NaN weights) is passed
 * over for the intact one before it, run.json says which and why, and the
 * run ends with the numbers of an uninterrupted run; a run with no intact
 * checkpoint is refused and stays as it was.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { runStoppedAtCheckpoint } from "../experiments/cli.ts";
import { loadLatestCheckpoint } from "../../lib/core/run_checkpoints.ts";

await selectBackend("wasm");
const experiment = findExperiment("ica-toy")!;
const ARGS = ["--preset", "smoke", "--layers", "1", "--backend", "wasm"];

async function run(args: string[]) {
  const invocation = parseInvocation(experiment, args);
  assert(invocation !== "help");
  return await runExperiment(experiment, invocation, { report: () => {} });
}

const expected = (await run([...ARGS, "--runs", Deno.makeTempDirSync()])).summary.metrics;

/** A run of ARGS stopped at its second checkpoint (step 20 of phase 0, so 10 and 20 are kept, with their arrays). */
async function interruptedRun(): Promise<string> {
  return (await runStoppedAtCheckpoint(experiment, [...ARGS, "--runs", Deno.makeTempDirSync()], 2)).dir;
}

const DAMAGES: [string, (folder: string) => void][] = [
  ["a truncated array", (folder) => {
    const file = join(folder, "0.npy");
    Deno.truncateSync(file, Deno.statSync(file).size - 7);
  }],
  ["a step that is not the folder's", (folder) => {
    const state = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
    Deno.writeTextFileSync(join(folder, "state.json"), JSON.stringify({ ...state, step: 1e9 }));
  }],
  ["NaN weights", (folder) => {
    const file = join(folder, "0.npy");
    const bytes = Deno.readFileSync(file);
    new DataView(bytes.buffer).setFloat32(bytes.length - 4, NaN, true);
    Deno.writeFileSync(file, bytes);
  }],
  ["a state.json that does not parse", (folder) => Deno.writeTextFileSync(join(folder, "state.json"), "{")],
];

for (const [what, damage] of DAMAGES) {
  Deno.test(`a newest checkpoint with ${what} is passed over; the resumed run ends with the same numbers`, async () => {
    const dir = await interruptedRun();
    damage(join(dir, "checkpoints", "step-000000020"));
    assertEquals(loadLatestCheckpoint(dir)?.step, 10);
    const { summary } = await run(["--resume", dir, "--backend", "wasm"]);
    const resume = readRunInfo(dir).resumes!.at(-1)!;
    assertEquals(resume.step, 10);
    assertEquals(resume.passed_over?.length, 1);
    assert(resume.passed_over![0].startsWith("step-000000020: "), resume.passed_over![0]);
    assertEquals(summary.metrics, expected);
  });
}

Deno.test("a run whose every checkpoint is damaged is refused and left as it was", async () => {
  const dir = await interruptedRun();
  for (const name of ["step-000000010", "step-000000020"]) DAMAGES[0][1](join(dir, "checkpoints", name));
  const before = Deno.readTextFileSync(join(dir, "run.json"));
  assertThrows(() => loadLatestCheckpoint(dir), Error, "no intact checkpoint");
  const error = await run(["--resume", dir, "--backend", "wasm"]).then(() => null, (e) => e);
  assert(error instanceof Error && error.message.includes("no intact checkpoint"), String(error));
  assertEquals(Deno.readTextFileSync(join(dir, "run.json")), before);
});
