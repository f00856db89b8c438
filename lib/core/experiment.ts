/**
 * The experiment contract: a definition (config spec, presets, published
 * targets, a run function) and the command-line runner that resolves the
 * config, picks the backend, opens the run store and writes the summary.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BACKEND_CHOICES, type BackendChoice, type BackendInfo, selectBackend } from "./backend.ts";
import { checkRunsRoot, parseCommandLine } from "./cli.ts";
import {
  choice,
  coerceValue,
  type ConfigOf,
  type ConfigOverrides,
  type ConfigSpec,
  describeAllowed,
  integer,
  type ParamSpec,
  resolveConfig,
  unknownKeyError,
} from "./config.ts";
import { isDiskFull, RunInterrupted, UsageError, userFacingError } from "./errors.ts";
import type { Image } from "./png.ts";
import { Progress } from "./progress.ts";
import { type Claim, type Target, targetVerdict, type Verdict } from "./targets.ts";
import { resultTablesMarkdown, summaryMarkdown } from "./scorecard.ts";
import { targetCurve } from "./curves.ts";
// Targets and claims are defined beside their verdicts; experiments import them from here.
export type { Claim, NullModel, Target, TargetKind } from "./targets.ts";
import { Rng } from "./rng.ts";
import { clearRequestedStop, requestStop, signalExitCode, startRunGuard } from "./run_guard.ts";
import type { RunSummary } from "./run_layout.ts";
import { isObject, isString, readSmallFile } from "./run_files.ts";
import { checkpointName, type LoadedCheckpoint, loadLatestCheckpoint } from "./run_checkpoints.ts";
import { liveWriter, runLockPath } from "./run_lock.ts";
import { RunWriter } from "./run_writer.ts";
import { readSummary } from "./run_reader.ts";
import { MetricsReader } from "./run_metrics.ts";

/** Preset names every experiment defines. */
export const PRESETS = ["smoke", "quick", "long", "paper"] as const;
/** A preset name. */
export type PresetName = typeof PRESETS[number];

/** What a run reports back: final scalar metrics, plus any structured detail. */
export interface RunResult {
  /** Final scalar metrics by key; targets and claims read these. */
  metrics: Record<string, number>;
  /** Structured results (tables, per-seed values) written into summary.json as they are. */
  details?: unknown;
}

/** Arrays to checkpoint: tensors (read back asynchronously) or typed arrays. */
export type CheckpointArrays = Record<string, tf.Tensor | { data: Float32Array | Int32Array; shape: number[] }>;

/** What an experiment's `run` receives besides its config. */
export interface RunContext {
  /** Generator seeded by `--seed`; streams that must survive `--resume` go into checkpoint state. */
  rng: Rng;
  /** The run's seed (`--seed`, default 0). */
  seed: number;
  /** The preset the config started from. */
  preset: PresetName;
  /** The backend the run is on, as recorded in run.json. */
  backend: BackendInfo;
  /** The run directory. */
  dir: string;
  /** The checkpoint this run continues from, or null for a fresh run. */
  resumed: LoadedCheckpoint | null;
  /** Appends a metrics line. */
  log(step: number, values: Record<string, number>): void;
  /** Saves a PNG to media/. */
  image(name: string, step: number, image: Image): void;
  /** A progress reporter on stderr. */
  progress(label: string, total: number): Progress;
  /** Saves a checkpoint: arrays plus JSON state (include any `Rng.state()` needed to continue). */
  checkpoint(step: number, arrays: CheckpointArrays, state: unknown): Promise<void>;
  /**
   * Keeps a trained model as models/<name>/: its arrays and the JSON `info`
   * that rebuilds it (the experiment's `load` reads both). Returns the name used.
   */
  saveModel(name: string, arrays: CheckpointArrays, info: unknown): Promise<string>;
  /**
   * Aborted (with a {@linkcode RunInterrupted} reason) when the run was asked
   * to stop; training loops call `throwIfAborted()` between steps.
   */
  stopRequested: AbortSignal;
}

