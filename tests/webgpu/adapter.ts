/**
 * Whether the machine has a WebGPU adapter for `deno task test-webgpu`, probed once: without one, every test fails
 * with how to get one, unless `LATENTLAB_WEBGPU_SKIP=1` says to skip them (then it says so once).
 *
 * @module
 */
import { selectBackend } from "../../lib/core/backend.ts";

/** Why the tests cannot run here (no adapter), or null. */
export const noAdapter: string | null = await selectBackend("webgpu").then(
  () => null,
  (error) => String(error.message),
);

/** Whether the webgpu tests are skipped: no adapter and LATENTLAB_WEBGPU_SKIP=1. */
export const skipWebgpu = noAdapter !== null && Deno.env.get("LATENTLAB_WEBGPU_SKIP") === "1";
if (skipWebgpu) console.error(`webgpu tests skipped (LATENTLAB_WEBGPU_SKIP=1): ${noAdapter}`);

/** Throws the no-adapter message, where there is no adapter. */
export function requireAdapter(): void {
  if (noAdapter === null) return;
  throw new Error(
    `${noAdapter}. Install a Vulkan driver (Debian: mesa-vulkan-drivers) and run with ` +
      "DENO_WEBGPU_BACKEND=vulkan, or set LATENTLAB_WEBGPU_SKIP=1 to skip these tests",
  );
}

/** A test that needs a WebGPU adapter: ignored under the skip, failing with the message without an adapter. */
export function webgpuTest(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name,
    ignore: skipWebgpu,
    async fn() {
      requireAdapter();
      await fn();
    },
  });
}
