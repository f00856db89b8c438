/**
 * Sweep specifications: a grid of an experiment's config keys (plus extra
 * points) × seeds, expanded into tasks, each a validated `run` command line
 * with a key that names its resolved setting. Everything a sweep could
 * refuse is refused here, before any folder is made or job submitted.
 *
 * @module
 */
import { dirname, extname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BACKEND_CHOICES, type BackendChoice } from "../core/backend.ts";
import { closest } from "../core/cli.ts";
import { coerceValue, type ConfigSpec, resolveConfig, unknownKeyError } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { type AnyExperiment, type PresetName, PRESETS, presetsOf } from "../core/experiment.ts";
import { sha256Hex } from "../core/run_checkpoints.ts";

/** Slurm settings of a sweep, named as Hydra's submitit launcher (`SlurmQueueConf`) names them. */
export interface SlurmSpec {
  /** `--partition`. */
  partition?: string;
  /** `--qos`. */
  qos?: string;
  /** `--account`. */
  account?: string;
  /** `--time`, minutes; Slurm sends SIGTERM at the limit and the run is marked interrupted. */
  timeout_min: number;
  /** `--cpus-per-task`. */
  cpus_per_task: number;
  /** `--mem=<mem_gb>G`. */
  mem_gb: number;
  /** How many elements of an array run at once (`--array=0-<n−1>%<k>`). */
  array_parallelism: number;
  /** Shell lines run before the task (module loads, environment). */
  setup: string[];
  /** Further `#SBATCH --<key>=<value>` lines. */
  additional_parameters: Record<string, string | number | boolean>;
}

/** The Slurm settings a spec may leave out, with their values. */
export const SLURM_DEFAULTS: Readonly<SlurmSpec> = {
  timeout_min: 60,
  cpus_per_task: 1,
  mem_gb: 2,
  array_parallelism: 256,
  setup: [],
  additional_parameters: {},
};

/** The metric a sweep is judged by (W&B's `metric`), for tables sorted by it. */
export interface SweepMetric {
  /** The metric's key in the runs' metrics. */
  name: string;
  /** Whether lower or higher is better. */
  goal: "minimize" | "maximize";
}

/** A sweep as checked by {@linkcode checkSweepSpec}: every field present, module paths absolute. */
export interface SweepSpec {
  /** A registered experiment's name, or the absolute path of a module exporting `experiment`. */
  experiment: string;
  /** The preset every task starts from. */
  preset: PresetName;
  /** The sweep's name. */
  name?: string;
  /** Config values every task shares. */
  base: Record<string, unknown>;
  /** Values per key; the sweep runs their cartesian product (last key fastest). */
  grid: Record<string, unknown[]>;
  /** Further points, each over `base`, after the grid's. */
  include: Record<string, unknown>[];
  /** A count n (seeds 0 … n−1) or the seeds themselves. */
  seeds: number | number[];
  /** The backend every task runs on. */
  backend?: BackendChoice;
  /** The metric the sweep is judged by. */
  metric?: SweepMetric;
  /** Slurm settings, for the Slurm executor. */
  slurm?: SlurmSpec;
}

/** A sweep as written: the optional fields may be left out, and Slurm settings given in part. */
export type SweepInput =
  & Pick<SweepSpec, "experiment">
  & Partial<Omit<SweepSpec, "experiment" | "slurm" | "preset">>
  & { preset?: string; slurm?: Partial<SlurmSpec> };

/** Identity function that type-checks a sweep written as a TS module (`export const sweep = defineSweep({...})`). */
export function defineSweep(sweep: SweepInput): SweepInput {
  return sweep;
}

/** One run of a sweep. */
export interface SweepTask {
  /** Position in the expansion: grid points (last key fastest), then `include`, each × seeds (seed fastest). */
  index: number;
  /** First 12 hex digits of the SHA-256 of the task's canonical setting (see {@linkcode taskKey}). */
  key: string;
  /** The task's seed. */
  seed: number;
  /** The fully resolved config. */
  config: Record<string, unknown>;
  /** The values the spec gives this task (base, then its grid point or include entry), as resolved. */
  values: Record<string, unknown>;
  /** The arguments after `main.ts run`: what runs this task (the sweep adds `--runs`). */
  args: string[];
}

