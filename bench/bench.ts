/**
 * `deno task bench`: training-step times of the toolkit's reference models per TF.js backend, paired round by round
 * with PyTorch on the same number of CPU threads when a python3 with torch is found. Every entry times the
 * library's own step (lib/train, lib/adapt, lib/contrastive, lib/models), never a copy of it.
 *
 * The entries live in bench/groups/, one file per group: vae.ts (the disentanglement_lib VAEs and the conv
 * encoder's inference), classifiers.ts (the MNIST CNN, its ANT step, the benchmark's regressors, ABS),
 * data_path.ts (splits, R² and dataset rendering, beside NumPy), and the `--only` groups tta.ts, cebra.ts,
 * vae_pca.ts, firevnet.ts, pose.ts and workers.ts; corruptions.ts is the `--corruptions` section, profile.ts the
 * `--profile` one. Each side reports its parameter count; a mismatch is printed, since it means the two networks
 * differ. Results that fail their check against the reference make the bench exit 1.
 *
 * Fairness: PyTorch runs in one persistent worker (bench/harness/reference_worker.ts), so its start-up is never
 * timed, in an environment without our OpenBLAS overrides and with glibc keeping freed memory, as the wasm heap
 * does. Rounds alternate the sides (bench/harness/rounds.ts: ABBA order, cancelling linear drift in machine load);
 * the ratio per model is the median of the per-round ratios, with its spread, beside the load average.
 *
 * usage: deno task bench [--backend auto|wasm|cpu|webgpu|all] [--models a,b] [--rounds N]
 *        [--steps N] [--warmup N] [--threads N] [--torch auto|off] [--torch_env clean|inherit]
 *        [--torch_malloc keep|default] [--profile] [--corruptions] [--corruption_images N]
 *        [--mnist_c_images N] [--only tta,cebra,vae-pca,firevnet,pose,workers] [--webgpu_kernels latentlab|stock]
 *        [--webgpu_steps N] [--json path] [--write-docs]
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { version_wasm } from "@tensorflow/tfjs-backend-wasm";
import { cpus, loadavg, totalmem } from "node:os";
import { type BackendOptions, selectBackend } from "../lib/core/backend.ts";
import { exitWithUsageError, parseCommandLine } from "../lib/core/cli.ts";
import { choice, choices, flag, integer, resolveConfig } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { BENCH_GROUPS, DEFAULT_MODELS, GROUP_NAMES, MODEL_NAMES } from "./harness/names.ts";
import { referenceProcessLine, torchProcessLine, TorchWorker } from "./harness/reference_worker.ts";
import { type BenchReport, dataEntryLine } from "./harness/report.ts";
import { timeModel, type Workload } from "./harness/rounds.ts";
import { CEBRA_WORKLOADS } from "./groups/cebra.ts";
import { ABS_WORKLOADS, MNIST_CNN_WORKLOADS, REGRESSOR_WORKLOADS } from "./groups/classifiers.ts";
import { corruptionSection } from "./groups/corruptions.ts";
import { DATA_PATH_WORKLOADS, datasetThroughput } from "./groups/data_path.ts";
import { FIREVNET_WORKLOADS } from "./groups/firevnet.ts";
import { POSE_WORKLOADS } from "./groups/pose.ts";
import { gemmRates, profileWorkload } from "./groups/profile.ts";
import { TTA_WORKLOADS } from "./groups/tta.ts";
import { ENCODER_INFERENCE_WORKLOAD, VAE_WORKLOADS } from "./groups/vae.ts";
import { VAE_PCA_WORKLOADS } from "./groups/vae_pca.ts";
import { DATA_PARALLEL_SHARDS, WORKERS_WORKLOADS } from "./groups/workers.ts";
import { PERFORMANCE_PAGE, speedSection, writeSpeedTable } from "./readme_table.ts";

const OPTIONS = {
  backend: choice("auto", ["auto", "wasm", "cpu", "webgpu", "all"], "backends to time; all = every one available"),
  models: choices(DEFAULT_MODELS, MODEL_NAMES, "models to time (ant-step only when named or with --corruptions)"),
  rounds: integer(8, "paired rounds per model (tfjs and PyTorch alternate, ABBA)", { min: 1 }),
  steps: integer(3, "timed steps per side per round; a round's time is their median", { min: 1 }),
  warmup: integer(2, "untimed steps per side before the first round", { min: 0 }),
  threads: integer(1, "PyTorch threads (the wasm backend runs on one)", { min: 1 }),
  torch: choice("auto", ["auto", "off"], "run the PyTorch reference when a python3 has torch"),
  torch_env: choice("clean", ["clean", "inherit"], "clean: the reference runs without our OpenBLAS overrides"),
  torch_malloc: choice("keep", ["keep", "default"], "keep: glibc keeps the reference's freed memory, as the wasm heap"),
  profile: flag(false, "per-kernel times and GFLOP/s of the timed entries' steps (none timed: the conv VAE 64×64)"),
  corruptions: flag(false, "images/s per corruption beside NumPy, MNIST-C on 10,000 digits, and ant-step"),
  corruption_images: integer(1000, "real digits each corruption is timed on per round", { min: 1, max: 9999 }),
  mnist_c_images: integer(10_000, "digits the 15 MNIST-C corruptions are timed on once, ours; 0 skips", {
    min: 0,
    max: 10_000,
  }),
  webgpu_kernels: choice(
    "latentlab",
    ["latentlab", "stock"],
    "webgpu: latentlab's kernels and settings, or TF.js's own",
  ),
  webgpu_steps: integer(5, "webgpu: unread steps counted per entry (calls and time per step, one read at the end)", {
    min: 1,
  }),
  only: choices([], GROUP_NAMES, "time only these groups' entries instead of --models, and no dataset throughput"),
};

/** Every entry, in the order they are timed. */
const WORKLOADS: Workload[] = [
  ...VAE_WORKLOADS,
  ...WORKERS_WORKLOADS,
  ...MNIST_CNN_WORKLOADS,
  ENCODER_INFERENCE_WORKLOAD,
  ...REGRESSOR_WORKLOADS,
  ...ABS_WORKLOADS,
  ...DATA_PATH_WORKLOADS,
  ...TTA_WORKLOADS,
  ...CEBRA_WORKLOADS,
  ...VAE_PCA_WORKLOADS,
  ...FIREVNET_WORKLOADS,
  ...POSE_WORKLOADS,
];

