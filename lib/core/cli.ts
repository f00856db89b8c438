/**
 * Command-line parsing on `node:util` parseArgs (the one place to swap for
 * `@std/cli` where JSR is reachable). Experiments accept free `--key value`
 * pairs whose keys come from their config, so options are tokenised here and
 * validated against the config later, where the valid keys are known.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

/** Positional arguments and `--key value` flags of one command line. */
export interface ParsedArgs {
  positionals: string[];
  /** Flag name → raw value; a flag given without a value maps to `true`. */
  flags: Map<string, string | true>;
}

/**
 * Splits `args` into positionals and flags. `--key value`, `--key=value` and
 * a bare `--key` (true) are accepted; `-h` means `--help`. A repeated flag is
 * an error rather than a silent override.
 */
export function parseCommandLine(args: string[]): ParsedArgs {
  const { tokens } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      positionals.push(token.value);
      continue;
    }
    let value: string | true = token.value ?? true;
    const next = tokens[i + 1];
    if (
      value === true && token.name !== "help" && next?.kind === "positional" &&
      token.inlineValue !== true
    ) {
      value = next.value;
      i++;
    }
    if (flags.has(token.name)) {
      throw new UsageError(`--${token.name} is given twice; give it once`);
    }
    flags.set(token.name, value);
  }
  return { positionals, flags };
}

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(
        row[j] + 1,
        row[j - 1] + 1,
        diagonal + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The candidate closest to `name` by edit distance. */
export function closest(name: string, candidates: readonly string[]): string {
  let best = candidates[0];
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Writes `message` to stderr and exits with the usage-error code 2. */
export function exitWithUsageError(message: string): never {
  console.error(`error: ${message}`);
  Deno.exit(2);
}
