/**
 * Kernels latentlab adds to or replaces in the wasm backend of TF.js 4.22:
 * the training kernels it lacks (Conv2DBackpropFilter, UnsortedSegmentSum,
 * depthwise gradients) and faster versions of slow ones (BatchMatMul with
 * transposed operands, Conv2DBackpropInput, MaxPoolGrad, GatherV2,
 * Slice, Identity, Transpose, Sum over leading axes), and a member-wise
 * matMul for ensembles of small models, and Adam's update fused into one
 * kernel per variable.
 *
 * @module
 */
import { registerWasmBatchMatMul } from "./batch_mat_mul.ts";
import { registerWasmCopies } from "./copies.ts";
import { registerWasmConvGradients } from "./conv2d_backprop.ts";
import { registerWasmRowConvGradients } from "./conv_rows.ts";
import { registerWasmDepthwiseGradients } from "./depthwise_conv2d_backprop.ts";
import { registerWasmFusedAdam } from "./fused_adam.ts";
import { registerWasmMaxPoolGrad } from "./max_pool_grad.ts";
import { registerWasmMemberMatMul } from "./member_mat_mul.ts";
import { registerWasmTransposeSum } from "./transpose_sum.ts";
import { registerWasmUnsortedSegmentSum } from "./unsorted_segment_sum.ts";

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
}
