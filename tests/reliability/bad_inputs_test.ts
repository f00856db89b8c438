/**
 * Bad command lines, as a table: each is refused cleanly — exit code 2 (a
 * UsageError in process), a message naming the problem, no stack trace, and
 * nothing new under the run store or beside the output path. Most rows run
 * `main(args)` in process; a few run as real processes to confirm the exit
 * code and stderr.
 */
import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { checkRunsRoot } from "../../lib/core/cli.ts";
import { coerceValue, type ConfigSpec, resolveConfig } from "../../lib/core/config.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { parseInvocation, USAGE_EXIT_CODE } from "../../lib/core/experiment.ts";
import { formatNpy } from "../../lib/core/npy.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { readMetrics } from "../../lib/core/run_metrics.ts";
import { projectPath } from "../experiments/cli.ts";
import { npyWithHeader } from "../core/npy_bytes.ts";
import { mainInProcess } from "../main_in_process.ts";
import { listing } from "../tree.ts";

const runs = Deno.makeTempDirSync({ prefix: "latentlab-bad-inputs-runs-" });
const files = Deno.makeTempDirSync({ prefix: "latentlab-bad-inputs-files-" });
globalThis.addEventListener("unload", () => {
  for (const dir of [runs, files]) Deno.removeSync(dir, { recursive: true });
});
const file = (name: string, bytes: Uint8Array | string) => {
  const path = join(files, name);
  if (typeof bytes === "string") Deno.writeTextFileSync(path, bytes);
  else Deno.writeFileSync(path, bytes);
  return path;
};
const codes = (n: number, d = 2) =>
  file(`codes_${n}x${d}.npy`, formatNpy(Float32Array.from({ length: n * d }, (_, i) => Math.sin(i)), [n, d]));
const factors = (n: number) =>
  file(`factors_${n}.npy`, formatNpy(Int32Array.from({ length: n }, (_, i) => i % 3), [n, 1]));
const C10 = codes(10), F10 = factors(10);
const header = (name: string, dict: string) => file(name, npyWithHeader(dict));
const notAFolder = file("plain.txt", "not a folder");

/** `run <experiment> ...args` on the smoke preset (unless the row picks one) with runs under the temporary store. */
const run = (experiment: string, ...args: string[]) => [
  "run",
  experiment,
  ...args,
  ...(args.includes("--preset") ? [] : ["--preset", "smoke"]),
  "--runs",
  runs,
];
/** `eval --codes C10 --factors F10 ...args`, with other arrays where the row gives them. */
const evalArgs = (...args: string[]) => [
  "eval",
  ...(args.includes("--codes") ? [] : ["--codes", C10]),
  ...(args.includes("--factors") ? [] : ["--factors", F10]),
  ...args,
];

/** A bad command line and what its message must say. */
type Row = [args: string[], message: string];

