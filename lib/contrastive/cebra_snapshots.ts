/**
 * A {@linkcode Cebra} fit that also embeds chosen data every `every` steps, so
 * that a run can log its scores (decoding error, reconstruction R²) along
 * training: the learning curve toward a published value.
 *
 * The snapshot is taken in the estimator's `afterStep` callback by calling
 * `transform`: its forward pass runs synchronously before `transform`'s first
 * `await`, on the weights left by that step, and the tensors it produces are
 * immutable, so the embedding is the one after exactly that many steps
 * whatever the backend (WebGPU queues the work in order); only the read-back
 * is awaited later. A snapshot is handed on once the losses up to its step
 * have been read, so that its handler can use them.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { stopPoint } from "../core/run_guard.ts";
import { Cebra, type CebraLabels, type CebraOptions } from "./cebra.ts";

/** Data to embed at each snapshot; `session` picks the encoder of a multi-session fit. */
export interface SnapshotView {
  /** The data `[T, features]`. */
  x: Matrix;
  /** The session whose encoder embeds it (multi-session fits). */
  session?: number;
}

/** Embeddings of every view after `step` training steps (1-based). */
export interface CebraSnapshot {
  /** Training steps taken, from 1. */
  step: number;
  /** One embedding per view, in the views' order. */
  embeddings: Matrix[];
}

/** Options of {@linkcode fitWithSnapshots}. */
export interface SnapshotOptions {
  /** Steps between snapshots; the last step is always one. */
  every: number;
  /** What to embed at each snapshot. */
  views: SnapshotView[];
  /**
   * Called with each step's loss (steps 1-based, in order) when the losses are read back, every
   * `lossReadEvery` steps and after the last; before any snapshot of that step.
   */
  onStep?: (step: number, loss: number) => void;
  /** Steps whose losses are read back together (one readback each); the estimator's default when absent. */
  lossReadEvery?: number;
  /**
   * Called with each snapshot as soon as it is read back (during training,
   * between steps), one after another in step order; the fit's promise waits
   * for the last call.
   */
  onSnapshot?: (snapshot: CebraSnapshot) => void | Promise<void>;
  /**
   * Checked after each step and before each `onStep`: an aborted signal stops the fit with its reason, as does a
   * stop asked through the run guard (SIGINT/SIGTERM of a command-line run, `stopPoint`).
   */
  signal?: AbortSignal;
}

/**
 * Fits a new `Cebra(options)` on `x` and `labels` and returns it with the
 * snapshots, in step order; the last one is the fitted model's embedding.
 * The caller disposes the returned estimator; on an error it is disposed here.
 */
export async function fitWithSnapshots(
  options: Omit<CebraOptions, "onStep" | "afterStep" | "lossReadEvery">,
  x: Matrix | Matrix[],
  labels: CebraLabels,
  o: SnapshotOptions,
): Promise<{ cebra: Cebra; snapshots: CebraSnapshot[] }> {
  if (!Number.isInteger(o.every) || o.every < 1) throw new UsageError(`every must be an integer ≥ 1, got ${o.every}`);
  if (o.views.length === 0) throw new UsageError("views must list at least one matrix to embed");
  const pending: { step: number; embeddings: Promise<Matrix>[] }[] = [];
  const snapshots: CebraSnapshot[] = [];
  // Snapshots are handled in order, each after the one before.
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  // A stopped run logs nothing more. On wasm a fit's read-backs resolve without a turn of the event loop, so
  // signal listeners never run during a fit: the run guard's flag is read here instead.
  const checkStop = () => {
    o.signal?.throwIfAborted();
    stopPoint();
  };
  const cebra: Cebra = new Cebra({
    ...options,
    lossReadEvery: o.lossReadEvery,
    afterStep: (index) => {
      const step = index + 1;
      checkStop();
      if (step % o.every === 0 || step === cebra.options.maxIterations) {
        // Called without await: the embedding is computed now, read back later.
        const embeddings = o.views.map((v) => cebra.transform(v.x, { session: v.session }));
        // A failure is reported when the snapshots are awaited, not as an unhandled rejection mid-fit.
        for (const e of embeddings) e.catch(() => {});
        pending.push({ step, embeddings });
      }
    },
    onStep: (index, loss) => {
      const step = index + 1;
      checkStop();
      o.onStep?.(step, loss);
      // Snapshots are taken and losses delivered in step order: the next one not yet queued is the only candidate.
      if (pending[queued]?.step !== step) return;
      const taken = pending[queued++];
      // Queued once the losses up to this step are in: the handler may use them.
      chain = chain.then(async () => {
        const snapshot = { step, embeddings: await Promise.all(taken.embeddings) };
        snapshots.push(snapshot);
        await o.onSnapshot?.(snapshot);
      });
      chain.catch(() => {});
    },
  });
  try {
    await cebra.fit(x, labels);
    await chain;
    return { cebra, snapshots };
  } catch (error) {
    // Read-backs and handlers still in flight must settle before the weights go.
    await Promise.allSettled([...pending.flatMap((p) => p.embeddings), chain]);
    cebra.dispose();
    throw error;
  }
}
