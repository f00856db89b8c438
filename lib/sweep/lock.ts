/**
 * One driver per sweep, and one process per task.
 *
 * ```
 * <runs>/_sweeps/<id>/
 *   lock              the driver that launches the sweep's tasks: pid, host, since (its mtime is the heartbeat)
 *   claims/<key>.json the process that runs a task now (a local task's own process, or a Slurm element)
 * ```
 *
 * Both are taken with `createNew`, so of two processes racing for one, one
 * wins; a holder that died (its pid gone on this host, or no heartbeat for
 * the run lock's stale age) is taken over, as a run's lock is
 * (lib/core/run_lock.ts).
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "../core/errors.ts";
import {
  lockHolderAlive,
  lockOfThisProcess,
  readLock,
  releaseLock,
  type RunLock,
  takeLock,
  touchedAt,
} from "../core/run_lock.ts";
import { writeJsonAtomic } from "../core/run_files.ts";

/** How often a driver touches its lock and its tasks' claims: well inside the stale age. */
export const SWEEP_HEARTBEAT_MS = 15 * 1000;

/** The driver lock of a sweep folder. */
export function sweepLockPath(sweepDir: string): string {
  return join(sweepDir, "lock");
}

/** The claim file of a task. */
export function claimPath(sweepDir: string, key: string): string {
  return join(sweepDir, "claims", `${key}.json`);
}

/** The live holder of a lock or claim file, or null when there is none or it died. */
export function liveHolder(path: string, now = Date.now()): RunLock | null {
  const lock = readLock(path);
  return lock && lockHolderAlive(lock, touchedAt(path), now) ? lock : null;
}

/** A heartbeat: the file's mtime set to now (a file already gone is left so). */
export function touch(path: string): void {
  try {
    const now = new Date();
    Deno.utimeSync(path, now, now);
  } catch {
    // released meanwhile
  }
}

/**
 * Makes this process the driver of a sweep, or throws UsageError (exit 2)
 * naming the live driver and how to follow it (`statusHint`: the command
 * that shows the sweep's progress). Returns the release, which stops the
 * lock's heartbeat and removes it.
 */
export function acquireSweepLock(sweepDir: string, id: string, statusHint: string): () => void {
  Deno.mkdirSync(sweepDir, { recursive: true });
  const path = sweepLockPath(sweepDir);
  const holder = takeLock(path, lockOfThisProcess(), () => liveHolder(path));
  if (holder) {
    const who = `process ${Number.isNaN(holder.pid) ? "(unknown)" : holder.pid} on ${holder.host || "an unknown host"}`;
    throw new UsageError(
      `sweep ${id} is being launched by ${who}${holder.since ? ` since ${holder.since}` : ""}; ` +
        `follow it with ${statusHint}, or launch it again once that process has ended`,
    );
  }
  const heartbeat = setInterval(() => touch(path), SWEEP_HEARTBEAT_MS);
  return () => {
    clearInterval(heartbeat);
    releaseLock(path, Deno.pid);
  };
}

/**
 * Claims a task for process `pid` of this host (default: this process):
 * null once claimed, or the live holder of its claim. A claim whose holder
 * died is taken over; whoever takes one must then look at the run store,
 * since the task may have completed or be running without its claimant.
 */
export function claimTask(sweepDir: string, key: string, pid = Deno.pid): RunLock | null {
  Deno.mkdirSync(join(sweepDir, "claims"), { recursive: true });
  const path = claimPath(sweepDir, key);
  return takeLock(path, lockOfThisProcess(pid), () => liveHolder(path));
}

/**
 * Hands a claim this process holds to `pid` (a task's own process), so
 * that it stays held while that process lives, whatever becomes of this one.
 */
export function passClaim(sweepDir: string, key: string, pid: number): void {
  writeJsonAtomic(claimPath(sweepDir, key), lockOfThisProcess(pid));
}

/** Gives up a claim held by `pid` of this host (default: this process). */
export function releaseClaim(sweepDir: string, key: string, pid = Deno.pid): void {
  releaseLock(claimPath(sweepDir, key), pid);
}
