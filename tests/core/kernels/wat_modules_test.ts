import { assert } from "../../assert.ts";
import { assemble, WAT_KERNELS } from "../../../lib/core/kernels/wat/build.ts";
import { WAT_MODULES } from "../../../lib/core/kernels/wat/modules.ts";
import { watModuleBytes } from "../../../lib/core/kernels/wasm_ops.ts";

Deno.test("the committed wasm kernel binaries are the assembled .wat sources", async () => {
  const assembled = await assemble();
  assert(
    JSON.stringify(Object.keys(WAT_MODULES).sort()) === JSON.stringify([...WAT_KERNELS].sort()),
    `modules.ts has ${Object.keys(WAT_MODULES)}, the sources are ${WAT_KERNELS}: run lib/core/kernels/wat/build.ts`,
  );
  for (const name of WAT_KERNELS) {
    const committed = watModuleBytes(name);
    const fresh = assembled[name];
    const same = committed.length === fresh.length && committed.every((b, i) => b === fresh[i]);
    assert(same, `${name}: modules.ts differs from ${name}.wat; run deno run -A lib/core/kernels/wat/build.ts`);
  }
});
