/**
 * Sweep speed: the overhead of a local task (its process's wall time less
 * its run's `wall_time_s`: starting Deno, loading the modules, the
 * backend, writing the summary), the throughput of 1 vs 2 local workers on
 * the same smoke tasks, the Slurm submit-to-done time of those tasks when
 * `sinfo` answers, and the file-only paths: `sweep status` of 1,000 tasks
 * and `sweep --dry-run` of 10,000.
 *
 * usage: deno task sweep-bench [--tasks 12] [--json path] [--write-docs]
 *
 * @module
 */
import { join } from "node:path";
import { checkOutputFile, parseCommandLine } from "../lib/core/cli.ts";
import { coerceValue, integer } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { SWEEP_TASK_ENV } from "../lib/core/run_layout.ts";
import { writeJsonAtomic } from "../lib/core/run_files.ts";
import { readSummary } from "../lib/core/run_reader.ts";
import { findExperiment } from "../experiments/mod.ts";
import { runLocal } from "../lib/sweep/local.ts";
import { runSlurm, slurmJobStates } from "../lib/sweep/slurm.ts";
import { checkSweepSpec, expandSweep, type SweepSpec } from "../lib/sweep/spec.ts";
import {
  countStates,
  needsLaunch,
  planSweep,
  readTaskRecord,
  REPO_ROOT,
  statesOf,
  type Sweep,
  writeSweep,
} from "../lib/sweep/store.ts";
import { gitCommit } from "../lib/core/experiment.ts";
import { writeSection } from "../lib/core/readme.ts";
import { fileURLToPath } from "node:url";

/** The sweeps guide, whose `sweep-bench` section `--write-docs` rewrites. */
const SWEEPS_PAGE = fileURLToPath(new URL("../docs/sweeps.md", import.meta.url));

const experiment = findExperiment("ica-toy")!;

/** The bench's smoke tasks: ica-toy smoke, dim 4 and 6 × seeds, as sweeps/ica_toy_smoke.json but with more seeds. */
function smokeSpec(tasks: number, slurm = false): SweepSpec {
  return checkSweepSpec({
    experiment: "ica-toy",
    preset: "smoke",
    grid: { dim: tasks >= 2 ? [4, 6] : [4] },
    seeds: Math.max(1, Math.ceil(tasks / 2)),
    ...(slurm ? { slurm: { timeout_min: 10, cpus_per_task: 1, mem_gb: 1, array_parallelism: 2 } } : {}),
  });
}

async function plannedSweep(spec: SweepSpec, count: number, root: string, executor: "local" | "slurm") {
  const tasks = expandSweep(spec, experiment).slice(0, count);
  const { sweep } = planSweep({
    id: `bench-${executor}`,
    spec,
    tasks,
    experimentName: "ica-toy",
    runsRoot: root,
    executor,
  });
  await writeSweep(sweep);
  return sweep;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at), hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Per task of a finished sweep: its process's wall time less its run's wall_time_s. */
function overheads(sweep: Sweep): number[] {
  return sweep.tasks.flatMap((task) => {
    const record = readTaskRecord(sweep.dir, task.key);
    const run = record?.run_dir ? readSummary(record.run_dir) : null;
    return record?.wall_s != null && run && Number.isFinite(run.wall_time_s) ? [record.wall_s - run.wall_time_s] : [];
  });
}

