import { join } from "node:path";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  groupRows,
  scorecardHeadline,
  scorecardMarkdown,
  type ScoredExperiment,
  scoreResults,
  summaryMarkdown,
} from "../../lib/core/scorecard.ts";
import {
  compactCurve,
  mergedResults,
  readResults,
  type ReferenceResult,
  resultPath,
  runStoreResults,
  writeResult,
} from "../../lib/core/reference_results.ts";
import { replaceSection } from "../../lib/core/readme.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { readSummary } from "../../lib/core/run_reader.ts";

/** A toy experiment of today: one like-for-like target, one analogue, one claim on the config. */
const TOY: ScoredExperiment = {
  name: "toy",
  targets: [
    {
      metric: "mcc",
      paper: 0.9,
      source: "doc.md Table 1",
      tolerance: 0.05,
      direction: "higher",
      toleranceSource: "s.d. over seeds",
      nulls: [{ value: 0.3, model: "untrained" }],
      kind: "like-for-like",
    },
    {
      metric: "acc",
      paper: 0.8,
      source: "doc.md Table 2",
      tolerance: 0.1,
      direction: "match",
      toleranceSource: "rule",
      nulls: [{ value: 0.5, model: "chance" }],
      kind: "analogue",
      standIn: "digits for ImageNet",
      appliesTo: (cfg: { big?: boolean }) => cfg.big !== false,
    },
  ],
  claims: [{
    text: "mcc exceeds 0.5 when big",
    source: "doc.md Table 1",
    holds: (m: Record<string, number>, cfg: { big?: boolean }) => cfg.big ? m.mcc > 0.5 : undefined,
  }],
  presetLimits: { quick: "too few steps for the absolute numbers" },
};
const lookup = (name: string) => name === "toy" ? TOY : undefined;

function result(seed: number, metrics: Record<string, number>, more: Partial<ReferenceResult> = {}): ReferenceResult {
  return {
    experiment: "toy",
    preset: "quick",
    seed,
    overrides: [],
    config: { big: true },
    commit: "156b9d7c0ffee0123456789abcdef0123456789a",
    machine: "host",
    backend: "wasm",
    wall_time_s: 10,
    created: null,
    metrics,
    curves: {},
    claims: [],
    provenance: `run r${seed}`,
    ...more,
  };
}

function completedRun(root: string, preset: string, ours: number, argv: string[] = [], seed = 0) {
  const run = RunWriter.create({
    root,
    experiment: "toy",
    argv,
    seed,
    preset,
    backend: {},
    config: { big: true },
    versions: {},
    gitCommit: null,
  });
  run.writeSummary({
    experiment: "toy",
    run_id: run.info.id,
    preset,
    seed,
    wall_time_s: 1,
    metrics: { mcc: ours },
    targets: [{
      metric: "mcc",
      paper: 0.9,
      source: "doc.md Table 1",
      tolerance: 0.05,
      direction: "higher",
      ours,
      verdict: "not reproduced",
      curve: { metric: "mcc", points: [[100, 0.2], [200, 0.4], [300, ours]] },
    }],
    claims: [{ text: "mcc exceeds 0.5 when big", source: "doc.md Table 1", verdict: "reproduced" }],
  });
  return run;
}

Deno.test("verdicts are judged again with today's targets, not the ones the run had", () => {
  // The run said "not reproduced" with its target; today's band ≥ 0.85 holds 0.88.
  const [group] = scoreResults([result(0, { mcc: 0.88, acc: 0.5 })], lookup);
  assertEquals(group.targets.map((t) => [t.metric, t.kind, t.ours, t.verdict]), [
    ["mcc", "like-for-like", 0.88, "reproduced"],
    ["acc", "analogue", 0.5, "not reproduced"],
  ]);
  assertEquals(group.claims.map((c) => c.verdict), ["reproduced"]);
  assertEquals(group.limits, "too few steps for the absolute numbers");
  // A target that does not apply to the config is left out; a claim the config does not reach is not measured.
  const [small] = scoreResults([result(0, { mcc: 0.88 }, { config: { big: false } })], lookup);
  assertEquals(small.targets.map((t) => t.metric), ["mcc"]);
  assertEquals(small.claims.map((c) => c.verdict), ["not measured"]);
  // An experiment no longer registered says so.
  const [gone] = scoreResults([result(0, { mcc: 1 }, { experiment: "old" })], lookup);
  assertEquals(gone.problem, "no experiment old today");
});

