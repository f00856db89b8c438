/**
 * Command-line parsing on `node:util` parseArgs (the one place to swap for
 * `@std/cli` where JSR is reachable). Experiments accept free `--key value`
 * pairs whose keys come from their config, so options are tokenised here and
 * validated against the config later, where the valid keys are known.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

/** Positional arguments and `--key value` flags of one command line. */
export interface ParsedArgs {
  /** Arguments that are not flags or flag values, in order. */
  positionals: string[];
  /** Flag name → raw value; a flag given without a value maps to `true`. */
  flags: Map<string, string | true>;
}

/** An argument that is a negative number (`-5`, `-1e3`, `-.5`, `-1,2`): a value, never an option. */
const NEGATIVE_NUMBER = /^-\.?\d/;

/**
 * Splits `args` into positionals and flags. `--key value`, `--key=value` and
 * a bare `--key` (true) are accepted; `-h` means `--help`. A negative number
 * is a value (`--seed -1`), not an option. A repeated flag is an error rather
 * than a silent override, and so is a flag named like a property every
 * object has (`--constructor`, `--__proto__`), which no command defines.
 */
export function parseCommandLine(args: string[]): ParsedArgs {
  // parseArgs reads `-5` as the short options 5 (and `-1e-3` as 1, e and a terminator): such an argument goes
  // through as a placeholder positional and is restored by its index.
  const { tokens } = parseArgs({
    args: args.map((arg) => NEGATIVE_NUMBER.test(arg) ? "\u0000" : arg),
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: { help: { type: "boolean", short: "h" } },
  });
  const items = tokens.map((token) => token.kind === "positional" ? { ...token, value: args[token.index] } : token);
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < items.length; i++) {
    const token = items[i];
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      positionals.push(token.value);
      continue;
    }
    if (token.name === "" || Object.hasOwn(Object.prototype, token.name)) {
      throw new UsageError(`unknown option ${token.rawName}: no command has it`);
    }
    let value: string | true = token.value ?? true;
    const next = items[i + 1];
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

/** The path itself or its nearest ancestor that exists, with what it is; null when nothing of it exists. */
function nearestExisting(path: string, what: string): { path: string; info: Deno.FileInfo } | null {
  for (let at = resolve(path);;) {
    try {
      return { path: at, info: Deno.statSync(at) };
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
        throw new UsageError(`${what} ${JSON.stringify(path)}: cannot look at ${at} (${(error as Error).message})`);
      }
      const parent = dirname(at);
      if (parent === at) return null;
      at = parent;
    }
  }
}

/** Whether a file can be created in `folder` (a temporary file is made and removed at once); the error otherwise. */
function creationProblem(folder: string): string | null {
  try {
    Deno.removeSync(Deno.makeTempFileSync({ dir: folder, prefix: ".write-check-" }));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Checks, before any work, that `path` is or can become a writable folder:
 * not empty, a folder where it exists (and writable), or else under a
 * writable folder it can be created in. With `write: false` (a reader such
 * as the dashboard) a missing folder is fine and writability is not checked.
 * Creates nothing that stays. Throws {@linkcode UsageError} naming `what`
 * (the option, e.g. --runs), the path and the problem.
 */
export function checkFolder(path: string, what: string, options: { write?: boolean } = {}): void {
  const write = options.write ?? true;
  if (path.trim() === "") throw new UsageError(`${what} needs a folder; it is empty`);
  const shown = `${what} ${JSON.stringify(path)}`;
  const found = nearestExisting(path, what);
  if (found === null) throw new UsageError(`${shown}: no part of this path exists`);
  const isPath = found.path === resolve(path);
  if (!found.info.isDirectory) {
    throw new UsageError(isPath ? `${shown}: not a folder` : `${shown}: ${found.path} is a file, not a folder`);
  }
  if (!write) return;
  const problem = creationProblem(found.path);
  if (problem !== null) {
    throw new UsageError(
      isPath
        ? `${shown}: the folder is not writable (${problem})`
        : `${shown}: ${found.path} is not writable (${problem})`,
    );
  }
}

/**
 * Checks a run store root (`--runs`, or `$LATENTLAB_RUNS` with `what`
 * naming it) before anything is computed or written: see
 * {@linkcode checkFolder}. Throws {@linkcode UsageError}.
 */
export function checkRunsRoot(path: string, options: { what?: string; write?: boolean } = {}): void {
  checkFolder(path, options.what ?? "--runs", options);
}

/**
 * Checks, before any work, that a result file can be written at `path`:
 * not empty, not a folder, and either an existing writable file (left as it
 * is) or a new name in an existing writable folder (nothing is created).
 * Throws {@linkcode UsageError} naming `what`, the path and the problem.
 */
export function checkOutputFile(path: string, what: string): void {
  if (path.trim() === "") throw new UsageError(`${what} needs a file path; it is empty`);
  const shown = `${what} ${JSON.stringify(path)}`;
  let info: Deno.FileInfo | null = null;
  try {
    info = Deno.statSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      throw new UsageError(`${shown}: ${(error as Error).message}`);
    }
  }
  if (info?.isDirectory) throw new UsageError(`${shown}: is a folder; give a file path`);
  if (info !== null) {
    try {
      Deno.openSync(path, { write: true }).close();
    } catch (error) {
      throw new UsageError(`${shown}: cannot be written (${(error as Error).message})`);
    }
    return;
  }
  const folder = dirname(resolve(path));
  let folderInfo: Deno.FileInfo;
  try {
    folderInfo = Deno.statSync(folder);
  } catch {
    throw new UsageError(`${shown}: the folder ${folder} does not exist`);
  }
  if (!folderInfo.isDirectory) throw new UsageError(`${shown}: ${folder} is not a folder`);
  const problem = creationProblem(folder);
  if (problem !== null) throw new UsageError(`${shown}: cannot create a file in ${folder} (${problem})`);
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
