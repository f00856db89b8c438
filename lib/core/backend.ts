/**
 * Backend selection. `auto` uses WebGPU only on a real GPU adapter: Deno
 * exposes software rasterisers (llvmpipe, lavapipe, SwiftShader) through
 * WebGPU too, and those are several times slower than the wasm backend.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import "@tensorflow/tfjs-backend-webgpu";
import { UsageError } from "./errors.ts";
import { registerWasmKernels } from "./kernels/mod.ts";

/** Backends a run can ask for. */
export const BACKEND_CHOICES = ["auto", "webgpu", "wasm", "cpu"] as const;
/** A backend preference as given by `--backend`. */
export type BackendChoice = typeof BACKEND_CHOICES[number];

/** What a run records about the backend it ran on (goes into run.json). */
export interface BackendInfo {
  /** The TF.js backend in use: "webgpu", "wasm" or "cpu". */
  name: string;
  /** The WebGPU adapter's description, when WebGPU was probed. */
  adapter: string | null;
  /** Whether that adapter is a software fallback. */
  softwareAdapter: boolean | null;
  /** The requested preference. */
  requested: BackendChoice;
}

interface AdapterProbe {
  description: string;
  software: boolean;
}

const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|swiftshader|software/i;

async function probeAdapter(): Promise<AdapterProbe | null> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return null;
  const adapter = await gpu.requestAdapter({
    powerPreference: "high-performance",
  });
  if (!adapter) return null;
  const info = adapter.info;
  const description = info.description || info.device || info.vendor ||
    "unknown adapter";
  const fallback = (info as GPUAdapterInfo & { isFallbackAdapter?: boolean })
    .isFallbackAdapter === true;
  return { description, software: fallback || SOFTWARE_ADAPTER.test(description) };
}

/**
 * Activates a backend for this process and reports which one it is.
 * Throws {@linkcode UsageError} when `webgpu` is requested without an adapter.
 */
export async function selectBackend(
  requested: BackendChoice,
): Promise<BackendInfo> {
  // tfjs sees Deno as Node and prints a banner recommending tfjs-node; prod mode silences it.
  tf.enableProdMode();
  const probe = requested === "auto" || requested === "webgpu" ? await probeAdapter() : null;
  const info = (name: string): BackendInfo => ({
    name,
    adapter: probe?.description ?? null,
    softwareAdapter: probe?.software ?? null,
    requested,
  });
  if (requested === "webgpu") {
    if (!probe) {
      throw new UsageError(
        "--backend webgpu: this machine exposes no WebGPU adapter; use --backend auto, wasm or cpu",
      );
    }
    if (!(await tf.setBackend("webgpu"))) {
      throw new UsageError(
        `--backend webgpu: the adapter "${probe.description}" failed to initialise; use --backend wasm or cpu`,
      );
    }
    return info("webgpu");
  }
  if (requested === "auto" && probe && !probe.software) {
    if (await tf.setBackend("webgpu")) return info("webgpu");
  }
  if (requested === "auto" || requested === "wasm") {
    // setBackend can report success while initialisation failed; confirm with getBackend.
    if (await tf.setBackend("wasm") && tf.getBackend() === "wasm") {
      registerWasmKernels();
      return info("wasm");
    }
    if (requested === "wasm") {
      throw new UsageError("--backend wasm: the wasm backend failed to initialise");
    }
  }
  await tf.setBackend("cpu");
  return info("cpu");
}
