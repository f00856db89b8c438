/**
 * Data-parallel replicas of the supervised models (lib/train/data_parallel.ts):
 * the small MNIST CNN under softmax cross-entropy ({@linkcode trainClassifier}'s
 * step) and the generalization benchmark's regressors under their MSE
 * ({@linkcode trainSplitRegressor}'s step). Both losses are means over
 * examples, so shards weighted by their rows give the batch's gradient.
 * None of these models normalises by batch statistics (the regressors'
 * ResNet uses GroupNorm, per example); a model with BatchNorm in training
 * mode must not be split.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { Rng } from "../core/rng.ts";
import { crossEntropyLoss } from "../models/cross_entropy_step.ts";
import { regressionLoss, type RegressorName, type RegressorOptions, REGRESSORS } from "../models/regressors.ts";
import { smallCnn } from "../models/small_cnn.ts";
import type { Replica, ShardLoss } from "./data_parallel.ts";

/**
 * The mean softmax cross-entropy of a shard: `x` `[n, h, w, c]` and `labels` `[n]` (class indices sent as float32,
 * exact below 2²⁴) through `logits`.
 */
export function classifierShardLoss(logits: (x: tf.Tensor4D) => tf.Tensor2D): ShardLoss {
  return (inputs) => ({
    total: crossEntropyLoss(logits(inputs.x as tf.Tensor4D), tf.cast(inputs.labels, "int32") as tf.Tensor1D),
  });
}

/**
 * A worker's small MNIST CNN (lib/models/small_cnn.ts) with `classes` outputs; its initial values are overwritten
 * by the master's before every step.
 */
export function smallCnnReplica(args: unknown): Replica {
  const { classes } = args as { classes: number };
  const model = smallCnn(new Rng(0), classes);
  return { variables: model.params.list(), loss: classifierShardLoss(model.logits) };
}

/** The benchmark's MSE Σ_j ‖y_j − f(x_j)‖² / n of a shard: inputs `x` (what `predict` takes) and targets `y` `[n, k]`. */
export function regressionShardLoss<X extends tf.Tensor>(predict: (x: X) => tf.Tensor2D): ShardLoss {
  return (inputs) => ({ total: regressionLoss(predict(inputs.x as X), inputs.y as tf.Tensor2D) });
}

/** What {@linkcode regressorReplica} builds: a regressor of lib/models/regressors.ts by name, and its input. */
export interface RegressorReplicaArgs {
  /** The regressor's name in `REGRESSORS`. */
  model: RegressorName;
  /** Its input image and outputs. */
  options: RegressorOptions;
}

/**
 * A worker's regressor of {@linkcode RegressorReplicaArgs} (the master's values overwrite its initial ones). A step
 * shorter than a round trip to a worker gains nothing: the MLP regressor at 32×32 (≈ 5 ms a step of 64 on one
 * worker) measured 0.2–0.3× its throughput on 2.
 */
export function regressorReplica(args: unknown): Replica {
  const { model, options } = args as RegressorReplicaArgs;
  const regressor = REGRESSORS[model].build(new Rng(0), options);
  return { variables: regressor.params.list(), loss: regressionShardLoss(regressor.predict) };
}
