/**
 * abs-mnist keeps every attacked digit in attacks.jsonl: a run stopped
 * between digits, its file torn by the crash, resumes at the next digit and
 * ends with the numbers of a run left alone; Table 1's cells are the
 * medians and accuracies of the per-digit minima over attacks.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { RunInterrupted } from "../../lib/core/errors.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { readRunInfo } from "../../lib/core/run_files.ts";

await selectBackend("wasm");

const experiment = findExperiment("abs-mnist")!;
// The CNN alone keeps the runs to seconds; the ABS paths run in the smoke and resume tests of every experiment.
const ARGS = [
  "--preset",
  "smoke",
  "--models",
  "cnn",
  "--attack_digits",
  "3",
  "--attack_batch",
  "1",
  "--backend",
  "wasm",
];

interface DigitLine {
  index: number;
  label: number;
  models: Record<string, { clean_correct: boolean; attacks: Record<string, number | null>; best_l2: number | null }>;
}
const lines = (dir: string): DigitLine[] =>
  Deno.readTextFileSync(join(dir, "attacks.jsonl")).trim().split("\n").map((l) => JSON.parse(l));

let straight: ReturnType<typeof runExperiment> | undefined;
/** A run of ARGS left alone, shared by the tests: the first test that needs it runs it. */
function straightRun(): ReturnType<typeof runExperiment> {
  if (!straight) {
    const invocation = parseInvocation(experiment, [...ARGS, "--runs", Deno.makeTempDirSync()]);
    assert(invocation !== "help");
    straight = runExperiment(experiment, invocation, { report: () => {} });
  }
  return straight;
}

Deno.test("abs-mnist: stopped between digits, attacks.jsonl torn, resumed at the next digit with the same numbers", async () => {
  const { summary: expected, dir: aloneDir } = await straightRun();

  const first = parseInvocation(experiment, [...ARGS, "--runs", Deno.makeTempDirSync()]);
  assert(first !== "help");
  let dir = "";
  let watch: ReturnType<typeof setInterval> | undefined;
  const stopped = await runExperiment(experiment, first, {
    report: () => {},
    started: (run) => {
      dir = run.dir;
      watch = setInterval(() => {
        try {
          if (Deno.readTextFileSync(join(dir, "attacks.jsonl")).split("\n").length > 1) {
            clearInterval(watch);
            run.interrupt("test: stopped after the first digit");
          }
        } catch { /* not written yet */ }
      }, 2);
    },
  }).then(() => null, (error) => error);
  clearInterval(watch);
  assert(stopped instanceof RunInterrupted, `the run was not interrupted: ${stopped}`);
  const kept = lines(dir);
  assert(kept.length >= 1 && kept.length < 3, `${kept.length} digits written before the stop`);
  // A crash in the middle of an append leaves half a line behind.
  Deno.writeTextFileSync(join(dir, "attacks.jsonl"), '{"index": 2, "lab', { append: true });

  const resume = parseInvocation(experiment, ["--resume", dir, "--backend", "wasm"]);
  assert(resume !== "help");
  const { summary } = await runExperiment(experiment, resume, { report: () => {} });
  assertEquals(readRunInfo(dir).status, "completed");
  const all = lines(dir);
  assertEquals(all.map((l) => l.index), [0, 1, 2]);
  assertEquals(all.slice(0, kept.length), kept, "finished digits were attacked again");
  assertEquals(all, lines(aloneDir));
  const numbers = (m: Record<string, number>) =>
    Object.fromEntries(Object.entries(m).filter(([key]) => !key.endsWith("/seconds")));
  assertEquals(numbers(summary.metrics), numbers(expected.metrics));
});

Deno.test("abs-mnist: Table 1's cells are medians and accuracies of the per-digit minima over attacks", async () => {
  const { summary, dir } = await straightRun();
  const digits = lines(dir).map((l) => l.models.cnn);
  const best = digits.map((d) => {
    if (!d.clean_correct) return 0;
    const found = Object.entries(d.attacks).filter(([k, v]) => k.endsWith("/l2") && v !== null).map(([, v]) => v!);
    return found.length ? Math.min(...found) : Infinity;
  });
  assertEquals(digits.map((d) => d.best_l2 ?? Infinity), best);
  const sorted = [...best].sort((a, b) => a - b);
  assertEquals(summary.metrics["cnn/median_l2"], sorted[1]);
  assertEquals(summary.metrics["cnn/acc_l2_1.5"], best.filter((d) => d > 1.5).length / 3);
  assert(summary.metrics["cnn/distal_reached"] >= 0 && summary.metrics["cnn/distal_reached"] <= 1);
});
