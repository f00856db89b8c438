/**
 * Sweep specs: expansion order, task keys (stable across processes, changed
 * by any resolved value), the arguments that run a task, module
 * experiments, and every bad input the sweep command refuses with exit
 * code 2 before anything is written.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { main } from "../../main.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { choice, flag, integer, integers, real } from "../../lib/core/config.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { defineExperiment, parseInvocation, USAGE_EXIT_CODE } from "../../lib/core/experiment.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import {
  defineSweep,
  expandSweep,
  loadSweepSpec,
  MAX_TASKS,
  repeatedJsonKey,
  sweepId,
  taskKey,
} from "../../lib/sweep/spec.ts";
import { planSweep, writeSweep } from "../../lib/sweep/store.ts";
import { projectPath } from "../experiments/cli.ts";
import { listing } from "../tree.ts";

const toy = defineExperiment({
  name: "toy",
  description: "a config to expand",
  source: "tests",
  config: {
    a: integer(1, "a", { min: 0, max: 100 }),
    b: real(0.5, "b", { min: 0, max: 1 }),
    mode: choice("x", ["x", "y"], "mode"),
    list: integers([1, 2], "list", { min: 0, max: 9 }),
    on: flag(false, "on"),
  },
  presets: { smoke: { a: 2 }, quick: {}, paper: {} },
  targets: [],
  claims: [],
  run: () => Promise.resolve({ metrics: {} }),
});

Deno.test("a 2 × 3 grid and 1 include × 2 seeds expand to 14 tasks: grid (last key fastest), include, seed fastest", () => {
  const tasks = expandSweep(
    defineSweep({
      experiment: "toy",
      preset: "smoke",
      base: { mode: "y" },
      grid: { a: [3, 4], b: [0.1, 0.2, 0.3] },
      include: [{ a: 9, list: [7] }],
      seeds: [0, 5],
    }),
    toy,
  );
  assertEquals(tasks.length, 14);
  assertEquals(tasks.map((t) => t.index), [...Array(14).keys()]);
  const points = tasks.map((t) => [t.config.a, t.config.b, t.seed]);
  assertEquals(points, [
    [3, 0.1, 0],
    [3, 0.1, 5],
    [3, 0.2, 0],
    [3, 0.2, 5],
    [3, 0.3, 0],
    [3, 0.3, 5],
    [4, 0.1, 0],
    [4, 0.1, 5],
    [4, 0.2, 0],
    [4, 0.2, 5],
    [4, 0.3, 0],
    [4, 0.3, 5],
    [9, 0.5, 0],
    [9, 0.5, 5],
  ]);
  assert(tasks.every((t) => t.config.mode === "y"), "base applies to every task");
  assertEquals(tasks[12].config.list, [7]);
  assertEquals(new Set(tasks.map((t) => t.key)).size, 14);
  assert(tasks.every((t) => /^[0-9a-f]{12}$/.test(t.key)));
  // Only values that differ from the preset's become flags; the preset's a = 2 is not one of them.
  assertEquals(tasks[0].args, ["toy", "--preset", "smoke", "--seed", "0", "--a", "3", "--b", "0.1", "--mode", "y"]);
  assertEquals(tasks[13].args, [
    "toy",
    "--preset",
    "smoke",
    "--seed",
    "5",
    "--a",
    "9",
    "--mode",
    "y",
    "--list",
    "7",
  ]);
  // An empty grid is one point, the base.
  assertEquals(expandSweep({ experiment: "toy", preset: "smoke", seeds: 3 }, toy).map((t) => t.seed), [0, 1, 2]);
});

Deno.test("a task's arguments resolve, as run resolves them, to the task's config and seed", () => {
  const experiment = findExperiment("ica-toy")!;
  const tasks = expandSweep({
    experiment: "ica-toy",
    preset: "smoke",
    backend: "wasm",
    base: { lr: 1e-4, whiten: true },
    grid: { layers: [[1], [2, 3]], samples: [2_000] },
    seeds: 2,
  }, experiment);
  for (const task of tasks) {
    assertEquals(task.args.slice(0, 7), [
      "ica-toy",
      "--preset",
      "smoke",
      "--seed",
      String(task.seed),
      "--backend",
      "wasm",
    ]);
    const invocation = parseInvocation(experiment, task.args.slice(1));
    if (invocation === "help") throw new Error("help");
    assertEquals(invocation.cfg, task.config);
    assertEquals(invocation.seed, task.seed);
    assertEquals(invocation.backend, "wasm");
  }
  assertEquals(tasks[2].args.slice(7), ["--layers", "2,3", "--samples", "2000", "--whiten", "true", "--lr", "0.0001"]);
});

Deno.test("task keys: the same in another process, changed by any resolved value, seed, preset, backend, experiment", async () => {
  const experiment = findExperiment("ica-toy")!;
  const spec = await loadSweepSpec(projectPath("sweeps/ica_toy_smoke.json"));
  const keys = expandSweep(spec, experiment).map((t) => t.key);
  assertEquals(keys.length, 6);
  const script = `
    import { findExperiment } from ${JSON.stringify(pathToFileURL(projectPath("experiments/mod.ts")).href)};
    import { expandSweep, loadSweepSpec } from ${JSON.stringify(pathToFileURL(projectPath("lib/sweep/spec.ts")).href)};
    const spec = await loadSweepSpec(${JSON.stringify(projectPath("sweeps/ica_toy_smoke.json"))});
    console.log(JSON.stringify(expandSweep(spec, findExperiment("ica-toy")).map((t) => t.key)));`;
  const out = await new Deno.Command(Deno.execPath(), { args: ["eval", script], cwd: projectPath(""), stdout: "piped" })
    .output();
  assert(out.success);
  assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)), keys);
  assertEquals(
    sweepId(spec, "ica-toy", expandSweep(spec, experiment)),
    sweepId(spec, "ica-toy", expandSweep(spec, experiment)),
  );
  assert(/^ica-toy-[0-9a-f]{8}$/.test(sweepId(spec, "ica-toy", expandSweep(spec, experiment))));

  // Every config key, changed to another allowed value, changes the key; so do seed, preset, backend, experiment.
  const [task] = expandSweep({ experiment: "ica-toy", preset: "smoke" }, experiment);
  const setting = { experiment: "ica-toy", preset: "smoke", config: task.config, seed: 0, backend: "auto" };
  assertEquals(taskKey(setting), task.key);
  const other = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.slice(0, 1)
      : typeof value === "number"
      ? value + 1
      : typeof value === "boolean"
      ? !value
      : `${value}-other`;
  const seen = new Set([task.key]);
  for (const key of Object.keys(task.config)) {
    const changed = taskKey({ ...setting, config: { ...task.config, [key]: other(task.config[key]) } });
    assert(!seen.has(changed), `changing ${key} leaves the key`);
    seen.add(changed);
  }
  for (const change of [{ seed: 1 }, { preset: "quick" }, { backend: "wasm" }, { experiment: "/x/ica_toy.ts" }]) {
    const changed = taskKey({ ...setting, ...change });
    assert(!seen.has(changed), `changing ${JSON.stringify(change)} leaves the key`);
    seen.add(changed);
  }
  // The order of keys in the spec does not matter; the values do.
  assertEquals(
    expandSweep({ experiment: "toy", base: { a: 3, b: 0.2 } }, toy)[0].key,
    expandSweep({ experiment: "toy", base: { b: 0.2, a: 3 } }, toy)[0].key,
  );
  assertNotEquals(
    expandSweep({ experiment: "toy", base: { b: 0.2 } }, toy)[0].key,
    expandSweep({ experiment: "toy", base: { b: 0.25 } }, toy)[0].key,
  );
});

const temp = Deno.makeTempDirSync({ prefix: "latentlab-sweep-spec-" });
const runs = join(temp, "runs");
Deno.mkdirSync(runs);
globalThis.addEventListener("unload", () => Deno.removeSync(temp, { recursive: true }));

/** A module experiment in a folder outside the project, importing the project by absolute URL. */
const moduleExperiment = join(temp, "tiny_experiment.ts");
Deno.writeTextFileSync(
  moduleExperiment,
  `import { defineExperiment } from ${JSON.stringify(pathToFileURL(projectPath("lib/core/experiment.ts")).href)};
import { integer } from ${JSON.stringify(pathToFileURL(projectPath("lib/core/config.ts")).href)};
export const experiment = defineExperiment({
  name: "tiny-module",
  description: "a module experiment",
  source: "tests/sweep/spec_test.ts",
  config: { n: integer(1, "n", { min: 1, max: 10 }) },
  presets: { smoke: {}, quick: {}, paper: {} },
  targets: [],
  claims: [],
  run(ctx, cfg) {
    ctx.log(0, { n: cfg.n });
    return Promise.resolve({ metrics: { n: cfg.n } });
  },
});
`,
);

