/**
 * Data-parallel training of one model over Deno workers: each
 * step's batch, drawn on the main thread, is split into contiguous shards of
 * rows; shard 0 is computed here on the master variables while workers
 * 1..N−1 compute the others on replicas (each worker with its own wasm
 * backend, since the wasm backend runs on one thread). The gradient is
 * Σ_k (n_k / B) · grad_k, summed in the fixed order k = 0..N−1 in float32,
 * and the optimizer step stays on the main thread: for a fixed N a run is
 * deterministic, and it differs from N = 1 only by float32 reduction order.
 *
 * This holds only for losses that are means of per-example terms (the shard
 * means, weighted by n_k / B, are then the batch mean).
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { integer } from "../core/config.ts";
import { UsageError } from "../core/errors.ts";
import { readScalarRecord } from "../core/readback.ts";
import { SWEEP_TASK_ENV } from "../core/run_layout.ts";
import type { LossTerms } from "./loop.ts";

/**
 * The config key of a run that trains one model: the cores (workers) it
 * trains on. The default 0 (one per core) keeps configs machine-independent;
 * the count a run resolved it to is logged as `<label>/dp_workers` at each
 * logged step when above 1, beside `<label>/dp_comm_share`.
 */
export const DATA_PARALLEL_CONFIG = {
  workers: integer(
    0,
    "cores one model trains on: each batch is split over this many Deno workers (wasm backend only), their " +
      "gradients summed in a fixed order; 0: the number of cores, 1 inside a sweep. Numbers differ from 1 worker " +
      "only by float32 summation order",
    { min: 0, max: 64 },
  ),
};

/** The most data-parallel workers a run may ask for: twice the cores. */
export function maxDataParallelWorkers(): number {
  return 2 * navigator.hardwareConcurrency;
}

/** Throws {@linkcode UsageError} unless `workers` is 0 (auto) or 1 … twice the cores. */
export function checkDataParallelWorkers(workers: number): void {
  const most = maxDataParallelWorkers();
  if (!Number.isInteger(workers) || workers < 0 || workers > most) {
    throw new UsageError(
      `--workers ${workers}: expected 0 (one per core) or an integer from 1 to ${most} (twice this machine's cores)`,
    );
  }
}

/**
 * The number of workers a run uses: `requested`, or for 0 the number of
 * cores (1 inside a sweep, whose tasks already fill the cores, and 1 on a
 * backend other than wasm). Throws {@linkcode UsageError} for more than
 * one worker on another backend.
 */
export function resolveDataParallelWorkers(requested: number, backend: string): number {
  checkDataParallelWorkers(requested);
  if (requested > 1 && backend !== "wasm") {
    throw new UsageError(
      `--workers ${requested}: data-parallel workers need the wasm backend (this run uses ${backend}); ` +
        "use --backend wasm or --workers 1",
    );
  }
  if (requested > 0) return requested;
  if (backend !== "wasm" || inSweep()) return 1;
  return navigator.hardwareConcurrency;
}

function inSweep(): boolean {
  try {
    return Deno.env.get(SWEEP_TASK_ENV) !== undefined;
  } catch {
    return false; // no env permission: not started by a sweep
  }
}

/** Rows [start, end) of each of `shards` contiguous shards of `rows`, sizes as equal as possible (larger first). */
export function shardBounds(rows: number, shards: number): [number, number][] {
  if (!(Number.isInteger(shards) && shards >= 1 && shards <= rows)) {
    throw new UsageError(`cannot split ${rows} rows into ${shards} shards: expected 1 to ${rows} shards`);
  }
  const base = Math.floor(rows / shards);
  const extra = rows % shards;
  const bounds: [number, number][] = [];
  let start = 0;
  for (let k = 0; k < shards; k++) {
    const end = start + base + (k < extra ? 1 : 0);
    bounds.push([start, end]);
    start = end;
  }
  return bounds;
}

