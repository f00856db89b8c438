/**
 * Independent phases of a run (one setting of a toy, one model of a study)
 * on several cores at once: each runs in a Deno worker with its own TF.js
 * backend, so that a 2-core machine trains two side by side (the wasm
 * backend uses one thread). A phase's numbers depend only on the seed and
 * the phase, never on which worker ran it or when: a run gives the same
 * results with 1 worker or N.
 *
 * A worker imports the experiment's module and calls the phase function it
 * exports under `exportName`, with a context that sends metrics, images and
 * kept models back to this process, which writes them. Phases do not
 * checkpoint inside themselves here: the run checkpoints as each phase
 * finishes, and a resumed run skips the finished phases and reruns those
 * that were in flight.
 *
 * @module
 */
import { integer } from "../core/config.ts";
import type { RunContext } from "../core/experiment.ts";
import type { NpyArray } from "../core/npy.ts";
import type { Image } from "../core/png.ts";
import { phaseArray, type PhaseArrays, type PhaseCheckpoints, type PhaseOutcome, runPhases } from "./phases.ts";

/** The config key of experiments whose phases can run in workers. */
export const WORKERS_CONFIG = {
  workers: integer(
    1,
    "phases (settings, models) trained at once, each in a worker on its own core; 1: in this process. " +
      "The numbers do not depend on it",
    { min: 1, max: 64 },
  ),
};

/** Plain arrays, as they cross between threads. */
export type PlainArrays = Record<string, { data: Float32Array | Int32Array; shape: number[] }>;

/** What a worker reports. */
export type WorkerMessage =
  | { type: "log"; step: number; values: Record<string, number> }
  | { type: "image"; name: string; step: number; image: Image }
  | { type: "model"; name: string; arrays: PlainArrays; info: unknown }
  | { type: "done"; outcome: PhaseOutcome<unknown> }
  | { type: "error"; message: string };

/** What a worker is asked to run. */
export interface WorkerRequest {
  /** URL of the module that exports the phase function. */
  module: string;
  /** Name of the {@linkcode WorkerPhase} that `module` exports. */
  exportName: string;
  /** The TF.js backend the worker activates (the run's). */
  backend: string;
  /** The run's seed. */
  seed: number;
  /** The run's preset name. */
  preset: string;
  /** The run's folder. */
  dir: string;
  /** The run's config, as JSON. */
  cfg: unknown;
  /** The phase to run, as JSON. */
  phase: unknown;
  /** The phase's position among all phases. */
  index: number;
}

/** A phase function a module exports for workers: one phase's outcome from the run's context, config and phase. */
export type WorkerPhase<C, P, R> = (ctx: RunContext, cfg: C, phase: P, index: number) => Promise<PhaseOutcome<R>>;

/** Where the phase function is and what it is given besides its phase. */
export interface WorkerOptions<C, P = never> {
  /** URL of the module (the experiment's `import.meta.url`). */
  module: string;
  /** Name of the {@linkcode WorkerPhase} that `module` exports. */
  exportName: string;
  /** The run's config, passed to the phase function as JSON. */
  cfg: C;
  /** Phases at once. */
  workers: number;
  /**
   * A phase's expected run time in any unit: the costliest start first, so
   * that the lanes end together (results keep the phases' order).
   */
  cost?(phase: P): number;
}

/**
 * Runs the phases with {@linkcode runPhasesInWorkers} when
 * `parallel.workers` > 1, else in this process with
 * {@linkcode runPhases} (`run` and `stride`); the results are the same.
 */
export function runPhasesOn<C, P, R>(
  ctx: RunContext,
  phases: readonly P[],
  run: (phase: P, index: number, checkpoints: PhaseCheckpoints) => Promise<PhaseOutcome<R>>,
  options: { stride?: number; parallel?: WorkerOptions<C, P> },
): Promise<{ results: R[]; arrays: PhaseArrays }> {
  return options.parallel && options.parallel.workers > 1
    ? runPhasesInWorkers<C, P, R>(ctx, phases, options.parallel)
    : runPhases<P, R>(ctx, phases, run, { stride: options.stride });
}

/**
 * The {@linkcode WorkerOptions} of a module that exports its phase function as `workerPhase`: `cfg.workers` phases
 * at once, the costliest (by `cost`) first.
 */
