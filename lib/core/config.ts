/**
 * Experiment configuration: typed parameter specs with defaults, ranges and
 * a one-line doc each; resolution defaults → preset → flags, with errors
 * that name the key, the value and what is allowed.
 *
 * @module
 */
import { closest } from "./cli.ts";
import { UsageError } from "./errors.ts";

interface NumberBounds {
  min?: number;
  max?: number;
  integer?: boolean;
}

/** A number parameter; `choices`, when given, lists every allowed value. */
export type NumberParam<T extends number = number> =
  & { type: "number"; default: T; doc: string; choices?: readonly T[] }
  & NumberBounds;
/** A list-of-numbers parameter. */
export type NumbersParam = { type: "numbers"; default: number[]; doc: string } & NumberBounds;
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
};
/** One configuration parameter: its type, default, documentation and bounds. */
export type ParamSpec = NumberParam | NumbersParam | BooleanParam | ChoiceParam | ChoicesParam;

/** A named set of parameter specs. */
export type ConfigSpec = Record<string, ParamSpec>;

type ValueOf<P extends ParamSpec> = P["default"];
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

/** A list of integers, given on the command line as `1,2,3`. */
export function integers(
  def: number[],
  doc: string,
  bounds: Omit<NumberBounds, "integer"> = {},
): NumbersParam {
  return { type: "numbers", default: def, doc, ...bounds, integer: true };
}

/** A list of real numbers, given on the command line as `0.2,0.4`. */
export function reals(def: number[], doc: string, bounds: Omit<NumberBounds, "integer"> = {}): NumbersParam {
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

/** A list of strings from `allowed`, given on the command line as `a,b,c`. */
export function choices<const T extends string>(
  def: NoInfer<T>[],
  allowed: readonly T[],
  doc: string,
): ChoicesParam<T> {
  return { type: "strings", default: def, doc, choices: allowed };
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

/** Describes the allowed values of a parameter, for error and help text. */
export function describeAllowed(spec: ParamSpec): string {
  switch (spec.type) {
    case "boolean":
      return "true or false";
    case "string":
      return `one of ${spec.choices.join(", ")}`;
    case "strings":
      return `a comma-separated list of ${spec.choices.join(", ")}`;
    case "number":
    case "numbers": {
      if (spec.type === "number" && spec.choices) return `one of ${spec.choices.join(", ")}`;
      const kind = spec.integer ? "an integer" : "a number";
      const what = spec.type === "numbers" ? `a comma-separated list of ${kind.replace(/^an? /, "")}s` : kind;
      const lo = spec.min !== undefined ? ` ≥ ${spec.min}` : "";
      const hi = spec.max !== undefined ? `${lo ? " and" : ""} ≤ ${spec.max}` : "";
      return `${what}${lo}${hi}`;
    }
  }
}

function checkNumber(
  key: string,
  value: number,
  spec: NumberBounds & { type: string; choices?: readonly number[] },
  shown: string,
): void {
  const bad = (spec.choices !== undefined && !spec.choices.includes(value)) ||
    (spec.integer && !Number.isInteger(value)) ||
    (spec.min !== undefined && value < spec.min) ||
    (spec.max !== undefined && value > spec.max);
  if (bad) {
    throw new UsageError(
      `--${key} ${shown}: not allowed; ${key} must be ${describeAllowed(spec as ParamSpec)}`,
    );
  }
}

/** Converts and checks one value (from a flag string or a preset) against its spec. */
export function coerceValue(key: string, spec: ParamSpec, raw: unknown): ConfigOf<ConfigSpec>[string] {
  const shown = Array.isArray(raw) ? raw.join(",") : String(raw);
  if (raw === true && spec.type !== "boolean") {
    throw new UsageError(`--${key} needs a value; ${key} must be ${describeAllowed(spec)}`);
  }
  const wrongType = (): never => {
    throw new UsageError(`--${key} ${shown}: wrong type; ${key} must be ${describeAllowed(spec)}`);
  };
  switch (spec.type) {
    case "boolean":
      if (raw === true || raw === "true") return true;
      if (raw === false || raw === "false") return false;
      return wrongType();
    case "string":
      if (typeof raw !== "string") return wrongType();
      if (!spec.choices.includes(raw)) {
        throw new UsageError(`--${key} ${shown}: not allowed; ${key} must be ${describeAllowed(spec)}`);
      }
      return raw;
    case "strings": {
      const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",").map((v) => v.trim()) : null;
      if (!items || items.length === 0 || items.some((v) => typeof v !== "string")) return wrongType();
      const unknown = items.filter((v) => !spec.choices.includes(v));
      if (unknown.length > 0) {
        throw new UsageError(
          `--${key} ${shown}: ${unknown.join(", ")} not allowed; ${key} must be ${describeAllowed(spec)}`,
        );
      }
      return items as string[];
    }
    case "number": {
      const value = typeof raw === "number" ? raw : typeof raw === "string" ? parseNumber(raw) : null;
      if (value === null) return wrongType();
      checkNumber(key, value, spec, shown);
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
      for (const v of items as number[]) checkNumber(key, v, spec, shown);
      return items as number[];
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
    if (!(key in spec)) throw new Error(`preset sets unknown key "${key}"`);
    resolved[key] = coerceValue(key, spec[key], value);
  }
  const valid = [...extraValidKeys, ...Object.keys(spec)];
  for (const [key, raw] of flags) {
    if (!(key in spec)) throw unknownKeyError(key, valid);
    resolved[key] = coerceValue(key, spec[key], raw);
  }
  return resolved as ConfigOf<S>;
}
