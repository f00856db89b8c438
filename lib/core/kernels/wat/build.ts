/**
 * Assembles the hand-written wasm kernels of this folder (`*.wat`) into `modules.ts`, the bytes the kernels load:
 * `deno run -A lib/core/kernels/wat/build.ts`. The test in tests/core/kernels/wat_modules_test.ts assembles them
 * again and compares, so the committed bytes always come from the committed text.
 *
 * @module
 */
import wabt from "wabt";

/** The kernels' names, each `<name>.wat` here. */
export const WAT_KERNELS = ["adam", "batch_norm", "column_sums", "max_pool_grad", "narrow_product"] as const;

/** Each kernel's binary, assembled with SIMD enabled. */
export async function assemble(): Promise<Record<string, Uint8Array>> {
  const toolkit = await wabt();
  const out: Record<string, Uint8Array> = {};
  for (const name of WAT_KERNELS) {
    const text = await Deno.readTextFile(new URL(`./${name}.wat`, import.meta.url));
    const module = toolkit.parseWat(`${name}.wat`, text, { simd: true });
    try {
      module.validate();
      out[name] = module.toBinary({}).buffer;
    } finally {
      module.destroy();
    }
  }
  return out;
}

/** `modules.ts`'s text for the given binaries. */
export function modulesSource(binaries: Record<string, Uint8Array>): string {
  const lines = Object.entries(binaries).map(([name, bytes]) => {
    let binary = "";
    for (const b of bytes) binary += String.fromCharCode(b);
    // The line break deno fmt puts after the key of a string too long for one line.
    return `  ${name}:\n    "${btoa(binary)}",`;
  });
  return [
    "/**",
    " * Binaries of the hand-written wasm kernels (`*.wat` beside this file), base64: written by build.ts, never by",
    " * hand.",
    " *",
    " * @module",
    " */",
    "export const WAT_MODULES: Record<string, string> = {",
    ...lines,
    "};",
    "",
  ].join("\n");
}

if (import.meta.main) {
  const target = new URL("./modules.ts", import.meta.url);
  await Deno.writeTextFile(target, modulesSource(await assemble()));
  console.log(`wrote ${target.pathname}`);
}
