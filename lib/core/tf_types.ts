/**
 * TF.js's tensor types under the names latentlab's public signatures use. TF.js documents them
 * (https://js.tensorflow.org/api/4.22.0/); each alias is tagged `@ignore` so that `deno doc --lint` does
 * not hold TF.js's own undocumented members and private types against latentlab's documentation, which a
 * plain re-export of the TF.js types would.
 *
 * @module
 */
import type * as tf from "@tensorflow/tfjs";

/**
 * `tf.Tensor` of rank `R` (any rank by default).
 *
 * @ignore
 */
export type Tensor<R extends tf.Rank = tf.Rank> = tf.Tensor<R>;
/**
 * `tf.Scalar`, a rank-0 tensor.
 *
 * @ignore
 */
export type Scalar = tf.Scalar;
/**
 * `tf.Tensor1D`, shape `[n]`.
 *
 * @ignore
 */
export type Tensor1D = tf.Tensor1D;
/**
 * `tf.Tensor2D`, shape `[rows, cols]`.
 *
 * @ignore
 */
export type Tensor2D = tf.Tensor2D;
/**
 * `tf.Tensor3D`.
 *
 * @ignore
 */
export type Tensor3D = tf.Tensor3D;
/**
 * `tf.Tensor4D`, shape `[batch, height, width, channels]` for images.
 *
 * @ignore
 */
export type Tensor4D = tf.Tensor4D;
/**
 * `tf.Variable` of rank `R`: a trainable tensor.
 *
 * @ignore
 */
export type Variable<R extends tf.Rank = tf.Rank> = tf.Variable<R>;
/**
 * `tf.Optimizer`.
 *
 * @ignore
 */
export type Optimizer = tf.Optimizer;
