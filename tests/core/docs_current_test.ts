/**
 * docs/ is what `deno task docs` writes from the registry and the kept
 * results: every page rendered again in this process, formatted as deno fmt
 * formats it, equals the file in docs/ (and README.md's short scorecard its
 * section), and docs/experiments/ and docs/curves/ hold no page no longer
 * generated. The pure pieces of the pages are checked on small inputs.
 */
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { expectedDocs, staleDocs } from "../../lib/core/docs_files.ts";
import { linkCitations, papersPage, readmeScorecard, shortFinding, wallTimeText } from "../../lib/core/docs_pages.ts";
import { PAPERS } from "../../lib/core/papers.ts";
import type { ScoredGroup, ScoredTarget } from "../../lib/core/scorecard.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("docs/ and README.md's short scorecard are what deno task docs writes", () => {
  const expected = expectedDocs(ROOT, EXPERIMENTS);
  for (const e of EXPERIMENTS) assert(expected.has(`docs/experiments/${e.name}.md`), e.name);
  const stale = staleDocs(ROOT, expected);
  if (stale.length > 0) {
    throw new Error(`stale generated files (run deno task docs):\n${stale.map((p) => `  ${p}`).join("\n")}`);
  }
});

Deno.test("citation keys link to their entry of papers.md, once per occurrence, other text untouched", () => {
  assertEquals(
    linkCitations("Schott2019 Table 1; Klindt2021 Fig. 2 and Schott2019 §5.4", "../papers.md", PAPERS),
    "[Schott2019](../papers.md#schott2019) Table 1; [Klindt2021](../papers.md#klindt2021) Fig. 2 and " +
      "[Schott2019](../papers.md#schott2019) §5.4",
  );
  assertEquals(linkCitations("Schott2019x and Table 1", "papers.md", PAPERS), "Schott2019x and Table 1");
});

Deno.test("papers.md lists each reprinted paper under its thesis with the experiments citing it", () => {
  const experiment = {
    name: "toy",
    description: "a toy",
    source: "Klindt2021 Table 5",
    presets: {},
    targets: [],
    claims: [],
  };
  const page = papersPage(PAPERS, [experiment]);
  const at = (heading: string) => page.indexOf(`\n${heading}\n`);
  assert(at("## SchottThesis") < at("### Klindt2021") && at("### Klindt2021") < at("## Schneider2023"));
  assertEquals(page.split("\n").filter((line) => line.startsWith("- Cited by")), [
    "- Cited by: [toy](experiments/toy.md).",
  ]);
});

Deno.test("every registered experiment states its finding in at most 12 words", () => {
  assertEquals(shortFinding({ description: "a long description", finding: "its own words" }), "its own words");
  for (const e of EXPERIMENTS) {
    assert(e.finding !== undefined && e.finding.split(/\s+/).length <= 12, `${e.name}: ${e.finding}`);
  }
});

const target = (kind: ScoredTarget["kind"], verdict: ScoredTarget["verdict"]): ScoredTarget => ({
  metric: "m",
  source: "s",
  paper: 1,
  tolerance: 0.1,
  direction: "match",
  kind,
  standIn: null,
  toleranceSource: "",
  verdict,
  n: 1,
  ours: 1,
  interval: null,
  curve: null,
});

const group = (preset: string, targets: ScoredTarget[], claims: ScoredGroup["claims"] = []): ScoredGroup => ({
  experiment: "toy",
  preset,
  overrides: [],
  seeds: [0],
  commits: ["abcdef0"],
  stale: false,
  provenance: ["run x"],
  wall_time_s: null,
  targets,
  claims,
  limits: null,
  problem: null,
});

Deno.test("README's row counts one group's verdicts by class, from the most complete preset", () => {
  const quick = group("quick", [
    target("like-for-like", "reproduced"),
    target("like-for-like", "reproduced"),
    target("like-for-like", "not reproduced"),
    target("analogue", "reproduced"),
    target("analogue", "still rising"),
  ], [
    { text: "c1", source: "s", verdict: "reproduced", note: null },
    { text: "c2", source: "s", verdict: "not measured", note: null },
  ]);
  const long = group("long", [target("analogue", "not reproduced")]);
  const experiment = { name: "toy", description: "a toy", source: "s", presets: {}, targets: [], claims: [] };
  const row = readmeScorecard([experiment], [quick, long]).split("\n").at(-1);
  assertEquals(row, "| [toy](docs/experiments/toy.md) | a toy | long |  | 0 of 1 |  |");
  const quickRow = readmeScorecard([{ ...experiment, finding: "toys learn" }], [quick]).split("\n").at(-1);
  assertEquals(
    quickRow,
    "| [toy](docs/experiments/toy.md) | toys learn | quick | 2 of 3 | 1 of 2 (1 rising) | 1 of 1 (1 unmeasured) |",
  );
});

Deno.test("wall times read in seconds, minutes or hours", () => {
  assertEquals([wallTimeText(42.4), wallTimeText(569.11), wallTimeText(4298.81)], ["42 s", "9 min 29 s", "1 h 12 min"]);
});
