/**
 * Errors a user can fix by changing the command line. The CLI prints the
 * message without a stack trace and exits with code 2.
 */
export class UsageError extends Error {
  /** Printed in place of "Error" in traces and logs. */
  override name = "UsageError";
}

/**
 * Thrown inside a run after SIGINT/SIGTERM asked it to stop: the run is
 * already marked interrupted and continues with `--resume`.
 */
export class RunInterrupted extends Error {
  /** Printed in place of "Error" in traces and logs. */
  override name = "RunInterrupted";
}

/** Whether an error is a write that failed because the disk (or the user's quota) is full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT" ||
    (error instanceof Error && /\(os error (28|122)\)/.test(error.message));
}

/**
 * The one line the command line prints for an error a user can act on
 * (a full disk), or null for one that is a fault of the program (printed
 * with its stack).
 */
export function userFacingError(error: unknown): string | null {
  if (isDiskFull(error)) {
    // Deno names the file after the OS's words: "No space left on device (os error 28): writefile '<path>'".
    const file = /'([^']+)'\s*$/.exec((error as Error).message)?.[1];
    return `the disk is full${file ? `: ${file} could not be written` : ""}; free some space and run the command again`;
  }
  return null;
}