async function availableBackends(choice: string, options: BackendOptions): Promise<string[]> {
  if (choice === "auto") return [(await selectBackend("auto")).name];
  if (choice !== "all") return [choice];
  const names = ["wasm", "cpu"];
  try {
    const info = await selectBackend("webgpu", options);
    if (!info.softwareAdapter) names.unshift("webgpu");
  } catch {
    // no adapter: nothing to add
  }
  return names;
}

/** The checked-out commit (short hash, "+changes" when the tree differs from it), or null outside a git clone. */
async function sourceCommit(): Promise<string | null> {
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: new URL("..", import.meta.url), stdout: "piped", stderr: "null" }).output();
  try {
    const head = await git("rev-parse", "--short=7", "HEAD");
    if (!head.success) return null;
    const status = await git("status", "--porcelain", "--untracked-files=no");
    const changed = status.success && new TextDecoder().decode(status.stdout).trim() !== "";
    return new TextDecoder().decode(head.stdout).trim() + (changed ? "+changes" : "");
  } catch {
    return null;
  }
}

async function machineInfo(): Promise<BenchReport["machine"]> {
  const load = loadavg();
  return {
    commit: await sourceCommit(),
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    os: `${Deno.build.os} ${Deno.build.arch}`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    tfjs: tf.version.tfjs,
    tfjs_wasm: version_wasm,
    wasm_simd: await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT") as boolean,
    wasm_threads: await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT") as boolean,
    load_start: load,
    load_end: load,
  };
}

