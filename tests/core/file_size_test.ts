/**
 * Files small enough to find one's way in: no source file over 800 lines, and
 * no experiment over 600 (an experiment declares its config, presets, targets
 * and claims and calls the library; a study that needs more lives in lib/).
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals } from "../assert.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_LIMIT = 800, EXPERIMENT_LIMIT = 600;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || entry.name === "data") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...sourceFiles(path));
    else if (/\.(tsx?|py|sh)$/.test(entry.name)) out.push(path);
  }
  return out;
}

Deno.test(`no source file over ${SOURCE_LIMIT} lines, no experiment over ${EXPERIMENT_LIMIT}`, () => {
  const over = sourceFiles(ROOT).flatMap((path) => {
    const file = relative(ROOT, path);
    const lines = Deno.readTextFileSync(path).split("\n").length - 1;
    const limit = file.startsWith("experiments/") ? EXPERIMENT_LIMIT : SOURCE_LIMIT;
    return lines > limit ? [`${file}: ${lines} lines (limit ${limit})`] : [];
  });
  assertEquals(over, []);
});
