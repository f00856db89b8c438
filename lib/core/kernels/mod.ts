/**
 * Kernels latentlab adds to or replaces in the wasm backend of TF.js 4.22:
 * the training kernels it lacks (Conv2DBackpropFilter, UnsortedSegmentSum,
 * depthwise gradients) and faster versions of slow ones (BatchMatMul with
 * transposed operands, Conv2DBackpropInput, MaxPoolGrad, GatherV2,
 * Slice, Identity, Transpose, Sum and Mean over leading axes), and a member-wise
 * matMul for ensembles of small models, and Adam's update fused into one
 * kernel per variable, and BatchNorm on the batch's statistics as one kernel forward and one backward; and on webgpu, Adam and momentum SGD for several variables per launch and the
 * settings that take the host's per-launch cost out of a step (webgpu_host.ts), sums and means over leading axes
 * without a transpose, ReLU's gradient in one launch, a tiled filter gradient of conv2d, and the VAE's
 * per-element loss terms and sample in one launch each (fused_terms.ts).
 *
 * @module
 */
import { registerWasmBatchMatMul } from "./batch_mat_mul.ts";
import { registerWasmBatchNorm } from "./batch_norm.ts";
import { registerWasmCopies } from "./copies.ts";
import { registerWasmConvGradients } from "./conv2d_backprop.ts";
import { registerWasmRowConvGradients } from "./conv_rows.ts";
import { registerWasmDepthwiseGradients } from "./depthwise_conv2d_backprop.ts";
import { registerWasmFusedAdam, routeAdamThroughFusedKernels } from "./fused_adam.ts";
import { registerWasmMaxPoolGrad } from "./max_pool_grad.ts";
import { registerWasmMemberMatMul } from "./member_mat_mul.ts";
import { registerWasmTransposeSum } from "./transpose_sum.ts";
import { registerWasmUnsortedSegmentSum } from "./unsorted_segment_sum.ts";
import { registerWebgpuFusedAdam } from "./webgpu_adam.ts";
import { registerWebgpuFusedMomentum } from "./webgpu_momentum.ts";
import { registerWebgpuColumnReduce } from "./webgpu_column_reduce.ts";
import { registerWebgpuConvFilterGradient } from "./webgpu_conv_filter_grad.ts";
import { registerWebgpuFusedTerms } from "./fused_terms.ts";
import { registerWebgpuReluGrad } from "./webgpu_relu_grad.ts";
import { tuneWebgpuBackend } from "./webgpu_host.ts";

/** Registers every wasm kernel of latentlab (call after the wasm backend is chosen; idempotent). */
export function registerWasmKernels(): void {
  // Before BatchMatMul, which takes the Transpose kernel registered at its registration.
  registerWasmTransposeSum();
  registerWasmBatchMatMul();
  registerWasmConvGradients();
  registerWasmRowConvGradients();
  registerWasmCopies();
  registerWasmDepthwiseGradients();
  registerWasmMaxPoolGrad();
  registerWasmUnsortedSegmentSum();
  registerWasmMemberMatMul();
  registerWasmFusedAdam();
  registerWasmBatchNorm();
}

/**
 * Registers latentlab's webgpu kernels (Adam, momentum SGD, column sums and means, ReLU's gradient, conv2d's
 * filter gradient, the VAE's loss terms) and applies the host-cost settings
 * of webgpu_host.ts to the active webgpu backend (call after webgpu is chosen; idempotent).
 */
export function registerWebgpuKernels(): void {
  tuneWebgpuBackend();
  registerWebgpuFusedAdam();
  registerWebgpuFusedMomentum();
  registerWebgpuColumnReduce();
  registerWebgpuReluGrad();
  registerWebgpuConvFilterGradient();
  registerWebgpuFusedTerms();
  routeAdamThroughFusedKernels();
}
