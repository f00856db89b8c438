/**
 * The `workers` bench group's PyTorch-on-N-threads side and communication share: the rounds
 * alternate four sides ABCD DCBA, both PyTorch workers get the same build request, the ratios and shares are
 * summarised from the rounds, and the terminal line and the table of docs/performance.md show them. Fake PyTorch workers answer
 * with fixed times, so nothing here depends on how fast the machine is.
 *
 * @module
 */
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import {
  type BenchReport,
  dataEntryLine,
  type ModelResult,
  type ReferenceInfo,
  type Spread,
  spread,
} from "../../bench/harness/report.ts";
import { timeModel } from "../../bench/harness/rounds.ts";
import { speedSection } from "../../bench/readme_table.ts";

type Workload = Parameters<typeof timeModel>[0];
type Worker = NonNullable<Parameters<typeof timeModel>[2]>;

const ONE_THREAD_MS = 10, TWO_THREADS_MS = 4;

/** A PyTorch worker that logs its timing requests and answers every step with `ms`. */
function fakeWorker(label: string, ms: number, log: string[]) {
  const requests: Record<string, unknown>[] = [];
  const worker = {
    request(message: Record<string, unknown>) {
      requests.push(message);
      if (message.op === "build") return Promise.resolve({ ok: true, parameters: 5, check: null });
      if (message.op === "time") {
        log.push(label);
        const steps = message.steps as number;
        return Promise.resolve({ times_ms: Array(steps).fill(ms), minor_faults: 3 * steps });
      }
      return Promise.resolve({ ok: true });
    },
  };
  return { worker: worker as unknown as Worker, requests };
}

function info(threads: number): ReferenceInfo {
  return {
    python: "/usr/bin/python3",
    torch: "1.13.0",
    threads,
    env: "clean",
    malloc: "keep",
    removed_env: {},
    set_env: { OMP_NUM_THREADS: String(threads) },
    blas: { openblas: { config: "OpenBLAS 0.3.21 DYNAMIC_ARCH", core: "Haswell", threads } },
    numpy: null,
  };
}

/** A data-parallel-like workload whose steps log themselves and whose shares come from `shares`, in order. */
function fakeWorkload(log: string[], shares: number[]): Workload {
  // A real await, so every local step takes a nonzero time and each round has a baseline median.
  const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));
  return {
    name: "conv-vae-64-dp2",
    batch: 64,
    alsoReference: true,
    alsoThreadedReference: true,
    goal: { ratio: 1, source: "test" },
    baseline: { model: "conv-vae-64", throughputFloor: 1.6, paired: true, source: "test" },
    build: () => ({
      parameters: 5,
      referenceArgs: { size: 64 },
      step: async () => {
        log.push("ours");
        await tick();
      },
      baselineStep: async () => {
        log.push("baseline");
        await tick();
      },
      takeCommunicationShare: () => shares.shift()!,
      dispose() {},
    }),
  };
}

function assertSpread(actual: Spread, expected: Spread, tolerance = 1e-12) {
  for (const key of ["median", "q1", "q3", "min", "max"] as const) {
    assertAlmostEquals(actual[key], expected[key], tolerance, key);
  }
}

