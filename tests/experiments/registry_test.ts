/**
 * The registry of experiments as a reader meets it: names unique and
 * kebab-case, every published number and claim traced to a document of
 * ../shared/papers/ that exists, every target comparing in a stated direction.
 */
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS, findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, PRESETS, presetsOf } from "../../lib/core/experiment.ts";
import { auditExperiment } from "../../lib/core/audit.ts";

const PAPERS = new URL("../../../shared/papers/", import.meta.url);
/** The source documents' names, or null on a clone without the reports beside it (a user's clone). */
const DOCUMENTS: Set<string> | null = (() => {
  try {
    return new Set([...Deno.readDirSync(PAPERS)].map((e) => e.name.replace(/\.(md|txt)$/, "")));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
})();

/** The report names a document `NNN_<16 hex>`, written with .md (the report) or .txt (the source). */
function documentsNamed(source: string): string[] {
  return [...source.matchAll(/\b(\d{3}_[0-9a-f]{16})\.(?:md|txt)\b/g)].map((m) => m[1]);
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

Deno.test("every target and claim cites a document of ../shared/papers/ that exists", () => {
  if (DOCUMENTS === null) {
    console.log("skipped: no ../shared/papers/ beside this clone to check the cited documents against");
    return;
  }
  const missing: string[] = [];
  for (const e of EXPERIMENTS) {
    for (const item of [e, ...e.targets, ...e.claims]) {
      const named = documentsNamed(item.source);
      if (named.length === 0) missing.push(`${e.name}: "${item.source}" names no document`);
      for (const doc of named) if (!DOCUMENTS.has(doc)) missing.push(`${e.name}: ${doc} is not in ../shared/papers/`);
    }
  }
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
