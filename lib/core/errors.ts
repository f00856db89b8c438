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