/** An experiment definition; `T` is what {@linkcode Experiment.load} gives back of a finished run. */
export interface Experiment<S extends ConfigSpec, T = never> {
  /** CLI name, kebab-case. */
  name: string;
  /** One line saying what it reproduces. */
  description: string;
  /** The published finding in plain words, at most 12 (README's table and the experiment's page). */
  finding?: string;
  /** Bibliography key (lib/core/papers.ts) and the document's own section/table its method and targets come from. */
  source: string;
  /** Its config parameters with their defaults. */
  config: S;
  /**
   * Config overrides per preset. `long` (at most 3 hours on 2 cores) exists
   * where quick cannot show a finding: it gives that finding's models a
   * longer budget, and its `presetLimits` say what its measured run showed.
   */
  presets: Record<Exclude<PresetName, "long">, ConfigOverrides<S>> & { long?: ConfigOverrides<S> };
  /**
   * What a preset cannot show of the source's findings, and why (budget,
   * data): shown by `--help`, recorded in the run's summary and under the
   * scorecard, so that a "not reproduced" row comes with its reason.
   */
  presetLimits?: Partial<Record<PresetName, string>>;
  /** Published numbers a run is compared with. */
  targets: Target<ConfigOf<S>>[];
  /** Qualitative findings a run is judged on. */
  claims: Claim<ConfigOf<S>>[];
  /**
   * Checks that span several keys (a part larger than the whole it is drawn
   * from): throws UsageError naming the keys and what is allowed. Called with
   * the resolved config before the run directory exists.
   */
  validate?(cfg: ConfigOf<S>): void;
  /** Runs the experiment with the resolved config, writing through `ctx`. */
  run(ctx: RunContext, cfg: ConfigOf<S>): Promise<RunResult>;
  /**
   * A trained model of a completed run (for `eval --run` and `export-codes`),
   * for experiments that keep theirs: `model` names one of a run that keeps
   * several (models/<name>/). Throws UsageError naming what the run lacks or
   * which models it has.
   */
  load?(runDir: string, model?: string): T;
}

/** Any experiment, for registries. */
// deno-lint-ignore no-explicit-any
export type AnyExperiment<T = unknown> = Experiment<any, T>;

/** Identity function that type-checks an experiment definition. */
export function defineExperiment<S extends ConfigSpec, T = never>(experiment: Experiment<S, T>): Experiment<S, T> {
  return experiment;
}

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Default run store root: `data/runs` of the project, or `$LATENTLAB_RUNS`. */
export function defaultRunsRoot(): string {
  return Deno.env.get("LATENTLAB_RUNS") ?? join(PROJECT_ROOT, "data", "runs");
}

/** Options every experiment accepts besides its config keys; those without a spec take a path. */
const RUN_OPTIONS: Record<string, { doc: string; param?: ParamSpec }> = {
  preset: {
    doc: "smoke (seconds), quick (minutes), long (at most 3 hours, where defined), paper (the published setting)",
    param: choice("quick", PRESETS, ""),
  },
  seed: { doc: "seed of every random draw", param: integer(0, "", { min: 0, max: 2 ** 31 - 1 }) },
  backend: { doc: "TF.js backend; auto = webgpu on a real GPU, else wasm", param: choice("auto", BACKEND_CHOICES, "") },
  resume: { doc: "continue this run directory from its last checkpoint" },
  runs: { doc: "run store root (default data/runs, or $LATENTLAB_RUNS)" },
};
const RUN_OPTION_KEYS = [...Object.keys(RUN_OPTIONS), "help"];

/** The presets an experiment defines, in PRESETS order. */
export function presetsOf(experiment: AnyExperiment): PresetName[] {
  return PRESETS.filter((p) => experiment.presets[p] !== undefined);
}

