/**
 * Errors a user can fix by changing the command line. The CLI prints the
 * message without a stack trace and exits with code 2.
 */
export class UsageError extends Error {
  override name = "UsageError";
}