Deno.test("the workers group's rounds alternate four sides ABCD DCBA and pair with PyTorch on N threads", async () => {
  const log: string[] = [];
  const one = fakeWorker("torch-1", ONE_THREAD_MS, log), two = fakeWorker("torch-2", TWO_THREADS_MS, log);
  // The first share is the warm-up's, which the rounds drop.
  const result = await timeModel(
    fakeWorkload(log, [0.9, 0.1, 0.3, 0.2]),
    "wasm",
    one.worker,
    { rounds: 3, steps: 2, warmup: 1 },
    { worker: two.worker, info: info(2) },
  );
  const forward = ["ours", "ours", "baseline", "baseline", "torch-1", "torch-2"];
  assertEquals(log, [
    "ours",
    "baseline",
    "torch-1",
    "torch-2",
    ...forward,
    ...[...forward].reverse(),
    ...forward,
  ]);
  const build = { op: "build", model: "conv-vae-64-dp2", args: { size: 64 } };
  assertEquals(one.requests[0], build);
  assertEquals(two.requests[0], build);
  assertEquals(one.requests.at(-1), { op: "dispose", model: "conv-vae-64-dp2" });
  assertEquals(two.requests.at(-1), { op: "dispose", model: "conv-vae-64-dp2" });

  const n = result.reference_threads!;
  assertEquals(n.threads, 2);
  assertEquals(n.ms_per_step, spread([TWO_THREADS_MS]));
  assertEquals(n.page_faults_per_step, 3);
  assertEquals(result.reference_ms_per_step, spread([ONE_THREAD_MS]));
  assertEquals(result.rounds.map((r) => r.reference_threads_ms), [4, 4, 4]);
  for (const r of result.rounds) {
    assertAlmostEquals(r.reference_threads_ratio!, r.ours_ms / TWO_THREADS_MS, 1e-12);
    assertAlmostEquals(r.baseline_reference_threads_ratio!, r.baseline_ms! / TWO_THREADS_MS, 1e-12);
    assertAlmostEquals(r.ratio!, r.ours_ms / ONE_THREAD_MS, 1e-12);
  }
  assertSpread(n.ratio, spread(result.rounds.map((r) => r.ours_ms / TWO_THREADS_MS)));
  assertSpread(n.baseline_ratio!, spread(result.rounds.map((r) => r.baseline_ms! / TWO_THREADS_MS)));
  // The goal stays on PyTorch on one thread.
  assertSpread(result.ratio!, spread(result.rounds.map((r) => r.ours_ms / ONE_THREAD_MS)));
  assertEquals(result.goal?.ratio_met, result.ratio!.median <= 1);
  // Shares 0.1, 0.3, 0.2 over the rounds: median 0.2, quartiles 0.15 and 0.25 (linear interpolation).
  assertEquals(result.rounds.map((r) => r.communication_share), [0.1, 0.3, 0.2]);
  assertSpread(result.communication_share!, { median: 0.2, q1: 0.15, q3: 0.25, min: 0.1, max: 0.3 });
});

Deno.test("without a second PyTorch worker the entry has no N-thread side and three sides alternate", async () => {
  const log: string[] = [];
  const one = fakeWorker("torch-1", ONE_THREAD_MS, log);
  const result = await timeModel(fakeWorkload(log, [0, 0.5, 0.25]), "wasm", one.worker, {
    rounds: 2,
    steps: 1,
    warmup: 0,
  });
  assertEquals(log, ["ours", "baseline", "torch-1", "torch-1", "baseline", "ours"]);
  assertEquals(result.reference_threads, null);
  assert(result.rounds.every((r) => r.reference_threads_ms === undefined));
  // No warm-up: the first share taken is still dropped, as the warm-up's would be.
  assertSpread(result.communication_share!, spread([0.5, 0.25]));
});

const s = (median: number, q1: number, q3: number, min: number, max: number): Spread => ({ median, q1, q3, min, max });

/** A `workers` entry as `timeModel` reports it, with round numbers. */
function workersResult(): ModelResult {
  return {
    model: "conv-vae-64-dp2",
    backend: "wasm",
    batch: 64,
    parameters: 5,
    reference_parameters: 5,
    ms_per_step: s(490, 480, 500, 470, 510),
    reference_ms_per_step: s(340, 330, 350, 320, 360),
    reference_page_faults_per_step: 0,
    ratio: s(1.44, 1.4, 1.5, 1.3, 1.6),
    rounds: [],
    load_before: 1,
    load_after: 1.25,
    peak_rss_mb: 100,
    reference_library: "torch",
    goal: { ratio: 1, ratio_met: false, source: "goal source" },
    baseline: {
      model: "conv-vae-64",
      ms_per_step: s(874, 860, 880, 850, 900),
      paired_ratio: s(0.56, 0.55, 0.57, 0.5, 0.6),
      ratio_of_medians: 0.561,
      ceiling: 0.625,
      met: true,
      source: "scaling source",
      judged_on: "paired_ratio",
      throughput_ratio: s(1.78, 1.75, 1.82, 1.7, 1.9),
      throughput_floor: 1.6,
    },
    reference_threads: {
      threads: 2,
      ms_per_step: s(210, 200, 220, 190, 230),
      page_faults_per_step: 0,
      ratio: s(2.33, 2.2, 2.4, 2.1, 2.5),
      baseline_ratio: s(4.16, 4.1, 4.2, 4.0, 4.3),
    },
    communication_share: s(0.234, 0.2, 0.25, 0.18, 0.3),
  };
}

