/**
 * What a trained fiRevNet's representation holds about the label (Jacobsen2019
 * §2.2, App. B.1, Table 2): the error
 * of its logits z_s, and that of a fresh post-hoc classifier on its frozen
 * nuisances z_n, on the training rows and on held-out rows. The net is a
 * bijection, so z_n keeps whatever the logits ignore.
 *
 * @module
 */
import type { FiRevNet } from "../models/firevnet.ts";
import type { NuisanceClassifier } from "./ice.ts";
import {
  classifierScores,
  encodeRows,
  errorRate,
  type LabelledRows,
  type PosthocOptions,
  trainPosthocClassifier,
} from "./firevnet_training.ts";

/** The two readouts' error rates, the codes they read, and the post-hoc classifier (the caller disposes it). */
export interface FiRevNetReadouts {
  /** Error rate of the logits z_s on the training rows, in [0, 1]. */
  logitTrainErr: number;
  /** Error rate of the logits on the held-out rows. */
  logitHeldErr: number;
  /** Error rate of the post-hoc classifier on the training rows' z_n. */
  nuisanceTrainErr: number;
  /** Error rate of the post-hoc classifier on the held-out rows' z_n. */
  nuisanceHeldErr: number;
  /** z_s (as logits) and z_n of the training and held-out rows. */
  trainCodes: { logits: Float32Array; zn: Float32Array };
  /** z_s (as logits) and z_n of the held-out rows. */
  heldCodes: { logits: Float32Array; zn: Float32Array };
  /** The post-hoc classifier trained on the training rows' z_n; the caller disposes it. */
  posthoc: NuisanceClassifier;
}

/** The error rate of `net`'s logits on `rows`: a learning-curve point. */
export async function logitError(net: FiRevNet, rows: LabelledRows): Promise<number> {
  return errorRate((await encodeRows(net, rows)).logits, rows.labels, net.classes);
}

/**
 * The logits' and the post-hoc nuisance classifier's error rates of a trained `net` on `train` and `held`; the
 * post-hoc classifier trains on the training rows' z_n with `posthoc`.
 */
export async function fiRevNetReadouts(
  net: FiRevNet,
  train: LabelledRows,
  held: LabelledRows,
  posthoc: PosthocOptions,
): Promise<FiRevNetReadouts> {
  const classes = net.classes;
  const [trainCodes, heldCodes] = [await encodeRows(net, train), await encodeRows(net, held)];
  const classifier = await trainPosthocClassifier({ zn: trainCodes.zn, labels: train.labels }, classes, posthoc);
  try {
    return {
      logitTrainErr: errorRate(trainCodes.logits, train.labels, classes),
      logitHeldErr: errorRate(heldCodes.logits, held.labels, classes),
      nuisanceTrainErr: errorRate(await classifierScores(classifier, trainCodes.zn), train.labels, classes),
      nuisanceHeldErr: errorRate(await classifierScores(classifier, heldCodes.zn), held.labels, classes),
      trainCodes,
      heldCodes,
      posthoc: classifier,
    };
  } catch (error) {
    classifier.dispose();
    throw error;
  }
}
