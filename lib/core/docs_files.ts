/**
 * docs/ on disk: the pages of lib/core/docs_pages.ts rendered from the kept
 * results, formatted as `deno fmt` formats them (so that `deno fmt --check`
 * stays green), then written, or compared with the files there to tell which
 * are stale. README.md is generated only between its scorecard markers.
 *
 * @module
 */
import { join } from "node:path";
import { type DocExperiment, DOCS_PATHS, README_SECTION, renderDocs } from "./docs_pages.ts";
import { type Paper, PAPERS } from "./papers.ts";
import { readResults, RESULTS_FOLDER } from "./reference_results.ts";
import { replaceSection } from "./readme.ts";

/** Folders whose every file of the given ending is generated: a file there that is not generated is stale. */
const GENERATED_FOLDERS: [string, string][] = [[DOCS_PATHS.experiments, ".md"], [DOCS_PATHS.curves, ".svg"]];

/** deno fmt's options for Markdown from the project's deno.json, as command-line flags. */
function fmtFlags(root: string): string[] {
  let fmt: Record<string, unknown> = {};
  try {
    fmt = JSON.parse(Deno.readTextFileSync(join(root, "deno.json"))).fmt ?? {};
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const flags: string[] = [];
  if (typeof fmt.lineWidth === "number") flags.push(`--line-width=${fmt.lineWidth}`);
  if (typeof fmt.proseWrap === "string") flags.push(`--prose-wrap=${fmt.proseWrap}`);
  if (typeof fmt.indentWidth === "number") flags.push(`--indent-width=${fmt.indentWidth}`);
  if (fmt.useTabs === true) flags.push("--use-tabs");
  return flags;
}

/**
 * Markdown texts formatted by one `deno fmt` over a temporary folder, with
 * the fmt options of `root`/deno.json; keys are kept.
 */
export function formatMarkdown(root: string, texts: ReadonlyMap<string, string>): Map<string, string> {
  const folder = Deno.makeTempDirSync({ prefix: "latentlab-docs-" });
  try {
    const names = [...texts.keys()];
    names.forEach((key, i) => Deno.writeTextFileSync(join(folder, `${i}.md`), texts.get(key)!));
    const out = new Deno.Command(Deno.execPath(), {
      args: ["fmt", "--no-config", "--quiet", ...fmtFlags(root), folder],
      cwd: folder,
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (!out.success) {
      throw new Error(`deno fmt failed on the generated pages: ${new TextDecoder().decode(out.stderr)}`);
    }
    return new Map(names.map((key, i) => [key, Deno.readTextFileSync(join(folder, `${i}.md`))]));
  } finally {
    Deno.removeSync(folder, { recursive: true });
  }
}

/**
 * Every generated file's expected text by path relative to `root`: the pages
 * rendered from `experiments` and the kept results of `root`/data/results,
 * formatted, and README.md with its scorecard section replaced. Throws when a
 * kept result does not parse or README.md lacks the markers.
 */
export function expectedDocs(
  root: string,
  experiments: readonly DocExperiment[],
  papers: readonly Paper[] = PAPERS,
): Map<string, string> {
  const { results, skipped } = readResults(join(root, RESULTS_FOLDER));
  if (skipped.length > 0) throw new Error(`kept results that do not parse: ${skipped.join("; ")}`);
  const { files, readmeSection } = renderDocs(experiments, results, papers);
  const readme = replaceSection(Deno.readTextFileSync(join(root, DOCS_PATHS.readme)), README_SECTION, readmeSection);
  const markdown = new Map([...files].filter(([path]) => path.endsWith(".md")));
  markdown.set(DOCS_PATHS.readme, readme);
  const formatted = formatMarkdown(root, markdown);
  return new Map(
    [...files.keys(), DOCS_PATHS.readme].sort().map((path) => [path, formatted.get(path) ?? files.get(path)!]),
  );
}

const readOrNull = (path: string) => {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
};

/** Files in the generated folders that `expected` does not hold (to be removed). */
function extraFiles(root: string, expected: ReadonlyMap<string, string>): string[] {
  return GENERATED_FOLDERS.flatMap(([folder, ending]) => {
    try {
      return [...Deno.readDirSync(join(root, folder))]
        .filter((e) => e.isFile && e.name.endsWith(ending) && !expected.has(`${folder}/${e.name}`))
        .map((e) => `${folder}/${e.name}`);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
  }).sort();
}

/** The generated files under `root` that differ from `expected`, are missing, or are no longer generated; sorted. */
export function staleDocs(root: string, expected: ReadonlyMap<string, string>): string[] {
  const differing = [...expected].filter(([path, text]) => readOrNull(join(root, path)) !== text).map(([p]) => p);
  return [...differing, ...extraFiles(root, expected)].sort();
}

/** Writes the stale files of `expected` under `root` and removes those no longer generated; returns their paths. */
export function writeDocs(root: string, expected: ReadonlyMap<string, string>): string[] {
  const stale = staleDocs(root, expected);
  for (const path of stale) {
    const text = expected.get(path);
    if (text === undefined) {
      Deno.removeSync(join(root, path));
      continue;
    }
    Deno.mkdirSync(join(root, path, ".."), { recursive: true });
    Deno.writeTextFileSync(join(root, path), text);
  }
  return stale;
}