/** The `--help` text of an experiment. */
export function experimentHelp(experiment: AnyExperiment): string {
  const lines = [
    `${experiment.name}: ${experiment.description}`,
    `source: ${experiment.source}`,
    "",
    `usage: deno task run ${experiment.name} [--preset ${
      presetsOf(experiment).join("|")
    }] [--seed N] [--backend auto|webgpu|wasm|cpu] [--key value ...]`,
    `       deno task run ${experiment.name} --resume <run dir>`,
    "",
    "run options:",
    ...Object.entries(RUN_OPTIONS).map(([key, { doc }]) => `  --${key.padEnd(18)} ${doc}`),
    "",
    ...PRESETS.flatMap((p) => experiment.presetLimits?.[p] ? [`preset ${p}: ${experiment.presetLimits[p]}`, ""] : []),
    `config (default; presets ${presetsOf(experiment).join(" / ")}):`,
  ];
  for (const [key, param] of Object.entries(experiment.config as ConfigSpec)) {
    const presetValues = presetsOf(experiment).map((p) => {
      const v = (experiment.presets[p] as Record<string, unknown>)[key];
      return v === undefined ? "·" : JSON.stringify(v);
    }).join(" / ");
    lines.push(`  --${key.padEnd(18)} ${param.doc}`);
    lines.push(
      `    ${"".padEnd(18)} ${describeAllowed(param)}; default ${JSON.stringify(param.default)}; ${presetValues}`,
    );
  }
  return lines.join("\n");
}

function claimVerdict<C>(claim: Claim<C>, metrics: Record<string, number>, cfg: C): Verdict {
  const holds = claim.holds(metrics, cfg);
  return holds === undefined ? "not measured" : holds ? "reproduced" : "not reproduced";
}

/** The commit the project's checkout is at, or null outside a git checkout. */
export async function gitCommit(): Promise<string | null> {
  try {
    const out = await new Deno.Command("git", { args: ["rev-parse", "HEAD"], cwd: PROJECT_ROOT, stderr: "null" })
      .output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/** A validated request to run an experiment: its config, preset, seed, backend and where results go. */
export interface Invocation<S extends ConfigSpec> {
  /** The resolved config: preset values with the command line's overrides. */
  cfg: ConfigOf<S>;
  /** The preset the config started from. */
  preset: PresetName;
  /** The run's seed. */
  seed: number;
  /** The requested backend preference. */
  backend: BackendChoice;
  /** Run store root of a new run (unused on resume). */
  root: string;
  /** The run directory to continue from its last checkpoint, or null for a new run. */
  resumeDir: string | null;
  /** The command line, recorded in run.json. */
  argv: string[];
}

/** Validates a command line against an experiment; throws UsageError before any work. */
export function parseInvocation<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  args: string[],
): Invocation<S> | "help" {
  const { positionals, flags } = parseCommandLine(args);
  if (flags.has("help")) return "help";
  if (positionals.length > 0) {
    throw new UsageError(`unexpected argument "${positionals[0]}"; options are written --key value`);
  }
  const { run, configFlags } = splitFlags(experiment, flags);
  const backend = (run.backend as BackendChoice | undefined) ?? "auto";
  const resumeDir = (run.resume as string | undefined) ?? null;
  if (resumeDir !== null) {
    const given = [...flags.keys()].filter((k) => !["resume", "backend", "runs"].includes(k));
    if (given.length > 0) {
      throw new UsageError(`--resume continues with the run's own config; drop --${given.join(", --")}`);
    }
    return { ...resumeStart(experiment, resumeDir), backend, root: "", resumeDir, argv: args };
  }
  const { cfg, preset } = startingConfig(experiment, run, configFlags);
  const root = (run.runs as string | undefined) ?? defaultRunsRoot();
  const from = run.runs !== undefined
    ? "--runs"
    : Deno.env.get("LATENTLAB_RUNS") !== undefined
    ? "$LATENTLAB_RUNS"
    : "the run store";
  checkRunsRoot(root, { what: from });
  return { cfg, preset, seed: (run.seed as number | undefined) ?? 0, backend, root, resumeDir: null, argv: args };
}

/** Parsed flags as run options (coerced) and config flags; throws UsageError on an unknown key. */
function splitFlags(
  experiment: AnyExperiment,
  flags: ReadonlyMap<string, string | true>,
): { run: Record<string, unknown>; configFlags: Map<string, string | true> } {
  const run: Record<string, unknown> = {};
  const configFlags = new Map<string, string | true>();
  for (const [key, raw] of flags) {
    if (Object.hasOwn(RUN_OPTIONS, key)) {
      const param = RUN_OPTIONS[key].param;
      if (param) run[key] = coerceValue(key, param, raw);
      else if (typeof raw === "string") run[key] = raw;
      else throw new UsageError(`--${key} needs a path`);
    } else if (Object.hasOwn(experiment.config, key)) {
      configFlags.set(key, raw);
    } else {
      throw unknownKeyError(key, [...RUN_OPTION_KEYS, ...Object.keys(experiment.config)]);
    }
  }
  return { run, configFlags };
}

/** The preset and resolved config a new run starts with; throws UsageError on a bad preset or value. */
function startingConfig<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  run: Record<string, unknown>,
  configFlags: ReadonlyMap<string, string | true>,
): { cfg: ConfigOf<S>; preset: PresetName } {
  const preset = (run.preset as PresetName | undefined) ?? "quick";
  const overrides = experiment.presets[preset];
  if (overrides === undefined) {
    throw new UsageError(
      `--preset ${preset}: ${experiment.name} has no ${preset} preset; allowed: ${
        presetsOf(experiment as AnyExperiment).join(", ")
      }`,
    );
  }
  const cfg = resolveConfig(experiment.config, overrides, configFlags, RUN_OPTION_KEYS);
  experiment.validate?.(cfg);
  return { cfg, preset };
}