async function main(args: string[]): Promise<void> {
  const { flags, positionals } = parseCommandLine(args);
  const jsonPath = flags.get("json"), writeDocs = flags.get("write-docs");
  flags.delete("json");
  flags.delete("write-docs");
  if (flags.has("help")) {
    console.log(
      "usage: deno task bench [--backend auto|wasm|cpu|webgpu|all] [--models a,b] [--rounds N] [--steps N] " +
        "[--warmup N] [--threads N] [--torch auto|off] [--torch_env clean|inherit] [--torch_malloc keep|default] " +
        "[--profile] [--corruptions] [--corruption_images N] [--mnist_c_images N] [--only group] [--webgpu_kernels latentlab|stock] " +
        "[--webgpu_steps N] [--json path] [--write-docs]\n" +
        `models: ${MODEL_NAMES.join(", ")} (default: all but ant-step, which --corruptions adds, and the groups')\n` +
        `groups: ${Object.entries(BENCH_GROUPS).map(([name, group]) => `${name} = ${group.join(", ")}`).join("; ")}`,
    );
    return;
  }
  let cfg;
  try {
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (jsonPath === true) throw new UsageError("--json needs a path");
    if (writeDocs !== undefined && writeDocs !== true) throw new UsageError("--write-docs takes no value");
    cfg = resolveConfig(OPTIONS, {}, flags, ["json", "write-docs"]);
    if (cfg.only.length && flags.has("models")) {
      throw new UsageError("give --models or --only, not both: --only times its groups' entries instead");
    }
    if (cfg.only.length && writeDocs) {
      throw new UsageError("--write-docs rewrites the whole speed table, which --only would cut to its groups");
    }
  } catch (error) {
    if (error instanceof UsageError) exitWithUsageError(error.message);
    throw error;
  }
  const chosenModels: readonly string[] = cfg.only.length
    ? MODEL_NAMES.filter((name) => cfg.only.some((group) => (BENCH_GROUPS[group] as readonly string[]).includes(name)))
    : cfg.models;
  // The corruption section's speed goals come with the ANT step's: it brings that entry with it.
  const models: string[] = cfg.corruptions && !chosenModels.includes("ant-step")
    ? MODEL_NAMES.filter((name) => chosenModels.includes(name) || name === "ant-step")
    : [...chosenModels];
  const webgpuOptions = { webgpuKernels: cfg.webgpu_kernels as "latentlab" | "stock" };
  const backends = await availableBackends(cfg.backend, webgpuOptions);
  const machine = await machineInfo();
  const started = cfg.torch === "auto"
    ? await TorchWorker.start(
      cfg.threads,
      cfg.torch_env as "clean" | "inherit",
      cfg.torch_malloc as "keep" | "default",
      cfg.corruptions,
    )
    : null;
  if (!started && cfg.torch === "auto") console.error("no python3 with torch found: running without the reference");
  if (started) console.error(`reference: ${torchProcessLine(started.info)}`);
  // The `workers` group's entries run PyTorch on as many threads as they have shards too, in a worker of its own.
  const threaded = started && WORKLOADS.some((w) => w.alsoThreadedReference && models.includes(w.name))
    ? await TorchWorker.start(
      DATA_PARALLEL_SHARDS,
      cfg.torch_env as "clean" | "inherit",
      cfg.torch_malloc as "keep" | "default",
    )
    : null;
  if (threaded) console.error(`reference on ${DATA_PARALLEL_SHARDS} threads: ${torchProcessLine(threaded.info)}`);
  console.error(`1-minute load average at the start: ${machine.load_start[0].toFixed(2)} on ${machine.cores} cores`);
  const worker = started?.worker ?? null;
  const report: BenchReport = {
    schema: "latentlab-bench/1",
    date: new Date().toISOString(),
    argv: args,
    config: {
      rounds: cfg.rounds,
      steps: cfg.steps,
      warmup: cfg.warmup,
      threads: cfg.threads,
      torch_env: cfg.torch_env as "clean" | "inherit",
      torch_malloc: cfg.torch_malloc as "keep" | "default",
      models,
      backends,
      corruptions: cfg.corruptions,
      only: cfg.only,
      webgpu_kernels: cfg.webgpu_kernels as "latentlab" | "stock",
    },
    machine,
    reference: started?.info ?? null,
    reference_threads: threaded?.info ?? null,
    results: [],
    datasets: [],
  };
  try {
    const chosen = WORKLOADS.filter((w) => models.includes(w.name));
    const onBackends = chosen.filter((w) => !w.plain), plain = chosen.filter((w) => w.plain);
    for (const backend of onBackends.length ? backends : []) {
      const info = await selectBackend(backend as "wasm" | "cpu" | "webgpu", webgpuOptions);
      if (backend === "webgpu") report.machine.webgpu_adapter = info.adapter;
      for (const workload of onBackends) {
        console.error(`timing ${workload.name} on ${backend} ...`);
        const result = await timeModel(workload, backend, worker, cfg, threaded);
        report.results.push(result);
        if (result.goal || result.check || result.baseline) console.error(dataEntryLine(result));
      }
    }
    const webgpuToo = onBackends.filter((w) => w.alsoWebgpu && !backends.includes("webgpu"));
    if (webgpuToo.length) {
      const info = await selectBackend("webgpu", webgpuOptions).catch(() => null);
      if (info && !info.softwareAdapter) {
        report.machine.webgpu_adapter = info.adapter;
        for (const workload of webgpuToo) {
          console.error(`timing ${workload.name} on webgpu ...`);
          const result = await timeModel(workload, "webgpu", worker, cfg);
          report.results.push(result);
          console.error(dataEntryLine(result));
        }
      } else {
        // A software adapter runs the shaders on this CPU: its times say nothing about a GPU.
        const reason = info
          ? `the only WebGPU adapter, "${info.adapter}", renders in software on this CPU (--backend webgpu times it)`
          : "no WebGPU adapter";
        report.not_timed = webgpuToo.map((w) => ({ model: w.name, backend: "webgpu", reason }));
        for (const w of webgpuToo) console.error(`${w.name} not timed on webgpu: ${reason}`);
      }
      await selectBackend(backends.at(-1) as "wasm" | "cpu" | "webgpu");
    }
    if (started && plain.some((w) => !w.oursOnly)) {
      console.error(`NumPy reference: ${referenceProcessLine(started.info)}`);
    }
    for (const workload of plain) {
      console.error(`timing ${workload.name} (plain JS)${workload.oursOnly ? "" : " beside NumPy"} ...`);
      const result = await timeModel(workload, "js", worker, cfg);
      report.results.push(result);
      console.error(dataEntryLine(result));
    }
    if (cfg.corruptions) {
      if (started) console.error(`corruption reference: ${referenceProcessLine(started.info)}`);
      report.corruptions = await corruptionSection(worker, {
        rounds: cfg.rounds,
        warmup: cfg.warmup,
        images: cfg.corruption_images,
        allImages: cfg.mnist_c_images,
      });
    }
    if (cfg.profile) {
      const backend = backends.find((b) => b !== "cpu") ?? backends[0];
      await selectBackend(backend as "wasm" | "cpu" | "webgpu");
      const torchGemm = worker
        ? await worker.request({ op: "gemm", n: 512, repeats: 7 }) as { gflops: number; cpu_per_wall: number }
        : null;
      const gemm = await gemmRates(torchGemm);
      // Steps of one process; data-parallel entries spread theirs over workers tf.profile does not see.
      const profiled = onBackends.filter((w) => !w.alsoThreadedReference);
      report.profiles = [];
      for (const workload of profiled.length ? profiled : WORKLOADS.filter((w) => w.name === "conv-vae-64")) {
        console.error(`profiling ${workload.name} on ${backend} ...`);
        report.profiles.push(await profileWorkload(workload, backend, gemm));
      }
    }
  } finally {
    await worker?.close();
    await threaded?.worker.close();
  }
  const convStep = report.results.find((r) => r.model === "conv-vae-64" && r.backend === backends[0]);
  // --only times its groups and nothing else.
  if (!cfg.only.length) report.datasets = datasetThroughput(convStep?.ms_per_step.median ?? null);
  report.machine.load_end = loadavg();
  // The same tables docs/performance.md shows, so what the terminal says is what the page will say.
  console.log(`\n${speedSection(report)}`);
  if (typeof jsonPath === "string") {
    Deno.writeTextFileSync(jsonPath, JSON.stringify(report, null, 2) + "\n");
    console.error(`wrote ${jsonPath}`);
  }
  if (writeDocs) {
    writeSpeedTable(report, PERFORMANCE_PAGE);
    console.error(`wrote the speed table of ${PERFORMANCE_PAGE}`);
  }
  const failed: string[] = [
    ...report.results.filter((r) => r.check && !r.check.ok).map((r) => r.model),
    ...(report.corruptions?.results ?? []).filter((r) => !r.check.ok).map((r) => `${r.suite}/${r.name}`),
  ];
  if (failed.length) {
    console.error(`FAILED: ${failed.join(", ")}: results failed their check (see above)`);
    Deno.exitCode = 1;
  }
}

if (import.meta.main) await main(Deno.args);
