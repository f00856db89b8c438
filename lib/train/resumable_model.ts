/**
 * A phase that trains one set of weights with one optimizer on one stream of
 * batches (a contrastive encoder, an ICA estimator): where it continues from
 * after a resume, and what it checkpoints. The weights are saved under
 * "model/", the optimizer's state under "optimizer/", and the batch stream's
 * state as the phase's state, so a resumed phase draws the batches an
 * uninterrupted one would.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { Rng, type RngState } from "../core/rng.ts";
import type { Params } from "../models/params.ts";
import { optimizerState, restoreOptimizer } from "./loop.ts";
import type { PhaseCheckpoints } from "./phases.ts";

/** Checkpoint state inside the phase: the batch stream (weights and optimizer moments are the arrays). */
interface ModelState {
  batchRng: RngState;
}

/** The phase's model as training continues it. */
export interface ResumableModel {
  /** The stream of batches: fresh, or where the checkpoint left it. */
  batchRng: Rng;
  /** The last step already done: 0, or the checkpoint's. */
  startStep: number;
  /** Saves the weights, the optimizer's state and the batch stream at `step`. */
  checkpoint(step: number): Promise<void>;
}

/**
 * Restores `params` and `optimizer` from `checkpoints.resumed` when there is one, and gives the batch stream to
 * train with: the checkpoint's, else `fresh`.
 */
export async function resumeModel(
  params: Params,
  optimizer: tf.Optimizer,
  checkpoints: PhaseCheckpoints,
  fresh: Rng,
): Promise<ResumableModel> {
  const resumed = checkpoints.resumed;
  if (resumed) {
    params.load(resumed.arrays, "model/");
    await restoreOptimizer(optimizer, resumed.arrays);
  }
  const batchRng = resumed ? Rng.fromState((resumed.state as ModelState).batchRng) : fresh;
  return {
    batchRng,
    startStep: resumed?.step ?? 0,
    checkpoint: async (step) => {
      await checkpoints.save(
        step,
        { ...params.entries("model/"), ...(await optimizerState(optimizer)) },
        { batchRng: batchRng.state() } satisfies ModelState,
      );
    },
  };
}
