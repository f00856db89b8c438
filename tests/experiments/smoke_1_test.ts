/** The smoke checks (smoke_checks.ts) of the experiments of group 1. */
import { assertEquals } from "../assert.ts";
import { SMOKE_GROUPS, smokeChecks } from "./smoke_checks.ts";

smokeChecks(SMOKE_GROUPS[0]);

Deno.test("the smoke groups hold every registered experiment once", async () => {
  const { EXPERIMENTS } = await import("../../experiments/mod.ts");
  const grouped = SMOKE_GROUPS.flat();
  assertEquals([...grouped].sort(), EXPERIMENTS.map((e) => e.name).sort());
});
