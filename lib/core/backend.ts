/**
 * Backend selection. `auto` uses WebGPU only on a real GPU adapter: Deno
 * exposes software rasterisers (llvmpipe, lavapipe, SwiftShader) through
 * WebGPU too, and those are several times slower than the wasm backend.
 *
 * The decision is the pure {@linkcode chooseBackend}; {@linkcode selectBackend}
 * probes the adapter, activates what it decides and asks again, with the
 * failed backend marked unavailable, when initialisation fails.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import "@tensorflow/tfjs-backend-webgpu";
import { fileURLToPath } from "node:url";
import { UsageError } from "./errors.ts";
import { registerWasmKernels, registerWebgpuKernels } from "./kernels/mod.ts";
import { registerWebgpuDevice } from "./kernels/webgpu_device.ts";

/** Backends a run can ask for. */
export const BACKEND_CHOICES = ["auto", "webgpu", "wasm", "cpu"] as const;
/** A backend preference as given by `--backend`. */
export type BackendChoice = typeof BACKEND_CHOICES[number];
/** A TF.js backend this project activates. */
export type BackendName = "webgpu" | "wasm" | "cpu";

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

/** A WebGPU adapter as `GPUAdapter.info` reports it; browsers and Deno fill different fields. */
export interface AdapterInfo {
  /** Whether the adapter is a software fallback (a CPU rasteriser such as SwiftShader). */
  isFallbackAdapter?: boolean;
  /** GPU vendor, e.g. "nvidia". */
  vendor?: string;
  /** GPU family, e.g. "hopper". */
  architecture?: string;
  /** Device name or id, where the implementation gives one. */
  device?: string;
  /** Human-readable adapter description, where the implementation gives one. */
  description?: string;
}

/** The outcome of {@linkcode chooseBackend}. */
export interface BackendDecision {
  /** The backend to activate. */
  name: BackendName;
  /** Why, in words (for logs and error messages). */
  reason: string;
}

/** What else {@linkcode chooseBackend} knows about this process. */
export interface BackendAvailability {
  /** Backends that are not registered or failed to initialise. */
  unavailable?: Iterable<string>;
}

// Software rasterisers: Mesa's llvmpipe / lavapipe, Google's SwiftShader, Windows' WARP.
const SOFTWARE_ADAPTER = /llvmpipe|lavapipe|swiftshader|software|basic render driver/i;

/** The adapter's name for logs and run.json: the first non-empty of description, device, vendor. */
export function adapterDescription(adapter: AdapterInfo): string {
  return adapter.description || adapter.device || adapter.vendor || "unknown adapter";
}

/** Whether an adapter renders in software: flagged as a fallback, or named like a known software rasteriser. */
export function isSoftwareAdapter(adapter: AdapterInfo): boolean {
  if (adapter.isFallbackAdapter === true) return true;
  return [adapter.description, adapter.device, adapter.vendor, adapter.architecture].some((field) =>
    field !== undefined && SOFTWARE_ADAPTER.test(field)
  );
}

/**
 * The backend a request resolves to, given the WebGPU adapter (`null` when
 * there is none or it was not probed) and the backends known to be
 * unavailable. `auto`: WebGPU on a real GPU, else wasm, else cpu. `webgpu`
 * is honoured on any adapter, software ones included; `wasm` and `cpu` ignore
 * the adapter. Throws {@linkcode UsageError} when an explicit request cannot
 * be met, and when nothing at all is available.
 */
export function chooseBackend(
  requested: BackendChoice,
  adapter: AdapterInfo | null,
  { unavailable = [] }: BackendAvailability = {},
): BackendDecision {
  const missing = new Set(unavailable);
  const usable = (name: BackendName) => !missing.has(name);
  switch (requested) {
    case "webgpu": {
      if (!adapter) {
        throw new UsageError(
          "--backend webgpu: this machine exposes no WebGPU adapter; use --backend auto, wasm or cpu",
        );
      }
      if (!usable("webgpu")) {
        throw new UsageError(
          `--backend webgpu: the adapter "${
            adapterDescription(adapter)
          }" failed to initialise; use --backend wasm or cpu`,
        );
      }
      const kind = isSoftwareAdapter(adapter) ? "software adapter" : "adapter";
      return { name: "webgpu", reason: `requested, on the ${kind} "${adapterDescription(adapter)}"` };
    }
    case "wasm":
      if (!usable("wasm")) throw new UsageError("--backend wasm: the wasm backend failed to initialise");
      return { name: "wasm", reason: "requested" };
    case "cpu":
      if (!usable("cpu")) throw new UsageError("--backend cpu: the cpu backend is unavailable");
      return { name: "cpu", reason: "requested" };
    case "auto": {
      const why = !adapter
        ? "no WebGPU adapter"
        : isSoftwareAdapter(adapter)
        ? `software WebGPU adapter "${adapterDescription(adapter)}"`
        : !usable("webgpu")
        ? `WebGPU on "${adapterDescription(adapter)}" failed to initialise`
        : null;
      if (why === null) return { name: "webgpu", reason: `GPU adapter "${adapterDescription(adapter!)}"` };
      if (usable("wasm")) return { name: "wasm", reason: why };
      if (usable("cpu")) return { name: "cpu", reason: `${why}; wasm failed to initialise` };
      throw new UsageError("--backend auto: no TF.js backend could be initialised");
    }
    default:
      throw new UsageError(`unknown backend "${requested}"; expected one of ${BACKEND_CHOICES.join(", ")}`);
  }
}

