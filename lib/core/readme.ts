/**
 * Sections of README.md written by commands (the scorecard, the speed
 * table), never by hand: the text between `<!-- name:begin -->` and
 * `<!-- name:end -->` is replaced, and the file is aligned as `deno fmt`
 * aligns it so that `deno task test`'s fmt --check stays green.
 *
 * @module
 */

/** `text` safe inside a Markdown table cell: a "|" (|cos|, a list of choices) would end the cell. */
export const tableCell = (text: string): string => text.replaceAll("|", "\\|");

/** Replaces the text between the `name` markers of `readme`; throws when the markers are missing. */
export function replaceSection(readme: string, name: string, content: string): string {
  const begin = `<!-- ${name}:begin -->`, end = `<!-- ${name}:end -->`;
  const start = readme.indexOf(begin), stop = readme.indexOf(end);
  if (start < 0 || stop < start) throw new Error(`README lacks the ${begin} … ${end} markers`);
  return `${readme.slice(0, start + begin.length)}\n\n${content}\n\n${readme.slice(stop)}`;
}

/** The text between the `name` markers of `readme` ("" when the markers are missing). */
export function readSection(readme: string, name: string): string {
  const begin = `<!-- ${name}:begin -->`, end = `<!-- ${name}:end -->`;
  const start = readme.indexOf(begin), stop = readme.indexOf(end);
  return start < 0 || stop < start ? "" : readme.slice(start + begin.length, stop);
}

/** Rewrites the `name` section of the Markdown file at `path` and formats the file with deno fmt. */
export function writeSection(path: string, name: string, content: string): void {
  Deno.writeTextFileSync(path, replaceSection(Deno.readTextFileSync(path), name, content));
  new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path], stdout: "null", stderr: "null" }).outputSync();
}
