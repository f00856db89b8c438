/**
 * The registry of experiments as a reader meets it: names unique and
 * kebab-case, every published number and claim citing a paper of
 * lib/core/papers.ts (whose source document's report, where ../shared/papers/
 * is beside the clone, is there), every target comparing in a stated direction.
 */
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS, findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, PRESETS, presetsOf } from "../../lib/core/experiment.ts";
import { auditExperiment } from "../../lib/core/audit.ts";
import { citedPapers, sourceDocumentOf } from "../../lib/core/papers.ts";

const PAPERS = new URL("../../../shared/papers/", import.meta.url);
/** The openings of the source documents' reports, or null on a clone without them beside it (a user's clone). */
const REPORT_OPENINGS: string[] | null = (() => {
  try {
    return [...Deno.readDirSync(PAPERS)].filter((e) => e.isFile && /\.(md|txt)$/.test(e.name))
      .map((e) => Deno.readTextFileSync(new URL(e.name, PAPERS)).slice(0, 2000));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
})();

/** Every source an experiment states: its own, its targets' and its claims'. */
function sources(): { experiment: string; source: string }[] {
  return EXPERIMENTS.flatMap((e) =>
    [e, ...e.targets, ...e.claims].map((item) => ({ experiment: e.name, source: item.source }))
  );
}

Deno.test("experiment names are unique kebab-case; every experiment has smoke, quick and paper presets", () => {
  const names = EXPERIMENTS.map((e) => e.name);
  assertEquals(new Set(names).size, names.length);
  for (const e of EXPERIMENTS) {
    assert(/^[a-z0-9]+(-[a-z0-9]+)*$/.test(e.name), e.name);
    const required = ["smoke", "quick", "paper"];
    assertEquals(presetsOf(e).filter((p) => required.includes(p)), required, e.name);
    for (const key of Object.keys(e.presets)) assert((PRESETS as readonly string[]).includes(key), `${e.name}: ${key}`);
  }
});

Deno.test("a long preset says what it shows and what it cannot, from its measured curves", () => {
  for (const e of EXPERIMENTS) {
    if (e.presets.long === undefined) continue;
    assert((e.presetLimits?.long ?? "").length > 40, `${e.name}: presetLimits.long`);
  }
});

Deno.test("every experiment, target and claim cites a paper of lib/core/papers.ts by its key", () => {
  const missing = sources().filter((s) => citedPapers(s.source).length === 0)
    .map((s) => `${s.experiment}: "${s.source}" cites no key of lib/core/papers.ts`);
  assertEquals(missing, []);
});

Deno.test("every cited paper's source document has its report in ../shared/papers/", () => {
  if (REPORT_OPENINGS === null) {
    console.log("skipped: no ../shared/papers/ beside this clone to check the cited documents against");
    return;
  }
  const documents = new Set(sources().flatMap((s) => citedPapers(s.source)).map((key) => sourceDocumentOf(key)));
  const missing = [...documents].filter((doc) => !REPORT_OPENINGS.some((o) => o.includes(doc.reportMarker ?? doc.key)))
    .map((doc) => `${doc.key}: no report in ../shared/papers/ opens with "${doc.reportMarker ?? doc.key}"`);
  assertEquals(missing, []);
});

Deno.test("targets state a direction and a positive tolerance, and name each metric once", () => {
  for (const e of EXPERIMENTS) {
    const metrics = e.targets.map((t) => t.metric);
    assertEquals(new Set(metrics).size, metrics.length, e.name);
    for (const t of e.targets) {
      assert(["match", "higher", "lower"].includes(t.direction), `${e.name} ${t.metric}`);
      assert(t.tolerance > 0 && Number.isFinite(t.paper), `${e.name} ${t.metric}`);
    }
  }
});

Deno.test("no target's band holds a null model; each names its tolerance source and class", () => {
  const problems = EXPERIMENTS.flatMap((e) =>
    auditExperiment(e).flatMap((r) => r.problems.map((p) => `${e.name} ${p}`))
  );
  assertEquals(problems, []);
});

Deno.test("a long preset training a subset of the models leaves the other models' targets out", () => {
  const applied = (name: string) => {
    const experiment = findExperiment(name)!;
    const invocation = parseInvocation(experiment, ["--preset", "long"]);
    assert(invocation !== "help");
    return experiment.targets.filter((t) => t.appliesTo?.(invocation.cfg) ?? true).map((t) => t.metric);
  };
  assertEquals(applied("slowvae-dsprites"), [
    "slowvae_lap/mcc",
    "slowvae_lap/dci_disentanglement",
    "slowvae_lap/beta_vae_score",
    "slowvae_lap/factor_vae_score",
    "slowvae_lap/mig",
    "pmvae_lap/mcc",
    "pmvae_lap/dci_disentanglement",
  ]);
  assertEquals(applied("slowvae-kitti"), ["slowvae_d1/mcc", "slowvae_d5/mcc", "pmvae_d1/mcc", "pmvae_d5/mcc"]);
});
