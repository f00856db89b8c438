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
 * The supervised entries split the steps of `mnist-cnn` and `cnn-regressor-32` (bench/groups/classifiers.ts) the
 * same way, with lib/train/supervised_replicas.ts's replicas, as lib/train/classifier.ts and
 * lib/train/split_encoders.ts take them; they pair alike but have no goal on the ratio to PyTorch (no document gives
 * one), only the scaling floor. `mlp-regressor-32` has no such entry: its step (≈ 5 ms on one worker) is shorter
 * than a round trip to a worker, and 2 workers gave 0.2–0.3× its throughput.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Rng } from "../../lib/core/rng.ts";
import { cnnRegressor, type Regressor, type RegressorOptions } from "../../lib/models/regressors.ts";
import { type BatchInputs, batchInputsOf, DataParallel, type Replica } from "../../lib/train/data_parallel.ts";
import { regressorReplica, type RegressorReplicaArgs, smallCnnReplica } from "../../lib/train/supervised_replicas.ts";
import { vaeReplica } from "../../lib/train/vae.ts";
import { binaryImages, readLoss } from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload, WorkloadState } from "../harness/rounds.ts";
import { VAE_BATCH, vaeBenchConfig, vaeStep } from "./vae.ts";
import {
  MNIST_CNN_BATCH,
  REGRESSOR_BATCH,
  REGRESSOR_OPTIONS,
  regressorTrainer,
  smallCnnTrainer,
} from "./classifiers.ts";

/** Shards of a `workers`-group step: the main thread and one Deno worker, the two cores of this machine. */
export const DATA_PARALLEL_SHARDS = 2;
/** Ceilings on a 2-worker VAE step over PyTorch's on one thread, median paired ratio. */
export const DATA_PARALLEL_TORCH_GOALS = { "conv-vae-64-dp2": 1.0, "conv-vae-32-dp2": 1.3, "mlp-vae-64-dp2": 1.5 };
/** Floor on 2-worker over 1-worker throughput: 80% scaling efficiency. */
export const DATA_PARALLEL_SCALING_GOAL = 1.6;

/** The pairing of a data-parallel entry with its 1-worker step, and the scaling floor on their throughputs. */
function scalingBaseline(single: ModelName): Workload["baseline"] {
  return {
    model: single,
    throughputFloor: DATA_PARALLEL_SCALING_GOAL,
    paired: true,
    source: `2 workers give ≥ ${DATA_PARALLEL_SCALING_GOAL}× the 1-worker throughput (80%)`,
  };
}

/**
 * The state of a data-parallel entry: `DataParallel` over {@linkcode DATA_PARALLEL_SHARDS} shards of the replica
 * `exportName` of `module`, each step's gradients summed in order and `optimizer` applied once on the main thread
 * (as lib/train/loop.ts applies a data-parallel step), paired with the 1-worker step `single`.
 */
function dataParallelState(options: {
  module: string;
  exportName: string;
  args: unknown;
  master: Replica;
  optimizer: tf.Optimizer;
  /** Each step's batch. */
  inputs: () => BatchInputs;
  single: { parameters: number; step(): Promise<void>; dispose(): void };
}): WorkloadState {
  const { master, optimizer, single } = options;
  const parallel = new DataParallel({
    module: options.module,
    exportName: options.exportName,
    args: options.args,
    workers: DATA_PARALLEL_SHARDS,
    backend: tf.getBackend(),
    variables: master.variables,
    loss: master.loss,
  });
  let step = 0;
  return {
    parameters: single.parameters,
    async step() {
      const { grads } = await parallel.gradients(++step, options.inputs());
      optimizer.applyGradients(grads);
      tf.dispose(Object.values(grads));
      // The step ends when its update is readable, as the other entries end on their loss.
      await master.variables[0].data();
    },
    baselineStep: single.step,
    takeCommunicationShare: () => parallel.takeCommunicationShare(),
    dispose() {
      parallel.terminate();
      optimizer.dispose();
      single.dispose();
      master.variables.forEach((v) => v.dispose());
    },
  };
}

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
    baseline: scalingBaseline(single),
    async build(rng: Rng) {
      const cfg = vaeBenchConfig(size, kind);
      const master = vaeReplica({ cfg, channels: 1 });
      const optimizer: tf.Optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
      const pixels = binaryImages(rng, VAE_BATCH, size);
      const images = await pixels.data() as Float32Array;
      pixels.dispose();
      const trainer = vaeStep(rng, size, kind);
      return dataParallelState({
        module: new URL("../../lib/train/vae.ts", import.meta.url).href,
        exportName: "vaeReplica",
        args: { cfg, channels: 1 },
        master,
        optimizer,
        inputs: () => ({
          x: { data: images, shape: [VAE_BATCH, size, size, 1] },
          eps: { data: rng.normalArray(VAE_BATCH * cfg.latents), shape: [VAE_BATCH, cfg.latents] },
        }),
        single: {
          parameters: trainer.parameters,
          step: () => readLoss(trainer.minimize()),
          dispose: () => trainer.dispose(),
        },
      });
    },
  } satisfies Workload;
}

