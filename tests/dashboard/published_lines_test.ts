import { assert, assertEquals } from "../assert.ts";
import { matchesPattern, namesTarget, publishedFor, referenceBand } from "../../dashboard/ui/published_lines.ts";
import type { SummaryTarget } from "../../lib/core/run_layout.ts";

const target = (metric: string, paper: number, direction = "match", source = `T ${metric}`) => ({
  metric,
  paper,
  source,
  tolerance: 0.05,
  direction,
});

Deno.test("referenceBand: both sides for match, below for higher, above for lower", () => {
  assertEquals(referenceBand({ paper: 1, tolerance: 0.25, direction: "match" }), { lo: 0.75, hi: 1.25 });
  assertEquals(referenceBand({ paper: 1, tolerance: 0.25, direction: "higher" }), { lo: 0.75, hi: 1 });
  assertEquals(referenceBand({ paper: 1, tolerance: 0.25, direction: "lower" }), { lo: 1, hi: 1.25 });
});

Deno.test("matchesPattern: * stands for any characters but /", () => {
  assert(matchesPattern("place/rat0_seed*/r2", "place/rat0_seed3/r2"));
  assert(!matchesPattern("place/rat0_seed*/r2", "place/rat0_seed3/x/r2"));
  assert(matchesPattern("L1/slowflow/mcc", "L1/slowflow/mcc") && !matchesPattern("L1.x", "L1/x"));
});

Deno.test("namesTarget: the same name, its parts reordered, or under a method's prefix", () => {
  assert(namesTarget("two_point/ent_boundary", "two_point/ent_boundary"));
  assert(namesTarget("L1/slowflow/mcc", "mcc/slowflow/L1"));
  assert(namesTarget("beta_vae/mig", "mig"));
  assert(!namesTarget("L1/pcl/mcc", "mcc/slowflow/L1"));
  assert(!namesTarget("beta_vae/mig_extra", "mig") && !namesTarget("mcc", "mcc/shape"));
});

Deno.test("publishedFor without a summary: the registry's targets the logged name names", () => {
  const registry = [target("mcc/slowflow/L1", 0.997, "higher", "Table 5"), target("mig", 0.102, "higher", "T16")];
  assertEquals(publishedFor("L1/slowflow/mcc", registry, null), [
    { label: "published (Table 5)", paper: 0.997, lo: 0.997 - 0.05, hi: 0.997 },
  ]);
  assertEquals(publishedFor("beta_vae/mig", registry, []).map((r) => r.paper), [0.102]);
  assertEquals(publishedFor("L1/slowflow/total", registry, null), []);
});

Deno.test("publishedFor with a summary: the targets whose curve is the metric, valued as the registry says today", () => {
  const summary = [
    { ...target("mig", 0.1, "higher", "old source"), curve: { metric: "beta_vae/mig", points: [] } },
    // A target that recorded no curve draws on the metrics that name it.
    { ...target("score", 0.5), curve: null },
    { ...target("r2", 0.8), curve: { metric: "place/seed*/r2", points: [] } },
  ] as unknown as SummaryTarget[];
  const registry = [target("mig", 0.102, "higher", "T16"), target("other", 1)];
  assertEquals(publishedFor("beta_vae/mig", registry, summary), [
    { label: "published (T16)", paper: 0.102, lo: 0.102 - 0.05, hi: 0.102 },
  ]);
  // Not in today's registry: the summary's own value.
  assertEquals(publishedFor("score", registry, summary).map((r) => [r.label, r.paper]), [["published (T score)", 0.5]]);
  assertEquals(publishedFor("method/score", registry, summary).map((r) => r.paper), [0.5]);
  assertEquals(publishedFor("place/seed2/r2", registry, summary).map((r) => r.paper), [0.8]);
  // The summary decides: a metric the registry's names would match but no summary target's curve is gets nothing.
  assertEquals(publishedFor("dislib/mig", registry, summary), []);
});
