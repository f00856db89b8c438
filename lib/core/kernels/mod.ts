/**
 * Kernels latentlab adds to or replaces in TF.js backends.
 *
 * @module
 */
import { registerWasmBatchMatMul } from "./batch_mat_mul.ts";

export { registerWasmBatchMatMul };

/** Registers every wasm kernel of latentlab (call after the wasm backend is chosen). */
export function registerWasmKernels(): void {
  registerWasmBatchMatMul();
}