const ROWS: Row[] = [
  // Duplicate list entries would train duplicates that count twice in a study.
  [run("ica-toy", "--layers", "1,1"), "--layers 1,1: 1 is given more than once"],
  [run("dislib-study", "--grid", "0,0"), "--grid 0,0: 0 is given more than once"],
  [run("dislib-study", "--methods", "beta_vae,beta_vae"), "beta_vae is given more than once"],
  [run("slowvae-dsprites", "--models", "betavae,pcl_lap,betavae"), "betavae is given more than once"],
  [run("slowvae-dsprites", "--gammas", "10,10"), "--gammas 10,10: 10 is given more than once"],
  [run("slowvae-kitti", "--max_deltas", "5,5"), "5 is given more than once"],
  [run("vae-collapse-toy", "--kappas", "0.2,0.20"), "0.2 is given more than once"],
  [run("vae-collapse-toy", "--x_dims", "20,20"), "20 is given more than once"],
  // Names every object has are not options.
  [run("ica-toy", "--constructor", "1"), "unknown option --constructor"],
  [run("ica-toy", "--toString", "x"), "unknown option --toString"],
  [run("ica-toy", "--__proto__", "x"), "unknown option --__proto__"],
  [run("ica-toy", "--hasOwnProperty", "1"), "unknown option --hasOwnProperty"],
  [evalArgs("--constructor", "1"), "unknown option --constructor"],
  [["export-codes", files, "--valueOf", "1"], "unknown option --valueOf"],
  // Unbounded sizes.
  [run("ica-toy", "--steps", "1e300"), "--steps 1e300: out of range; steps must be an integer ≥ 1 and ≤ 100_000_000"],
  [run("ica-toy", "--batch", "1e9"), "--batch 1e9: out of range; batch must be an integer ≥ 2 and ≤ 65_536"],
  [run("ica-toy", "--samples", "3e9"), "--samples 3e9: out of range; samples must be an integer ≥ 100 and ≤ 1_000_000"],
  [run("vae-dsprites", "--batch", "1e9"), "batch must be an integer ≥ 2 and ≤ 4096"],
  [run("vae-dsprites", "--eval_samples", "1e9"), "eval_samples must be an integer ≥ 20 and ≤ 50_000"],
  [run("vae-dsprites", "--score_points", "1e9"), "score_points must be an integer ≥ 2 and ≤ 100_000"],
  [run("vae-dsprites", "--curve_samples", "1e8"), "curve_samples must be an integer ≥ 20 and ≤ 50_000"],
  [run("slowvae-kitti", "--sequences", "1e9"), "sequences must be an integer ≥ 1 and ≤ 100_000"],
  [run("dislib-study", "--selection_draws", "1e300"), "selection_draws must be an integer ≥ 1 and ≤ 10_000_000"],
  [
    ["export-codes", files, "--samples", "2e8"],
    "--samples 2e8: out of range; samples must be an integer ≥ 2 and ≤ 50_000",
  ],
  [["export-codes", files, "--samples", "1"], "--samples 1: out of range"],
  // Negative numbers are values, refused by range.
  [run("ica-toy", "--steps", "-5"), "--steps -5: out of range; steps must be an integer ≥ 1"],
  [run("ica-toy", "--seed", "-1"), "--seed -1: out of range; seed must be an integer ≥ 0"],
  [["export-codes", files, "--samples", "-5"], "--samples -5: out of range"],
  // What was refused before: unknown keys, wrong types, ranges, presets, experiments, commands.
  [run("ica-toy", "--stepz", "3"), "unknown option --stepz; did you mean --steps?"],
  [run("ica-toy", "--steps", "ten"), "--steps ten: wrong type; steps must be an integer"],
  [run("ica-toy", "--steps", "2.5"), "--steps 2.5: not an integer"],
  [run("ica-toy", "--steps", "0"), "--steps 0: out of range"],
  [run("ica-toy", "--lr", "3"), "--lr 3: out of range; lr must be a number ≥ 0 and ≤ 1"],
  [run("ica-toy", "--lr"), "--lr needs a value"],
  [run("ica-toy", "--layers", "1,,2"), "--layers 1,,2: wrong type"],
  [run("ica-toy", "--layers", "1,9"), "--layers 1,9: 9 out of range"],
  [run("ica-toy", "--whiten", "maybe"), "whiten must be true or false"],
  [run("ica-toy", "--method", "both,pcl"), "--method both,pcl: not allowed"],
  [run("vae-dsprites", "--resolution", "48"), "resolution must be one of 64, 32"],
  [run("ica-toy", "--workers", "0"), "--workers 0: out of range"],
  [run("ica-toy", "--backend", "tpu"), "--backend tpu: not allowed"],
  [run("ica-toy", "--preset", "huge"), "--preset huge: not allowed; preset must be one of smoke, quick, long, paper"],
  [run("ica-toy", "--preset", "long"), "ica-toy has no long preset"],
  [run("ica-toy", "--seed", "1", "--seed", "2"), "--seed is given twice"],
  [run("ica-toy", "surplus"), 'unexpected argument "surplus"'],
  [["run", "ica-toy", "--resume", files, "--runs", runs], "not a run directory"],
  [["run", "ica-tyo"], 'unknown experiment "ica-tyo"; did you mean ica-toy?'],
  [["run"], "run needs an experiment name"],
  [["evaluate"], 'unknown command "evaluate"; did you mean eval?'],
  [["scorecard", "--bogus"], "unknown option --bogus for scorecard"],
  [["scorecard", "--keep"], "--keep needs a completed run's folder"],
  [["scorecard", "--keep", files], "not a completed run with a whole summary.json"],
  [["audit", "ica-tyo"], 'unknown experiment "ica-tyo"; did you mean ica-toy?'],
  [["audit", "--all"], "unknown option --all for audit"],
  [["datasets", "--out"], "--out needs a folder"],
  // eval: arguments, paths and malformed .npy files.
  [["eval", "--codes", C10], "--factors needs a path"],
  [evalArgs("--bogus", "1"), "unknown option --bogus for eval"],
  [evalArgs("--metrics", "mig,bogus"), 'unknown metric "bogus"'],
  [evalArgs("--metrics", "mig,mig"), "mig is given more than once"],
  [evalArgs("--codes", join(files, "missing.npy")), "missing.npy: no such file"],
  [evalArgs("--codes", files), "a folder, not an .npy file"],
  [evalArgs("--codes", file("text.npy", "just text")), "not an .npy file"],
  [evalArgs("--out", files), "--out " + JSON.stringify(files) + ": is a folder"],
  [evalArgs("--out", join(files, "no", "such", "result.json")), "does not exist"],
  [evalArgs("--out", join(notAFolder, "result.json")), "is not a folder"],
  [evalArgs("--codes", codes(3), "--factors", factors(3)), "at least 6 rows"],
  [evalArgs("--codes", codes(5), "--factors", factors(5)), "at least 6 rows"],
  [evalArgs("--codes", file("cols0.npy", formatNpy(new Float32Array(0), [10, 0]))), "at least 1 column"],
  [evalArgs("--codes", codes(10, 1), "--metrics", "tc"), "tc (total correlation"],
  [evalArgs("--codes", codes(3)), "codes have 3 rows but factors have 10"],
  [
    evalArgs(
      "--codes",
      file("nan.npy", formatNpy(Float32Array.from({ length: 20 }, (_, i) => i === 3 ? NaN : i), [10, 2])),
    ),
    "codes[1, 1] is NaN",
  ],
  [evalArgs("--factors", file("const.npy", formatNpy(new Int32Array(10), [10, 1]))), "factor 0 is constant"],
  [
    evalArgs(
      "--factors",
      file("big.npy", formatNpy(BigInt64Array.from({ length: 10 }, (_, i) => 2n ** 53n + BigInt(i % 2)), [10, 1])),
    ),
    "is beyond ±(2^53 − 1)",
  ],
  [
    evalArgs("--codes", header("neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-10, 2), }")),
    "has a negative or oversized dimension",
  ],
  [
    evalArgs("--codes", header("word.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (n, 2), }")),
    "a shape holds integers",
  ],
  [
    evalArgs(
      "--codes",
      header("fortran2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 2), 'fortran_order': True, }"),
    ),
    "Fortran-order arrays are not supported",
  ],
  [
    evalArgs("--codes", header("c8.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (10, 2), }")),
    "dtype '<c8' is not supported",
  ],
  [
    evalArgs("--codes", header("long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 2), }")),
    "truncated data",
  ],
  [evalArgs("--codes", header("nodict.npy", "descr <f4")), "malformed header"],
  [["eval", "--run", files], "not a run directory"],
  // export-codes: the command line.
  [["export-codes"], "export-codes needs one run directory"],
  [["export-codes", files, "--bogus", "1"], "unknown option --bogus for export-codes"],
  // abs-mnist: parts larger than what they are drawn from, unknown models.
  [run("abs-mnist", "--attack_digits", "60"), "attack_digits = 60 exceeds test_digits = 20: allowed ≤ 20"],
  [run("abs-mnist", "--clean_digits", "51"), "clean_digits = 51 exceeds test_digits = 20"],
  [run("abs-mnist", "--calibration_digits", "300"), "calibration_digits = 300 exceeds train_digits = 100"],
  [run("abs-mnist", "--train_digits", "60001"), "train_digits must be an integer ≥ 20 and ≤ 60_000"],
  [run("abs-mnist", "--models", "madry"), "madry"],
  // noise-train-mnist: noise sizes, ANT's batch shares, regimes.
  [run("noise-train-mnist", "--sigmas", "0,0.5"), "sigmas must be > 0, got 0"],
  [run("noise-train-mnist", "--ant_epsilon", "0"), "ant_epsilon must be > 0, got 0"],
  [run("noise-train-mnist", "--ant_current_fraction", "1.5"), "ant_current_fraction"],
  [run("noise-train-mnist", "--ant_current_fraction", "0.7"), "ant_current_fraction + clean_fraction = 1.2"],
  [run("noise-train-mnist", "--regimes", "mixup"), "mixup"],
  [run("noise-train-mnist", "--eps_digits", "200"), "eps_digits = 200 exceeds test_digits = 16"],
];

