/** The sweep command in this process: for calls whose subject is not the process itself, without a child's start-up. */
import { main } from "../../main.ts";

/** What `main.ts sweep ...args` ended with and printed, run in this process. */
export interface SweepOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** `main.ts sweep ...args` in this process: its exit code and its stdout and stderr lines. */
export async function sweepInProcess(args: string[]): Promise<SweepOutput> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const { log, error } = console;
  const before = Deno.exitCode;
  console.log = (...parts: unknown[]) => void stdout.push(parts.join(" "));
  console.error = (...parts: unknown[]) => void stderr.push(parts.join(" "));
  Deno.exitCode = 0;
  try {
    await main(["sweep", ...args]);
    return { code: Deno.exitCode, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
    Deno.exitCode = before;
  }
}
