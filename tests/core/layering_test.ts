/**
 * The import structure the design asks for: experiments are leaves (only the
 * registry experiments/mod.ts imports them), and lib/ folders import only
 * their own layer or those below it, core ← ml ← data, models ← train,
 * metrics (and the folders of the same tier), without a cycle between
 * folders.
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals } from "../assert.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Layer of each lib/ folder: a folder may import folders of its own layer or lower. */
const LAYERS: Record<string, number> = {
  core: 0,
  ml: 1,
  data: 2,
  models: 2,
  train: 3,
  metrics: 3,
  attacks: 3,
  adapt: 3,
  contrastive: 3,
  attribution: 3,
  sweep: 3,
  // An experiment's study code that no other experiment reuses; lib never imports it.
  studies: 4,
};

function sourceFiles(folder: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, folder))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory && entry.name !== "node_modules" && !entry.name.startsWith(".")) {
      out.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Project-relative paths of the local files `file` imports (static and dynamic imports, re-exports). */
function localImports(file: string): string[] {
  const text = Deno.readTextFileSync(join(ROOT, file));
  const specifiers = [...text.matchAll(/(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)]
    .map((m) => m[1] ?? m[2])
    .filter((s) => s.startsWith("."));
  return specifiers.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

const FILES = ["main.ts", ...["lib", "experiments", "bench", "dashboard", "tests"].flatMap(sourceFiles)];

Deno.test("only the registry experiments/mod.ts imports an experiment", () => {
  const offenders = FILES.flatMap((file) =>
    localImports(file)
      .filter((target) => target.startsWith("experiments/") && target !== "experiments/mod.ts")
      .filter(() => file !== "experiments/mod.ts")
      .map((target) => `${file} → ${target}`)
  );
  assertEquals(offenders, []);
});

Deno.test("lib/ folders import only their own layer or lower (core ← ml ← data, models ← train, metrics)", () => {
  const folderOf = (path: string) => path.startsWith("lib/") ? path.split("/")[1] : null;
  const offenders: string[] = [];
  for (const file of FILES.filter((f) => f.startsWith("lib/"))) {
    const from = folderOf(file)!;
    if (!(from in LAYERS)) offenders.push(`${file}: lib/${from} has no layer; add it to LAYERS and DESIGN.md`);
    for (const target of localImports(file)) {
      const to = folderOf(target);
      if (to === null) offenders.push(`${file} → ${target}: lib/ imports outside lib/`);
      else if (LAYERS[to] > LAYERS[from]) offenders.push(`${file} → ${target}: ${from} is below ${to}`);
    }
  }
  assertEquals(offenders, []);
});

Deno.test("no import cycle between lib/ folders", () => {
  const edges = new Map<string, Set<string>>();
  for (const file of FILES.filter((f) => f.startsWith("lib/"))) {
    const from = file.split("/")[1];
    for (const target of localImports(file).filter((t) => t.startsWith("lib/"))) {
      const to = target.split("/")[1];
      if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    for (const next of edges.get(node) ?? []) {
      if (path.includes(next)) cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
      else visit(next, [...path, next]);
    }
  };
  for (const folder of edges.keys()) visit(folder, [folder]);
  assertEquals(cycles, []);
});