/** A value as comparable text (arrays and numbers as JSON writes them). */
const asText = (value: unknown) => JSON.stringify(value);

/**
 * The config, preset and seed a run continues with: those its run.json's argv
 * started it with (its preset, its flags), after checking run.json's fields
 * against them and config.json against the config they give. Throws a
 * one-line UsageError naming the file, the field or key and both values.
 */
function resumeStart<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  dir: string,
): { cfg: ConfigOf<S>; preset: PresetName; seed: number } {
  const runJson = join(dir, "run.json");
  let text;
  try {
    text = readSmallFile(runJson);
  } catch {
    throw new UsageError(`--resume ${dir}: not a run directory (no readable run.json)`);
  }
  let info;
  try {
    info = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${runJson} does not parse as JSON (${(error as Error).message})`);
  }
  if (!isObject(info)) throw new UsageError(`${runJson} is not a JSON object`);
  const field = (name: string, ok: (value: unknown) => boolean, allowed: string) => {
    if (!ok(info[name])) {
      throw new UsageError(`${runJson}: field "${name}" is ${asText(info[name])}; it must be ${allowed}`);
    }
  };
  field("experiment", isString, "a string");
  if (info.experiment !== experiment.name) {
    throw new UsageError(`--resume ${dir}: that run belongs to ${info.experiment}, not ${experiment.name}`);
  }
  field("status", isString, "a string");
  if (info.status === "completed") throw new UsageError(`--resume ${dir}: that run already completed`);
  field("argv", (v) => Array.isArray(v) && v.every(isString), "a list of strings");
  field("preset", (v) => (PRESETS as readonly unknown[]).includes(v), `one of ${PRESETS.join(", ")}`);
  field("seed", (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 31, "an integer ≥ 0");
  const writer = liveWriter(dir);
  if (writer) {
    throw new UsageError(
      `--resume ${dir}: process ${writer.pid} on ${writer.host} is still writing that run; a run has one ` +
        `writer: stop it (Ctrl-C, or kill ${writer.pid}) or wait for it to end`,
    );
  }
  const argv = info.argv as string[];
  let started;
  try {
    const { positionals, flags } = parseCommandLine(argv);
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const { run, configFlags } = splitFlags(experiment, flags);
    if (run.resume !== undefined || flags.has("help")) throw new UsageError("it does not start a run");
    started = { ...startingConfig(experiment, run, configFlags), seed: (run.seed as number | undefined) ?? 0 };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    throw new UsageError(`${runJson}: field "argv" (${argv.join(" ")}): ${error.message}`);
  }
  for (const name of ["preset", "seed"] as const) {
    if (info[name] !== started[name]) {
      throw new UsageError(
        `${runJson}: field "${name}" is ${asText(info[name])}, but its argv started the run with ${
          asText(started[name])
        }`,
      );
    }
  }
  checkSavedConfig(experiment, join(dir, "config.json"), started.cfg, started.preset);
  return started;
}

/**
 * Throws a one-line UsageError unless config.json holds `cfg`, the config the
 * run was started with: it parses, has only the experiment's keys, and each
 * value (a missing one is its default) equals the started one.
 */
function checkSavedConfig<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  path: string,
  cfg: ConfigOf<S>,
  preset: PresetName,
): void {
  let saved;
  try {
    saved = JSON.parse(readSmallFile(path));
  } catch (error) {
    throw new UsageError(`${path} cannot be read as JSON (${(error as Error).message})`);
  }
  if (!isObject(saved)) throw new UsageError(`${path} is not a JSON object of config keys`);
  const spec: ConfigSpec = experiment.config;
  // Own keys only: a "__proto__" key of JSON.parse is one, and never a config key.
  const unknown = Object.keys(saved).find((key) => !Object.hasOwn(spec, key));
  if (unknown !== undefined) {
    throw new UsageError(`${path}: ${asText(unknown)} is not a config key of ${experiment.name}`);
  }
  const started = cfg as Record<string, unknown>;
  for (const [key, param] of Object.entries(spec)) {
    let value;
    try {
      value = coerceValue(key, param, Object.hasOwn(saved, key) ? saved[key] : param.default);
    } catch (error) {
      throw new UsageError(`${path}: ${(error as Error).message}`);
    }
    if (asText(value) !== asText(started[key])) {
      throw new UsageError(
        `${path}: ${key} is ${asText(value)}, but the run was started with ${asText(started[key])} ` +
          `(run.json's argv and preset ${preset})`,
      );
    }
  }
}

