import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { latestSummaries, scorecardMarkdown, writtenScorecard } from "../../lib/core/scorecard.ts";
import { replaceSection } from "../../lib/core/readme.ts";
import { RunWriter } from "../../lib/core/run_store.ts";

function completedRun(
  root: string,
  preset: string,
  ours: number,
  status: "completed" | "failed" = "completed",
  gitCommit: string | null = null,
  argv: string[] = [],
) {
  const run = RunWriter.create({
    root,
    experiment: "toy",
    argv,
    seed: 0,
    preset,
    backend: {},
    config: {},
    versions: {},
    gitCommit,
  });
  run.writeSummary({
    experiment: "toy",
    run_id: run.info.id,
    preset,
    seed: 0,
    wall_time_s: 1,
    targets: [{
      metric: "mcc",
      paper: 0.9,
      source: "doc.md Table 1",
      tolerance: 0.05,
      direction: "higher",
      ours,
      verdict: ours > 0.85 ? "reproduced" : "not reproduced",
    }],
    claims: [{ text: "A beats B", source: "doc.md Table 1", verdict: "reproduced" }],
  });
  run.finish(status);
  return run.dir;
}

Deno.test("the scorecard takes the latest completed run per experiment and preset", async () => {
  const root = Deno.makeTempDirSync();
  completedRun(root, "quick", 0.5);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // run ids order by creation second
  completedRun(root, "quick", 0.88);
  completedRun(root, "smoke", 0.1, "failed");
  const summaries = latestSummaries(root);
  assertEquals(summaries.map((s) => [s.preset, s.targets[0].ours]), [["quick", 0.88]]);
  assertEquals(scorecardMarkdown(summaries).split("\n"), [
    "Verdicts: 2 reproduced · 0 still rising · 0 not reproduced · 0 not measured.",
    "",
    "| experiment | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "|---|---|---|---|---|---|---|---|",
    "| toy (quick, seed 0) | doc.md Table 1 | mcc | 0.9 | 0.88 | ≥ 0.85 (0.9 − 0.05) |  | reproduced |",
    "| toy (quick, seed 0) | doc.md Table 1 | A beats B | holds | | | | reproduced |",
  ]);
});

