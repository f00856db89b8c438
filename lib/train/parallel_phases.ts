/**
 * Independent phases of a run (one setting of a toy each) on several cores
 * at once: each phase runs in a Deno worker with its own TF.js backend, so
 * that a 2-core machine trains two phases side by side (the wasm backend
 * uses one thread). A phase's numbers depend only on the seed and the
 * phase, never on which worker ran it or when: a run gives the same results
 * with 1 worker or N.
 *
 * The worker imports the experiment's module and calls the phase function it
 * exports under `exportName`, with a context that sends metrics and images
 * back to this process, which writes them. Phases do not checkpoint inside
 * themselves here: the run checkpoints as each phase finishes, and a resumed
 * run skips the finished phases and reruns those that were in flight.
 *
 * @module
 */
import type { RunContext } from "../core/experiment.ts";
import type { Image } from "../core/png.ts";

/** What a worker reports. */
export type WorkerMessage =
  | { type: "log"; step: number; values: Record<string, number> }
  | { type: "image"; name: string; step: number; image: Image }
  | { type: "done"; result: unknown }
  | { type: "error"; message: string };

/** What a worker is asked to run. */
export interface WorkerRequest {
  /** URL of the module that exports the phase function. */
  module: string;
  exportName: string;
  backend: string;
  seed: number;
  preset: string;
  dir: string;
  cfg: unknown;
  phase: unknown;
}

/** A phase function a module exports for workers: the phase's result from the run's context, config and phase. */
export type WorkerPhase<C, P, R> = (ctx: RunContext, cfg: C, phase: P) => Promise<R>;

/** Checkpoint state: the finished phases' results by index. */
interface ParallelState<R> {
  finished: Record<number, R>;
}

/**
 * Runs every phase not finished before a resume, `workers` at a time, each in
 * a worker of its own (each worker runs its phases one after another);
 * returns the results in phase order. Stopping the run
 * (Ctrl-C) terminates the workers in flight.
 */
export async function runPhasesInWorkers<C, P, R>(
  ctx: RunContext,
  phases: readonly P[],
  options: { module: string; exportName: string; cfg: C; workers: number },
): Promise<R[]> {
  const finished: Record<number, R> = { ...(ctx.resumed?.state as ParallelState<R> | undefined)?.finished };
  const pending = phases.map((_, i) => i).filter((i) => !(i in finished));
  const running = new Set<Worker>();
  const stop = () => running.forEach((w) => w.terminate());
  ctx.stopRequested.addEventListener("abort", stop);
  try {
    const runOn = (worker: Worker, index: number) =>
      new Promise<R>((resolve, reject) => {
        const onAbort = () => reject(ctx.stopRequested.reason);
        ctx.stopRequested.addEventListener("abort", onAbort, { once: true });
        const settle = () => ctx.stopRequested.removeEventListener("abort", onAbort);
        worker.onmessage = ({ data }: MessageEvent<WorkerMessage>) => {
          if (data.type === "log") ctx.log(data.step, data.values);
          else if (data.type === "image") ctx.image(data.name, data.step, data.image);
          else {
            settle();
            if (data.type === "done") resolve(data.result as R);
            else reject(new Error(`phase ${index} failed in its worker: ${data.message}`));
          }
        };
        worker.onerror = (event) => {
          event.preventDefault();
          settle();
          reject(new Error(`phase ${index} failed in its worker: ${event.message}`));
        };
        worker.postMessage(
          {
            module: options.module,
            exportName: options.exportName,
            backend: ctx.backend.name,
            seed: ctx.seed,
            preset: ctx.preset,
            dir: ctx.dir,
            cfg: options.cfg,
            phase: phases[index],
          } satisfies WorkerRequest,
        );
      });
    // A fixed pool: each lane takes the next pending phase when its last one ends.
    let next = 0;
    let done = Object.keys(finished).length;
    const lane = async () => {
      // One worker per lane, for all its phases: the backend and the module load once.
      const worker = new Worker(new URL("./phase_worker.ts", import.meta.url), { type: "module" });
      running.add(worker);
      while (next < pending.length) {
        const index = pending[next++];
        finished[index] = await runOn(worker, index);
        done += 1;
        // Numbered by the count of finished phases, so the newest checkpoint sorts last.
        await ctx.checkpoint(done, {}, { finished } satisfies ParallelState<R>);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.workers, pending.length)) }, lane));
  } finally {
    ctx.stopRequested.removeEventListener("abort", stop);
    stop();
  }
  return phases.map((_, i) => finished[i]);
}
