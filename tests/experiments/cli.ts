/** Runs a script of this project as a user would: as a child process, or in process, with its own run store. */
import { fileURLToPath } from "node:url";
import { findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";

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