export function workerPhaseOptions<C extends { workers: number }, P>(
  module: string,
  cfg: C,
  cost?: (phase: P) => number,
): WorkerOptions<C, P> {
  return { module, exportName: "workerPhase", cfg, workers: cfg.workers, cost };
}

/** Checkpoint state: the finished phases' results by index (their arrays are the checkpoint's arrays). */
interface ParallelState<R> {
  finished: Record<number, R>;
}

/**
 * Runs every phase not finished before a resume, `workers` at a time, each
 * lane in a worker of its own that runs its phases one after another.
 * Returns the results in phase order and the arrays of every phase (as
 * {@linkcode runPhases} does). Stopping the run (Ctrl-C) ends the workers.
 */
export async function runPhasesInWorkers<C, P, R>(
  ctx: RunContext,
  phases: readonly P[],
  options: WorkerOptions<C, P>,
): Promise<{ results: R[]; arrays: PhaseArrays }> {
  const finished: Record<number, R> = { ...(ctx.resumed?.state as ParallelState<R> | undefined)?.finished };
  const unknown = Object.keys(finished).filter((i) => !(Number(i) >= 0 && Number(i) < phases.length));
  if (unknown.length) throw new Error(`the checkpoint does not fit this run's plan: phases ${unknown} do not exist`);
  const arrays: PhaseArrays = {};
  for (const [key, value] of Object.entries(ctx.resumed?.arrays ?? {}) as [string, NpyArray][]) {
    arrays[key] = phaseArray(value);
  }
  const cost = options.cost;
  const pending = phases.map((_, i) => i).filter((i) => !(i in finished));
  if (cost) pending.sort((a, b) => cost(phases[b]) - cost(phases[a]));
  const running = new Set<Worker>();
  const stop = () => running.forEach((w) => w.terminate());
  ctx.stopRequested.addEventListener("abort", stop);
  const runOn = (worker: Worker, index: number) =>
    new Promise<PhaseOutcome<R>>((resolve, reject) => {
      // A stop that came while this lane checkpointed has ended the workers already, and an aborted signal fires no
      // abort event: without this the phase would wait for ever.
      if (ctx.stopRequested.aborted) return reject(ctx.stopRequested.reason);
      const onAbort = () => reject(ctx.stopRequested.reason);
      ctx.stopRequested.addEventListener("abort", onAbort, { once: true });
      const settle = () => ctx.stopRequested.removeEventListener("abort", onAbort);
      const fail = (message: string) => {
        settle();
        reject(new Error(`phase ${index} failed in its worker: ${message}`));
      };
      worker.onmessage = ({ data }: MessageEvent<WorkerMessage>) => {
        if (data.type === "log") ctx.log(data.step, data.values);
        else if (data.type === "image") ctx.image(data.name, data.step, data.image);
        else if (data.type === "model") ctx.saveModel(data.name, data.arrays, data.info).catch((e) => fail(String(e)));
        else if (data.type === "done") {
          settle();
          resolve(data.outcome as PhaseOutcome<R>);
        } else fail(data.message);
      };
      worker.onerror = (event) => {
        event.preventDefault();
        fail(event.message);
      };
      const request: WorkerRequest = {
        module: options.module,
        exportName: options.exportName,
        backend: ctx.backend.name,
        seed: ctx.seed,
        preset: ctx.preset,
        dir: ctx.dir,
        cfg: options.cfg,
        phase: phases[index],
        index,
      };
      worker.postMessage(request);
    });
  try {
    let next = 0;
    const lane = async () => {
      // One worker per lane, for all its phases: the backend and the module load once.
      const worker = new Worker(new URL("./phase_worker.ts", import.meta.url), { type: "module" });
      running.add(worker);
      while (next < pending.length) {
        const index = pending[next++];
        const outcome = await runOn(worker, index);
        finished[index] = outcome.result;
        Object.assign(arrays, outcome.arrays);
        // Numbered by the count of finished phases, so the newest checkpoint sorts last.
        await ctx.checkpoint(Object.keys(finished).length, arrays, { finished } satisfies ParallelState<R>);
      }
    };
    // No lane (and no worker) when a resumed run has nothing left to train.
    await Promise.all(Array.from({ length: Math.min(options.workers, pending.length) }, lane));
  } finally {
    ctx.stopRequested.removeEventListener("abort", stop);
    stop();
  }
  return { results: phases.map((_, i) => finished[i]), arrays };
}
