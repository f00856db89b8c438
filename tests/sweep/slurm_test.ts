/**
 * The Slurm executor: its script (a golden file, as submitit's
 * `_sbatch_test_record.txt`), parsers of squeue and scontrol output captured
 * from Slurm 22.05.8 (tests/sweep/fixtures/slurm-22.05.8/), submission with
 * fake Slurm commands, and — where `sinfo` answers — real job arrays: job
 * states, then whole sweeps through the CLI. Under CI=true a Slurm that does
 * not answer fails the test (.ci/run starts one).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { listRuns, readConfig } from "../../lib/core/run_reader.ts";
import { SLURM_DEFAULTS, type SlurmSpec } from "../../lib/sweep/spec.ts";
import { readTaskRecord } from "../../lib/sweep/store.ts";
import {
  cancelJobs,
  classifyJobState,
  expandJobId,
  knowsNoJob,
  maxArraySize,
  parseMaxArraySize,
  parseScontrolJob,
  parseScontrolJobs,
  parseSqueue,
  runSlurm,
  sbatchScript,
  slurmJobStates,
  submit,
} from "../../lib/sweep/slurm.ts";
import { mainInProcess } from "../main_in_process.ts";

const PROJECT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const CAPTURED = join(FIXTURES, "slurm-22.05.8");
const captured = (name: string) => Deno.readTextFileSync(join(CAPTURED, name));

function sinfoAnswers(): boolean {
  try {
    const out = new Deno.Command("sinfo", { args: ["-h", "-o", "%T"], stdout: "piped", stderr: "null" }).outputSync();
    return out.success && new TextDecoder().decode(out.stdout).trim() !== "";
  } catch {
    return false;
  }
}

const slurmUp = sinfoAnswers();
const inCi = Deno.env.get("CI") === "true";
if (!slurmUp && !inCi) {
  console.warn("\n!!! SKIPPED: the Slurm tests need a Slurm that answers sinfo (.ci/run starts one as root) !!!\n");
}

Deno.test("parseSqueue expands a pending range and reads -r lines (the issue's outputs)", () => {
  const range = parseSqueue("13_[2-5%2]|PENDING|JobArrayTaskLimit\n13_1|RUNNING|None\n");
  assertEquals([...range.keys()], ["13_2", "13_3", "13_4", "13_5", "13_1"]);
  assertEquals(range.get("13_4"), { state: "PENDING", reason: "JobArrayTaskLimit" });
  assertEquals(range.get("13_1"), { state: "RUNNING", reason: "None" });
  const one = parseSqueue("13_2|PENDING|JobArrayTaskLimit");
  assertEquals([...one.entries()], [["13_2", { state: "PENDING", reason: "JobArrayTaskLimit" }]]);
  assertEquals(parseSqueue("").size, 0);
  assertEquals(expandJobId("7_[1,4-6:2,9]"), ["7_1", "7_4", "7_6", "7_9"]);
  assertEquals(expandJobId("7_3"), ["7_3"]);
  assertEquals(expandJobId("42"), ["42"]);
});

Deno.test("parseSqueue reads squeue output captured from Slurm 22.05.8", () => {
  const range = parseSqueue(captured("squeue_array.txt"));
  assertEquals([...range.keys()].sort(), ["2_0", "2_1", "2_2", "2_3", "2_4", "2_5"]);
  assertEquals(range.get("2_5"), { state: "PENDING", reason: "JobArrayTaskLimit" });
  assertEquals(range.get("2_0"), { state: "RUNNING", reason: "None" });
  const each = parseSqueue(captured("squeue_r.txt"));
  assertEquals([...each.entries()].sort(), [...range.entries()].sort(), "-r lists the same elements one per line");
  assert(knowsNoJob(captured("squeue_invalid.stderr")), "squeue of a purged array is no error");
  assert(knowsNoJob(captured("scontrol_notfound.stderr")), "scontrol of a cancelled pending element is no error");
  assert(!knowsNoJob("squeue: error: Unable to contact slurm controller (connect failure)"));
});

Deno.test("parseScontrolJob reads state, reason and exit code (the issue's output and captured ones)", () => {
  const issue = parseScontrolJob(
    "JobId=14 ArrayJobId=13 ArrayTaskId=2 JobName=ll-x\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n" +
      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=7:0\n",
  );
  assertEquals([issue.jobId, issue.jobState, issue.reason, issue.exitCode, issue.signal], [
    "13_2",
    "FAILED",
    "NonZeroExitCode",
    7,
    0,
  ]);

  const failed = parseScontrolJob(captured("scontrol_failed.txt"));
  assertEquals([failed.jobId, failed.jobState, failed.reason, failed.exitCode], [
    "5_1",
    "FAILED",
    "NonZeroExitCode",
    7,
  ]);
  assertEquals(failed.stdErr, "/tmp/slt/5_1.err", "the %A_%a of the log, resolved");
  const completed = parseScontrolJob(captured("scontrol_completed.txt"));
  assertEquals([completed.jobId, completed.jobState, completed.reason, completed.exitCode], [
    "5_0",
    "COMPLETED",
    "None",
    0,
  ]);
  const pending = parseScontrolJob(captured("scontrol_pending.txt"));
  assertEquals([pending.jobId, pending.jobState, pending.reason], ["2_4", "PENDING", "JobArrayTaskLimit"]);
  const timeout = parseScontrolJob(captured("scontrol_timeout.txt"));
  assertEquals([timeout.jobId, timeout.jobState, timeout.reason, timeout.exitCode], [
    "11_0",
    "TIMEOUT",
    "TimeLimit",
    143,
  ]);
  const cancelled = parseScontrolJob(captured("scontrol_cancelled_running.txt"));
  assertEquals([cancelled.jobId, cancelled.jobState], ["11_1", "CANCELLED"]);
  const all = parseScontrolJobs(captured("scontrol_array_5.txt"));
  assertEquals(all.map((j) => `${j.jobId}:${j.jobState}:${j.exitCode}`), [
    "5_2:COMPLETED:0",
    "5_1:FAILED:7",
    "5_0:COMPLETED:0",
  ]);
  assertEquals(parseMaxArraySize(captured("scontrol_show_config.txt")), 1001);
  assertEquals(parseMaxArraySize("SLURM_VERSION = 22.05.8\n"), null);
});

Deno.test("Slurm job states map to a sweep's pending, running, completed, failed and lost", () => {
  assertEquals(
    ["PENDING", "REQUEUED", "RUNNING", "COMPLETING", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "CANCELLED+"].map(
      classifyJobState,
    ),
    ["pending", "pending", "running", "running", "completed", "failed", "failed", "lost", "lost"],
  );
});

const GOLDEN_SLURM: SlurmSpec = {
  partition: "gpu",
  qos: "normal",
  account: "lab42",
  timeout_min: 120,
  cpus_per_task: 2,
  mem_gb: 4,
  array_parallelism: 4,
  setup: ["module load deno/2", "source /home/ana/env.sh"],
  additional_parameters: {
    mail_type: "END,FAIL",
    gres: "gpu:1",
    exclusive: true,
    constraint: "v100|a100",
    hold: false,
  },
};

Deno.test("sbatchScript writes the golden sub-0.sbatch", () => {
  const script = sbatchScript({
    id: "vae-dsprites-0c1d2e3f",
    sweepDir: "/scratch/ana/runs/_sweeps/vae-dsprites-0c1d2e3f",
    submission: "sub-0",
    count: 9,
    slurm: GOLDEN_SLURM,
    repoRoot: "/home/ana/latentlab/",
    runsRoot: "/scratch/ana/runs",
    denoPath: "/home/ana/.deno/bin/deno",
  });
  assertEquals(script, Deno.readTextFileSync(join(FIXTURES, "sub-0.sbatch")));
});

Deno.test("sbatchScript leaves unset settings out and throttles at most the array's size", () => {
  const script = sbatchScript({
    id: "ica-toy-1",
    sweepDir: "/r/_sweeps/ica-toy-1",
    submission: "sub-3",
    count: 6,
    slurm: { ...SLURM_DEFAULTS, mem_gb: 0.5 },
    repoRoot: "/repo",
    runsRoot: "/r",
    denoPath: "/usr/bin/deno",
  });
  const lines = script.trimEnd().split("\n");
  assertEquals(lines.slice(1, 7), [
    "#SBATCH --job-name=ll-ica-toy-1",
    "#SBATCH --array=0-5%6",
    "#SBATCH --chdir=/repo",
    "#SBATCH --cpus-per-task=1",
    "#SBATCH --mem=512M",
    "#SBATCH --time=60",
  ]);
  assertEquals(lines[10], "export LATENTLAB_RUNS=/r", "no partition, qos, account or setup");
  assertEquals(
    lines[11],
    'exec /usr/bin/deno run -A /repo/main.ts sweep run-task /r/_sweeps/ica-toy-1 sub-3 "$SLURM_ARRAY_TASK_ID"',
  );
  const spaced = sbatchScript({
    id: "x",
    sweepDir: "/my runs/_sweeps/x",
    submission: "sub-0",
    count: 1,
    slurm: SLURM_DEFAULTS,
    repoRoot: "/repo",
    runsRoot: "/my runs",
    denoPath: "/usr/bin/deno",
  });
  assert(spaced.includes("export LATENTLAB_RUNS='/my runs'\n"), "a path with a space is quoted");
});

/** Fake `sbatch` and `scontrol` first on PATH: sbatch prints ids from 100 on, or fails when `fail` exists. */
async function withFakeSlurm<T>(maxArray: number, body: (bin: string) => Promise<T>): Promise<T> {
  const bin = Deno.makeTempDirSync({ prefix: "fake-slurm-" });
  Deno.writeTextFileSync(
    join(bin, "sbatch"),
    `#!/bin/bash
if [ -e ${bin}/fail ]; then echo "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified" >&2; exit 1; fi
n=$(cat ${bin}/n 2>/dev/null || echo 100); echo $((n + 1)) > ${bin}/n
echo "$@" >> ${bin}/calls
echo "$n;latentlab-ci"
`,
    { mode: 0o755 },
  );
  Deno.writeTextFileSync(join(bin, "scontrol"), `#!/bin/bash\necho "MaxArraySize            = ${maxArray}"\n`, {
    mode: 0o755,
  });
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  try {
    return await body(bin);
  } finally {
    Deno.env.set("PATH", path);
    Deno.removeSync(bin, { recursive: true });
  }
}