/** One step's inputs as plain arrays, rows first: every entry has the batch's rows as its first dimension. */
export type BatchInputs = Record<string, { data: Float32Array; shape: number[] }>;

/** A shard's loss terms from its inputs as tensors; every term is a mean over the shard's rows. */
export type ShardLoss = (inputs: Record<string, tf.Tensor>, step: number) => LossTerms;

/** A model built in a worker: its variables in the master's order, and the loss of a shard. */
export interface Replica {
  /** The replica's trainable variables, in the master's order (the gradients come back in it). */
  variables: tf.Variable[];
  /** The loss of one shard of a step's batch. */
  loss: ShardLoss;
}

/** What a module exports for workers: a replica from JSON arguments (its initial values are overwritten). */
export type ReplicaFactory = (args: unknown) => Replica | Promise<Replica>;

/** Messages to a worker. */
export type DataParallelRequest =
  | { type: "init"; module: string; exportName: string; args: unknown; backend: string }
  | { type: "step"; step: number; inputs: BatchInputs; variables: Float32Array[] };

/** Messages from a worker. */
export type DataParallelReply =
  | { type: "ready"; shapes: number[][] }
  | { type: "result"; grads: Float32Array[]; terms: Record<string, number> }
  | { type: "error"; message: string };

/** Where the replica factory is, and what the main thread computes itself. */
export interface DataParallelOptions {
  /** URL of the module that exports the replica factory. */
  module: string;
  /** Name of the {@linkcode ReplicaFactory} that `module` exports. */
  exportName: string;
  /** JSON arguments of the factory. */
  args: unknown;
  /** Shards per step, the main thread's included (so N − 1 workers start). */
  workers: number;
  /** The TF.js backend the workers activate (the run's). */
  backend: string;
  /** The master variables, in the replicas' order. */
  variables: tf.Variable[];
  /** Shard 0's loss on the master variables. */
  loss: ShardLoss;
  /** Stops the workers (Ctrl-C). */
  signal?: AbortSignal;
}

/**
 * A model's data-parallel setup as a training loop takes it, which starts the
 * {@linkcode DataParallel} on its own variables and loss: where workers build
 * the replica, the resolved shard count ({@linkcode resolveDataParallelWorkers};
 * 1 splits nothing) and the backend.
 */
export type DataParallelPlan = Pick<DataParallelOptions, "module" | "exportName" | "args" | "workers" | "backend">;

/** `tensors` read back as {@linkcode BatchInputs}, rows first; int32 values (class labels) become float32 exactly. */
export async function batchInputsOf(tensors: Record<string, tf.Tensor>): Promise<BatchInputs> {
  const out: BatchInputs = {};
  for (const [key, tensor] of Object.entries(tensors)) {
    const values = await tensor.data();
    out[key] = { data: values instanceof Float32Array ? values : Float32Array.from(values), shape: tensor.shape };
  }
  return out;
}

/** A step's summed gradients by variable name (in the variables' order) and its loss terms. */
export interface ParallelGradients {
  /** Gradients summed over the shards, weighted by their rows, by variable name. */
  grads: tf.NamedTensorMap;
  /** Loss terms averaged over the shards by their rows, read back. */
  terms: Record<string, number>;
}

interface Pending {
  resolve(reply: DataParallelReply): void;
  reject(error: unknown): void;
}

type ResultReply = Extract<DataParallelReply, { type: "result" }>;

/** Copies rows [start, end) of each input into fresh buffers (transferable). */
function sliceRows(inputs: BatchInputs, start: number, end: number): BatchInputs {
  const out: BatchInputs = {};
  for (const [key, { data, shape }] of Object.entries(inputs)) {
    const row = shape.slice(1).reduce((a, b) => a * b, 1);
    out[key] = { data: data.slice(start * row, end * row), shape: [end - start, ...shape.slice(1)] };
  }
  return out;
}

