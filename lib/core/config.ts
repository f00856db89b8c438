/**
 * Experiment configuration: typed parameter specs with defaults, ranges and
 * a one-line doc each; resolution defaults → preset → flags, with errors
 * that name the key, the value and what is allowed.
 *
 * @module
 */
import { closest } from "./cli.ts";
import { UsageError } from "./errors.ts";

/** Bounds of a numeric parameter, checked when a value is parsed. */
export interface NumberBounds {
  /** Smallest allowed value. */
  min?: number;
  /** Largest allowed value. */
  max?: number;
  /** Whether only integers are allowed. */
  integer?: boolean;
}

/**
 * Options of a list parameter. Its values must be distinct unless `repeats`
 * is set: a list names settings to run (depths, methods, grid positions),
 * and a repeated one would train duplicates that count twice in a study.
 */
export interface ListOptions {
  /** Allow a value more than once (default false: a repeat is a usage error). */
  repeats?: boolean;
}

/** A number parameter; `choices`, when given, lists every allowed value. */
export type NumberParam<T extends number = number> =
  & { type: "number"; default: T; doc: string; choices?: readonly T[] }
  & NumberBounds;
/** A list-of-numbers parameter. */
export type NumbersParam = { type: "numbers"; default: number[]; doc: string } & NumberBounds & ListOptions;
/** A boolean parameter. */
export type BooleanParam = { type: "boolean"; default: boolean; doc: string };
/** A string parameter with a fixed set of choices. */
export type ChoiceParam<T extends string = string> = { type: "string"; default: T; doc: string; choices: readonly T[] };
/** A list of strings, each from a fixed set of choices. */
export type ChoicesParam<T extends string = string> = {
  type: "strings";
  default: T[];
  doc: string;
  choices: readonly T[];
} & ListOptions;
/** One configuration parameter: its type, default, documentation and bounds. */
export type ParamSpec = NumberParam | NumbersParam | BooleanParam | ChoiceParam | ChoicesParam;

/** A named set of parameter specs. */
export type ConfigSpec = Record<string, ParamSpec>;

/** The type of a parameter's value: that of its default. */
export type ValueOf<P extends ParamSpec> = P["default"];
/** The resolved configuration type of a spec. */
export type ConfigOf<S extends ConfigSpec> = { [K in keyof S]: ValueOf<S[K]> };
/** Partial overrides of a config, as presets give them. */
export type ConfigOverrides<S extends ConfigSpec> = Partial<ConfigOf<S>>;

/** A real number parameter. */
export function real(def: number, doc: string, bounds: NumberBounds = {}): NumberParam {
  return { type: "number", default: def, doc, ...bounds };
}

/** An integer parameter. */
export function integer(
  def: number,
  doc: string,
  bounds: Omit<NumberBounds, "integer"> = {},
): NumberParam {
  return { type: "number", default: def, doc, ...bounds, integer: true };
}

/** A list of distinct integers (unless `repeats`), given on the command line as `1,2,3`. */
export function integers(
  def: number[],
  doc: string,
  bounds: Omit<NumberBounds, "integer"> & ListOptions = {},
): NumbersParam {
  return { type: "numbers", default: def, doc, ...bounds, integer: true };
}

/** A list of distinct real numbers (unless `repeats`), given on the command line as `0.2,0.4`. */
export function reals(
  def: number[],
  doc: string,
  bounds: Omit<NumberBounds, "integer"> & ListOptions = {},
): NumbersParam {
  return { type: "numbers", default: def, doc, ...bounds };
}

/** A boolean parameter (`--key`, `--key true`, `--key false`). */
export function flag(def: boolean, doc: string): BooleanParam {
  return { type: "boolean", default: def, doc };
}

/** A string parameter restricted to `choices`; the resolved value has their literal type. */
export function choice<const T extends string>(def: NoInfer<T>, choices: readonly T[], doc: string): ChoiceParam<T> {
  return { type: "string", default: def, doc, choices };
}

/** A list of distinct strings (unless `repeats`) from `allowed`, given on the command line as `a,b,c`. */
export function choices<const T extends string>(
  def: NoInfer<T>[],
  allowed: readonly T[],
  doc: string,
  options: ListOptions = {},
): ChoicesParam<T> {
  return { type: "strings", default: def, doc, choices: allowed, ...options };
}

/** An integer parameter restricted to `choices` (e.g. an image side); the resolved value has their literal type. */
export function integerChoice<const T extends number>(
  def: NoInfer<T>,
  choices: readonly T[],
  doc: string,
): NumberParam<T> {
  return { type: "number", default: def, doc, choices, integer: true };
}

/** Parses a number as researchers write it: `1e-4`, `20_000`, `-3.5`. */
export function parseNumber(text: string): number | null {
  const cleaned = text.trim();
  if (!/^[+-]?(\d(_?\d)*)?(\.\d(_?\d)*)?([eE][+-]?\d+)?$/.test(cleaned)) return null;
  if (!/\d/.test(cleaned)) return null;
  const value = Number(cleaned.replaceAll("_", ""));
  return Number.isFinite(value) ? value : null;
}

/** A bound as the command line takes it: `100_000_000` rather than `100000000`. */
function formatBound(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) < 10_000) return String(value);
  return `${value < 0 ? "-" : ""}${String(Math.abs(value)).replace(/\B(?=(\d{3})+$)/g, "_")}`;
}

