/** Runs a script of this project as a child process with its own run store, as a user would. */
import { fileURLToPath } from "node:url";

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