Deno.test("run and sweep take a module path exporting experiment; its key uses the absolute path", async () => {
  const root = join(temp, "module-runs");
  Deno.mkdirSync(root);
  const { error } = console;
  console.error = () => {};
  try {
    await main(["run", moduleExperiment, "--preset", "smoke", "--n", "3", "--backend", "wasm", "--runs", root]);
  } finally {
    console.error = error;
  }
  const [run] = listRuns(root);
  assertEquals([run.info.experiment, run.status], ["tiny-module", "completed"]);
  assertEquals(readRunInfo(run.dir).sweep, undefined);
  const specPath = join(temp, "module_sweep.json");
  Deno.writeTextFileSync(
    specPath,
    JSON.stringify({ experiment: "./tiny_experiment.ts", preset: "smoke", grid: { n: [1, 2] } }),
  );
  const spec = await loadSweepSpec(specPath);
  assertEquals(spec.experiment, moduleExperiment);
  const tasks = expandSweep(spec, (await import(pathToFileURL(moduleExperiment).href)).experiment);
  assertEquals(tasks[1].args, [moduleExperiment, "--preset", "smoke", "--seed", "0", "--n", "2"]);
});

Deno.test("sweep --dry-run lists the tasks and writes nothing", async () => {
  const printed: string[] = [];
  const { log, error } = console;
  console.log = (line: string) => void printed.push(line);
  console.error = () => {};
  try {
    await main(["sweep", projectPath("sweeps/vae_dsprites_beta.json"), "--dry-run", "--runs", runs]);
  } finally {
    console.log = log;
    console.error = error;
  }
  const lines = printed.join("\n").split("\n");
  assert(/^sweep vae-dsprites-[0-9a-f]{8}: 9 tasks \(dry run/.test(lines[0]), lines[0]);
  assertEquals(lines.length, 10);
  assert(lines[9].includes("value=8 seed=2: run vae-dsprites --preset quick --seed 2 --value 8"), lines[9]);
  assertEquals([...Deno.readDirSync(runs)], []);
});

let specs = 0;
/** A spec file with `text` (an object is written as JSON). */
function specFile(content: unknown, extension = ".json"): string {
  const path = join(temp, `spec-${specs++}${extension}`);
  Deno.writeTextFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

const ica = (extra: Record<string, unknown>) => ({ experiment: "ica-toy", preset: "smoke", ...extra });

Deno.test("a key given twice in one object is found with the keys around it; one key in two objects is not", () => {
  assertEquals(repeatedJsonKey('{"a": {"x": 1}, "b": [{"x": 2}, {"x": 3}], "c": "x", "d": ["x", "x"]}'), null);
  assertEquals(repeatedJsonKey('{"grid": {"dim": [4], "lr": [1], "dim": [6]}}'), { path: "grid.dim", position: 33 });
  assertEquals(repeatedJsonKey('{"include": [{"dim": 4}, {"lr": 1, "lr" : 2}]}')?.path, "include.lr");
  assertEquals(repeatedJsonKey('{"a\\"b": 1, "a\\"b": 2}')?.path, 'a"b');
});

Deno.test("every bad sweep input is refused with exit code 2, the problem named, nothing written", async () => {
  // A sweep that exists, for --name of a sweep of another experiment or preset.
  const taken = ica({ name: "taken", grid: { dim: [4, 6] } });
  const takenSpec = await loadSweepSpec(specFile(taken));
  const takenTasks = expandSweep(takenSpec, findExperiment("ica-toy")!);
  const { sweep } = planSweep({
    id: "taken",
    spec: takenSpec,
    tasks: takenTasks,
    experimentName: "ica-toy",
    runsRoot: runs,
    executor: "local",
  });
  await writeSweep(sweep);

  const tooMany = {
    dim: Array.from({ length: 199 }, (_, i) => i + 2),
    steps: Array.from({ length: 600 }, (_, i) => i + 1),
  };
  const rows: [args: string[], message: string, env?: Record<string, string>][] = [
    [[specFile('{\n  "experiment": "ica-toy",\n  "grid": { dim: [4] }\n}')], ":3:13: invalid JSON"],
    [[specFile('{ "experiment": "ica-toy", }')], ":1:28: invalid JSON"],
    [[specFile('{ "experiment": "ica-toy"')], ":1:26: invalid JSON"],
    [
      [specFile('{\n  "experiment": "ica-toy",\n  "slurm": { "mem_gb": 1, "mem_gb": 4 }\n}')],
      ':3:27: key "slurm.mem_gb" is given twice; give each key once (JSON keeps only the last)',
    ],
    [[specFile('{ "experiment": "ica-toy", "seeds": 2, "seeds": 3 }')], ':1:40: key "seeds" is given twice'],
    [[join(temp, "missing.json")], "missing.json: cannot be read (no such file)"],
    [[temp + "/"], "a spec is a .json file or a .ts module"],
    [[specFile("export const notSweep = {};", ".ts")], "exports no sweep"],
    [[specFile(ica({ grd: { dim: [4] } }))], 'unknown key "grd"; did you mean "grid"? Valid keys: experiment, preset'],
    [[specFile(ica({ slurm: { partitoin: "gpu" } }))], 'slurm: unknown key "partitoin"; did you mean "partition"?'],
    [[specFile(ica({ slurm: { timeout_min: 0 } }))], "timeout_min must be an integer ≥ 1"],
    [[specFile(ica({ experiment: "ica-tyo" }))], 'unknown experiment "ica-tyo"; did you mean ica-toy?'],
    [[specFile(ica({ experiment: "./nowhere.ts" }))], "nowhere.ts: no such file"],
    [[specFile(ica({ preset: "huge" }))], 'preset "huge": must be one of smoke, quick, long, paper'],
    [[specFile(ica({ preset: "long" }))], "ica-toy has no long preset"],
    [[specFile(ica({ base: { dimm: 4 } }))], "base: unknown option --dimm; did you mean --dim?"],
    [[specFile(ica({ grid: { stepz: [1] } }))], "grid: unknown option --stepz; did you mean --steps?"],
    [[specFile(ica({ include: [{ dim: 4 }, { lrr: 1 }] }))], "include[1]: unknown option --lrr; did you mean --lr?"],
    [[specFile(ica({ grid: { seed: [0, 1] } }))], "grid: seed cannot be set per task"],
    [[specFile(ica({ base: { preset: "quick" } }))], "base: preset cannot be set per task"],
    [[specFile(ica({ include: [{ backend: "cpu" }] }))], "include[0]: backend cannot be set per task"],
    [[specFile(ica({ base: { resume: "x" } }))], "base: resume cannot be set per task"],
    [[specFile(ica({ grid: { runs: ["x"] } }))], "grid: runs cannot be set per task"],
    [[specFile(ica({ grid: { dim: [4, 1] }, seeds: 2 }))], "task 2 (dim = 1): --dim 1: out of range"],
    [
      [specFile(ica({ grid: { layers: [[1], [1, 1]] } }))],
      "task 1 (layers = [1,1]): --layers 1,1: 1 is given more than once",
    ],
    [[specFile(ica({ grid: { whiten: ["yes"] } }))], 'task 0 (whiten = "yes"): --whiten yes: wrong type'],
    [[specFile(ica({ grid: { dim: [] } }))], "grid.dim is an empty list"],
    [[specFile(ica({ grid: { dim: 4 } }))], "grid.dim must be a list of values"],
    [[specFile(ica({ seeds: 0 }))], "seeds 0: a count of seeds must be an integer ≥ 1"],
    [[specFile(ica({ seeds: -2 }))], "seeds -2: a count of seeds must be an integer ≥ 1"],
    [[specFile(ica({ seeds: [] }))], "seeds must be a count"],
    [[specFile(ica({ seeds: [0, 3, 0] }))], "seed 0 is given more than once"],
    [[specFile(ica({ seeds: [-1] }))], "seed -1: seeds are integers ≥ 0"],
    [[specFile(ica({ grid: { dim: [4, 6] }, include: [{ dim: 6 }], seeds: 2 }))], "tasks 2 and 4 are one setting"],
    [[specFile(ica({ grid: tooMany }))], `the sweep has 119,400 tasks; at most ${MAX_TASKS.toLocaleString("en-US")}`],
    [[specFile(ica({ backend: "tpu" }))], 'backend "tpu": must be one of auto, webgpu, wasm, cpu'],
    [[specFile(ica({ metric: { name: "mcc", goal: "up" } }))], "metric must be"],
    [[specFile(ica({ name: "../escape" }))], "a sweep name is 1–100 letters"],
    [[specFile(ica({})), "--executor", "slurm"], "sbatch is not on PATH", { PATH: "" }],
    [[specFile(ica({})), "--executor", "pbs"], "--executor pbs: not allowed"],
    [[specFile(ica({})), "--workers", "0"], "--workers 0: out of range"],
    [[specFile(ica({})), "--max-failures", "0"], "--max-failures 0: out of range"],
    [
      [specFile(ica({ preset: "quick" })), "--name", "taken"],
      "sweep taken exists with experiment ica-toy and preset smoke",
    ],
    [[specFile({ experiment: "vae-dsprites", preset: "smoke", name: "taken" })], "give it another --name"],
    [[specFile(ica({})), "--bogus", "1"], "unknown option --bogus for sweep"],
    [[specFile(ica({})), specFile(ica({}))], "sweep takes one spec file"],
    [["status", "nope"], 'no sweep "nope"'],
  ];
  const failures: string[] = [];
  for (const [args, message, env] of rows) {
    const full = ["sweep", ...args, ...(args.includes("--runs") ? [] : ["--runs", runs])];
    const before = listing(runs);
    const saved: Record<string, string | undefined> = {};
    for (const [key, value] of Object.entries(env ?? {})) {
      saved[key] = Deno.env.get(key);
      Deno.env.set(key, value);
    }
    let code = 0, said = "";
    try {
      await main(full);
    } catch (thrown) {
      if (thrown instanceof UsageError) [code, said] = [USAGE_EXIT_CODE, thrown.message];
      else [code, said] = [1, String(thrown)];
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        value === undefined ? Deno.env.delete(key) : Deno.env.set(key, value);
      }
    }
    const shown = full.join(" ").replaceAll(temp, "<tmp>");
    if (code !== USAGE_EXIT_CODE) failures.push(`${shown}: exit code ${code}: ${said}`);
    else if (!said.includes(message)) failures.push(`${shown}: "${said}" lacks "${message}"`);
    if (JSON.stringify(listing(runs)) !== JSON.stringify(before)) failures.push(`${shown}: wrote something`);
  }
  assertEquals(failures, []);
  assertThrows(
    () => expandSweep({ experiment: "toy", grid: { a: [1, 2] }, include: [{ a: 2 }] }, toy),
    UsageError,
    "one setting",
  );
});

Deno.test("as a process, a bad spec exits with code 2 and its line:column on stderr", async () => {
  const path = specFile('{\n  "experiment": "ica-toy",\n  "seeds": 3,,\n}');
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", projectPath("main.ts"), "sweep", path, "--runs", runs],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 2, stderr);
  assert(stderr.includes(`error: ${path}:3:14: invalid JSON`), stderr);
  assert(!/\n\s+at /.test(stderr), stderr);
});
