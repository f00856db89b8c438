/**
 * `deno task bench`: training-step and inference times of the toolkit's
 * reference models per TF.js backend, beside PyTorch on the same number of
 * CPU threads when python3 with torch is available.
 *
 * Models: the disentanglement_lib conv VAE at 64×64 and 32×32 and its MLP
 * VAE at 64×64 (batch 64, Adam, Bernoulli loss), a small MNIST CNN
 * (batch 128), and the conv encoder's inference (batch 256).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { fileURLToPath } from "node:url";
import { selectBackend } from "../lib/core/backend.ts";
import { exitWithUsageError, parseCommandLine } from "../lib/core/cli.ts";
import { choice, flag, integer, resolveConfig } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { Rng } from "../lib/core/rng.ts";
import { betaVaeLoss, convDecoder, convEncoder, vaeNetworks } from "../lib/models/dislib_vae.ts";
import { smallCnn } from "../lib/models/small_cnn.ts";
import { sampleBatch } from "../lib/data/ground_truth.ts";
import { DATASET_NAMES, loadDataset } from "../lib/data/registry.ts";

const OPTIONS = {
  backend: choice("auto", ["auto", "wasm", "cpu", "webgpu", "all"], "backends to time; all = every one available"),
  warmup: integer(3, "untimed steps first", { min: 0 }),
  repeats: integer(10, "timed steps", { min: 1 }),
  threads: integer(1, "PyTorch threads (the wasm backend runs on one)", { min: 1 }),
  torch: choice("auto", ["auto", "off"], "run the PyTorch reference when python3 has torch"),
  profile: flag(false, "print the per-kernel time of one conv VAE 64×64 step"),
};

/** One timed workload: builds its state once, then runs a step that resolves when the result is read. */
interface Workload {
  name: string;
  build(rng: Rng): { step(): Promise<void>; dispose(): void };
}

function vaeWorkload(name: string, size: 32 | 64, kind: "conv" | "mlp"): Workload {
  return {
    name,
    build(rng) {
      const options = { size, channels: 1, latents: 10 };
      const { encoder, decoder } = vaeNetworks(rng, kind, options);
      const variables = [...encoder.params.list(), ...decoder.params.list()];
      const x = tf.tensor4d(Float32Array.from({ length: 64 * size * size }, () => rng.uniform() < 0.2 ? 1 : 0), [
        64,
        size,
        size,
        1,
      ]);
      const optimizer = tf.train.adam(1e-4);
      return {
        async step() {
          const noise = tf.tensor2d(rng.normalArray(64 * 10), [64, 10]);
          const loss = optimizer.minimize(() => betaVaeLoss(encoder, decoder, x, noise).total, true, variables)!;
          await loss.data();
          tf.dispose([loss, noise]);
        },
        dispose() {
          encoder.params.dispose();
          decoder.params.dispose();
          optimizer.dispose();
          x.dispose();
        },
      };
    },
  };
}

const WORKLOADS: Workload[] = [
  vaeWorkload("conv-vae-64", 64, "conv"),
  vaeWorkload("conv-vae-32", 32, "conv"),
  vaeWorkload("mlp-vae-64", 64, "mlp"),
  {
    name: "mnist-cnn",
    build(rng) {
      const model = smallCnn(rng);
      const images = tf.tensor4d(Float32Array.from({ length: 128 * 784 }, () => rng.uniform()), [128, 28, 28, 1]);
      const labels = tf.oneHot(tf.tensor1d(Int32Array.from({ length: 128 }, () => rng.int(10)), "int32"), 10);
      const optimizer = tf.train.adam(1e-3);
      return {
        async step() {
          const loss = optimizer.minimize(
            () => tf.losses.softmaxCrossEntropy(labels, model.logits(images)) as tf.Scalar,
            true,
            model.params.list(),
          )!;
          await loss.data();
          loss.dispose();
        },
        dispose() {
          model.params.dispose();
          optimizer.dispose();
          tf.dispose([images, labels]);
        },
      };
    },
  },
  {
    name: "conv-encoder-infer",
    build(rng) {
      const encoder = convEncoder(rng, { size: 64, channels: 1, latents: 10 });
      const x = tf.tensor4d(Float32Array.from({ length: 256 * 4096 }, () => rng.uniform() < 0.2 ? 1 : 0), [
        256,
        64,
        64,
        1,
      ]);
      return {
        async step() {
          const { mean, logVar } = tf.tidy(() => encoder.encode(x));
          await mean.data();
          tf.dispose([mean, logVar]);
        },
        dispose() {
          encoder.params.dispose();
          x.dispose();
        },
      };
    },
  },
];

/** Median and range of step times in milliseconds. */
export interface Timing {
  median_ms: number;
  min_ms: number;
  max_ms: number;
}

function summarize(times: number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median_ms: median, min_ms: sorted[0], max_ms: sorted.at(-1)! };
}

async function timeWorkload(workload: Workload, warmup: number, repeats: number) {
  const state = workload.build(new Rng(0));
  const times: number[] = [];
  let peakRss = 0;
  for (let i = 0; i < warmup + repeats; i++) {
    const start = performance.now();
    await state.step();
    if (i >= warmup) times.push(performance.now() - start);
    peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
  }
  state.dispose();
  return { ...summarize(times), peak_rss_mb: Math.round(peakRss / 2 ** 20) };
}

