/**
 * Keeps a run alive and stoppable while its main thread is busy. A worker
 * thread touches the run's lock file every few seconds (readers take the
 * file's mtime as the writer's heartbeat, see `lastBeat` in run_lock.ts)
 * and turns SIGINT/SIGTERM into a shared flag. The main thread's own
 * timers and signal listeners run only when it yields, which scoring and
 * metric fits do not do for minutes; they call {@linkcode stopPoint}
 * instead, which reads the flag.
 *
 * @module
 */
import { RunInterrupted } from "./errors.ts";

/** 0: go on; otherwise why to stop: 130 (SIGINT), 143 (SIGTERM) or {@linkcode STOP_REQUESTED}. */
const stopFlag = new Int32Array(new SharedArrayBuffer(4));
/** The flag's value when a run is stopped from inside the process (tests, sweeps). */
export const STOP_REQUESTED = 1;
const SIGNAL_NAMES: Record<number, string> = { 130: "SIGINT", 143: "SIGTERM" };

/**
 * Throws {@linkcode RunInterrupted} once the run was asked to stop. Cheap (one
 * atomic read): long synchronous loops call it at least once a second.
 */
export function stopPoint(): void {
  const code = Atomics.load(stopFlag, 0);
  if (code !== 0) throw new RunInterrupted(SIGNAL_NAMES[code] ? `received ${SIGNAL_NAMES[code]}` : "stop requested");
}

/** Asks the running run to stop at its next {@linkcode stopPoint}. */
export function requestStop(code = STOP_REQUESTED): void {
  Atomics.compareExchange(stopFlag, 0, 0, code);
}

/**
 * Forgets a stop asked from inside the process once its run has ended, so
 * that scoring outside a run (eval, tests) is not stopped by it; a signal's
 * code stays, for the exit code.
 */
export function clearRequestedStop(): void {
  Atomics.compareExchange(stopFlag, 0, STOP_REQUESTED, 0);
}

/** The exit code a signal asked for (130, 143), or 0. */
export function signalExitCode(): number {
  const code = Atomics.load(stopFlag, 0);
  return SIGNAL_NAMES[code] ? code : 0;
}

/** What the guard worker is started with. */
export interface GuardRequest {
  /** Shared `Int32Array` cell: 0 to run on, a signal's exit code (or a stop request) to stop. */
  flag: SharedArrayBuffer;
  /** The lock file whose mtime is the run's heartbeat. */
  lockPath: string;
  /** Milliseconds between touches of the lock file. */
  beatMs: number;
  /** Whether SIGINT/SIGTERM set the flag (false where the caller handles signals itself). */
  signals: boolean;
}

/** How often the lock file is touched: well inside the 2 minutes after which readers call a run crashed. */
const BEAT_MS = 5_000;

/**
 * Starts the guard of one run: clears the stop flag, touches `lockPath`
 * every few seconds, and with `signals` sets the flag on SIGINT/SIGTERM.
 * `stop()` ends it (before the lock is released).
 */
export async function startRunGuard(
  lockPath: string,
  options: { signals: boolean; beatMs?: number },
): Promise<{ stop(): void }> {
  Atomics.store(stopFlag, 0, 0);
  const worker = new Worker(new URL("./run_guard_worker.ts", import.meta.url), { type: "module" });
  const request: GuardRequest = {
    flag: stopFlag.buffer as SharedArrayBuffer,
    lockPath,
    beatMs: options.beatMs ?? BEAT_MS,
    signals: options.signals,
  };
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = () => resolve();
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(`the run guard did not start: ${event.message}`));
    };
    worker.postMessage(request);
  });
  return { stop: () => worker.terminate() };
}
