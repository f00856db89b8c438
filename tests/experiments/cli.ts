/** Runs a script of this project as a user would: as a child process, or in process, with its own run store. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { type AnyExperiment, parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { loadLatestCheckpoint } from "../../lib/core/run_checkpoints.ts";
import { listRuns } from "../../lib/core/run_reader.ts";

/** Path of a file relative to the project root. */
export function projectPath(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}

/** `deno run -A <script> ...args` with runs written under `root`, output piped. */
export function scriptCommand(script: string, root: string, args: string[]): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    env: { LATENTLAB_RUNS: root, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Runs a registered experiment in this process on the wasm backend, as
 * `deno task run <name> ...args` would, with runs under `root`; output lines
 * go nowhere.
 */
export async function runInProcess(name: string, root: string, args: string[]) {
  const experiment = findExperiment(name);
  if (!experiment) throw new Error(`no experiment ${name}`);
  const invocation = parseInvocation(experiment, [...args, "--runs", root, "--backend", "wasm"]);
  if (invocation === "help") throw new Error("--help given");
  return await runExperiment(experiment, invocation, { report: () => {} });
}

const decoder = new TextDecoder();

/** Runs `script` to its end as {@linkcode scriptCommand} does: its exit code and standard error. */
export async function runScript(
  script: string,
  root: string,
  args: string[],
): Promise<{ code: number; stderr: string }> {
  const out = await scriptCommand(script, root, args).output();
  return { code: out.code, stderr: decoder.decode(out.stderr) };
}

/** The summary a finished run wrote. */
export function summaryOf(dir: string) {
  return JSON.parse(Deno.readTextFileSync(join(dir, "summary.json")));
}

/**
 * Kills `script` (SIGKILL) once its run has a checkpoint at step ≥ `atStep`,
 * finishes it with --resume, and runs the same arguments uninterrupted under
 * another root: the directories of the resumed and the straight run, both
 * completed.
 */
export async function killResumeAndStraight(
  script: string,
  args: string[],
  atStep: number,
  timeoutMs = 90_000,
): Promise<{ resumed: string; straight: string }> {
  const root = Deno.makeTempDirSync();
  const child = scriptCommand(script, root, args).spawn();
  const start = Date.now();
  while (!(listRuns(root).length === 1 && (loadLatestCheckpoint(listRuns(root)[0].dir)?.step ?? 0) >= atStep)) {
    if (Date.now() - start > timeoutMs) throw new Error(`no checkpoint at step ≥ ${atStep} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill("SIGKILL");
  await child.output();
  const [{ dir }] = listRuns(root);
  const resumed = await runScript(script, root, ["--resume", dir]);
  if (resumed.code !== 0) throw new Error(`--resume exited with ${resumed.code}: ${resumed.stderr}`);
  if (readRunInfo(dir).status !== "completed") throw new Error(`the resumed run is ${readRunInfo(dir).status}`);
  const other = Deno.makeTempDirSync();
  const straight = await runScript(script, other, args);
  if (straight.code !== 0) throw new Error(`the uninterrupted run exited with ${straight.code}: ${straight.stderr}`);
  return { resumed: dir, straight: listRuns(other)[0].dir };
}

/**
 * Asserts that each bad command line `[...prefix, ...args]` of `experiment` is a UsageError from parseInvocation
 * (before any work) whose message includes its text; that the first, run as `script` in a child process, exits 2
 * with that text on stderr and no stack trace; and that nothing was written under the run store. The other cases
 * are checked in process: a child costs a second of loading TF.js and the experiments.
 */
export async function assertRefusesBadInput(
  experiment: AnyExperiment,
  script: string,
  cases: [args: string[], message: string][],
  prefix: string[] = [],
): Promise<void> {
  const root = Deno.makeTempDirSync();
  for (const [args, message] of cases) {
    const line = [...prefix, ...args].join(" ");
    let error: unknown = undefined;
    try {
      parseInvocation(experiment, [...prefix, ...args, "--runs", root]);
    } catch (thrown) {
      error = thrown;
    }
    assert(error instanceof UsageError, `${line}: expected a UsageError, got ${error}`);
    assert(error.message.includes(message), `${line}: "${error.message}" lacks "${message}"`);
  }
  const [args, message] = cases[0];
  const line = [...prefix, ...args];
  const { code, stderr } = await runScript(script, root, line);
  assertEquals(code, 2, `${line.join(" ")}: ${stderr}`);
  assert(stderr.includes(message), `${line.join(" ")}: "${stderr}" lacks "${message}"`);
  assert(!stderr.includes("    at "), `${line.join(" ")}: a stack trace`);
  assertEquals([...Deno.readDirSync(root)], []);
}
