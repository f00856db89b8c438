/** What a folder holds, for tests that check a refused command left it as it was, and copies of run folders. */
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

/** A copy of a run folder in a temporary folder, to damage without touching the original. */
export function copyOfRun(dir: string): string {
  const copy = join(Deno.makeTempDirSync(), "run");
  copyTree(dir, copy);
  return copy;
}

function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isDirectory) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}
