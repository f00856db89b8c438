/**
 * Registries of named things (objectives, metrics): each entry carries its
 * name, what it is, where it is published, and whatever its users need
 * (hyperparameters, grids, output keys, the function itself). The CLI, the
 * experiments, `list` and the dashboard read the same registry instead of
 * keeping parallel lists and string switches.
 *
 * @module
 */
import { closest } from "./cli.ts";
import { UsageError } from "./errors.ts";

/** What every registered entry has. */
export interface Registered {
  /** Name on the command line and in metric keys, snake_case. */
  name: string;
  /** One line: what it is. */
  description: string;
  /** Where it is defined: a key of lib/core/papers.ts and the document's own section, table or equation. */
  source: string;
}

/** A registry over the entries `T`, with their names as a literal union. */
export interface Registry<T extends Registered> {
  /** What an entry is called in messages, e.g. "metric". */
  kind: string;
  /** Every name, in registration order. */
  names: readonly T["name"][];
  /** Every entry, in registration order. */
  entries: readonly T[];
  /** The entry called `name`. */
  get<N extends T["name"]>(name: N): Extract<T, { name: N }>;
  /** The entry called `name`, or a UsageError that names the closest and lists all. */
  find(name: string): T;
  /** Whether `name` is registered. */
  has(name: string): name is T["name"];
}

/** Builds a registry; names must be unique. */
export function defineRegistry<const T extends Registered>(kind: string, entries: readonly T[]): Registry<T> {
  const byName = new Map<string, T>();
  for (const entry of entries) {
    if (byName.has(entry.name)) throw new Error(`${kind} "${entry.name}" is registered twice`);
    byName.set(entry.name, entry);
  }
  const names = entries.map((e) => e.name);
  return {
    kind,
    names,
    entries,
    get: (name) => byName.get(name) as never,
    find: (name) => {
      const entry = byName.get(name);
      if (entry) return entry;
      throw new UsageError(
        `unknown ${kind} "${name}"; did you mean ${closest(name, names)}? Choose from ${names.join(", ")}`,
      );
    },
    has: (name): name is T["name"] => byName.has(name),
  };
}
