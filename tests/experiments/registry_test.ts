/**
 * The registry of experiments as a reader meets it: names unique and
 * kebab-case, every published number and claim cited to a work of
 * lib/core/papers.ts (and, where the documents' reports lie beside the clone,
 * checked against them), every target comparing in a stated direction.
 */
import { assert, assertEquals } from "../assert.ts";
import { EXPERIMENTS, findExperiment } from "../../experiments/mod.ts";
import { parseInvocation, PRESETS, presetsOf } from "../../lib/core/experiment.ts";
import { auditExperiment } from "../../lib/core/audit.ts";
import { citedPapers, type Paper, sourceDocumentOf } from "../../lib/core/papers.ts";

/** Every cited item of the registry: the experiments, their targets and claims. */
const CITED = EXPERIMENTS.flatMap((e) =>
  [e, ...e.targets, ...e.claims].map((item) => ({ experiment: e.name, source: item.source }))
);

/** A technical report's file name; citations name the work instead. */
const REPORT_NAME = /\d{3}_[0-9a-f]{16}/;

Deno.test("every experiment, target and claim cites a work of lib/core/papers.ts and no report file", () => {
  const problems = CITED.flatMap(({ experiment, source }) => [
    ...(citedPapers(source).length === 0 ? [`${experiment}: "${source}" cites no key of lib/core/papers.ts`] : []),
    ...(REPORT_NAME.test(source) ? [`${experiment}: "${source}" names a report file`] : []),
  ]);
  assertEquals(problems, []);
});

const PAPERS_DIR = new URL("../../../shared/papers/", import.meta.url);
/** The documents' technical reports (the first 60 lines, and the whole text), or null on a clone without them. */
const REPORTS: { head: string[]; text: string }[] | null = (() => {
  try {
    return [...Deno.readDirSync(PAPERS_DIR)].filter((e) => e.isFile && e.name.endsWith(".md")).map((e) => {
      const text = Deno.readTextFileSync(new URL(e.name, PAPERS_DIR));
      return { head: text.split("\n").slice(0, 60), text };
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
})();

/**
 * The report of a source document: the one whose first 60 lines name its `reportMarker` earliest (a marker may also
 * fall in another report's opening, as Locatello among the authors of a paper reprinted in Schott's thesis).
 */
function reportOf(document: Paper): string | undefined {
  const marker = document.reportMarker;
  if (marker === undefined || REPORTS === null) return undefined;
  const lines = REPORTS.map((r) => r.head.findIndex((line) => line.includes(marker)));
  const earliest = Math.min(...lines.filter((i) => i >= 0));
  const at = lines.flatMap((i, k) => i === earliest ? [k] : []);
  return at.length === 1 ? REPORTS[at[0]].text : undefined;
}

/** The ways a published value may be written: 0.991 as 0.991, .991, 99.1 or 99.1%; −8.8 with a minus sign. */
function writtenForms(value: number): string[] {
  const forms = [value, value * 100].flatMap((v) =>
    [0, 1, 2, 3, 4].flatMap((digits) => {
      const text = v.toFixed(digits);
      return Math.abs(Number(text) - v) < 1e-9 ? [text] : [];
    })
  );
  return [...new Set(forms.flatMap((f) => [f, f.replace(/^(-?)0\./, "$1."), f.replace(/^-/, "−")]))];
}

/** Whether `text` writes `value` in one of its forms, as a whole number (no digit or point glued to it). */
function writes(text: string, value: number): boolean {
  return writtenForms(value).some((form) => {
    const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(?<![\\d.])${escaped}(?!\\d)`).test(text);
  });
}

/**
 * Like-for-like targets whose published value the document gives as a relation, not as a number: the report must
 * write the relation instead. The two-point model's stability boundaries are ratios τ_s/τ_t read off Prop. 1.
 */
const DERIVED: Record<string, { formula: string; written: string }> = {
  // ENT (no stop-gradient) does not collapse iff τ_s > τ_t/2: the boundary τ_s/τ_t = 1/2.
  "two_point/ent_boundary": { formula: "τ_s/τ_t = 1/2", written: "τ_s > τ_t/2" },
  // Pseudo-labelling (stop-gradient) does not collapse iff τ_s > τ_t: the boundary τ_s/τ_t = 1.
  "two_point/pl_boundary": { formula: "τ_s/τ_t = 1", written: "τ_s > τ_t" },
};

Deno.test("beside ../shared/papers/: each cited work's report is there and writes each like-for-like value", () => {
  if (REPORTS === null) {
    console.log("document check skipped: no ../shared/papers/ beside this clone (the reports are not distributed)");
    return;
  }
  const problems: string[] = [];
  const documents = new Set(CITED.flatMap(({ source }) => citedPapers(source).map((key) => sourceDocumentOf(key))));
  for (const document of documents) {
    if (reportOf(document) === undefined) {
      problems.push(`${document.key}: no single report names "${document.reportMarker}"`);
    }
  }
  for (const e of EXPERIMENTS) {
    for (const t of e.targets.filter((t) => t.kind === "like-for-like")) {
      const reports = [...new Set(citedPapers(t.source).map((key) => reportOf(sourceDocumentOf(key))))];
      const derived = DERIVED[t.metric];
      const found = reports.some((text) =>
        text !== undefined && (derived ? text.includes(derived.written) : writes(text, t.paper))
      );
      if (!found) {
        problems.push(
          `${e.name} ${t.metric}: ${derived ? `"${derived.written}" (${derived.formula})` : t.paper} not in the ` +
            `report of "${t.source}"`,
        );
      }
    }
  }
  assertEquals(problems, []);
});

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
