/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
/**
 * The thread of {@linkcode startRunGuard}: touches the lock file (the
 * heartbeat readers see) and turns signals into the shared stop flag.
 *
 * @module
 */
import type { GuardRequest } from "./run_guard.ts";

self.onmessage = ({ data }: MessageEvent<GuardRequest>) => {
  const flag = new Int32Array(data.flag);
  const touch = () => {
    try {
      const now = new Date();
      Deno.utimeSync(data.lockPath, now, now);
    } catch {
      // the lock is gone: the run ended and this thread is about to be terminated
    }
  };
  touch();
  setInterval(touch, data.beatMs);
  if (data.signals) {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      Deno.addSignalListener(signal, () => Atomics.compareExchange(flag, 0, 0, code));
    }
  }
  self.postMessage("started");
};
