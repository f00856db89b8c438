/** The webgpu-vs-wasm checks (smoke_webgpu.ts) of the experiments of group 1. */
import { webgpuChecks } from "./smoke_webgpu.ts";

webgpuChecks(0);

Deno.test("every registered experiment is in a webgpu group or named as left out of CI", async () => {
  const { assertEquals } = await import("../assert.ts");
  const { EXPERIMENTS } = await import("../../experiments/mod.ts");
  const { CI_GROUPS, LEFT_OUT_OF_CI } = await import("./smoke_webgpu.ts");
  const named = [...CI_GROUPS.flat(), ...Object.keys(LEFT_OUT_OF_CI)];
  assertEquals([...named].sort(), EXPERIMENTS.map((e) => e.name).sort());
});
