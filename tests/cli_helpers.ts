/**
 * Scaffolding for tests of the file commands (corrupt, gen-split, gen-eval): run one in process, write its .npy
 * inputs, check what it wrote.
 *
 * @module
 */
import { join } from "node:path";
import { formatNpy, type NpyData } from "../lib/core/npy.ts";

/** A command's in-process entry: its arguments and where its lines go; resolves to the exit code. */
export type FileCommand = (args: string[], print: (line: string) => void) => Promise<number>;

/** Runs `command` in process; returns the exit code and the printed lines. */
export async function runCommand(command: FileCommand, args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await command(args, (line) => lines.push(line));
  return { code, lines };
}

/** Whether anything (file or folder) is at `path`. */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes `data` of `shape` as `dir/name` in .npy format; returns the path. */
export function writeNpy(dir: string, name: string, data: NpyData, shape: number[]): string {
  const path = join(dir, name);
  Deno.writeFileSync(path, formatNpy(data, shape));
  return path;
}
