/**
 * The `workers` group (`--only workers`): the data-parallel β-VAE step of lib/train/vae.ts on
 * {@linkcode DATA_PARALLEL_SHARDS} shards (the main thread and one Deno worker, `DataParallel`), as training takes
 * it when `--workers` splits a batch. Each entry is paired round by round with PyTorch's one-thread step of the same
 * network (goals {@linkcode DATA_PARALLEL_TORCH_GOALS}), with the 1-worker step in this process, whose throughput
 * over the entry's is the scaling (goal ≥ {@linkcode DATA_PARALLEL_SCALING_GOAL}, 80% efficiency), and with
 * PyTorch's step on {@linkcode DATA_PARALLEL_SHARDS} threads in a second worker process (same script and
 * environment, only the thread count differs; `reference_threads`): the ratios ours / PyTorch-N and 1-worker /
 * PyTorch-N are reported, with no goal. The four sides alternate ABCD DCBA. Each round also records
 * `DataParallel`'s communication share (the part of its `gradients()` time the main thread spends outside its own
 * shard: copying variables and shards out, waiting for the worker, summing gradients).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../../lib/core/rng.ts";
import { DataParallel } from "../../lib/train/data_parallel.ts";
import { vaeReplica } from "../../lib/train/vae.ts";
import { binaryImages, readLoss } from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload } from "../harness/rounds.ts";
import { VAE_BATCH, vaeBenchConfig, vaeStep } from "./vae.ts";

/** Shards of a `workers`-group step: the main thread and one Deno worker, the two cores of this machine. */
export const DATA_PARALLEL_SHARDS = 2;
/** Ceilings on a 2-worker VAE step over PyTorch's on one thread, median paired ratio. */
export const DATA_PARALLEL_TORCH_GOALS = { "conv-vae-64-dp2": 1.0, "conv-vae-32-dp2": 1.3, "mlp-vae-64-dp2": 1.5 };
/** Floor on 2-worker over 1-worker throughput: 80% scaling efficiency. */
export const DATA_PARALLEL_SCALING_GOAL = 1.6;

/**
 * A β-VAE step on {@linkcode DATA_PARALLEL_SHARDS} shards: lib/train/vae.ts's replica and `DataParallel`, the
 * gradients summed in order and Adam applied once, as lib/train/loop.ts applies a data-parallel step.
 */
function dataParallelVaeWorkload(name: keyof typeof DATA_PARALLEL_TORCH_GOALS, size: 32 | 64, kind: "conv" | "mlp") {
  const ratio = DATA_PARALLEL_TORCH_GOALS[name];
  const single = name.replace("-dp2", "") as ModelName;
  return {
    name,
    batch: VAE_BATCH,
    alsoReference: true,
    alsoThreadedReference: true,
    goal: { ratio, source: `a ${single} step with 2 workers ≤ ${ratio}× PyTorch on one thread` },
    baseline: {
      model: single,
      throughputFloor: DATA_PARALLEL_SCALING_GOAL,
      paired: true,
      source: `2 workers give ≥ ${DATA_PARALLEL_SCALING_GOAL}× the 1-worker throughput (80%)`,
    },
    async build(rng: Rng) {
      const cfg = vaeBenchConfig(size, kind);
      const master = vaeReplica({ cfg, channels: 1 });
      const optimizer: tf.Optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
      const parallel = new DataParallel({
        module: new URL("../../lib/train/vae.ts", import.meta.url).href,
        exportName: "vaeReplica",
        args: { cfg, channels: 1 },
        workers: DATA_PARALLEL_SHARDS,
        backend: tf.getBackend(),
        variables: master.variables,
        loss: master.loss,
      });
      const pixels = binaryImages(rng, VAE_BATCH, size);
      const images = await pixels.data() as Float32Array;
      pixels.dispose();
      const trainer = vaeStep(rng, size, kind);
      let step = 0;
      return {
        parameters: trainer.parameters,
        async step() {
          const inputs = {
            x: { data: images, shape: [VAE_BATCH, size, size, 1] },
            eps: { data: rng.normalArray(VAE_BATCH * cfg.latents), shape: [VAE_BATCH, cfg.latents] },
          };
          const { grads } = await parallel.gradients(++step, inputs);
          optimizer.applyGradients(grads);
          tf.dispose(Object.values(grads));
          // The step ends when its update is readable, as the other entries end on their loss.
          await master.variables[0].data();
        },
        baselineStep: () => readLoss(trainer.minimize()),
        takeCommunicationShare: () => parallel.takeCommunicationShare(),
        dispose() {
          parallel.terminate();
          optimizer.dispose();
          trainer.dispose();
          master.variables.forEach((v) => v.dispose());
        },
      };
    },
  } satisfies Workload;
}

/** The group's entries. */
export const WORKERS_WORKLOADS: Workload[] = [
  dataParallelVaeWorkload("conv-vae-64-dp2", 64, "conv"),
  dataParallelVaeWorkload("conv-vae-32-dp2", 32, "conv"),
  dataParallelVaeWorkload("mlp-vae-64-dp2", 64, "mlp"),
];