/** Describes the allowed values of a parameter, for error and help text. */
export function describeAllowed(spec: ParamSpec): string {
  const once = (spec.type === "numbers" || spec.type === "strings") && !spec.repeats ? ", each at most once" : "";
  switch (spec.type) {
    case "boolean":
      return "true or false";
    case "string":
      return `one of ${spec.choices.join(", ")}`;
    case "strings":
      return `a comma-separated list of ${spec.choices.join(", ")}${once}`;
    case "number":
    case "numbers": {
      if (spec.type === "number" && spec.choices) return `one of ${spec.choices.join(", ")}`;
      const kind = spec.integer ? "an integer" : "a number";
      const what = spec.type === "numbers" ? `a comma-separated list of ${kind.replace(/^an? /, "")}s` : kind;
      const lo = spec.min !== undefined ? ` ≥ ${formatBound(spec.min)}` : "";
      const hi = spec.max !== undefined ? `${lo ? " and" : ""} ≤ ${formatBound(spec.max)}` : "";
      return `${what}${lo}${hi}${once}`;
    }
  }
}

/** Why `value` is refused by `spec`, or null when it is allowed. */
function numberProblem(value: number, spec: NumberBounds & { choices?: readonly number[] }): string | null {
  if (spec.choices !== undefined) return spec.choices.includes(value) ? null : "not allowed";
  if (spec.integer && !Number.isInteger(value)) return "not an integer";
  if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
    return "out of range";
  }
  return null;
}

/** The first value of `items` that appears again, or undefined when they are distinct. */
function firstRepeat<T>(items: readonly T[]): T | undefined {
  const seen = new Set<T>();
  for (const item of items) {
    if (seen.has(item)) return item;
    seen.add(item);
  }
  return undefined;
}

/** Converts and checks one value (from a flag string or a preset) against its spec. */
export function coerceValue(key: string, spec: ParamSpec, raw: unknown): ConfigOf<ConfigSpec>[string] {
  const shown = Array.isArray(raw) ? raw.join(",") : String(raw);
  if (raw === true && spec.type !== "boolean") {
    throw new UsageError(`--${key} needs a value; ${key} must be ${describeAllowed(spec)}`);
  }
  const refuse = (problem: string): never => {
    throw new UsageError(`--${key} ${shown}: ${problem}; ${key} must be ${describeAllowed(spec)}`);
  };
  const wrongType = (): never => refuse("wrong type");
  const distinct = <T>(items: T[]): T[] => {
    const repeated = spec.type === "numbers" || spec.type === "strings" ? firstRepeat(items) : undefined;
    if (repeated !== undefined && !(spec as ListOptions).repeats) refuse(`${repeated} is given more than once`);
    return items;
  };
  switch (spec.type) {
    case "boolean":
      if (raw === true || raw === "true") return true;
      if (raw === false || raw === "false") return false;
      return wrongType();
    case "string":
      if (typeof raw !== "string") return wrongType();
      if (!spec.choices.includes(raw)) return refuse("not allowed");
      return raw;
    case "strings": {
      const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",").map((v) => v.trim()) : null;
      if (!items || items.length === 0 || items.some((v) => typeof v !== "string")) return wrongType();
      const unknown = items.filter((v) => !spec.choices.includes(v));
      if (unknown.length > 0) refuse(`${unknown.join(", ")} not allowed`);
      return distinct(items as string[]);
    }
    case "number": {
      const value = typeof raw === "number" ? raw : typeof raw === "string" ? parseNumber(raw) : null;
      if (value === null) return wrongType();
      const problem = numberProblem(value, spec);
      if (problem) refuse(problem);
      return value;
    }
    case "numbers": {
      const items = Array.isArray(raw)
        ? raw
        : typeof raw === "string"
        ? raw.split(",").map((part) => parseNumber(part))
        : typeof raw === "number"
        ? [raw]
        : null;
      if (!items || items.length === 0 || items.some((v) => typeof v !== "number")) return wrongType();
      for (const v of items as number[]) {
        const problem = numberProblem(v, spec);
        if (problem) refuse(items.length > 1 ? `${v} ${problem}` : problem);
      }
      return distinct(items as number[]);
    }
  }
}

/** Error for a key that is not part of the spec, with a suggestion and the full list. */
export function unknownKeyError(key: string, valid: readonly string[]): UsageError {
  return new UsageError(
    `unknown option --${key}; did you mean --${closest(key, valid)}? Valid options: ${
      valid.map((k) => `--${k}`).join(", ")
    }`,
  );
}

/**
 * Resolves a config: the spec's defaults, then `preset`, then `flags`.
 * Every key of `flags` must be in the spec; every value is type- and
 * range-checked. Throws {@linkcode UsageError} before any work is done.
 */
export function resolveConfig<S extends ConfigSpec>(
  spec: S,
  preset: ConfigOverrides<S>,
  flags: ReadonlyMap<string, string | true>,
  extraValidKeys: readonly string[] = [],
): ConfigOf<S> {
  const resolved: Record<string, unknown> = {};
  for (const [key, param] of Object.entries(spec)) resolved[key] = param.default;
  for (const [key, value] of Object.entries(preset)) {
    if (!Object.hasOwn(spec, key)) throw new Error(`preset sets unknown key "${key}"`);
    resolved[key] = coerceValue(key, spec[key], value);
  }
  const valid = [...extraValidKeys, ...Object.keys(spec)];
  for (const [key, raw] of flags) {
    if (!Object.hasOwn(spec, key)) throw unknownKeyError(key, valid);
    resolved[key] = coerceValue(key, spec[key], raw);
  }
  return resolved as ConfigOf<S>;
}
