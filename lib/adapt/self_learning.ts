/**
 * Self-learning objectives for test-time adaptation (Schneider2023
 * Ch. 3, eqs. 3.1–3.5) and one adaptation step of a BN model.
 *
 * Every loss takes the logits `[batch, classes]` of one forward pass and
 * returns a scalar averaged over the batch; the teacher is that same forward
 * without gradient (stop-gradient), as in the thesis' practice and in
 * bethgelab/robustness `robusta/selflearning/functional.py`:
 *
 * - ENT (eq. 3.3): mean softmax entropy −Σ_j p_j log p_j, differentiated
 *   through both factors (DequanWang/tent `softmax_entropy`).
 * - RPL / GCE (eq. 3.4): mean (1 − p_i^q)/q with i = argmax_j p_j.
 * - Hard PL (eq. 3.1): cross-entropy to the argmax where max_j p_j > threshold.
 * - Soft PL (eq. 3.5 with f_t = sg(f)): −Σ_j σ_j(f_t/τt) log σ_j(f_s/τs).
 *
 * {@linkcode adaptStep} is Tent's step: BN on this batch's statistics, one
 * optimizer update of the chosen parameters, predictions from the same
 * (pre-update) forward.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import { detached, stopGradient } from "../core/gradients.ts";
import type { BnCnn } from "../models/bn_cnn.ts";

/** Which parameters an adaptation step trains: BN/GN affine γ, β (Tent), every weight, or the last layer. */
export const ADAPT_PARAMS = ["affine", "all", "last"] as const;
/** A choice of {@linkcode ADAPT_PARAMS}. */
export type AdaptParams = typeof ADAPT_PARAMS[number];

/** A self-learning loss: logits `[batch, classes]` → scalar. */
export type AdaptLoss = (logits: tf.Tensor2D) => tf.Scalar;

/**
 * Per-sample softmax entropy −Σ_j p_j log p_j in nats, `[batch]`, from
 * logits `[batch, classes]` (log-softmax, so large logits do not overflow).
 */
export function sampleEntropy(logits: tf.Tensor2D): tf.Tensor1D {
  return tf.tidy(() => {
    const logProbs = tf.logSoftmax(logits);
    return tf.neg(tf.sum(tf.mul(tf.exp(logProbs), logProbs), 1)) as tf.Tensor1D;
  });
}

/** Mean softmax entropy over the batch in nats (ENT / Tent), from logits `[batch, classes]`. */
export function entropy(logits: tf.Tensor2D): tf.Scalar {
  return tf.tidy(() => tf.mean(sampleEntropy(logits)) as tf.Scalar);
}

/**
 * Generalised cross-entropy to the hard pseudo-label (RPL, eq. 3.4):
 * mean over the batch of (1 − p_i^q)/q with i = argmax_j of the same logits
 * `[batch, classes]` (the label carries no gradient). q = 1 gives 1 − p_i
 * (MAE); q → 0 gives the cross-entropy −log p_i. The thesis uses q = 0.8.
 */
export function gce(logits: tf.Tensor2D, q: number): tf.Scalar {
  if (!(q > 0 && q <= 1)) throw new UsageError(`gce: q must lie in (0, 1], got ${q}`);
  return tf.tidy(() => {
    const labelLogProb = logProbOfArgmax(logits, logits);
    // (1 − p^q)/q = −expm1(q log p)/q: exact to float32 precision even for tiny q,
    // where 1 − p^q would cancel.
    return tf.div(tf.neg(tf.mean(tf.expm1(tf.mul(labelLogProb, q)))), q) as tf.Scalar;
  });
}

/**
 * Thresholded hard pseudo-labelling (eq. 3.1): the cross-entropy −log p_i to
 * i = argmax_j p_j over the samples whose max_j p_j > `threshold`, averaged
 * over those samples; 0 (and zero gradient) when none is kept. Logits
 * `[batch, classes]`; threshold in [0, 1) (0 keeps every sample).
 */
export function hardPseudoLabel(logits: tf.Tensor2D, threshold: number): tf.Scalar {
  if (!(threshold >= 0 && threshold < 1)) {
    throw new UsageError(`hardPseudoLabel: threshold must lie in [0, 1), got ${threshold}`);
  }
  return tf.tidy(() => {
    const labelLogProb = logProbOfArgmax(logits, logits);
    // The kept set is a constant of the step (max p > threshold, as in the thesis' reference).
    const kept = detached(logits, (l) => tf.cast(tf.greater(tf.max(tf.softmax(l), 1), threshold), "float32"));
    const count = tf.maximum(tf.sum(kept), 1);
    return tf.div(tf.neg(tf.sum(tf.mul(kept, labelLogProb))), count) as tf.Scalar;
  });
}

