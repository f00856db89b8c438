/**
 * `main.ts` in the test's own process, for calls whose subject is not the process itself (no child's start-up):
 * what the command line would exit with and print.
 *
 * @module
 */
import { main } from "../main.ts";
import { UsageError } from "../lib/core/errors.ts";
import { USAGE_EXIT_CODE } from "../lib/core/experiment.ts";

/** What `main(args)` ended with and printed. */
export interface MainOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main(args)` as the command line would: a thrown UsageError is exit code 2 with its message on stderr, any
 * other throw exit code 1 with its stack; a command that reports its own failure sets Deno.exitCode. The output is
 * captured and the process's exit code restored.
 */
export async function mainInProcess(args: string[]): Promise<MainOutput> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const { log, error } = console;
  const before = Deno.exitCode;
  console.log = (...parts: unknown[]) => void stdout.push(parts.join(" "));
  console.error = (...parts: unknown[]) => void stderr.push(parts.join(" "));
  Deno.exitCode = 0;
  try {
    await main(args);
    return { code: Deno.exitCode, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
  } catch (thrown) {
    if (thrown instanceof UsageError) {
      return { code: USAGE_EXIT_CODE, stdout: stdout.join("\n"), stderr: thrown.message };
    }
    const message = thrown instanceof Error ? thrown.stack ?? thrown.message : String(thrown);
    return { code: 1, stdout: stdout.join("\n"), stderr: message };
  } finally {
    console.log = log;
    console.error = error;
    Deno.exitCode = before;
  }
}