Deno.test("dataEntryLine shows PyTorch on N threads, both ratios to it with no goal, and the communication share", () => {
  const line = dataEntryLine(workersResult());
  assert(
    line.includes(
      "PyTorch 340 ms (IQR 330–350), ratio ours/PyTorch 1.44 (IQR 1.40–1.50, min–max 1.30–1.60); goal ratio ≤ 1 " +
        "NOT met, PyTorch on 2 threads 210 ms (IQR 200–220), ratio ours/PyTorch-2 2.33 (IQR 2.20–2.40, min–max " +
        "2.10–2.50), conv-vae-64/PyTorch-2 4.16 (IQR 4.10–4.20, min–max 4.00–4.30); no goal, communication 23% of " +
        "the gradient time (IQR 20–25%); load 1.00 → 1.25",
    ),
    line,
  );
  const plain = { ...workersResult(), reference_threads: null, communication_share: null };
  assert(!dataEntryLine(plain).includes("threads"), dataEntryLine(plain));
  assert(!dataEntryLine(plain).includes("communication"), dataEntryLine(plain));
});

function report(results: ModelResult[], threaded: boolean): BenchReport {
  return {
    schema: "latentlab-bench/1",
    date: "2026-11-28T00:00:00.000Z",
    argv: ["--only", "workers"],
    config: {
      rounds: 8,
      steps: 3,
      warmup: 2,
      threads: 1,
      torch_env: "clean",
      torch_malloc: "keep",
      models: results.map((r) => r.model),
      backends: ["wasm"],
    },
    machine: {
      cpu: "CPU",
      cores: 2,
      memory_gb: 8,
      os: "linux x86_64",
      deno: "2",
      v8: "13",
      tfjs: "4.22.0",
      tfjs_wasm: "4.22.0",
      wasm_simd: true,
      wasm_threads: false,
      load_start: [0.5, 0.5, 0.5],
      load_end: [1, 1, 1],
    },
    reference: info(1),
    ...(threaded ? { reference_threads: info(2) } : {}),
    results,
    datasets: [],
    profiles: [],
  };
}

Deno.test("the performance page's section has a data-parallel table with PyTorch on N threads and the communication share", () => {
  const text = speedSection(report([workersResult()], true));
  assert(text.includes("ABBA; ABC CBA with a baseline step too; ABCD DCBA with PyTorch on more threads as well"));
  assert(text.includes("Data-parallel steps beside PyTorch on 1 thread and on 2 threads"), text);
  assert(text.includes("BLAS OpenBLAS 0.3.21, core kernel Haswell"), text);
  assert(
    text.includes(
      "| model | backend | tfjs ms/step | 1-worker ms/step | PyTorch 1 thread ms/step | PyTorch 2 threads ms/step | " +
        "ratio tfjs/PyTorch-2 | ratio IQR | ratio min–max | ratio 1-worker/PyTorch-2 | communication share (IQR) | " +
        "load before → after |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
        "| conv VAE 64×64, 2 data-parallel workers | wasm | 490 | 874 | 340 | 210 | 2.33 | 2.20–2.40 | 2.10–2.50 | " +
        "4.16 (IQR 4.10–4.20) | 23% (20–25%) | 1.00 → 1.25 |",
    ),
    text,
  );
});

Deno.test("reports without the data-parallel fields render as before: no data-parallel table", () => {
  const older = workersResult();
  delete older.reference_threads;
  delete older.communication_share;
  const text = speedSection(report([older], false));
  assert(!text.includes("Data-parallel steps"), text);
  assert(!text.includes("ABCD DCBA"), text);
  assert(text.includes("| conv VAE 64×64, 2 data-parallel workers | wasm | 64 | 490 | 340 | 1.44 |"), text);
});