Deno.test("three seeds are judged by their mean and its 95% t-interval; a null inside it is not reproduced", () => {
  const seeds = [0.85, 0.9, 0.95].map((mcc, seed) => result(seed, { mcc, acc: 0.8 }));
  const [group] = scoreResults(seeds, lookup);
  const [mcc] = group.targets;
  assertAlmostEquals(mcc.ours!, 0.9, 1e-12);
  // scipy.stats.t.ppf(0.975, 2) = 4.302652729749464; s.d. 0.05; half width 4.3027 · 0.05 / √3.
  const half = 4.302652729749464 * 0.05 / Math.sqrt(3);
  assertAlmostEquals(mcc.interval![0], 0.9 - half, 1e-9);
  assertAlmostEquals(mcc.interval![1], 0.9 + half, 1e-9);
  assertEquals([mcc.n, mcc.verdict], [3, "reproduced"]);
  assertEquals(group.claims[0].note, "holds in 3 of 3 seeds");
  // Seeds spread so widely that the untrained model's 0.3 lies in the interval: the mean alone is not evidence.
  const wide = [0.2, 0.95, 1.5].map((mcc, seed) => result(seed, { mcc }));
  const [spread] = scoreResults(wide, lookup);
  assert(spread.targets[0].interval![0] < 0.3 && spread.targets[0].ours! > 0.85, JSON.stringify(spread.targets[0]));
  assertEquals(spread.targets[0].verdict, "not reproduced");
  assertEquals(groupRows(spread)[0].split(" | ")[5], "0.883 [-0.738, 2.504], 3 seeds");
});

Deno.test("the headline counts like-for-like targets apart from analogues, then the claims", () => {
  const groups = scoreResults(
    [result(0, { mcc: 0.88, acc: 0.75 }), result(0, { mcc: 0.1 }, { preset: "smoke" })],
    lookup,
  );
  assertEquals(
    scorecardHeadline(groups),
    "Like-for-like targets: 1 reproduced · 0 still rising · 1 not reproduced · 0 not measured. " +
      "Analogues agreeing: 1 of 2 (stand-ins for the document's data, model or scale; counted apart). " +
      "Claims: 1 hold · 1 do not · 0 not measured.",
  );
});

Deno.test("rows name class, seeds, overrides, commit and a run older than the code; pipes are escaped", () => {
  const kept = result(0, { mcc: 0.6 }, {
    overrides: ["--steps 400"],
    curves: { mcc: [[100, 0.2], [200, 0.4], [300, 0.6]] },
  });
  const [group] = scoreResults([kept], lookup, () => true);
  assertEquals(groupRows(group), [
    "| toy (quick, seed 0, --steps 400, 156b9d7; older than the code) | like-for-like | doc.md Table 1 | mcc | 0.9 | 0.6 | ≥ 0.85 (0.9 − 0.05) | ▁▅█ → 1.2 at 2× | still rising |",
    "| toy (quick, seed 0, --steps 400, 156b9d7; older than the code) | analogue | doc.md Table 2 | acc | 0.8 | — | 0.8 ± 0.1 |  | not measured |",
    "| toy (quick, seed 0, --steps 400, 156b9d7; older than the code) | claim | doc.md Table 1 | mcc exceeds 0.5 when big | holds |  | | | reproduced |",
  ]);
  const markdown = scorecardMarkdown([group], { folder: "docs/curves", drawn: new Set(["toy-quick.svg"]) });
  const lines = markdown.split("\n");
  assert(lines.includes("- toy (quick): too few steps for the absolute numbers"));
  assertEquals(lines.at(-1), "![toy (quick) learning curves](docs/curves/toy-quick.svg)");
  const piped: ScoredExperiment = { ...TOY, claims: [{ ...TOY.claims[0], text: "|cos| ≥ 0.99" }] };
  const [escaped] = scoreResults([result(0, { mcc: 1 })], () => piped);
  assert(groupRows(escaped).some((row) => row.includes("\\|cos\\| ≥ 0.99")));
});

Deno.test("a result whose config was not kept uses its metrics' targets and the claims' verdicts it recorded", () => {
  const legacy = result(0, { mcc: 0.95 }, {
    config: null,
    claims: [{ text: "mcc exceeds 0.5 when big", verdict: "not reproduced" }],
  });
  const [group] = scoreResults([legacy], lookup);
  assertEquals(group.targets.map((t) => [t.metric, t.verdict]), [["mcc", "reproduced"]]);
  assertEquals(group.claims.map((c) => [c.verdict, c.note]), [[
    "not reproduced",
    "as judged by the run (config not kept)",
  ]]);
  const rewritten = scoreResults([{ ...legacy, claims: [] }], lookup)[0];
  assertEquals(rewritten.claims.map((c) => [c.verdict, c.note]), [[
    "not measured",
    "new or reworded since the run (config not kept)",
  ]]);
});