/** More tasks than this are refused: a typo in a grid, not a sweep anyone means to run. */
export const MAX_TASKS = 100_000;

const TOP_KEYS = ["experiment", "preset", "name", "base", "grid", "include", "seeds", "backend", "metric", "slurm"];
const SLURM_KEYS = [
  "partition",
  "qos",
  "account",
  "timeout_min",
  "cpus_per_task",
  "mem_gb",
  "array_parallelism",
  "setup",
  "additional_parameters",
];
/** Run options a task's point may not set: the sweep sets them, or they are the spec's own fields. */
const RESERVED: Record<string, string> = {
  seed: 'seeds are the spec\'s own field ("seeds": 3 or [0, 5])',
  preset: 'the preset is the spec\'s own field ("preset": "smoke")',
  backend: 'the backend is the spec\'s own field ("backend": "wasm")',
  resume: "a sweep resumes its interrupted runs itself",
  runs: "the run store is the sweep command's --runs",
};

/** A sweep id (and `--name`): a folder name of letters, digits, `_ . -`. */
const SWEEP_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** Whether `ref` names a module file rather than a registered experiment. */
export function isModuleRef(ref: string): boolean {
  return ref.includes("/") || ref.includes("\\") || /\.[cm]?[jt]sx?$/.test(ref);
}

/** Checks a sweep id or `--name`; throws UsageError. */
export function checkSweepId(id: string, what = "name"): string {
  if (!SWEEP_ID.test(id)) {
    throw new UsageError(
      `${what} ${JSON.stringify(id)}: a sweep name is 1–100 letters, digits, "_", "." or "-", starting with a ` +
        "letter or digit",
    );
  }
  return id;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function unknownSpecKey(where: string, key: string, valid: readonly string[]): UsageError {
  return new UsageError(
    `${where}: unknown key ${JSON.stringify(key)}; did you mean ${JSON.stringify(closest(key, valid))}? ` +
      `Valid keys: ${valid.join(", ")}`,
  );
}

function positiveInteger(where: string, key: string, value: unknown, max = 1_000_000): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new UsageError(`${where}: ${key} must be an integer ≥ 1 and ≤ ${max}, not ${JSON.stringify(value)}`);
  }
  return value;
}

function checkSlurm(where: string, raw: unknown): SlurmSpec {
  if (!isObject(raw)) throw new UsageError(`${where}: slurm must be an object of Slurm settings`);
  for (const key of Object.keys(raw)) {
    if (!SLURM_KEYS.includes(key)) throw unknownSpecKey(`${where}: slurm`, key, SLURM_KEYS);
  }
  const at = `${where}: slurm`;
  const slurm: SlurmSpec = { ...SLURM_DEFAULTS, setup: [], additional_parameters: {} };
  for (const key of ["partition", "qos", "account"] as const) {
    const value = raw[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" || value.trim() === "" || /\s/.test(value)) {
      throw new UsageError(`${at}: ${key} must be a name without spaces, not ${JSON.stringify(value)}`);
    }
    slurm[key] = value;
  }
  if (raw.timeout_min !== undefined) slurm.timeout_min = positiveInteger(at, "timeout_min", raw.timeout_min);
  if (raw.cpus_per_task !== undefined) {
    slurm.cpus_per_task = positiveInteger(at, "cpus_per_task", raw.cpus_per_task, 4096);
  }
  if (raw.array_parallelism !== undefined) {
    slurm.array_parallelism = positiveInteger(at, "array_parallelism", raw.array_parallelism);
  }
  if (raw.mem_gb !== undefined) {
    if (typeof raw.mem_gb !== "number" || !(raw.mem_gb > 0) || raw.mem_gb > 1_000_000) {
      throw new UsageError(`${at}: mem_gb must be a number of gigabytes > 0, not ${JSON.stringify(raw.mem_gb)}`);
    }
    slurm.mem_gb = raw.mem_gb;
  }
  if (raw.setup !== undefined) {
    if (!Array.isArray(raw.setup) || raw.setup.some((line) => typeof line !== "string" || line.includes("\n"))) {
      throw new UsageError(`${at}: setup must be a list of shell lines (strings without newlines)`);
    }
    slurm.setup = [...raw.setup];
  }
  if (raw.additional_parameters !== undefined) {
    const extra = raw.additional_parameters;
    if (!isObject(extra)) throw new UsageError(`${at}: additional_parameters must be an object of sbatch options`);
    for (const [key, value] of Object.entries(extra)) {
      if (!/^[a-z][a-z0-9_-]*$/.test(key)) {
        throw new UsageError(`${at}: additional_parameters: ${JSON.stringify(key)} is not an sbatch option name`);
      }
      if (!["string", "number", "boolean"].includes(typeof value) || String(value).includes("\n")) {
        throw new UsageError(`${at}: additional_parameters.${key} must be a string, number or boolean on one line`);
      }
      slurm.additional_parameters[key] = value as string | number | boolean;
    }
  }
  return slurm;
}

