/**
 * The worker of {@linkcode DataParallel}: activates the run's
 * backend, builds a replica with the factory a module exports, and for each
 * step sets the replica's variables to the master values it is sent and
 * posts its shard's gradients (in the variables' order, as transferable
 * buffers) and loss terms.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import * as tf from "@tensorflow/tfjs";
import { type BackendChoice, selectBackend } from "../core/backend.ts";
import {
  type DataParallelReply,
  type DataParallelRequest,
  type Replica,
  type ReplicaFactory,
  shardGradients,
} from "./data_parallel.ts";

const post = (message: DataParallelReply, transfer: Transferable[] = []) => self.postMessage(message, transfer);

let replica: Replica | null = null;

self.onmessage = async ({ data }: MessageEvent<DataParallelRequest>) => {
  try {
    if (data.type === "init") {
      await selectBackend(data.backend as BackendChoice);
      const module = await import(data.module);
      const factory = module[data.exportName] as ReplicaFactory | undefined;
      if (typeof factory !== "function") {
        throw new Error(`${data.module} exports no replica factory ${data.exportName}`);
      }
      replica = await factory(data.args);
      post({ type: "ready", shapes: replica.variables.map((v) => v.shape) });
      return;
    }
    if (!replica) throw new Error("a step arrived before the replica was built");
    const { variables, loss } = replica;
    tf.tidy(() => variables.forEach((v, i) => v.assign(tf.tensor(data.variables[i], v.shape))));
    const { grads, terms } = await shardGradients(variables, loss, data.inputs, data.step);
    // The wasm backend (the only one DataParallel starts) reads into fresh buffers: they can be transferred.
    const arrays: Float32Array[] = [];
    for (const grad of grads) arrays.push((await grad.data()) as Float32Array);
    tf.dispose(grads);
    post({ type: "result", grads: arrays, terms }, arrays.map((a) => a.buffer as ArrayBuffer));
  } catch (error) {
    post({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
};