/** `main(args)` in this process: its exit code and what it said on stderr. */
async function inProcess(args: string[]): Promise<{ code: number; message: string }> {
  const { code, stderr } = await mainInProcess(args);
  return { code, message: stderr };
}

Deno.test(`${ROWS.length} bad command lines are refused with exit code 2, the problem named, nothing written`, async () => {
  assert(ROWS.length >= 40);
  const failures: string[] = [];
  for (const [args, message] of ROWS) {
    const before = [listing(runs), listing(files)];
    const { code, message: said } = await inProcess(args);
    const shown = args.join(" ").replaceAll(runs, "<runs>").replaceAll(files, "<files>");
    if (code !== USAGE_EXIT_CODE) failures.push(`${shown}: exit code ${code}: ${said}`);
    else if (!said.includes(message)) failures.push(`${shown}: "${said}" lacks "${message}"`);
    else if (/\n\s+at /.test(said)) failures.push(`${shown}: a stack trace: ${said}`);
    const after = [listing(runs), listing(files)];
    if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${shown}: wrote ${after.flat().join(", ")}`);
  }
  assertEquals(failures, []);
});

Deno.test("a --runs root that is empty, a file or not writable is refused before anything is written", () => {
  assertThrows(() => checkRunsRoot(""), UsageError, "--runs needs a folder; it is empty");
  assertThrows(() => checkRunsRoot("  "), UsageError, "--runs needs a folder; it is empty");
  assertThrows(() => checkRunsRoot(notAFolder), UsageError, "not a folder");
  assertThrows(() => checkRunsRoot(join(notAFolder, "runs")), UsageError, `${notAFolder} is a file, not a folder`);
  assertThrows(
    () => checkRunsRoot(notAFolder, { what: "$LATENTLAB_RUNS" }),
    UsageError,
    `$LATENTLAB_RUNS ${JSON.stringify(notAFolder)}: not a folder`,
  );
  if (Deno.build.os === "linux") {
    // /proc takes no new files, even for root (which chmod cannot stop).
    assertThrows(() => checkRunsRoot("/proc/latentlab-runs"), UsageError, "/proc is not writable");
  }
  // A folder that does not exist yet under a writable one is fine, and is not created by the check.
  const before = listing(runs);
  checkRunsRoot(join(runs, "new", "root"));
  checkRunsRoot(runs);
  assertEquals(listing(runs), before);
  // The dashboard only reads: a missing folder is fine, a file is not.
  checkRunsRoot("/proc/latentlab-runs", { write: false });
  assertThrows(() => checkRunsRoot(notAFolder, { write: false }), UsageError, "not a folder");
});

Deno.test("every size key of every experiment has an upper bound, and its presets stay within the specs", () => {
  const unbounded: string[] = [];
  for (const experiment of EXPERIMENTS) {
    const spec = experiment.config as ConfigSpec;
    for (const [key, param] of Object.entries(spec)) {
      coerceValue(key, param, param.default);
      if (param.type !== "number" || !param.integer || param.choices) continue;
      if (param.max === undefined) {
        unbounded.push(`${experiment.name} --${key}`);
        continue;
      }
      // A value above the bound is refused before anything runs, with the key, the value and the range.
      const above = String(param.max + 1);
      assertThrows(
        () => parseInvocation(experiment, [`--${key}`, above]),
        UsageError,
        `--${key} ${above}: out of range; ${key} must be an integer`,
      );
    }
    for (const preset of Object.values(experiment.presets)) resolveConfig(spec, preset ?? {}, new Map());
  }
  assertEquals(unbounded, []);
});

Deno.test("every list key of every experiment refuses a repeated value", () => {
  for (const experiment of EXPERIMENTS) {
    for (const [key, param] of Object.entries(experiment.config as ConfigSpec)) {
      if (param.type !== "numbers" && param.type !== "strings") continue;
      assert(!param.repeats, `${experiment.name} --${key} allows repeats`);
      const twice = `${param.default[0]},${param.default[0]}`;
      assertThrows(
        () => parseInvocation(experiment, [`--${key}`, twice]),
        UsageError,
        `--${key} ${twice}: ${param.default[0]} is given more than once`,
      );
    }
  }
});

/** `deno run -A <script> ...args` as a user runs it, with runs under the temporary store. */
async function cli(script: string, args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", projectPath(script), ...args],
    env: { LATENTLAB_RUNS: runs, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    // A command that is not refused would run (or serve) on: it is stopped and the row fails.
    signal: AbortSignal.timeout(60_000),
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("as real processes, bad command lines exit with code 2 and the message on stderr", async () => {
  const rows: [script: string, args: string[], message: string][] = [
    ["main.ts", ["run", "ica-toy", "--steps", "-5", "--preset", "smoke"], "error: --steps -5: out of range"],
    ["main.ts", ["run", "ica-toy", "--constructor", "1", "--preset", "smoke"], "error: unknown option --constructor"],
    ["main.ts", ["eval", "--codes", codes(3), "--factors", factors(3)], "error: at least 6 rows"],
    ["main.ts", ["export-codes", files, "--samples", "2e8"], "error: --samples 2e8: out of range"],
    ["dashboard/server.ts", ["--runs", "", "--port", "0"], "error: --runs needs a folder; it is empty"],
  ];
  const before = [listing(runs), listing(files)];
  const results = await Promise.all(rows.map(([script, args]) => cli(script, args)));
  rows.forEach(([script, args, message], i) => {
    const { code, stderr } = results[i];
    assertEquals(code, 2, `${script} ${args.join(" ")}: ${stderr}`);
    assert(stderr.includes(message), `${script} ${args.join(" ")}: "${stderr}" lacks "${message}"`);
    assert(!/\n\s+at /.test(stderr), `${script} ${args.join(" ")}: a stack trace: ${stderr}`);
  });
  assertEquals([listing(runs), listing(files)], before);
});

Deno.test("a full disk is one line naming the file, the run marked failed with the reason, the store readable", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const fixture = projectPath("tests/reliability/fixtures/full_disk_experiment.ts");
    const { code, stderr } = await cli("main.ts", ["run", fixture, "--runs", root]);
    assertEquals(code, 1, stderr);
    const errors = stderr.split("\n").filter((line) => line.startsWith("error"));
    assertEquals(errors.length, 1, stderr);
    assert(/^error: the disk is full: \S+summary\.json\.tmp-\d+ could not be written/.test(errors[0]), errors[0]);
    assert(!/\n\s+at /.test(stderr), `a stack trace: ${stderr}`);
    const [run] = listRuns(root);
    assertEquals([run.status, run.problem], ["failed", undefined]);
    assert(run.info.error?.startsWith("the disk is full"), run.info.error);
    assertEquals(readMetrics(run.dir).rows.length, 3);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("an unknown experiment or sweep spec is one line and a hint, not the whole usage", async () => {
  const results = await Promise.all([["run", "nope"], ["sweep", "nope.json"]].map((args) => cli("main.ts", args)));
  for (const { code, stderr } of results) {
    assertEquals(code, 2, stderr);
    const lines = stderr.trim().split("\n");
    assertEquals(lines.length, 2, stderr);
    assert(lines[0].startsWith("error: ") && lines[1].includes("main.ts help"), stderr);
  }
});
