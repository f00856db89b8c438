/**
 * The WebGPU device latentlab's webgpu backend runs on: TF.js's own set-up (its adapter preference, features and
 * limits) with one more limit raised to what the adapter allows, the storage buffers a shader may bind. WebGPU's
 * default is 8, which lets Adam's kernel update one variable per launch (seven buffers each); adapters allow more
 * (32 on Mesa's lavapipe, more on NVIDIA's drivers), so one launch updates several.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu";

/** The priority TF.js 4.22 registers webgpu with. */
const WEBGPU_PRIORITY = 3;

async function createBackend(): Promise<tf.KernelBackend> {
  const adapter = await navigator.gpu.requestAdapter({
    powerPreference: tf.env().get("WEBGPU_USE_LOW_POWER_GPU") ? "low-power" : "high-performance",
  });
  if (!adapter) throw new Error("WebGPU: no adapter");
  const features: GPUFeatureName[] = [];
  if (adapter.features.has("timestamp-query")) features.push("timestamp-query");
  if (adapter.features.has("bgra8unorm-storage")) features.push("bgra8unorm-storage");
  const limits = adapter.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: {
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupsPerDimension: limits.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
      maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: limits.maxStorageBuffersPerShaderStage,
    },
  });
  return new WebGPUBackend(device, adapter.info) as unknown as tf.KernelBackend;
}

/**
 * Registers the webgpu backend with the device above, unless webgpu was already initialised in this process (its
 * device then stays; the kernels read the limit from it).
 */
export function registerWebgpuDevice(): void {
  // The engine's registry of initialised backends: tf.findBackend would initialise webgpu with TF.js's device.
  const initialised = (tf.engine() as unknown as { registry: Record<string, unknown> }).registry;
  if ("webgpu" in initialised || !(navigator as Navigator & { gpu?: GPU }).gpu) return;
  tf.removeBackend("webgpu");
  tf.registerBackend("webgpu", createBackend, WEBGPU_PRIORITY);
}