Deno.test("submit numbers its submissions, and a refused sbatch leaves nothing submitted", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    await withFakeSlurm(1001, async (bin) => {
      const options = { id: "s", sweepDir: dir, slurm: SLURM_DEFAULTS, runsRoot: "/r", denoPath: "/usr/bin/deno" };
      const first = await submit(["aaa", "bbb"], options);
      assertEquals([first.submission, first.arrayId], ["sub-0", "100"]);
      assertEquals(Deno.readTextFileSync(join(dir, "slurm", "sub-0.tasks")), "aaa\nbbb\n");
      assert(Deno.readTextFileSync(join(dir, "slurm", "sub-0.sbatch")).includes("#SBATCH --array=0-1%2\n"));
      Deno.writeTextFileSync(join(bin, "fail"), "");
      const error = await assertRejects(() => submit(["ccc"], options), Error, "Invalid account");
      assert(error.message.includes("sub-1"), error.message);
      assertEquals([...Deno.readDirSync(join(dir, "slurm"))].map((e) => e.name).sort(), [
        "sub-0.sbatch",
        "sub-0.tasks",
      ]);
      Deno.removeSync(join(bin, "fail"));
      assertEquals((await submit(["ccc"], options)).submission, "sub-1", "the refused number is free again");
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("runSlurm splits past MaxArraySize and records each task as submitted", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    await withFakeSlurm(2, async (bin) => {
      const tasks = ["k0", "k1", "k2", "k3", "k4"].map((key, index) => ({ key, index }));
      const sweep = { spec: { slurm: { ...SLURM_DEFAULTS, array_parallelism: 1 } } };
      const { launched, submissions } = await runSlurm(sweep, tasks, { sweepDir: dir, runsRoot: "/r" });
      assertEquals(launched, 5);
      assertEquals(submissions.map((s) => [s.submission, s.arrayId, s.keys.join(",")]), [
        ["sub-0", "100", "k0,k1"],
        ["sub-1", "101", "k2,k3"],
        ["sub-2", "102", "k4"],
      ]);
      const script = Deno.readTextFileSync(join(dir, "slurm", "sub-2.sbatch"));
      assert(script.includes(`#SBATCH --job-name=ll-${dir.split("/").pop()}\n`), "the id is the folder's name");
      assert(script.includes("#SBATCH --array=0-0%1\n"));
      const k3 = readTaskRecord(dir, "k3");
      assert(k3);
      assertEquals([k3.status, k3.executor, k3.job_id, k3.submission, k3.attempts, k3.index], [
        "submitted",
        "slurm",
        "101_1",
        "sub-1",
        1,
        3,
      ]);
      assertEquals(k3.err, join(dir, "slurm", "101_1.err"));
      await runSlurm(sweep, [tasks[3]], { sweepDir: dir, runsRoot: "/r" });
      assertEquals(readTaskRecord(dir, "k3")?.attempts, 2);
      assertEquals(readTaskRecord(dir, "k3")?.job_id, "103_0");
      assertEquals(Deno.readTextFileSync(join(bin, "calls")).trim().split("\n").length, 4);
      assertEquals((await runSlurm(sweep, [], { sweepDir: dir, runsRoot: "/r" })).launched, 0);
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/**
 * Polls `check` every 0.5 s until it holds. `seconds` only bounds a wait for what never comes: jobs queue behind whatever else
 * holds the node's CPUs, so the bound is generous and a busy node delays the answer without failing it.
 */
async function until(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const slurmTest = (name: string, fn: () => Promise<void>) =>
  Deno.test({
    name,
    ignore: !slurmUp && !inCi,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      assert(
        slurmUp,
        "Slurm is required under CI=true: .ci/run starts a single-node Slurm as root (sinfo must answer)",
      );
      await fn();
    },
  });

slurmTest(
  "a real array: sbatch accepts the script; pending, failed, completed and a cancelled element lost",
  async () => {
    assertEquals(await maxArraySize(), parseMaxArraySize(await scontrolConfig()) ?? 1001);
    const dir = Deno.makeTempDirSync({ prefix: "slurm-array-" });
    try {
      const script = sbatchScript({
        id: "test",
        sweepDir: dir,
        submission: "sub-0",
        count: 3,
        slurm: { ...SLURM_DEFAULTS, array_parallelism: 1, timeout_min: 5, mem_gb: 1 },
        repoRoot: dir,
        runsRoot: dir,
        denoPath: "/bin/true",
      }).replace(/^exec .*$/m, '[ "$SLURM_ARRAY_TASK_ID" = 0 ] && exit 7\nsleep 1');
      Deno.mkdirSync(join(dir, "slurm"));
      Deno.writeTextFileSync(join(dir, "script.sbatch"), script);
      const out = await new Deno.Command("sbatch", { args: ["--parsable", join(dir, "script.sbatch")] }).output();
      const array = new TextDecoder().decode(out.stdout).trim().split(";")[0];
      assert(out.success && /^\d+$/.test(array), new TextDecoder().decode(out.stderr));
      const ids = [0, 1, 2].map((i) => `${array}_${i}`);
      try {
        const first = await slurmJobStates(ids);
        assertEquals(first.get(ids[2])?.state, "pending", "%1 keeps the last element waiting");
        await cancelJobs([ids[2]]);
        await until("elements 0 and 1 to end", 600, async () => {
          const states = await slurmJobStates(ids);
          return ["failed", "completed"].includes(states.get(ids[1])?.state ?? "") &&
            states.get(ids[0])?.state === "failed";
        });
        const states = await slurmJobStates([...ids, `${array}_7`]);
        assertEquals(states.get(ids[0]), { state: "failed", exitCode: 7, reason: "NonZeroExitCode" });
        assertEquals(states.get(ids[1]), { state: "completed", exitCode: 0, reason: undefined });
        assertEquals(states.get(ids[2])?.state, "lost", "a pending element cancelled is forgotten at once");
        assertEquals(states.get(`${array}_7`)?.state, "lost");
        assert(Deno.statSync(join(dir, "slurm", `${array}_0.err`)).isFile, "logs at %A_%a");
        assertEquals((await slurmJobStates(["999999_0"])).get("999999_0")?.state, "lost", "an unknown array");
      } finally {
        await cancelJobs([array]);
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
);

async function scontrolConfig(): Promise<string> {
  const out = await new Deno.Command("scontrol", { args: ["show", "config"], stdout: "piped", stderr: "null" })
    .output();
  return new TextDecoder().decode(out.stdout);
}

/** `deno run -A main.ts ...args` in the project, output captured. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(PROJECT, "main.ts"), ...args],
    cwd: PROJECT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

function onlySweepDir(runs: string): string {
  const ids = [...Deno.readDirSync(join(runs, "_sweeps"))].map((e) => e.name);
  assertEquals(ids.length, 1, `one sweep under ${runs}: ${ids.join(", ")}`);
  return join(runs, "_sweeps", ids[0]);
}

function taskKeys(sweepDir: string): string[] {
  return (JSON.parse(Deno.readTextFileSync(join(sweepDir, "sweep.json"))).tasks as { key: string }[]).map((t) => t.key);
}

slurmTest("sweep --executor slurm: 2 smoke tasks complete once; a second call submits nothing", async () => {
  const runs = Deno.makeTempDirSync({ prefix: "slurm-sweep-" });
  try {
    // The shipped smoke sweep, its Slurm settings included, cut to one seed and L = 1: two tasks still make an array
    // that runs two at a time, and how many ica-toy settings train is not what this test is about.
    const shipped = JSON.parse(Deno.readTextFileSync(join(PROJECT, "sweeps/ica_toy_smoke.json")));
    const spec = join(runs, "smoke.json");
    Deno.writeTextFileSync(spec, JSON.stringify({ ...shipped, base: { layers: [1] }, seeds: 1 }));
    const first = await cli(["sweep", spec, "--executor", "slurm", "--wait", "--runs", runs]);
    assertEquals(first.code, 0, first.stdout + first.stderr);
    assert(/2 tasks, 2 completed/.test(first.stdout), first.stdout);
    const completed = listRuns(runs).filter((r) => r.status === "completed");
    assertEquals(completed.length, 2);
    const settings = new Set(completed.map((r) => `${readConfig(r.dir)?.dim}/${r.info.seed}`));
    assertEquals(settings.size, 2, `distinct (dim, seed): ${[...settings].join(" ")}`);

    const sweepDir = onlySweepDir(runs);
    const second = await mainInProcess(["sweep", spec, "--executor", "slurm", "--runs", runs]);
    assertEquals(second.code, 0, second.stdout + second.stderr);
    assert(/2 completed/.test(second.stdout) && /\b0 launched/.test(second.stdout), second.stdout);
    const submissions = [...Deno.readDirSync(join(sweepDir, "slurm"))].filter((e) => e.name.endsWith(".tasks"));
    assertEquals(submissions.length, 1, "no second submission");
  } finally {
    Deno.removeSync(runs, { recursive: true });
  }
});

slurmTest("sweep status lists a failed Slurm task with its exit code and log", async () => {
  const runs = Deno.makeTempDirSync({ prefix: "slurm-fail-" });
  try {
    const spec = join(runs, "failing.json");
    Deno.writeTextFileSync(
      spec,
      JSON.stringify({
        experiment: join(FIXTURES, "failing_experiment.ts"),
        preset: "smoke",
        name: "failing",
        grid: { fail: [false, true] },
        slurm: { timeout_min: 5, mem_gb: 1 },
      }),
    );
    const run = await cli(["sweep", spec, "--executor", "slurm", "--wait", "--runs", runs]);
    assertEquals(run.code, 1, `a failed task: exit 1\n${run.stdout}${run.stderr}`);
    const sweepDir = join(runs, "_sweeps", "failing");
    const failedKey = taskKeys(sweepDir)[1];
    const record = readTaskRecord(sweepDir, failedKey);
    assert(record?.err, "the failed task has an error log");
    assert(Deno.statSync(record.err).isFile, `${record.err} exists`);
    assert(Deno.readTextFileSync(record.err).includes("asked to fail"), "the log holds the error");

    const status = await mainInProcess(["sweep", "status", "failing", "--runs", runs]);
    const text = status.stdout + status.stderr;
    assert(/1 completed/.test(text) && /1 failed/.test(text), text);
    assert(text.includes(record.err), `the log path is listed:\n${text}`);
    assert(/exit(?: code)?\W+[1-9]\d*/.test(text), `the exit code is listed:\n${text}`);
    assert(/fail\W+true/.test(text), `the failed task's values are listed:\n${text}`);
  } finally {
    Deno.removeSync(runs, { recursive: true });
  }
});

slurmTest("a pending element cancelled with scancel is lost, and submitted again by the next call", async () => {
  const runs = Deno.makeTempDirSync({ prefix: "slurm-lost-" });
  const jobs: string[] = [];
  try {
    const spec = join(runs, "slow.json");
    Deno.writeTextFileSync(
      spec,
      JSON.stringify({
        experiment: join(FIXTURES, "failing_experiment.ts"),
        preset: "smoke",
        name: "slow",
        base: { sleep_s: 60 },
        seeds: 2,
        slurm: { timeout_min: 5, mem_gb: 1, array_parallelism: 1 },
      }),
    );
    // The scenario is Slurm's and the run store's, not the command line's: each call runs in this process.
    const first = await mainInProcess(["sweep", spec, "--executor", "slurm", "--runs", runs]);
    assertEquals(first.code, 0, first.stdout + first.stderr);
    assert(/2 launched/.test(first.stdout), first.stdout);
    const sweepDir = join(runs, "_sweeps", "slow");
    const [, pendingKey] = taskKeys(sweepDir);
    const pendingJob = readTaskRecord(sweepDir, pendingKey)?.job_id;
    assert(pendingJob);
    jobs.push(pendingJob, readTaskRecord(sweepDir, taskKeys(sweepDir)[0])?.job_id ?? "");
    assertEquals((await slurmJobStates([pendingJob])).get(pendingJob)?.state, "pending");
    await cancelJobs([pendingJob]);

    const status = await mainInProcess(["sweep", "status", "slow", "--runs", runs]);
    assert(/1 lost/.test(status.stdout + status.stderr), status.stdout + status.stderr);
    const again = await mainInProcess(["sweep", spec, "--executor", "slurm", "--runs", runs]);
    assertEquals(again.code, 0, again.stdout + again.stderr);
    assert(/1 active/.test(again.stdout) && /1 launched/.test(again.stdout), again.stdout);
    const record = readTaskRecord(sweepDir, pendingKey);
    assert(record?.job_id && record.job_id !== pendingJob, `a new job: ${record?.job_id}`);
    assertEquals(record.attempts, 2);
    jobs.push(record.job_id);
  } finally {
    await cancelJobs(jobs.map((id) => id.split("_")[0]));
    // A cancelled run still writes its interrupted state and logs: the folder goes once its jobs have ended.
    await until("the cancelled jobs to end", 600, async () => {
      const states = await slurmJobStates(jobs);
      return [...states.values()].every((s) => s.state !== "pending" && s.state !== "running");
    });
    Deno.removeSync(runs, { recursive: true });
  }
});