/**
 * Runs `probe` with XDG_RUNTIME_DIR set when it is not: Vulkan's window-system layer asks libwayland for a display,
 * which prints "error: XDG_RUNTIME_DIR is invalid or not set" to stderr on a headless machine. An empty private
 * folder holds no compositor socket, so the lookup fails quietly; the variable is restored afterwards so that
 * child processes see the environment they were given.
 */
async function withQuietDisplayLookup<T>(probe: () => Promise<T>): Promise<T> {
  if (Deno.env.get("XDG_RUNTIME_DIR")) return await probe();
  const runtimeDir = Deno.makeTempDirSync({ prefix: "latentlab-runtime-" });
  Deno.env.set("XDG_RUNTIME_DIR", runtimeDir);
  try {
    return await probe();
  } finally {
    Deno.env.delete("XDG_RUNTIME_DIR");
    Deno.removeSync(runtimeDir, { recursive: true });
  }
}

async function probeAdapter(): Promise<AdapterInfo | null> {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) return null;
  const adapter = await withQuietDisplayLookup(() => gpu.requestAdapter({ powerPreference: "high-performance" }));
  if (!adapter) return null;
  const { vendor, architecture, device, description } = adapter.info;
  // Older implementations carry the flag on the adapter rather than on its info.
  const isFallbackAdapter = (adapter.info as Partial<GPUAdapterInfo>).isFallbackAdapter ??
    (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  return { isFallbackAdapter, vendor, architecture, device, description };
}

/** How a backend is set up beyond its choice. */
export interface BackendOptions {
  /**
   * On webgpu, `latentlab` (the default) registers the kernels and host settings of lib/core/kernels/webgpu_*.ts;
   * `stock` keeps TF.js's own, to measure what they change.
   */
  webgpuKernels?: "latentlab" | "stock";
}

/** Activates `name`; false when TF.js cannot initialise it. */
async function activate(name: BackendName, options: BackendOptions): Promise<boolean> {
  const latentlabWebgpu = name === "webgpu" && options.webgpuKernels !== "stock";
  if (name === "wasm") prepareBundledWasm();
  // The device is asked for when the backend initialises, so its limits are set before.
  if (latentlabWebgpu) registerWebgpuDevice();
  // setBackend can report success while initialisation failed; confirm with getBackend.
  if (!(await withQuietDisplayLookup(() => tf.setBackend(name))) || tf.getBackend() !== name) return false;
  if (name === "wasm") registerWasmKernels();
  if (latentlabWebgpu) registerWebgpuKernels();
  return true;
}

/**
 * Activates a backend for this process and reports which one it is.
 * Throws {@linkcode UsageError} when `webgpu` is requested without an adapter,
 * or an explicitly requested backend fails to initialise.
 */
export function selectBackend(requested: BackendChoice, options: BackendOptions = {}): Promise<BackendInfo> {
  const selected = selecting.then(() => selectNow(requested, options));
  selecting = selected.catch(() => {});
  return selected;
}

// One selection at a time: modules that each select a backend at their top level can be evaluated concurrently, and
// TF.js fails a backend that is asked for while it initialises.
let selecting: Promise<unknown> = Promise.resolve();

async function selectNow(requested: BackendChoice, options: BackendOptions): Promise<BackendInfo> {
  // tfjs sees Deno as Node and prints a banner recommending tfjs-node; prod mode silences it.
  tf.enableProdMode();
  const adapter = requested === "auto" || requested === "webgpu" ? await probeAdapter() : null;
  const unavailable = new Set<string>();
  for (;;) {
    const { name } = chooseBackend(requested, adapter, { unavailable });
    if (await activate(name, options)) {
      return {
        name,
        adapter: adapter ? adapterDescription(adapter) : null,
        softwareAdapter: adapter ? isSoftwareAdapter(adapter) : null,
        requested,
      };
    }
    unavailable.add(name);
  }
}

/** The wasm binaries tfjs-backend-wasm may load; a bundle needs them beside it. */
export const WASM_BINARIES = ["tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm.wasm"];

/**
 * Lets a `deno bundle` (of the bench or an experiment) run the wasm backend without node_modules: the backend's Emscripten glue reads
 * the CommonJS `__dirname`, which a bundle lacks (the backend then fails to initialise), and the .wasm binaries are
 * not bundled, so both point at the bundle's folder, where {@linkcode WASM_BINARIES} must be copied. Running from
 * source, node_modules serves them and nothing changes.
 */
export function prepareBundledWasm(): void {
  if (new URL(import.meta.url).pathname.endsWith(".ts")) return;
  const folder = fileURLToPath(new URL(".", import.meta.url));
  (globalThis as { __dirname?: string }).__dirname ??= folder;
  setWasmPaths(folder);
  const missing = WASM_BINARIES.filter((name) => {
    try {
      return !Deno.statSync(folder + name).isFile;
    } catch {
      return true;
    }
  });
  if (missing.length) {
    console.error(
      `bundled run: ${missing.join(", ")} not found in ${folder}; copy them from ` +
        "node_modules/@tensorflow/tfjs-backend-wasm/dist/ for the wasm backend",
    );
  }
}
