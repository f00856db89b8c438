/**
 * Checkpoints are checked before a run continues from them: a damaged
 * newest one (truncated array, state.json edited, NaN weights, or a
 * well-formed edit its manifest's hashes catch: zeroed weights, another RNG
 * state, another dtype or shape) is passed over for the intact one before
 * it, run.json says which and why, and the run ends with the numbers of an
 * uninterrupted run; a run with no intact checkpoint is refused and stays as
 * it was; a checkpoint written before manifests still loads.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { mainInProcess } from "../main_in_process.ts";
import { copyOfRun } from "../tree.ts";
import { runStoppedAtCheckpoint } from "../experiments/cli.ts";
import { loadLatestCheckpoint, MANIFEST_FILE } from "../../lib/core/run_checkpoints.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { formatNpy, parseNpy } from "../../lib/core/npy.ts";

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

/** Rewrites the checkpoint's first array (model/linear0/lower) through `change`, as a well-formed .npy file. */
function rewriteFirstArray(
  folder: string,
  change: (data: Float32Array, shape: number[]) => [Float32Array | Float64Array, number[]],
) {
  const file = join(folder, "0.npy");
  const before = Deno.readFileSync(file);
  const array = parseNpy(before);
  const [data, shape] = change(array.data as Float32Array, array.shape);
  const after = formatNpy(data, shape);
  assert(after.join() !== before.join(), "the damage changes the file");
  Deno.writeFileSync(file, after);
}

/** Damages whose files stay well-formed: only the manifest's hashes tell them. */
const WELL_FORMED_DAMAGES: [string, (folder: string) => void][] = [
  ["an array multiplied by 0", (folder) => rewriteFirstArray(folder, (data, shape) => [data.map((v) => v * 0), shape])],
  ["another RNG state", (folder) => {
    const state = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
    const text = JSON.stringify(state);
    const edited = text.replace(/"batchRng":\[(\d+)/, (_m, n) => `"batchRng":[${Number(n) + 1}`);
    assert(edited !== text, `no batchRng state in ${text.slice(0, 200)}`);
    Deno.writeTextFileSync(join(folder, "state.json"), edited);
  }],
  [
    "an array of another dtype",
    (folder) => rewriteFirstArray(folder, (data, shape) => [Float64Array.from(data), shape]),
  ],
  ["an array of another shape", (folder) => rewriteFirstArray(folder, (data) => [data, [data.length]])],
];

const DAMAGES: [string, (folder: string) => void][] = [
  WELL_FORMED_DAMAGES[0],
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

Deno.test("well-formed edits of a newest checkpoint are caught by its hashes and passed over, naming the file", async () => {
  const dir = await interruptedRun();
  for (const [what, damage] of WELL_FORMED_DAMAGES) {
    const copy = copyOfRun(dir);
    damage(join(copy, "checkpoints", "step-000000020"));
    const loaded = loadLatestCheckpoint(copy)!;
    assertEquals([loaded.step, loaded.checked], [10, true], what);
    const file = what === "another RNG state" ? "state.json" : "0.npy (model/linear0/lower)";
    assertEquals(loaded.skipped, [`step-000000020: ${file} differs from its recorded SHA-256`], what);
  }
  // Checkpoints written before manifests (none) still load, unchecked.
  const legacy = copyOfRun(dir);
  for (const name of ["step-000000010", "step-000000020"]) {
    Deno.removeSync(join(legacy, "checkpoints", name, MANIFEST_FILE));
  }
  const loaded = loadLatestCheckpoint(legacy)!;
  assertEquals([loaded.step, loaded.checked, loaded.skipped], [20, false, undefined]);
});

Deno.test("a run whose every checkpoint is damaged is refused with one line and left as it was", async () => {
  const dir = await interruptedRun();
  for (const name of ["step-000000010", "step-000000020"]) DAMAGES[1][1](join(dir, "checkpoints", name));
  const before = Deno.readTextFileSync(join(dir, "run.json"));
  assertThrows(() => loadLatestCheckpoint(dir), UsageError, "no intact checkpoint");
  const { code, stderr } = await mainInProcess(["run", "ica-toy", "--resume", dir, "--backend", "wasm"]);
  assertEquals(code, 2);
  assertEquals(
    stderr,
    `error: no intact checkpoint in ${join(dir, "checkpoints")}: ` +
      "step-000000020: 0.npy (model/linear0/lower) differs from its recorded SHA-256; " +
      "step-000000010: 0.npy (model/linear0/lower) differs from its recorded SHA-256",
  );
  assertEquals(Deno.readTextFileSync(join(dir, "run.json")), before);
});