function checkPoint(where: string, raw: unknown): Record<string, unknown> {
  if (!isObject(raw)) throw new UsageError(`${where} must be an object of config values ({ "key": value })`);
  for (const key of Object.keys(raw)) {
    if (Object.hasOwn(RESERVED, key)) throw new UsageError(`${where}: ${key} cannot be set per task; ${RESERVED[key]}`);
  }
  return { ...raw };
}

function checkSeeds(where: string, raw: unknown): number | number[] {
  if (typeof raw === "number") {
    if (!Number.isInteger(raw) || raw < 1 || raw > MAX_TASKS) {
      throw new UsageError(`${where}: seeds ${raw}: a count of seeds must be an integer ≥ 1 and ≤ ${MAX_TASKS}`);
    }
    return raw;
  }
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new UsageError(`${where}: seeds must be a count (3: seeds 0, 1, 2) or a non-empty list of seeds ([0, 5])`);
  }
  for (const seed of raw) {
    if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed > 2 ** 31 - 1) {
      throw new UsageError(`${where}: seed ${JSON.stringify(seed)}: seeds are integers ≥ 0 and ≤ ${2 ** 31 - 1}`);
    }
  }
  const repeated = raw.find((s, i) => raw.indexOf(s) !== i);
  if (repeated !== undefined) throw new UsageError(`${where}: seed ${repeated} is given more than once`);
  return [...raw];
}

/** The seeds of a spec: 0 … n−1 for a count n, else the list. */
export function seedList(seeds: number | number[]): number[] {
  return typeof seeds === "number" ? Array.from({ length: seeds }, (_, i) => i) : seeds;
}

/**
 * Checks a sweep's shape (keys, types, Slurm settings, seeds) without its
 * experiment, and fills in what it leaves out; a module path is made
 * absolute against `baseDir` (the spec file's folder). Throws UsageError
 * naming `where` (the spec file) and the problem.
 */