/** Arrays with every tensor read into its data, as the run store writes them. */
export async function tensorArrays(
  arrays: CheckpointArrays,
): Promise<Record<string, { data: Float32Array | Int32Array; shape: number[] }>> {
  const out: Record<string, { data: Float32Array | Int32Array; shape: number[] }> = {};
  for (const [key, value] of Object.entries(arrays)) {
    out[key] = value instanceof tf.Tensor
      ? { data: (await value.data()) as Float32Array | Int32Array, shape: value.shape }
      : value;
  }
  return out;
}

/** What a caller may observe of a run while it runs. */
export interface RunHooks {
  /**
   * Called once the run directory exists, with a function that marks the run
   * interrupted and stops it at its next step (it then rejects with
   * {@linkcode RunInterrupted}).
   */
  started?(run: { dir: string; interrupt(reason: string): void }): void;
  /**
   * Whether the run owns its process (the command line): then a guard
   * thread keeps its heartbeat while the main thread is busy and lets
   * SIGINT/SIGTERM stop it inside long synchronous work (scoring, metric
   * fits). A run in a process that goes on (tests) beats from the main
   * thread's timer and is stopped through `interrupt`.
   */
  watchSignals?: boolean;
  /** Called after each checkpoint is written, with its step (tests interrupt a run there). */
  checkpointed?(step: number): void;
  /** Progress lines (default: stderr). */
  report?(line: string): void;
}

