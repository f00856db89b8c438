import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import {
  adapterDescription,
  type AdapterInfo,
  type BackendChoice,
  chooseBackend,
  isSoftwareAdapter,
  selectBackend,
} from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";

/**
 * Adapters as WebGPU reports them: Deno (wgpu) gives PCI ids as decimal vendor / device
 * strings and the driver's name as the description; Chrome gives vendor and architecture
 * names and leaves the description empty.
 */
const ADAPTERS: { label: string; adapter: AdapterInfo | null; software: boolean }[] = [
  {
    label: "NVIDIA GPU (Deno, Vulkan)",
    adapter: {
      isFallbackAdapter: false,
      vendor: "4318",
      architecture: "",
      device: "8993",
      description: "NVIDIA H100 80GB HBM3",
    },
    software: false,
  },
  {
    label: "NVIDIA GPU (Chrome)",
    adapter: { isFallbackAdapter: false, vendor: "nvidia", architecture: "ampere", device: "", description: "" },
    software: false,
  },
  {
    label: "Apple GPU (Deno, Metal)",
    adapter: { isFallbackAdapter: false, vendor: "0", architecture: "", device: "0", description: "Apple M2 Pro" },
    software: false,
  },
  {
    label: "Apple GPU (Chrome)",
    adapter: { isFallbackAdapter: false, vendor: "apple", architecture: "metal-3", device: "", description: "" },
    software: false,
  },
  {
    label: "AMD GPU (Deno, RADV)",
    adapter: {
      isFallbackAdapter: false,
      vendor: "4098",
      architecture: "",
      device: "29772",
      description: "AMD Radeon RX 7900 XTX (RADV NAVI31)",
    },
    software: false,
  },
  {
    label: "llvmpipe (Mesa software rasteriser)",
    adapter: {
      isFallbackAdapter: false,
      vendor: "65541",
      architecture: "",
      device: "0",
      description: "llvmpipe (LLVM 15.0.6, 256 bits)",
    },
    software: true,
  },
  {
    label: "SwiftShader (Deno, Vulkan ICD)",
    adapter: {
      isFallbackAdapter: false,
      vendor: "6880",
      architecture: "",
      device: "49374",
      description: "SwiftShader Device (Subzero)",
    },
    software: true,
  },
  {
    // Named only by its architecture: every field is looked at, not just the description.
    label: "SwiftShader (Chrome)",
    adapter: { isFallbackAdapter: false, vendor: "google", architecture: "swiftshader", device: "", description: "" },
    software: true,
  },
  {
    label: "Windows WARP",
    adapter: { isFallbackAdapter: false, vendor: "5140", device: "140", description: "Microsoft Basic Render Driver" },
    software: true,
  },
  {
    // The flag alone marks it, whatever the name.
    label: "fallback adapter",
    adapter: { isFallbackAdapter: true, vendor: "", architecture: "", device: "", description: "" },
    software: true,
  },
  { label: "no adapter", adapter: null, software: false },
];

const adapterNamed = (label: string) => ADAPTERS.find((a) => a.label === label)!.adapter;

Deno.test("chooseBackend: auto takes WebGPU only on a real GPU, explicit choices are honoured", () => {
  for (const { label, adapter, software } of ADAPTERS) {
    if (adapter) assertEquals(isSoftwareAdapter(adapter), software, label);
    const gpu = adapter !== null && !software;
    const expected: Record<BackendChoice, string | null> = {
      auto: gpu ? "webgpu" : "wasm",
      webgpu: adapter ? "webgpu" : null,
      wasm: "wasm",
      cpu: "cpu",
    };
    for (const requested of ["auto", "webgpu", "wasm", "cpu"] as const) {
      const want = expected[requested];
      if (want === null) {
        assertThrows(() => chooseBackend(requested, adapter), UsageError, "no WebGPU adapter");
        continue;
      }
      const decision = chooseBackend(requested, adapter);
      assertEquals(decision.name, want, `${label}, ${requested}`);
      assert(decision.reason.length > 0, `${label}, ${requested}: no reason`);
    }
  }
});

Deno.test("chooseBackend: reasons name the adapter and why WebGPU was passed over", () => {
  const nvidia = adapterNamed("NVIDIA GPU (Deno, Vulkan)"),
    llvmpipe = adapterNamed("llvmpipe (Mesa software rasteriser)");
  assertEquals(chooseBackend("auto", nvidia), { name: "webgpu", reason: 'GPU adapter "NVIDIA H100 80GB HBM3"' });
  assertEquals(chooseBackend("auto", llvmpipe), {
    name: "wasm",
    reason: 'software WebGPU adapter "llvmpipe (LLVM 15.0.6, 256 bits)"',
  });
  assertEquals(chooseBackend("auto", null), { name: "wasm", reason: "no WebGPU adapter" });
  assertEquals(
    chooseBackend("webgpu", llvmpipe).reason,
    'requested, on the software adapter "llvmpipe (LLVM 15.0.6, 256 bits)"',
  );
  assertEquals(adapterDescription({ vendor: "nvidia", architecture: "ampere", device: "", description: "" }), "nvidia");
  assertEquals(adapterDescription({ isFallbackAdapter: true }), "unknown adapter");
});

Deno.test("chooseBackend: a backend that failed to initialise is skipped by auto and fatal when requested", () => {
  const nvidia = adapterNamed("NVIDIA GPU (Deno, Vulkan)");
  assertEquals(chooseBackend("auto", nvidia, { unavailable: ["webgpu"] }), {
    name: "wasm",
    reason: 'WebGPU on "NVIDIA H100 80GB HBM3" failed to initialise',
  });
  assertEquals(chooseBackend("auto", nvidia, { unavailable: ["webgpu", "wasm"] }).name, "cpu");
  assertEquals(chooseBackend("auto", null, { unavailable: ["wasm"] }), {
    name: "cpu",
    reason: "no WebGPU adapter; wasm failed to initialise",
  });
  // WebGPU being unavailable does not matter without a real GPU.
  assertEquals(chooseBackend("auto", null, { unavailable: ["webgpu"] }).name, "wasm");
  assertThrows(() => chooseBackend("auto", nvidia, { unavailable: ["webgpu", "wasm", "cpu"] }), UsageError, "no TF.js");
  assertThrows(() => chooseBackend("webgpu", nvidia, { unavailable: ["webgpu"] }), UsageError, "failed to initialise");
  assertThrows(() => chooseBackend("wasm", nvidia, { unavailable: ["wasm"] }), UsageError, "failed to initialise");
  assertThrows(() => chooseBackend("cpu", null, { unavailable: ["cpu"] }), UsageError, "unavailable");
  assertThrows(() => chooseBackend("tpu" as BackendChoice, null), UsageError, "unknown backend");
});

Deno.test("auto never picks WebGPU on a software adapter, and reports the adapter", async () => {
  const info = await selectBackend("auto");
  assertEquals(tf.getBackend(), info.name);
  if (info.softwareAdapter) assert(info.name !== "webgpu", `picked webgpu on ${info.adapter}`);
  if (info.adapter === null) assertEquals(info.softwareAdapter, null);
  assertEquals(info.requested, "auto");
});

Deno.test("explicit wasm and cpu choices are honoured", async () => {
  assertEquals((await selectBackend("wasm")).name, "wasm");
  assertEquals((await selectBackend("cpu")).name, "cpu");
  await selectBackend("wasm");
});
