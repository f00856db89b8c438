/** What a folder holds, for tests that check a refused command left it as it was. */
import { join } from "node:path";

/** Every file and folder under `dir`, relative, sorted. */
export function listing(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(prefix, entry.name);
    out.push(path);
    if (entry.isDirectory) out.push(...listing(join(dir, entry.name), path));
  }
  return out.sort();
}