/**
 * Runs an experiment in this process: selects the backend, writes the run
 * directory (or continues `invocation.resumeDir`), calls the experiment and
 * writes summary.json. Returns the run directory and the summary; a run
 * that throws is marked failed and the error is rethrown.
 */
export async function runExperiment<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  invocation: Invocation<S>,
  hooks: RunHooks = {},
): Promise<{ dir: string; summary: RunSummary }> {
  const report = hooks.report ?? ((line: string) => console.error(line));
  const backend = await selectBackend(invocation.backend);
  const { cfg, preset, seed, resumeDir } = invocation;
  const resumed = resumeDir ? loadLatestCheckpoint(resumeDir, cfg) : null;
  const checkpoints = resumeDir ? join(resumeDir, "checkpoints") : "";
  for (const skipped of resumed?.skipped ?? []) {
    report(`checkpoint passed over, damaged: ${join(checkpoints, skipped)}`);
  }
  if (resumed?.checked === false) {
    report(`checkpoint ${join(checkpoints, checkpointName(resumed.step))} has no content hashes (written before them)`);
  }
  const writer = resumeDir
    ? RunWriter.reopen(resumeDir, resumed?.step ?? 0, backend, resumed?.skipped, cfg as Record<string, unknown>)
    : RunWriter.create({
      root: invocation.root,
      experiment: experiment.name,
      argv: invocation.argv,
      seed,
      preset,
      backend,
      config: cfg as Record<string, unknown>,
      versions: { deno: Deno.version.deno, tfjs: tf.version.tfjs },
      gitCommit: await gitCommit(),
    });
  const stop = new AbortController();
  // The heartbeat and the signals, also while the main thread is busy; stopPoint() reads what it sets.
  clearRequestedStop();
  const guard = hooks.watchSignals ? await startRunGuard(runLockPath(writer.dir), { signals: true }) : null;
  let ended = false, diskFull = false;
  hooks.started?.({
    dir: writer.dir,
    interrupt: (reason) => {
      if (ended) return;
      // The lock stays until the run has stopped writing (at its next step or stop point).
      writer.finish("interrupted", reason, { keepLock: true });
      requestStop();
      stop.abort(new RunInterrupted(reason));
    },
  });
  const ctx: RunContext = {
    rng: new Rng(seed),
    seed,
    preset,
    backend,
    dir: writer.dir,
    resumed,
    log: (step, values) => writer.log(step, values),
    image: (name, step, image) => void writer.image(name, step, image),
    progress: (label, total) => new Progress(label, total),
    checkpoint: async (step, arrays, state) => {
      stop.signal.throwIfAborted();
      writer.saveCheckpoint(step, await tensorArrays(arrays), state);
      hooks.checkpointed?.(step);
    },
    saveModel: async (name, arrays, info) => writer.saveModel(name, await tensorArrays(arrays), info),
    stopRequested: stop.signal,
  };
  report(`${experiment.name} (${preset}, seed ${seed}, backend ${backend.name}) → ${writer.dir}`);
  const variablesBefore = new Set(Object.keys(tf.engine().state.registeredVariables));
  // Tensors a stopped or failed run leaves (a step's intermediates, its data) are freed when the scope ends.
  tf.engine().startScope("run");
  try {
    const result = await experiment.run(ctx, cfg);
    const logged = new MetricsReader();
    logged.update(join(writer.dir, "metrics.jsonl"));
    const summary: RunSummary = {
      experiment: experiment.name,
      description: experiment.description,
      source: experiment.source,
      run_id: writer.info.id,
      preset,
      seed,
      backend: backend.name,
      wall_time_s: Number(writer.elapsedSeconds().toFixed(2)),
      metrics: result.metrics,
      targets: experiment.targets.filter((t) => t.appliesTo?.(cfg) ?? true).map((t) => {
        const curve = targetCurve(logged.series, typeof t.curve === "function" ? t.curve(cfg) : t.curve ?? t.metric);
        return {
          metric: t.metric,
          paper: t.paper,
          source: t.source,
          tolerance: t.tolerance,
          direction: t.direction,
          kind: t.kind,
          nulls: t.nulls,
          tolerance_source: t.toleranceSource,
          ours: result.metrics[t.metric] ?? null,
          verdict: targetVerdict(t, result.metrics[t.metric], curve),
          curve,
        };
      }),
      claims: experiment.claims.map((c) => ({
        text: c.text,
        source: c.source,
        verdict: claimVerdict(c, result.metrics, cfg),
      })),
      details: result.details ?? null,
      preset_limits: experiment.presetLimits?.[preset] ?? null,
    };
    writer.writeSummary(summary);
    writer.finish("completed");
    report(`done in ${summary.wall_time_s}s; summary: ${join(writer.dir, "summary.json")}`);
    return { dir: writer.dir, summary };
  } catch (error) {
    // A process that goes on after a stopped or failed run (tests, sweeps) keeps none of its weights.
    for (const [name, variable] of Object.entries(tf.engine().state.registeredVariables)) {
      if (!variablesBefore.has(name)) variable.dispose();
    }
    if (stop.signal.aborted) throw stop.signal.reason;
    // A stop point saw a signal before this thread's own listener ran.
    try {
      if (error instanceof RunInterrupted) writer.finish("interrupted", error.message, { keepLock: true });
      else {writer.finish(
          "failed",
          userFacingError(error) ?? (error instanceof Error ? error.stack ?? error.message : String(error)),
        );}
    } catch (finishing) {
      if (!isDiskFull(finishing)) throw finishing;
      // run.json keeps its last whole state ("running"); the lock, kept, names a dead writer once this process ends,
      // so that readers call the run crashed and --resume takes it over.
      diskFull = true;
    }
    throw error;
  } finally {
    ended = true;
    guard?.stop();
    clearRequestedStop();
    tf.engine().endScope();
    if (!diskFull) writer.releaseLock();
  }
}

