/**
 * `--resume` checks its inputs before any work: the config comes from
 * run.json's argv and preset (as the run was started), config.json must hold
 * it, and run.json's fields must be what its writer writes. Each edit is a
 * one-line error naming the file and the field or key (exit code 2), and the
 * run is left as it was (not marked failed).
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { runStoppedAtCheckpoint } from "../experiments/cli.ts";
import { mainInProcess } from "../main_in_process.ts";
import { copyOfRun } from "../tree.ts";

await selectBackend("wasm");
const { dir: interrupted } = await runStoppedAtCheckpoint(
  findExperiment("ica-toy")!,
  ["--preset", "smoke", "--layers", "1", "--backend", "wasm", "--runs", Deno.makeTempDirSync()],
  1,
);

/** Rewrites a file of the run as `edit` returns its text. */
const editText = (file: string, edit: (text: string) => string) => (dir: string) =>
  Deno.writeTextFileSync(join(dir, file), edit(Deno.readTextFileSync(join(dir, file))));

/** Rewrites a JSON file of the run through `edit`. */
const editJson = (file: string, edit: (value: Record<string, unknown>) => void) =>
  editText(file, (text) => {
    const value = JSON.parse(text);
    edit(value);
    return JSON.stringify(value);
  });

/** An edit of the run folder and the error it must give (`DIR` stands for the run folder). */
const ROWS: [string, (dir: string) => void, string][] = [
  [
    "a truncated config.json",
    editText("config.json", (text) => text.slice(0, 20)),
    "DIR/config.json cannot be read as JSON (Unexpected end of JSON input)",
  ],
  [
    "a config.json with a __proto__ key",
    editText("config.json", (text) => text.replace("{", '{"__proto__": {"steps": 5},')),
    'DIR/config.json: "__proto__" is not a config key of ica-toy',
  ],
  [
    "config.json's steps changed",
    editJson("config.json", (c) => c.steps = 40),
    "DIR/config.json: steps is 40, but the run was started with 30 (run.json's argv and preset smoke)",
  ],
  [
    'run.json\'s seed "abc"',
    editJson("run.json", (r) => r.seed = "abc"),
    'DIR/run.json: field "seed" is "abc"; it must be an integer ≥ 0',
  ],
  [
    "run.json's seed changed",
    editJson("run.json", (r) => r.seed = 5),
    'DIR/run.json: field "seed" is 5, but its argv started the run with 0',
  ],
  [
    "run.json's preset changed",
    editJson("run.json", (r) => r.preset = "quick"),
    'DIR/run.json: field "preset" is "quick", but its argv started the run with "smoke"',
  ],
  [
    "run.json's argv not a list of strings",
    editJson("run.json", (r) => r.argv = "--preset smoke"),
    'DIR/run.json: field "argv" is "--preset smoke"; it must be a list of strings',
  ],
  [
    "run.json's argv with an unknown key",
    editJson("run.json", (r) => r.argv = ["--preset", "smoke", "--stepz", "3"]),
    'DIR/run.json: field "argv" (--preset smoke --stepz 3): unknown option --stepz',
  ],
  [
    "a run.json that does not parse",
    (dir) => Deno.writeTextFileSync(join(dir, "run.json"), '{"id": '),
    "DIR/run.json does not parse as JSON",
  ],
];

for (const [what, edit, message] of ROWS) {
  Deno.test(`--resume of a run with ${what} is refused with one line naming it`, async () => {
    const dir = copyOfRun(interrupted);
    edit(dir);
    const before = Deno.readTextFileSync(join(dir, "run.json"));
    const { code, stderr } = await mainInProcess(["run", "ica-toy", "--resume", dir, "--backend", "wasm"]);
    assertEquals(code, 2, stderr);
    const expected = `error: ${message.replaceAll("DIR", dir)}`;
    assert(stderr.startsWith(expected), `${stderr}\n≠ ${expected}`);
    assertEquals(stderr.split("\n").length, 1, stderr);
    assertEquals(Deno.readTextFileSync(join(dir, "run.json")), before, "the run is left as it was");
  });
}