Deno.test("kept results round-trip through files; broken files are named with the reason, never dropped silently", () => {
  const folder = Deno.makeTempDirSync();
  const one = result(2, { mcc: 0.9 }, { curves: { mcc: Array.from({ length: 100 }, (_, i) => [i, i / 100]) } });
  const path = writeResult(folder, { ...one, curves: { mcc: compactCurve(one.curves.mcc) } });
  assertEquals(path, join(folder, "toy", "quick", "seed-2.json"));
  assertEquals(
    resultPath(folder, { experiment: "toy", preset: "quick", seed: 0, overrides: ["--steps 400", "--lr=0.1"] }),
    join(folder, "toy", "quick", "seed-0---steps_400_--lr=0.1.json"),
  );
  Deno.writeTextFileSync(join(folder, "toy", "quick", "seed-3.json"), "{");
  Deno.writeTextFileSync(join(folder, "toy", "quick", "seed-4.json"), JSON.stringify({ ...one, metrics: { a: "x" } }));
  const { results, skipped } = readResults(folder);
  assertEquals(results.length, 1);
  assertEquals(results[0].curves.mcc.length, 48);
  assertEquals(results[0].curves.mcc.at(-1), [99, 0.99]);
  assertEquals(results[0].curves.mcc[0], [0, 0]);
  assertEquals(skipped.map((s) => s.replace(folder, "")).sort(), [
    "/toy/quick/seed-3.json: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
    "/toy/quick/seed-4.json: metrics malformed",
  ]);
  assertEquals(readResults(join(folder, "absent")), { results: [], skipped: [] });
});

Deno.test("a run store gives its latest completed run per seed and overrides, and replaces kept results of that seed", async () => {
  const root = Deno.makeTempDirSync();
  completedRun(root, "quick", 0.5).finish("completed");
  await new Promise((resolve) => setTimeout(resolve, 1100)); // run ids order by creation second
  completedRun(root, "quick", 0.88).finish("completed");
  completedRun(root, "quick", 0.7, ["--steps", "10"]).finish("completed");
  completedRun(root, "smoke", 0.1).finish("failed");
  const local = runStoreResults(root);
  assertEquals(local.map((r) => [r.preset, r.seed, r.overrides, r.metrics.mcc]).sort(), [
    ["quick", 0, [], 0.88],
    ["quick", 0, ["--steps 10"], 0.7],
  ]);
  assertEquals(local[0].config, { big: true });
  const folder = Deno.makeTempDirSync();
  writeResult(folder, result(0, { mcc: 0.1 }));
  writeResult(folder, result(1, { mcc: 0.2 }));
  const merged = mergedResults(folder, root).results;
  assertEquals(merged.filter((r) => r.overrides.length === 0).map((r) => [r.seed, r.metrics.mcc]).sort(), [
    [0, 0.88],
    [1, 0.2],
  ]);
  assertEquals(mergedResults(folder, null).results.length, 2);
});

Deno.test("a run prints its own verdicts with the class of each target", () => {
  const root = Deno.makeTempDirSync();
  const run = completedRun(root, "long", 0.88);
  run.finish("completed");
  const lines = summaryMarkdown(readSummary(run.dir)!).split("\n");
  assertEquals(
    lines[2],
    "| toy (long, seed 0) |  | doc.md Table 1 | mcc | 0.9 | 0.88 | ≥ 0.85 (0.9 − 0.05) | ▁▃█ → 1.9 at 2× | not reproduced |",
  );
  assertEquals(
    lines[3],
    "| toy (long, seed 0) | claim | doc.md Table 1 | mcc exceeds 0.5 when big | holds | | | | reproduced |",
  );
});

Deno.test("replaceSection rewrites only the text between its markers", () => {
  const readme =
    "intro\n<!-- scorecard:begin -->\nold\n<!-- scorecard:end -->\n<!-- bench:begin -->\nb\n<!-- bench:end -->\n";
  assertEquals(
    replaceSection(readme, "scorecard", "new"),
    "intro\n<!-- scorecard:begin -->\n\nnew\n\n<!-- scorecard:end -->\n<!-- bench:begin -->\nb\n<!-- bench:end -->\n",
  );
  assertThrows(() => replaceSection(readme, "other", "x"), Error, "<!-- other:begin -->");
});