/** Exit code of a command line that was wrong (what was wrong is printed first). */
export const USAGE_EXIT_CODE = 2;

/**
 * Runs an experiment from command-line arguments: parses and validates them
 * (exit code 2 on bad input, before anything is written), runs it in
 * process. SIGINT/SIGTERM mark it interrupted at once and stop it at its
 * next training step, with exit code 130/143. Returns the run directory (""
 * after `--help`, a usage error or an interruption).
 */
export async function runFromCli<S extends ConfigSpec>(
  experiment: Experiment<S, unknown>,
  args: string[],
): Promise<string> {
  const listeners: [Deno.Signal, () => void][] = [];
  let exitCode = 0;
  try {
    const invocation = parseInvocation(experiment, args);
    if (invocation === "help") {
      console.log(experimentHelp(experiment));
      return "";
    }
    const { dir } = await runExperiment(experiment, invocation, {
      watchSignals: true,
      started: ({ dir, interrupt }) => {
        for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
          const listener = () => {
            interrupt(`received ${signal}`);
            console.error(`\n${signal}: run marked interrupted; continue with --resume ${dir}`);
            exitCode = code;
          };
          Deno.addSignalListener(signal, listener);
          listeners.push([signal, listener]);
        }
      },
    });
    // The run's verdicts as the scorecard shows them: each target beside its published number, then the claims.
    const summary = readSummary(dir);
    if (summary) console.log(`\n${summaryMarkdown(summary)}\n`);
    // Then the run's own tables (e.g. every setting beside the paper's), where it writes them.
    const tables = summary ? resultTablesMarkdown(summary.details) : "";
    if (tables) console.log(`${tables}\n`);
    return dir;
  } catch (error) {
    if (error instanceof RunInterrupted) {
      Deno.exitCode = exitCode || signalExitCode();
      return "";
    }
    // A bad command line, or a backend that cannot start: runExperiment selects the backend before it writes.
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}`);
    Deno.exitCode = USAGE_EXIT_CODE;
    return "";
  } finally {
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  }
}