export function checkSweepSpec(raw: unknown, where = "sweep", baseDir = Deno.cwd()): SweepSpec {
  if (!isObject(raw)) throw new UsageError(`${where}: a sweep spec is an object ({ "experiment": ..., "grid": ... })`);
  for (const key of Object.keys(raw)) if (!TOP_KEYS.includes(key)) throw unknownSpecKey(where, key, TOP_KEYS);
  if (typeof raw.experiment !== "string" || raw.experiment.trim() === "") {
    throw new UsageError(`${where}: experiment must name a registered experiment or a module path ("./exp.ts")`);
  }
  const experiment = isModuleRef(raw.experiment)
    ? (isAbsolute(raw.experiment) ? raw.experiment : resolve(baseDir, raw.experiment))
    : raw.experiment;
  const preset = raw.preset ?? "quick";
  if (typeof preset !== "string" || !(PRESETS as readonly string[]).includes(preset)) {
    throw new UsageError(`${where}: preset ${JSON.stringify(preset)}: must be one of ${PRESETS.join(", ")}`);
  }
  const spec: SweepSpec = {
    experiment,
    preset: preset as PresetName,
    base: raw.base === undefined ? {} : checkPoint(`${where}: base`, raw.base),
    grid: {},
    include: [],
    seeds: raw.seeds === undefined ? 1 : checkSeeds(where, raw.seeds),
  };
  if (raw.name !== undefined) {
    if (typeof raw.name !== "string") throw new UsageError(`${where}: name must be a string`);
    spec.name = checkSweepId(raw.name, `${where}: name`);
  }
  if (raw.grid !== undefined) {
    if (!isObject(raw.grid)) {
      throw new UsageError(`${where}: grid must be an object of value lists ({ "dim": [4, 6] })`);
    }
    checkPoint(`${where}: grid`, raw.grid);
    for (const [key, values] of Object.entries(raw.grid)) {
      if (!Array.isArray(values)) {
        throw new UsageError(
          `${where}: grid.${key} must be a list of values (e.g. [4, 6]), not ${JSON.stringify(values)}`,
        );
      }
      if (values.length === 0) {
        throw new UsageError(`${where}: grid.${key} is an empty list; give it at least one value`);
      }
      spec.grid[key] = [...values];
    }
  }
  if (raw.include !== undefined) {
    if (!Array.isArray(raw.include)) {
      throw new UsageError(`${where}: include must be a list of points ([{ "dim": 8 }])`);
    }
    spec.include = raw.include.map((point, i) => checkPoint(`${where}: include[${i}]`, point));
  }
  if (raw.backend !== undefined) {
    if (!(BACKEND_CHOICES as readonly unknown[]).includes(raw.backend)) {
      throw new UsageError(
        `${where}: backend ${JSON.stringify(raw.backend)}: must be one of ${BACKEND_CHOICES.join(", ")}`,
      );
    }
    spec.backend = raw.backend as BackendChoice;
  }
  if (raw.metric !== undefined) {
    const metric = raw.metric;
    if (
      !isObject(metric) || typeof metric.name !== "string" || metric.name === "" ||
      !["minimize", "maximize"].includes(metric.goal as string) || Object.keys(metric).some((k) =>
        k !== "name" && k !== "goal"
      )
    ) {
      throw new UsageError(`${where}: metric must be { "name": "<summary metric>", "goal": "minimize" | "maximize" }`);
    }
    spec.metric = { name: metric.name, goal: metric.goal as SweepMetric["goal"] };
  }
  if (raw.slurm !== undefined) spec.slurm = checkSlurm(where, raw.slurm);
  return spec;
}

/** Line and column (1-based) of character `position` of `text`. */
function lineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(position, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/**
 * The first key that an object of valid JSON `text` gives twice, with the
 * keys of the objects around it (`slurm.mem_gb`) and its position, or null.
 * JSON.parse keeps the last silently, so a spec would run what its reader
 * did not see.
 */
export function repeatedJsonKey(text: string): { path: string; position: number } | null {
  // Per open object or array: the key it is the value of, and an object's keys so far (null for an array).
  const open: { key: string | null; keys: Set<string> | null }[] = [];
  let lastKey: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") {
      open.push({ key: lastKey, keys: c === "{" ? new Set() : null });
      lastKey = null;
    } else if (c === "}" || c === "]") {
      open.pop();
      lastKey = null;
    } else if (c === ",") {
      lastKey = null;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      let next = end + 1;
      while (/\s/.test(text[next] ?? "")) next++;
      const isKey = text[next] === ":";
      const keys = open.at(-1)?.keys;
      if (isKey && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) {
          const outer = open.flatMap((o) => o.key === null ? [] : [o.key]);
          return { path: [...outer, key].join("."), position: i };
        }
        keys.add(key);
        lastKey = key;
      }
      i = end;
    }
  }
  return null;
}

/** Parses JSON, or throws UsageError `<path>:<line>:<column>: <what is wrong>` (a repeated key too). */
export function parseJsonAt(text: string, path: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = /at position (\d+)/.exec(message);
    const { line, column } = lineColumn(text, at ? Number(at[1]) : text.length);
    const what = message.replace(/\s*\(line \d+ column \d+\)/, "").replace(/ in JSON at position \d+/, "");
    throw new UsageError(`${path}:${line}:${column}: invalid JSON: ${what}`);
  }
  const repeated = repeatedJsonKey(text);
  if (repeated) {
    const { line, column } = lineColumn(text, repeated.position);
    throw new UsageError(
      `${path}:${line}:${column}: key "${repeated.path}" is given twice; give each key once (JSON keeps only the last)`,
    );
  }
  return value;
}

