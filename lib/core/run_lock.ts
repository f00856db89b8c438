/**
 * A run has one writer: the holder of its `lock` file. The lock is taken
 * atomically, a dead holder's lock is taken over, and readers tell a live
 * writer from a crashed one by the lock's process and the heartbeat.
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "./errors.ts";
import { type RunInfo, STALE_HEARTBEAT_MS } from "./run_layout.ts";
import { readRunInfo, readSmallFile, removeIfPresent } from "./run_files.ts";

/** Who writes a run: the holder of its `lock` file (the file's mtime is the writer's heartbeat too). */
export interface RunLock {
  /** The writer's process id. */
  pid: number;
  /** The writer's host name (a pid means nothing on another host). */
  host: string;
  /** When the writer took the lock (ISO 8601). */
  since: string;
}

const LOCK_FILE = "lock";

/** The lock file of a run directory. */
export function runLockPath(dir: string): string {
  return join(dir, LOCK_FILE);
}

/**
 * Whether process `pid` of this host is alive and a Deno process, or null
 * where /proc cannot tell (not Linux). A pid reused by another program is not a writer.
 */
function denoProcessAlive(pid: number): boolean | null {
  if (pid === Deno.pid) return true;
  try {
    return new TextDecoder().decode(Deno.readFileSync(`/proc/${pid}/cmdline`)).includes("deno");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return null;
    try {
      Deno.statSync("/proc/self");
      return false;
    } catch {
      return null;
    }
  }
}

/** The newest sign of life of a run's writer: run.json's heartbeat or the lock file's mtime, in ms. */
export function lastBeat(dir: string, info: Pick<RunInfo, "heartbeat">): number {
  const written = Date.parse(info.heartbeat);
  // No lock: the run ended, or was written before runs had one.
  return Math.max(Number.isNaN(written) ? -Infinity : written, touchedAt(runLockPath(dir)));
}

/** The mtime of a (lock) file in ms, its heartbeat; -Infinity when it has none or is gone. */
export function touchedAt(path: string): number {
  try {
    return Deno.statSync(path).mtime?.getTime() ?? -Infinity;
  } catch {
    return -Infinity;
  }
}

/** A lock naming this host's process `pid` (this process by default), held from now. */
export function lockOfThisProcess(pid: number = Deno.pid): RunLock {
  return { pid, host: Deno.hostname(), since: new Date().toISOString() };
}

/** Removes a lock file when this host's process `pid` holds it (another's is left alone). */
export function releaseLock(path: string, pid: number = Deno.pid): void {
  const lock = readLock(path);
  if (lock?.pid !== pid || lock.host !== Deno.hostname()) return;
  try {
    Deno.removeSync(path);
  } catch {
    // gone already
  }
}

/**
 * The holder a lock file names, or null when there is no lock file; a lock
 * that cannot be read or parsed names an unknown holder (pid NaN), which
 * counts as live while the lock's heartbeat is fresh.
 */
export function readLock(path: string): RunLock | null {
  try {
    const raw = JSON.parse(readSmallFile(path));
    return { pid: Number(raw.pid), host: String(raw.host), since: String(raw.since) };
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? null : { pid: NaN, host: "", since: "" };
  }
}

/**
 * Whether a lock's holder lives: its process, when it is on this host and
 * /proc can tell; otherwise (another host sharing the folder, or no /proc)
 * a sign of life at `lastBeatMs` no older than {@linkcode STALE_HEARTBEAT_MS}.
 */
export function lockHolderAlive(lock: RunLock, lastBeatMs: number, now = Date.now()): boolean {
  const alive = lock.host === Deno.hostname() && Number.isSafeInteger(lock.pid) ? denoProcessAlive(lock.pid) : null;
  return alive ?? now - lastBeatMs <= STALE_HEARTBEAT_MS;
}

/**
 * The live writer of a run, or null when none: the lock's process is alive
 * (on this host), or its heartbeat is fresh (another host sharing the
 * folder, or no /proc). A running run without a lock file (written before
 * runs had one) counts as live while its heartbeat is fresh.
 */
export function liveWriter(dir: string, now = Date.now()): RunLock | null {
  const lock = readLock(runLockPath(dir));
  let info: RunInfo | null = null;
  try {
    info = readRunInfo(dir);
  } catch {
    // a run without a readable run.json has no heartbeat to go by
  }
  const beat = info === null ? -Infinity : lastBeat(dir, info);
  if (lock === null) {
    return info?.status === "running" && now - beat <= STALE_HEARTBEAT_MS
      ? { pid: info.pid, host: info.host, since: info.heartbeat }
      : null;
  }
  return lockHolderAlive(lock, beat, now) ? lock : null;
}

/**
 * Creates the lock file `path` naming `lock`'s holder, atomically; a lock
 * whose holder `liveHolder` finds gone (killed, crashed) is taken over.
 * Returns null once the lock is taken, or the live holder that keeps it.
 */
export function takeLock(path: string, lock: RunLock, liveHolder: () => RunLock | null): RunLock | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // createNew is atomic: of two processes racing for a free lock, one wins.
      Deno.writeTextFileSync(path, JSON.stringify(lock) + "\n", { createNew: true });
      return null;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const holder = liveHolder();
      if (holder) return holder;
      removeIfPresent(path);
    }
  }
  return liveHolder() ?? { pid: NaN, host: "", since: "" };
}

function lockRefusal(dir: string, holder: RunLock): UsageError {
  return new UsageError(
    `${dir} is being written by process ${holder.pid} on ${holder.host || "an unknown host"}` +
      `${holder.since ? ` (since ${holder.since})` : ""}; a run has one writer: stop that process, or wait ` +
      `for it to end, before --resume`,
  );
}

/**
 * Takes the run's lock for this process, or throws UsageError naming the
 * live writer. A lock left by a dead process (killed, crashed) is taken over.
 */
export function acquireRunLock(dir: string): void {
  const holder = takeLock(runLockPath(dir), lockOfThisProcess(), () => liveWriter(dir));
  if (holder) throw lockRefusal(dir, holder);
}

/** Gives up this process's lock on a run (another process's lock is left alone). */
export function releaseRunLock(dir: string): void {
  releaseLock(runLockPath(dir));
}
