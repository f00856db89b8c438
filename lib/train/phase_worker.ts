/**
 * The worker of {@linkcode runPhasesInWorkers}: activates the run's backend,
 * imports the phase function, runs one phase with a context that posts
 * metrics and images to the run's process, and posts the result.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { BackendChoice, BackendInfo } from "../core/backend.ts";
import { selectBackend } from "../core/backend.ts";
import { type RunContext, tensorArrays } from "../core/experiment.ts";
import { safeModelName } from "../core/run_checkpoints.ts";
import { Progress } from "../core/progress.ts";
import { Rng } from "../core/rng.ts";
import type { WorkerMessage, WorkerPhase, WorkerRequest } from "./parallel_phases.ts";

const post = (message: WorkerMessage) => self.postMessage(message);

let backend: Promise<BackendInfo> | null = null;

self.onmessage = async ({ data }: MessageEvent<WorkerRequest>) => {
  try {
    backend ??= selectBackend(data.backend as BackendChoice);
    const info = await backend;
    const module = await import(data.module);
    const run = module[data.exportName] as WorkerPhase<unknown, unknown, unknown> | undefined;
    if (typeof run !== "function") throw new Error(`${data.module} exports no phase function ${data.exportName}`);
    const ctx: RunContext = {
      rng: new Rng(data.seed),
      seed: data.seed,
      preset: data.preset as RunContext["preset"],
      backend: info,
      dir: data.dir,
      resumed: null,
      log: (step, values) => post({ type: "log", step, values }),
      image: (name, step, image) => post({ type: "image", name, step, image }),
      // Lines rather than a redrawn status: several workers share the terminal.
      progress: (label, total) => new Progress(label, total, { tty: false }),
      checkpoint: () => Promise.resolve(),
      // The run's process writes kept models; the name it will use is known here already.
      saveModel: async (name, arrays, info) => {
        post({ type: "model", name, arrays: await tensorArrays(arrays), info });
        return safeModelName(name);
      },
      // The run's process stops a phase by terminating its worker.
      stopRequested: new AbortController().signal,
    };
    post({ type: "done", outcome: await run(ctx, data.cfg, data.phase, data.index) });
  } catch (error) {
    post({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
};