async function importModule(path: string, what: string): Promise<Record<string, unknown>> {
  try {
    if (!Deno.statSync(path).isFile) throw new UsageError(`${what} ${path}: not a file`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${what} ${path}: no such file`);
  }
  try {
    return await import(pathToFileURL(path).href);
  } catch (error) {
    throw new UsageError(`${what} ${path}: cannot be imported: ${(error as Error).message.split("\n")[0]}`);
  }
}

/**
 * Reads a sweep spec: a JSON file (a syntax error is reported with its
 * line and column) or a TS/JS module exporting `sweep`. Throws UsageError.
 */
export async function loadSweepSpec(path: string): Promise<SweepSpec> {
  const absolute = resolve(path);
  const extension = extname(path).toLowerCase();
  if (extension === ".json") {
    let text: string;
    try {
      const info = Deno.statSync(absolute);
      if (!info.isFile) throw new Error("not a file");
      text = Deno.readTextFileSync(absolute);
    } catch (error) {
      const reason = error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message;
      throw new UsageError(`sweep spec ${path}: cannot be read (${reason})`);
    }
    return checkSweepSpec(parseJsonAt(text, path), path, dirname(absolute));
  }
  if ([".ts", ".js", ".mts", ".mjs"].includes(extension)) {
    const module = await importModule(absolute, "sweep spec");
    if (!isObject(module.sweep)) {
      throw new UsageError(`sweep spec ${path}: exports no sweep (export const sweep = defineSweep({...}))`);
    }
    return checkSweepSpec(module.sweep, path, dirname(absolute));
  }
  throw new UsageError(`sweep spec ${path}: a spec is a .json file or a .ts module exporting sweep`);
}

/** Whether `value` has the shape of an experiment definition. */
function isExperiment(value: unknown): value is AnyExperiment {
  return isObject(value) && typeof value.name === "string" && isObject(value.config) && isObject(value.presets) &&
    typeof value.run === "function";
}

/** The experiment a module exports as `experiment` (`run ./exp.ts`, a sweep of a module); throws UsageError. */
export async function importExperiment(path: string): Promise<AnyExperiment> {
  const module = await importModule(resolve(path), "experiment module");
  if (!isExperiment(module.experiment)) {
    throw new UsageError(
      `experiment module ${path}: exports no experiment (export const experiment = defineExperiment({...}))`,
    );
  }
  return module.experiment;
}

/** JSON with every object's keys sorted, so that equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    return `{${
      Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${canonicalJson(value[k])}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}

/**
 * A task's key: the first 12 hex digits of the SHA-256 of the canonical
 * JSON of its experiment (name, or absolute module path), preset, resolved
 * config, seed and backend. Equal settings have equal keys in any process.
 */
export function taskKey(setting: {
  experiment: string;
  preset: string;
  config: Record<string, unknown>;
  seed: number;
  backend: string;
}): string {
  return sha256Hex(canonicalJson(setting)).slice(0, 12);
}

/** A sweep's id: its `name`, else `<experiment>-<first 8 hex of the SHA-256 of its sorted task keys>`. */
export function sweepId(spec: Pick<SweepSpec, "name">, experimentName: string, tasks: readonly SweepTask[]): string {
  if (spec.name !== undefined) return checkSweepId(spec.name);
  const digest = sha256Hex(tasks.map((t) => t.key).sort().join("\n")).slice(0, 8);
  const safe = experimentName.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^[^A-Za-z0-9]+/, "").slice(0, 80);
  return `${safe || "sweep"}-${digest}`;
}

/** A config value as the command line writes it: lists `1,2,3`, numbers in their shortest exact form. */
function flagValue(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(",") : String(value);
}

/** Number of grid points. */
function gridSize(grid: Record<string, unknown[]>): number {
  return Object.values(grid).reduce((size, values) => size * values.length, 1);
}

/**
 * The tasks of a sweep, in order: the grid's cartesian product in the
 * spec's key order (last key fastest; one point, the base, when the grid is
 * empty), then each `include` point, each × seeds (seed fastest). Every
 * task's config is resolved (experiment defaults → preset → base → point)
 * and checked before anything is written; throws UsageError naming the
 * task and key of a refused value, an unknown key, a missing preset, two
 * tasks of one setting, or more than {@linkcode MAX_TASKS} tasks.
 */
export function expandSweep(input: SweepInput | SweepSpec, experiment: AnyExperiment): SweepTask[] {
  const spec = checkSweepSpec(input);
  const config = experiment.config as ConfigSpec;
  const presetOverrides = experiment.presets[spec.preset];
  if (presetOverrides === undefined) {
    throw new UsageError(
      `preset ${spec.preset}: ${experiment.name} has no ${spec.preset} preset; allowed: ${
        presetsOf(experiment).join(", ")
      }`,
    );
  }
  const validKeys = Object.keys(config);
  const checkKeys = (where: string, point: Record<string, unknown>) => {
    for (const key of Object.keys(point)) {
      if (!Object.hasOwn(config, key)) {
        throw new UsageError(`${where}: ${unknownKeyError(key, validKeys).message}`);
      }
    }
  };
  checkKeys("base", spec.base);
  checkKeys("grid", spec.grid);
  spec.include.forEach((point, i) => checkKeys(`include[${i}]`, point));

  const seeds = seedList(spec.seeds);
  const points = gridSize(spec.grid);
  const total = (points + spec.include.length) * seeds.length;
  if (!(total <= MAX_TASKS)) {
    throw new UsageError(
      `the sweep has ${total.toLocaleString("en-US")} tasks; at most ${MAX_TASKS.toLocaleString("en-US")} are run ` +
        "((grid points + include) × seeds)",
    );
  }

  const preset = resolveConfig(config, presetOverrides, new Map()) as Record<string, unknown>;
  const presetJson = Object.fromEntries(Object.entries(preset).map(([k, v]) => [k, canonicalJson(v)]));
  const ref = spec.experiment;
  const backend = spec.backend ?? "auto";
  const gridKeys = Object.keys(spec.grid);
  const tasks: SweepTask[] = [];
  const byKey = new Map<string, number>();
  const addPoint = (values: Record<string, unknown>) => {
    const first = tasks.length;
    const resolved: Record<string, unknown> = { ...preset };
    const given: Record<string, unknown> = {};
    for (const [key, raw] of Object.entries(values)) {
      try {
        resolved[key] = given[key] = coerceValue(key, config[key], raw);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        throw new UsageError(`task ${first} (${key} = ${JSON.stringify(raw)}): ${error.message}`);
      }
    }
    const flags: string[] = [];
    for (const key of validKeys) {
      if (Object.hasOwn(given, key) && canonicalJson(given[key]) !== presetJson[key]) {
        flags.push(`--${key}`, flagValue(given[key]));
      }
    }
    // taskKey's canonical JSON, written out once per point (its keys in sorted order): 10,000 tasks stay fast.
    const head = `{"backend":${JSON.stringify(backend)},"config":${canonicalJson(resolved)},"experiment":${
      JSON.stringify(ref)
    },"preset":${JSON.stringify(spec.preset)},"seed":`;
    for (const seed of seeds) {
      const index = tasks.length;
      const key = sha256Hex(`${head}${seed}}`).slice(0, 12);
      const twin = byKey.get(key);
      if (twin !== undefined) {
        throw new UsageError(
          `tasks ${twin} and ${index} are one setting (${canonicalJson(given)}, seed ${seed}): a point of include ` +
            "repeats a grid point, or gives the values the preset already has",
        );
      }
      byKey.set(key, index);
      tasks.push({
        index,
        key,
        seed,
        config: resolved,
        values: given,
        args: [
          ref,
          "--preset",
          spec.preset,
          "--seed",
          String(seed),
          ...(spec.backend ? ["--backend", spec.backend] : []),
          ...flags,
        ],
      });
    }
  };
  // An odometer over the grid's value lists, the last key turning fastest.
  const position = gridKeys.map(() => 0);
  for (let p = 0; p < points; p++) {
    const point: Record<string, unknown> = { ...spec.base };
    gridKeys.forEach((key, i) => point[key] = spec.grid[key][position[i]]);
    addPoint(point);
    for (let i = gridKeys.length - 1; i >= 0; i--) {
      if (++position[i] < spec.grid[gridKeys[i]].length) break;
      position[i] = 0;
    }
  }
  for (const point of spec.include) addPoint({ ...spec.base, ...point });
  return tasks;
}