async function localPass(count: number, workers: number) {
  const root = Deno.makeTempDirSync({ prefix: "latentlab-sweep-bench-" });
  try {
    const sweep = await plannedSweep(smokeSpec(count), count, root, "local");
    const states = await statesOf(sweep.tasks, { sweepDir: sweep.dir, runsRoot: root, experimentName: "ica-toy" });
    const launches = states.filter(needsLaunch).map((s) => ({ ...sweep.tasks[s.index], resume: null }));
    const start = performance.now();
    const result = await runLocal(sweep, launches, { workers, report: (line) => console.error(`  ${line}`) });
    const wall = (performance.now() - start) / 1000;
    if (result.completed !== count) throw new Error(`${workers} workers: ${result.completed} of ${count} completed`);
    return { wall, overheads: overheads(sweep) };
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

async function slurmAnswers(): Promise<boolean> {
  try {
    const out = await new Deno.Command("sinfo", { args: ["-h", "-o", "%T"], stdout: "piped", stderr: "null" }).output();
    return out.success && new TextDecoder().decode(out.stdout).trim() !== "";
  } catch {
    return false;
  }
}

async function slurmPass(count: number) {
  // Slurm's elements run as other processes of this machine: the run store must be readable by them.
  const root = Deno.makeTempDirSync({ prefix: "latentlab-sweep-bench-slurm-", dir: "/tmp" });
  Deno.chmodSync(root, 0o777);
  try {
    const sweep = await plannedSweep(smokeSpec(count, true), count, root, "slurm");
    const start = performance.now();
    await runSlurm(sweep, sweep.tasks, { sweepDir: sweep.dir, runsRoot: root });
    for (;;) {
      const states = await statesOf(sweep.tasks, {
        sweepDir: sweep.dir,
        runsRoot: root,
        experimentName: "ica-toy",
        slurm: slurmJobStates,
      });
      const counts = countStates(states);
      if (counts.active === 0) {
        if (counts.completed !== count) throw new Error(`Slurm: ${JSON.stringify(counts)}`);
        return { wall: (performance.now() - start) / 1000 };
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

/** `sweep status` of 1,000 completed tasks (their runs' run.json written directly), in this process. */
async function statusOfThousand(): Promise<number> {
  const root = Deno.makeTempDirSync({ prefix: "latentlab-sweep-bench-status-" });
  try {
    const spec = checkSweepSpec({
      experiment: "ica-toy",
      preset: "smoke",
      grid: { steps: [...Array(100).keys()].map((i) => i + 1) },
      seeds: 10,
    });
    const sweep = await plannedSweep(spec, 1000, root, "local");
    const now = new Date().toISOString();
    sweep.tasks.forEach((task, i) => {
      const id = `20260101-000000-${i.toString(16).padStart(6, "0")}`;
      const dir = join(root, "ica-toy", id);
      Deno.mkdirSync(dir, { recursive: true });
      writeJsonAtomic(join(dir, "run.json"), {
        id,
        experiment: "ica-toy",
        argv: task.args,
        status: "completed",
        created: now,
        ended: now,
        heartbeat: now,
        pid: 1,
        host: "bench",
        seed: task.seed,
        preset: "smoke",
        backend: null,
        versions: {},
        git_commit: null,
        sweep: { id: sweep.id, key: task.key, index: task.index },
      });
    });
    const start = performance.now();
    const states = await statesOf(sweep.tasks, { sweepDir: sweep.dir, runsRoot: root, experimentName: "ica-toy" });
    const seconds = (performance.now() - start) / 1000;
    if (countStates(states).completed !== 1000) throw new Error("status bench: not all completed");
    return seconds;
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

/** `main.ts sweep <10,000-task spec> --dry-run` as a process, start to exit. */
async function dryRunOfTenThousand(): Promise<number> {
  const dir = Deno.makeTempDirSync({ prefix: "latentlab-sweep-bench-dry-" });
  try {
    const spec = join(dir, "spec.json");
    Deno.writeTextFileSync(
      spec,
      JSON.stringify({
        experiment: "ica-toy",
        preset: "smoke",
        grid: { steps: [...Array(1000).keys()].map((i) => i + 1) },
        seeds: 10,
      }),
    );
    const start = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(REPO_ROOT, "main.ts"), "sweep", spec, "--dry-run", "--runs", dir],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`dry run: ${new TextDecoder().decode(out.stderr)}`);
    return (performance.now() - start) / 1000;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

async function main(args: string[]) {
  const { flags, positionals } = parseCommandLine(args);
  for (const key of flags.keys()) {
    if (!["tasks", "json", "write-docs"].includes(key)) {
      throw new UsageError(`unknown option --${key}; valid: --tasks, --json, --write-docs`);
    }
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const count = coerceValue("tasks", integer(12, "", { min: 1, max: 200 }), flags.get("tasks") ?? 12) as number;
  const json = flags.get("json");
  if (json === true) throw new UsageError("--json needs a file path");
  if (json !== undefined) checkOutputFile(json, "--json");
  // The bench's own runs are not sweep tasks of whoever started it.
  Deno.env.delete(SWEEP_TASK_ENV);
  // Other work on the machine slows both passes: the report says how loaded it was.
  const loadBefore = Deno.loadavg()[0];

  console.error(`${count} ica-toy smoke tasks, 1 worker:`);
  const one = await localPass(count, 1);
  console.error(`${count} ica-toy smoke tasks, 2 workers:`);
  const two = await localPass(count, 2);
  const all = [...one.overheads, ...two.overheads].sort((a, b) => a - b);
  const slurm = await slurmAnswers() ? await slurmPass(count) : null;
  const status = await statusOfThousand();
  const dryRun = await dryRunOfTenThousand();
  const waves = Math.ceil(count / 2);
  const report = {
    tasks: count,
    cores: navigator.hardwareConcurrency,
    load_before: loadBefore,
    load_after: Deno.loadavg()[0],
    overhead_s: { median: quantile(all, 0.5), p95: quantile(all, 0.95), n: all.length },
    local: {
      one_worker_s: one.wall,
      two_workers_s: two.wall,
      speedup: one.wall / two.wall,
    },
    slurm: slurm ? { submit_to_done_s: slurm.wall, target_s: two.wall + 2 * waves } : null,
    status_1000_s: status,
    dry_run_10000_s: dryRun,
    at: new Date().toISOString(),
  };
  const f = (x: number, digits = 2) => x.toFixed(digits);
  const rows = [
    ["per-task overhead, median", `${f(report.overhead_s.median)} s`, "≤ 2 s"],
    ["per-task overhead, p95", `${f(report.overhead_s.p95)} s`, ""],
    [`${count} tasks, 1 worker`, `${f(one.wall, 1)} s (${f((count / one.wall) * 60, 1)} tasks/min)`, ""],
    [`${count} tasks, 2 workers`, `${f(two.wall, 1)} s (${f((count / two.wall) * 60, 1)} tasks/min)`, ""],
    ["throughput 2 vs 1 worker", `${f(report.local.speedup)}×`, "≥ 1.6×"],
    [
      `Slurm submit-to-done, ${count} tasks %2`,
      slurm ? `${f(slurm.wall, 1)} s` : "not measured: sinfo does not answer",
      `≤ ${f(two.wall + 2 * waves, 1)} s (2 workers + 2 s × ${waves} waves)`,
    ],
    ["sweep status, 1,000 tasks", `${f(status)} s`, "≤ 1 s"],
    ["sweep --dry-run, 10,000 tasks (process)", `${f(dryRun)} s`, "≤ 2 s"],
  ];
  if (flags.has("write-docs")) {
    const commit = (await gitCommit())?.slice(0, 7) ?? "an unknown commit";
    const table = [
      "| measure | value | target |",
      "|---|---|---|",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
    ];
    writeSection(
      SWEEPS_PAGE,
      "sweep-bench",
      `\`deno task sweep-bench --write-docs\` at commit ${commit}, ${count} ica-toy smoke tasks on ` +
        `${report.cores} cores (load average ${f(report.load_before)} before, ${f(report.load_after)} after):\n\n` +
        table.join("\n"),
    );
    console.error(`written to ${SWEEPS_PAGE}`);
  }
  const width = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length), 8));
  console.log(
    `sweep bench: ${count} ica-toy smoke tasks on ${report.cores} cores (load ${f(report.load_before)} before, ` +
      `${f(report.load_after)} after)`,
  );
  console.log(`| ${"measure".padEnd(width[0])} | ${"value".padEnd(width[1])} | ${"target".padEnd(width[2])} |`);
  console.log(`| ${width.map((w) => "-".repeat(w)).join(" | ")} |`);
  for (const row of rows) console.log(`| ${row.map((cell, c) => cell.padEnd(width[c])).join(" | ")} |`);
  if (json !== undefined) {
    Deno.writeTextFileSync(json, JSON.stringify(report, null, 2) + "\n");
    console.error(`written to ${json}`);
  }
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}\nusage: deno task sweep-bench [--tasks 12] [--json path] [--write-docs]`);
    Deno.exitCode = 2;
  }
}