Deno.test("a scorecard row names the commit its run was made at", () => {
  const root = Deno.makeTempDirSync();
  completedRun(root, "long", 0.88, "completed", "156b9d7c0ffee0123456789abcdef0123456789a");
  assertEquals(
    scorecardMarkdown(latestSummaries(root)).split("\n")[4],
    "| toy (long, seed 0, 156b9d7) | doc.md Table 1 | mcc | 0.9 | 0.88 | ≥ 0.85 (0.9 − 0.05) |  | reproduced |",
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

Deno.test("the scorecard shows a damaged latest summary with its problem and survives a run.json without created", () => {
  const root = Deno.makeTempDirSync();
  const dir = completedRun(root, "quick", 0.88);
  const info = JSON.parse(Deno.readTextFileSync(join(dir, "run.json")));
  delete info.created;
  Deno.writeTextFileSync(join(dir, "run.json"), JSON.stringify(info));
  assertEquals(latestSummaries(root).map((s) => [s.preset, s.targets[0].ours, s.problem]), [[
    "quick",
    0.88,
    undefined,
  ]]);
  Deno.writeTextFileSync(join(dir, "summary.json"), "{}");
  const [summary] = latestSummaries(root);
  assertEquals(scorecardMarkdown([summary]).split("\n").slice(4), [
    "| toy (quick, seed 0) | | summary.json: missing or invalid experiment, run_id, preset, seed, targets, claims | | | | | not measured |",
  ]);
});

Deno.test("the scorecard lists what each preset cannot show, and counts a still-rising target apart", () => {
  const summary = {
    experiment: "toy",
    description: "",
    source: "",
    run_id: "r",
    preset: "quick",
    seed: 0,
    backend: "wasm",
    wall_time_s: 1,
    metrics: {},
    details: null,
    preset_limits: "too few steps for the absolute numbers",
    targets: [{
      metric: "mcc",
      paper: 0.9,
      source: "doc.md Table 1",
      tolerance: 0.05,
      direction: "higher" as const,
      ours: 0.6,
      verdict: "still rising" as const,
      curve: {
        metric: "mcc",
        points: [[100, 0.2], [200, 0.4], [300, 0.6]] as [number, number][],
        change_last_quarter: 0.05,
      },
    }],
    claims: [],
  };
  const lines = scorecardMarkdown([summary], { folder: "docs/curves" }).split("\n");
  assertEquals(lines[0], "Verdicts: 0 reproduced · 1 still rising · 0 not reproduced · 0 not measured.");
  assertEquals(
    lines[4],
    "| toy (quick, seed 0) | doc.md Table 1 | mcc | 0.9 | 0.6 | ≥ 0.85 (0.9 − 0.05) | ▁▅█ +0.05 last ¼ | still rising |",
  );
  assertEquals(lines.includes("- toy (quick): too few steps for the absolute numbers"), true);
  assertEquals(lines.at(-1), "![toy (quick) learning curves](docs/curves/toy-quick.svg)");
  // The experiment's text of now, written after the run was measured, replaces what the run recorded.
  const current = (experiment: string, preset: string) =>
    experiment === "toy" && preset === "quick" ? "measured: 0.6 after 300 steps, still rising" : undefined;
  const updated = scorecardMarkdown([summary], undefined, current).split("\n");
  assertEquals(updated.filter((l) => l.startsWith("- toy")), [
    "- toy (quick): measured: 0.6 after 300 steps, still rising",
  ]);
  assertEquals(
    scorecardMarkdown([summary], undefined, () => undefined).split("\n").filter((l) => l.startsWith("- toy")),
    ["- toy (quick): too few steps for the absolute numbers"],
  );
});

Deno.test("the scorecard prefers a run of the preset as defined, and names the overrides of one that is not", async () => {
  const root = Deno.makeTempDirSync();
  completedRun(root, "quick", 0.7, "completed", null, ["--preset", "quick", "--workers", "2"]);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // run ids order by creation second
  completedRun(root, "quick", 0.99, "completed", null, ["--preset", "quick", "--layers", "1", "--lr=0.003"]);
  completedRun(root, "smoke", 0.2, "completed", null, ["--preset", "smoke", "--steps", "400", "--seed", "3"]);
  const summaries = latestSummaries(root);
  assertEquals(summaries.map((s) => [s.preset, s.targets[0].ours, s.overrides]), [
    ["quick", 0.7, []],
    ["smoke", 0.2, ["--steps 400"]],
  ]);
  const rows = scorecardMarkdown(summaries).split("\n").filter((line) => line.startsWith("| toy"));
  assert(rows.some((row) => row.startsWith("| toy (smoke, seed 0, --steps 400) |")), rows.join("\n"));
  assert(rows.some((row) => row.startsWith("| toy (quick, seed 0) |")), rows.join("\n"));
});

Deno.test("scorecard --write keeps the rows of runs this store lacks, and escapes pipes inside cells", () => {
  const root = Deno.makeTempDirSync();
  const dir = completedRun(root, "quick", 0.88);
  const summary = latestSummaries(root)[0];
  summary.claims[0].text = "|cos| ≥ 0.99";
  // An earlier section: an "other" run measured elsewhere (kept), and an older toy quick row (replaced).
  const section = [
    "Verdicts: 1 reproduced · 0 still rising · 2 not reproduced · 0 not measured.",
    "",
    "| experiment | source | metric or finding | published | ours | reproduced when | curve | verdict |",
    "| ---------- | ------ | ----------------- | --------- | ---- | --------------- | ----- | ------- |",
    "| other (long, seed 1, abc1234) | d.md | x | 1 | 0.5 | ≥ 0.9 (1 − 0.1) | | not reproduced |",
    "| other (long, seed 1, abc1234) | d.md | a \\| b | holds | | | | reproduced |",
    "| toy (quick, seed 0, 0000000) | doc.md Table 1 | mcc | 0.9 | 0.2 | ≥ 0.85 (0.9 − 0.05) | | not reproduced |",
    "",
    "What each preset cannot show, and why:",
    "",
    "- other (long): short",
    "",
    "Learning curves of each target (blue; dot: the final value), published value dashed red:",
    "",
    "![other (long) learning curves](docs/curves/other-long.svg)",
  ].join("\n");
  const lines = scorecardMarkdown([summary], { folder: "docs/curves" }, undefined, writtenScorecard(section))
    .split("\n");
  assertEquals(lines[0], "Verdicts: 3 reproduced · 0 still rising · 1 not reproduced · 0 not measured.");
  assertEquals(lines.slice(4, 8), [
    "| other (long, seed 1, abc1234) | d.md | x | 1 | 0.5 | ≥ 0.9 (1 − 0.1) | | not reproduced |",
    "| other (long, seed 1, abc1234) | d.md | a \\| b | holds | | | | reproduced |",
    "| toy (quick, seed 0) | doc.md Table 1 | mcc | 0.9 | 0.88 | ≥ 0.85 (0.9 − 0.05) |  | reproduced |",
    "| toy (quick, seed 0) | doc.md Table 1 | \\|cos\\| ≥ 0.99 | holds | | | | reproduced |",
  ]);
  assert(lines.includes("- other (long): short"));
  assert(lines.includes("![other (long) learning curves](docs/curves/other-long.svg)"));
  Deno.removeSync(dir, { recursive: true });
});