/** What a supervised entry's 2-worker step splits, and the 1-worker step it pairs with. */
interface SupervisedSides {
  /** The replica's export in lib/train/supervised_replicas.ts and its arguments. */
  exportName: "smallCnnReplica" | "regressorReplica";
  args: unknown;
  /** The master model: the same builder as the workers'. */
  master: Replica;
  /** Adam's learning rate of the single-worker entry. */
  lr: number;
  /** The single-worker entry's step of the same network (its own weights and batch). */
  single: { parameters: number; step(): Promise<void>; dispose(): void };
  /** The batch as arrays (read from the single-worker entry's). */
  inputs: BatchInputs;
}

/**
 * A supervised step on {@linkcode DATA_PARALLEL_SHARDS} shards: `DataParallel` over lib/train/supervised_replicas.ts,
 * the gradients summed in order and Adam applied once, as lib/train/classifier.ts and lib/train/split_encoders.ts
 * take a data-parallel step. The batch is fixed, as the single-worker entries' is.
 */
function dataParallelSupervisedWorkload(
  name: "mnist-cnn-dp2" | "cnn-regressor-32-dp2",
  batch: number,
  sides: (rng: Rng) => Promise<SupervisedSides>,
): Workload {
  const single = name.replace("-dp2", "") as ModelName;
  return {
    name,
    batch,
    alsoReference: true,
    alsoThreadedReference: true,
    baseline: scalingBaseline(single),
    async build(rng: Rng) {
      const { exportName, args, master, lr, single, inputs } = await sides(rng);
      return dataParallelState({
        module: new URL("../../lib/train/supervised_replicas.ts", import.meta.url).href,
        exportName,
        args,
        master,
        optimizer: tf.train.adam(lr),
        inputs: () => inputs,
        single,
      });
    },
  };
}

const mnistCnnSides = async (rng: Rng): Promise<SupervisedSides> => {
  const trainer = smallCnnTrainer(rng);
  return {
    exportName: "smallCnnReplica",
    args: { classes: 10 },
    master: smallCnnReplica({ classes: 10 }),
    lr: 1e-3,
    single: {
      parameters: trainer.model.params.count(),
      step: () => readLoss(trainer.minimize()),
      dispose: trainer.dispose,
    },
    inputs: await batchInputsOf({ x: trainer.images, labels: trainer.classes }),
  };
};

const regressorSides =
  (model: RegressorReplicaArgs["model"], build: (rng: Rng, o: RegressorOptions) => Regressor) =>
  async (rng: Rng): Promise<SupervisedSides> => {
    const trainer = regressorTrainer(rng, build);
    const args: RegressorReplicaArgs = { model, options: REGRESSOR_OPTIONS };
    return {
      exportName: "regressorReplica",
      args,
      master: regressorReplica(args),
      lr: 5e-4,
      single: { parameters: trainer.model.params.count(), step: trainer.step, dispose: trainer.dispose },
      inputs: await batchInputsOf({ x: trainer.x, y: trainer.y }),
    };
  };

/** The group's entries. */
export const WORKERS_WORKLOADS: Workload[] = [
  dataParallelVaeWorkload("conv-vae-64-dp2", 64, "conv"),
  dataParallelVaeWorkload("conv-vae-32-dp2", 32, "conv"),
  dataParallelVaeWorkload("mlp-vae-64-dp2", 64, "mlp"),
  dataParallelSupervisedWorkload("mnist-cnn-dp2", MNIST_CNN_BATCH, mnistCnnSides),
  dataParallelSupervisedWorkload("cnn-regressor-32-dp2", REGRESSOR_BATCH, regressorSides("cnn", cnnRegressor)),
];
