/**
 * Citations name the bibliography's keys (lib/core/papers.ts), never the file
 * names of the source documents' technical reports, which a clone does not
 * have, nor the thesis's labels for the papers it reprints: those are keys too.
 */
import { assert, assertEquals } from "../assert.ts";

const ROOT = new URL("../../", import.meta.url);
/** What the checks read: the repository's own text, relative to its root. */
const CHECKED = ["README.md", "docs", "lib", "experiments", "main.ts", "dashboard", "bench", "tests", "deno.json"];
/** Folders that are not the repository's own text. */
const SKIPPED = new Set(["node_modules", ".git", "__pycache__"]);
/** The one file that may name the reprints by their labels in the thesis: it maps them to their keys. */
const BIBLIOGRAPHY = "lib/core/papers.ts";

/** A report's file name, `NNN_<16 hex>`. */
const REPORT_NAME = /\d{3}_[0-9a-f]{16}/;
/** A reprint's label inside Schott's thesis. */
const REPRINT_LABEL = /\bPaper [A-D]\b/;

/** Every file under the checked paths, as paths relative to the root (missing paths skipped: docs/ may not exist). */
function files(): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(new URL(path, ROOT));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    if (info.isFile) out.push(path);
    else if (info.isDirectory) {
      for (const entry of Deno.readDirSync(new URL(path, ROOT))) {
        if (!SKIPPED.has(entry.name)) walk(`${path}/${entry.name}`);
      }
    }
  };
  for (const path of CHECKED) walk(path);
  return out.sort();
}

/** `path:line: text` of each line of each file that matches `pattern`, the path itself included. */
function offenders(pattern: RegExp, except: ReadonlySet<string> = new Set()): string[] {
  const decoder = new TextDecoder();
  const found: string[] = [];
  for (const path of files()) {
    if (except.has(path)) continue;
    if (pattern.test(path)) found.push(`${path}: the file name`);
    const lines = decoder.decode(Deno.readFileSync(new URL(path, ROOT))).split("\n");
    lines.forEach((line, i) => {
      if (pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim().slice(0, 160)}`);
    });
  }
  return found;
}

Deno.test("the checked paths hold the repository's code", () => {
  const found = files();
  for (const path of ["lib/core/papers.ts", "main.ts", "deno.json", "tests/core/citations_test.ts"]) {
    assert(found.includes(path), path);
  }
});

Deno.test("no file names a technical report by its file name; citations use the keys of lib/core/papers.ts", () => {
  assertEquals(offenders(REPORT_NAME), []);
});

Deno.test("the papers reprinted in Schott's thesis are cited by their keys, not by their labels in the thesis", () => {
  // The bibliography and the page written from it define the labels.
  assertEquals(offenders(REPRINT_LABEL, new Set([BIBLIOGRAPHY, "docs/papers.md"])), []);
});