async function profileConvVae(): Promise<string> {
  const rng = new Rng(0);
  const options = { size: 64 as const, channels: 1, latents: 10 };
  const encoder = convEncoder(rng, options), decoder = convDecoder(rng, options);
  const x = tf.tensor4d(Float32Array.from({ length: 64 * 4096 }, () => rng.uniform() < 0.2 ? 1 : 0), [64, 64, 64, 1]);
  const noise = tf.tensor2d(rng.normalArray(640), [64, 10]);
  const variables = [...encoder.params.list(), ...decoder.params.list()];
  const run = () => {
    const { value, grads } = tf.variableGrads(() => betaVaeLoss(encoder, decoder, x, noise).total, variables);
    tf.dispose([value, ...Object.values(grads)]);
  };
  run();
  const info = await tf.profile(run);
  const byKernel = new Map<string, number>();
  for (const k of info.kernels) byKernel.set(k.name, (byKernel.get(k.name) ?? 0) + Number(k.kernelTimeMs));
  const total = [...byKernel.values()].reduce((a, b) => a + b, 0);
  tf.dispose([x, noise]);
  encoder.params.dispose();
  decoder.params.dispose();
  return [...byKernel].sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([name, ms]) => `${name} ${ms.toFixed(1)} ms (${(100 * ms / total).toFixed(0)}%)`).join(", ");
}

async function torchReference(threads: number, warmup: number, repeats: number) {
  const script = fileURLToPath(new URL("./torch_reference.py", import.meta.url));
  // The Debian interpreter is tried too: python3-torch installs there, beside a pyenv python3 on PATH.
  for (const python of ["python3", "/usr/bin/python3"]) {
    try {
      const out = await new Deno.Command(python, {
        args: [script, "--threads", String(threads), "--warmup", String(warmup), "--repeats", String(repeats)],
        stderr: "null",
      }).output();
      if (out.success) return JSON.parse(new TextDecoder().decode(out.stdout));
    } catch {
      continue;
    }
  }
  return null;
}

async function availableBackends(choice: string): Promise<string[]> {
  if (choice === "auto") return [(await selectBackend("auto")).name];
  if (choice !== "all") return [choice];
  const names = ["wasm", "cpu"];
  try {
    const info = await selectBackend("webgpu");
    if (!info.softwareAdapter) names.unshift("webgpu");
  } catch {
    // no adapter: nothing to add
  }
  return names;
}

async function main(args: string[]): Promise<void> {
  const { flags, positionals } = parseCommandLine(args);
  const jsonPath = flags.get("json");
  flags.delete("json");
  if (flags.has("help")) {
    console.log(
      "usage: deno task bench [--backend auto|wasm|cpu|webgpu|all] [--warmup N] [--repeats N] " +
        "[--threads N] [--torch auto|off] [--profile] [--json path]",
    );
    return;
  }
  let cfg;
  try {
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (jsonPath === true) throw new UsageError("--json needs a path");
    cfg = resolveConfig(OPTIONS, {}, flags, ["json"]);
  } catch (error) {
    if (error instanceof UsageError) exitWithUsageError(error.message);
    throw error;
  }
  const rows: Record<string, unknown>[] = [];
  for (const backend of await availableBackends(cfg.backend)) {
    await selectBackend(backend as "wasm" | "cpu" | "webgpu");
    for (const workload of WORKLOADS) {
      console.error(`timing ${workload.name} on ${backend} ...`);
      rows.push({ model: workload.name, backend, ...await timeWorkload(workload, cfg.warmup, cfg.repeats) });
    }
    if (cfg.profile && backend !== "cpu") console.log(`profile (${backend}, conv-vae-64): ${await profileConvVae()}`);
  }
  const convStep = rows.find((r) => r.model === "conv-vae-64")?.median_ms as number | undefined;
  console.log(
    "\n| dataset | images/s (one core, 64×64, batches of 64) | batch of 64 ms | share of a conv VAE 64×64 step |",
  );
  console.log("|---|---|---|---|");
  for (const name of DATASET_NAMES) {
    const dataset = loadDataset(name);
    const rng = new Rng(0);
    sampleBatch(dataset, 64, rng); // warm-up: sprite masks and ray-cast layers are cached lazily
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const start = performance.now();
      sampleBatch(dataset, 64, rng);
      times.push(performance.now() - start);
    }
    const { median_ms } = summarize(times);
    const share = convStep ? `${(100 * median_ms / convStep).toFixed(1)}%` : "—";
    console.log(`| ${name} | ${Math.round(64_000 / median_ms)} | ${median_ms.toFixed(2)} | ${share} |`);
  }
  const torch = cfg.torch === "auto" ? await torchReference(cfg.threads, cfg.warmup, cfg.repeats) : null;
  for (const row of rows) {
    const reference = torch?.results?.[row.model as string];
    row.torch_median_ms = reference?.median_ms ?? null;
    row.ratio = reference ? (row.median_ms as number) / reference.median_ms : null;
  }
  const fmt = (v: unknown) => typeof v === "number" ? v.toFixed(v >= 100 ? 0 : 1) : "—";
  console.log(
    `| model | backend | median ms | min–max ms | peak RSS MB | PyTorch ${torch?.torch ?? ""} ${
      torch ? `(${torch.threads} thread${torch.threads > 1 ? "s" : ""}) ` : ""
    }ms | ratio tfjs/PyTorch |`,
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.model} | ${r.backend} | ${fmt(r.median_ms)} | ${fmt(r.min_ms)}–${fmt(r.max_ms)} | ${r.peak_rss_mb} | ${
        fmt(r.torch_median_ms)
      } | ${r.ratio === null ? "—" : (r.ratio as number).toFixed(2)} |`,
    );
  }
  if (!torch && cfg.torch === "auto") console.log("(no python3 with torch found: PyTorch column empty)");
  if (typeof jsonPath === "string") {
    Deno.writeTextFileSync(jsonPath, JSON.stringify({ date: new Date().toISOString(), torch, rows }, null, 2) + "\n");
  }
}

if (import.meta.main) await main(Deno.args);