/**
 * Soft pseudo-labelling with temperatures (eq. 3.5, f_t = sg(f)): mean over
 * the batch of −Σ_j σ_j(f_t/τt) log σ_j(f_s/τs). `teacherLogits` and
 * `studentLogits` are `[batch, classes]` (may be the same tensor); no
 * gradient flows into the teacher. τt, τs > 0.
 */
export function softPseudoLabel(
  teacherLogits: tf.Tensor2D,
  studentLogits: tf.Tensor2D,
  tauT: number,
  tauS: number,
): tf.Scalar {
  for (const [name, tau] of [["tauT", tauT], ["tauS", tauS]] as const) {
    if (!(tau > 0) || !Number.isFinite(tau)) {
      throw new UsageError(`softPseudoLabel: ${name} must be a finite number > 0, got ${tau}`);
    }
  }
  checkSameShape(teacherLogits, studentLogits);
  return tf.tidy(() => {
    const teacher = tf.softmax(tf.div(stopGradient(teacherLogits), tauT));
    const studentLogProbs = tf.logSoftmax(tf.div(studentLogits, tauS));
    return tf.neg(tf.mean(tf.sum(tf.mul(teacher, studentLogProbs), 1))) as tf.Scalar;
  });
}

/** The variables an adaptation step trains for `choice`. */
export function adaptedParams(model: BnCnn, choice: AdaptParams): tf.Variable[] {
  switch (choice) {
    case "affine":
      return model.affineParams();
    case "all":
      return model.allParams();
    case "last":
      return model.lastLayerParams();
    default:
      throw new UsageError(`params must be one of ${ADAPT_PARAMS.join(", ")}, got ${choice}`);
  }
}

/**
 * One forward pass of `model` on `x` `[batch, 28, 28, 1]` with BN on the
 * batch's own statistics (Tent) and the gradients of `loss` for the chosen
 * parameters. Returns the logits `[batch, classes]` of that forward and the
 * gradients keyed by variable name; the caller applies or drops them and
 * disposes both. `loss` may `tf.keep` tensors it wants to read afterwards.
 */
export function adaptGradients(
  model: BnCnn,
  x: tf.Tensor4D,
  loss: AdaptLoss,
  params: AdaptParams,
): { logits: tf.Tensor2D; grads: tf.NamedTensorMap } {
  const variables = adaptedParams(model, params);
  let logits: tf.Tensor2D | undefined;
  const { value, grads } = tf.variableGrads(() => {
    logits = tf.keep(model.logits(x, { kind: "batch" }));
    return loss(logits);
  }, variables);
  value.dispose();
  return { logits: logits!, grads };
}

/**
 * One test-time adaptation step (Tent, DequanWang/tent `forward_and_adapt`):
 * forward `x` `[batch, 28, 28, 1]` with BN on this batch's statistics
 * (biased variance), one `optimizer` update of `loss` on the chosen
 * parameters only. Returns the logits `[batch, classes]` of that forward,
 * i.e. the predictions before the update, row-major.
 */
export async function adaptStep(
  model: BnCnn,
  x: tf.Tensor4D,
  loss: AdaptLoss,
  optimizer: tf.Optimizer,
  params: AdaptParams,
): Promise<Float32Array> {
  const { logits, grads } = adaptGradients(model, x, loss, params);
  optimizer.applyGradients(grads);
  tf.dispose(grads);
  const values = await logits.data() as Float32Array;
  logits.dispose();
  return values;
}

/** log p_i `[batch]` of the student at i = argmax of the teacher logits (both `[batch, classes]`). */
function logProbOfArgmax(teacherLogits: tf.Tensor2D, studentLogits: tf.Tensor2D): tf.Tensor1D {
  return tf.tidy(() => {
    const classes = studentLogits.shape[1];
    const label = detached(teacherLogits, (t) => tf.cast(tf.oneHot(tf.argMax(t, 1), classes), "float32"));
    return tf.sum(tf.mul(label, tf.logSoftmax(studentLogits)), 1) as tf.Tensor1D;
  });
}

function checkSameShape(a: tf.Tensor, b: tf.Tensor): void {
  if (a.rank !== 2 || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new UsageError(`teacher and student logits must both be [batch, classes], got [${a.shape}] and [${b.shape}]`);
  }
}

/**
 * Frees an optimizer. tfjs 4.22's MomentumOptimizer.dispose frees its momentum scalar but not
 * the learning-rate scalar `c` of its SGD base class; disposing it twice is harmless.
 */
export function disposeOptimizer(optimizer: tf.Optimizer): void {
  optimizer.dispose();
  (optimizer as unknown as { c?: tf.Tensor }).c?.dispose();
}
