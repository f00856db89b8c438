/** Runs a script of this project as a user would: as a child process, or in process, with its own run store. */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { RunInterrupted, UsageError } from "../../lib/core/errors.ts";
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

/**
 * Runs `experiment` with `args` in this process and stops it once its `n`-th checkpoint is on disk: the run's folder,
 * marked interrupted, and the steps it checkpointed.
 */
export async function runStoppedAtCheckpoint(
  experiment: AnyExperiment,
  args: string[],
  n: number,
): Promise<{ dir: string; checkpoints: number[] }> {
  const invocation = parseInvocation(experiment, args);
  if (invocation === "help") throw new Error("--help given");
  let stop = (_reason: string) => {};
  let dir = "";
  const checkpoints: number[] = [];
  const error = await runExperiment(experiment, invocation, {
    report: () => {},
    started: (run) => {
      dir = run.dir;
      stop = run.interrupt;
    },
    checkpointed: (step) => {
      checkpoints.push(step);
      if (checkpoints.length === n) stop(`test: stopped at checkpoint ${n}`);
    },
  }).then(() => null, (thrown) => thrown);
  assert(error instanceof RunInterrupted, `the run was not interrupted: ${error}`);
  assertEquals(readRunInfo(dir).status, "interrupted");
  return { dir, checkpoints };
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
 * Runs `script`'s experiment in a child process (tests/experiments/kill_at_checkpoint.ts) that is SIGKILLed right
 * after its first checkpoint at step ≥ `atStep`, so the kill lands there however loaded the machine is; then, in
 * this process, finishes that run with --resume and runs the same arguments uninterrupted under another root. All
 * three on the wasm backend. Returns the directories of the resumed and the straight run, both completed, and the
 * step of the checkpoint the resumed run continued from.
 */
export async function killResumeAndStraight(
  script: string,
  args: string[],
  atStep: number,
): Promise<{ resumed: string; straight: string; killedAt: number }> {
  const root = Deno.makeTempDirSync();
  const wasm = [...args, "--backend", "wasm"];
  const killed = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", projectPath("tests/experiments/kill_at_checkpoint.ts"), script, `${atStep}`, ...wasm],
    env: { LATENTLAB_RUNS: root, NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (killed.signal !== "SIGKILL") {
    throw new Error(`the run was not killed (exit ${killed.code}): ${decoder.decode(killed.stderr)}`);
  }
  const [{ dir }] = listRuns(root);
  if (readRunInfo(dir).status !== "running") throw new Error(`the killed run is ${readRunInfo(dir).status}`);
  const killedAt = loadLatestCheckpoint(dir)?.step ?? 0;
  const { experiment } = await import(pathToFileURL(script).href) as { experiment: AnyExperiment };
  const resume = parseInvocation(experiment, ["--resume", dir, "--backend", "wasm"]);
  if (resume === "help") throw new Error("--help given");
  await runExperiment(experiment, resume, { report: () => {} });
  if (readRunInfo(dir).status !== "completed") throw new Error(`the resumed run is ${readRunInfo(dir).status}`);
  if (readRunInfo(dir).resumes?.[0]?.step !== killedAt) throw new Error("the run did not resume at its checkpoint");
  const straight = parseInvocation(experiment, [...wasm, "--runs", Deno.makeTempDirSync()]);
  if (straight === "help") throw new Error("--help given");
  return { resumed: dir, straight: (await runExperiment(experiment, straight, { report: () => {} })).dir, killedAt };
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