/** The gradients of `loss` on `variables` and its terms read back; `inputs` become tensors inside the tape. */
export async function shardGradients(
  variables: tf.Variable[],
  loss: ShardLoss,
  inputs: BatchInputs,
  step: number,
): Promise<{ grads: tf.Tensor[]; terms: Record<string, number> }> {
  let kept: Record<string, tf.Scalar> = {};
  const { value, grads } = tf.variableGrads(() => {
    const tensors = Object.fromEntries(
      Object.entries(inputs).map(([key, { data, shape }]) => [key, tf.tensor(data, shape)]),
    );
    const terms = loss(tensors, step);
    kept = Object.fromEntries(Object.entries(terms).map(([k, v]) => [k, tf.keep(v)]));
    return terms.total;
  }, variables);
  let terms: Record<string, number>;
  try {
    terms = await readScalarRecord(kept);
  } finally {
    tf.dispose([...new Set([value, ...Object.values(kept)])]);
  }
  return { grads: variables.map((v) => grads[v.name]), terms };
}

/**
 * A running set of data-parallel workers for one model. {@linkcode gradients}
 * computes one step's gradient over all shards; {@linkcode terminate} ends
 * the workers (also on the abort signal, and when one fails).
 */
export class DataParallel {
  /** Shards per step, this thread's included. */
  readonly workers: number;
  #options: DataParallelOptions;
  #threads: Worker[];
  #pending = new Map<number, Pending>();
  #failure: Error | null = null;
  #ready: Promise<unknown>;
  #onAbort = () => this.#fail(this.#options.signal!.reason);
  /** Milliseconds of steps, and of their share spent outside this thread's own shard, since the last read. */
  #stepMs = 0;
  #commMs = 0;

