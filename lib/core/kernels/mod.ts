/**
 * Kernels latentlab adds to or replaces in TF.js backends.
 *
 * @module
 */
import { registerWasmBatchMatMul } from "./batch_mat_mul.ts";
import { registerWasmConvGradients } from "./conv2d_backprop.ts";

export { registerWasmBatchMatMul, registerWasmConvGradients };

/** Registers every wasm kernel of latentlab (call after the wasm backend is chosen). */
export function registerWasmKernels(): void {
  registerWasmBatchMatMul();
  registerWasmConvGradients();
}