  /**
   * Starts `options.workers − 1` workers (wasm backend only); throws a UsageError for fewer than 2 or another
   * backend.
   */
  constructor(options: DataParallelOptions) {
    if (!(Number.isInteger(options.workers) && options.workers >= 2)) {
      throw new UsageError(`data-parallel training needs at least 2 workers, got ${options.workers}`);
    }
    // Other backends may hand out their tensors' own storage, which transferring would detach.
    if (options.backend !== "wasm") {
      throw new UsageError(`data-parallel workers need the wasm backend, not ${options.backend}`);
    }
    this.workers = options.workers;
    this.#options = options;
    options.signal?.addEventListener("abort", this.#onAbort, { once: true });
    this.#threads = Array.from({ length: options.workers - 1 }, (_, i) => this.#startWorker(i + 1));
    const shapes = options.variables.map((v) => v.shape);
    this.#ready = Promise.all(this.#threads.map((_, i) =>
      this.#request(i + 1, {
        type: "init",
        module: options.module,
        exportName: options.exportName,
        args: options.args,
        backend: options.backend,
      }).then((reply) => {
        const replicaShapes = (reply as Extract<DataParallelReply, { type: "ready" }>).shapes;
        if (JSON.stringify(replicaShapes) !== JSON.stringify(shapes)) {
          throw new Error(
            `data-parallel worker ${i + 1}: the replica's variable shapes ${JSON.stringify(replicaShapes)} differ ` +
              `from the model's ${JSON.stringify(shapes)}`,
          );
        }
      })
    ));
    // A failure before the first step surfaces there; this only keeps it from being unhandled.
    this.#ready.catch(() => {});
  }

  #startWorker(index: number): Worker {
    const worker = new Worker(new URL("./data_parallel_worker.ts", import.meta.url), { type: "module" });
    worker.onmessage = ({ data }: MessageEvent<DataParallelReply>) => {
      if (data.type === "error") return this.#fail(new Error(`data-parallel worker ${index} failed: ${data.message}`));
      const pending = this.#pending.get(index);
      this.#pending.delete(index);
      pending?.resolve(data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(new Error(`data-parallel worker ${index} failed: ${event.message}`));
    };
    return worker;
  }

  #request(
    index: number,
    message: DataParallelRequest,
    transfer: Transferable[] = [],
  ): Promise<DataParallelReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#pending.set(index, { resolve, reject });
      this.#threads[index - 1].postMessage(message, transfer);
    });
  }

  /** Ends every worker and rejects what is pending with `error`; later calls reject with it too. */
  #fail(error: unknown): void {
    this.#failure ??= error instanceof Error ? error : new Error(String(error));
    this.terminate();
    for (const pending of this.#pending.values()) pending.reject(this.#failure);
    this.#pending.clear();
  }

  /**
   * One step's gradient over all shards of `inputs` (every entry with the
   * batch's rows first) and its loss terms, each Σ_k (n_k / B) · value_k.
   * The caller applies and disposes the gradients.
   */
  async gradients(step: number, inputs: BatchInputs): Promise<ParallelGradients> {
    await this.#ready;
    if (this.#failure) throw this.#failure;
    const started = performance.now();
    const { variables, loss } = this.#options;
    const rows = Object.values(inputs)[0].shape[0];
    const bounds = shardBounds(rows, this.workers);
    const values = await Promise.all(variables.map((v) => v.data() as Promise<Float32Array>));
    const replies = bounds.slice(1).map(([start, end], i) => {
      const shard = sliceRows(inputs, start, end);
      // The wasm backend reads into fresh buffers, which the last worker takes; the others get copies.
      const copies = i === bounds.length - 2 ? values : values.map((v) => v.slice());
      const transfer = [
        ...Object.values(shard).map((s) => s.data.buffer),
        ...copies.map((c) => c.buffer),
      ] as ArrayBuffer[];
      return this.#request(i + 1, { type: "step", step, inputs: shard, variables: copies }, transfer) as Promise<
        ResultReply
      >;
    });
    // Rejections are awaited below; until then they must not count as unhandled.
    replies.forEach((reply) => reply.catch(() => {}));
    const ownStart = performance.now();
    const own = await shardGradients(variables, loss, sliceRows(inputs, bounds[0][0], bounds[0][1]), step);
    const ownEnd = performance.now();
    let others;
    try {
      others = await Promise.all(replies);
    } catch (error) {
      tf.dispose(own.grads);
      throw error;
    }
    const weights = bounds.map(([start, end]) => (end - start) / rows);
    const terms: Record<string, number> = {};
    for (const key of Object.keys(own.terms)) {
      terms[key] = weights[0] * own.terms[key];
      others.forEach((reply, i) => terms[key] += weights[i + 1] * reply.terms[key]);
    }
    const grads: tf.NamedTensorMap = {};
    // Fixed order k = 0..N−1, float32 throughout: the same N gives the same bits.
    tf.tidy(() => {
      variables.forEach((variable, v) => {
        let sum = tf.mul(own.grads[v], tf.scalar(weights[0]));
        others.forEach((reply, i) => {
          sum = tf.add(sum, tf.mul(tf.tensor(reply.grads[v], variable.shape), tf.scalar(weights[i + 1])));
        });
        grads[variable.name] = tf.keep(sum);
      });
    });
    tf.dispose(own.grads);
    const ended = performance.now();
    this.#stepMs += ended - started;
    this.#commMs += ended - started - (ownEnd - ownStart);
    return { grads, terms };
  }

  /**
   * The share of step time since the last call that this thread spent on
   * anything but its own shard: copying variables and shards out, waiting
   * for the workers beyond its own compute, and summing their gradients.
   */
  takeCommunicationShare(): number {
    const share = this.#stepMs > 0 ? this.#commMs / this.#stepMs : 0;
    this.#stepMs = this.#commMs = 0;
    return share;
  }

  /** Ends the workers (idempotent). */
  terminate(): void {
    this.#failure ??= new Error("the data-parallel workers were terminated");
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
    for (const worker of this.#threads) worker.terminate();
  }
}
