/**
 * The audit of an experiment's targets: each target's null models pushed
 * through the same verdict a run gets, its class (like-for-like or analogue)
 * and where its tolerance comes from. The registry test runs the same gate,
 * so a target a trivial model would reproduce cannot be registered.
 *
 * @module
 */
import type { AnyExperiment, TargetKind } from "./experiment.ts";
import { comparisonText, nullGateProblems, targetVerdict } from "./targets.ts";
import { tableCell } from "./readme.ts";

/** One target as the audit shows it. */
export interface AuditRow {
  /** The experiment's registered name. */
  experiment: string;
  /** The target's key in the run's final metrics. */
  metric: string;
  /** Like-for-like or analogue; "(none)" when the target states no class. */
  kind: TargetKind;
  /** "0.823 ± 0.05" etc. */
  reproducedWhen: string;
  /** Where the tolerance comes from, as the target states it ("" when it does not). */
  toleranceSource: string;
  /** Each null model with the verdict it would get. */
  nulls: { model: string; value: number; verdict: string }[];
  /** Why the target gives no evidence ([] when it does). */
  problems: string[];
}

/** The audit rows of every target of `experiment`. */
export function auditExperiment(experiment: AnyExperiment): AuditRow[] {
  return experiment.targets.map((t) => ({
    experiment: experiment.name,
    metric: t.metric,
    kind: t.kind ?? "(none)",
    reproducedWhen: comparisonText(t),
    toleranceSource: t.toleranceSource ?? "",
    nulls: (t.nulls ?? []).map((n) => ({ ...n, verdict: targetVerdict(t, n.value) })),
    problems: [
      ...nullGateProblems({ ...t, nulls: t.nulls ?? [], toleranceSource: t.toleranceSource ?? "" }),
      ...(t.kind === "analogue" && !t.standIn?.trim() ? [`${t.metric}: an analogue says what stands in for what`] : []),
      ...(t.kind !== "like-for-like" && t.kind !== "analogue" ? [`${t.metric}: kind "${t.kind}" is not a class`] : []),
    ],
  }));
}

/** Counts of an audit: targets per class, and those with problems. */
export function auditCounts(rows: AuditRow[]): { likeForLike: number; analogue: number; failing: number } {
  return {
    likeForLike: rows.filter((r) => r.kind === "like-for-like").length,
    analogue: rows.filter((r) => r.kind === "analogue").length,
    failing: rows.filter((r) => r.problems.length > 0).length,
  };
}

/** The audit as Markdown: one table per experiment, then every problem, then the counts. */
export function auditMarkdown(rows: AuditRow[]): string {
  const cell = tableCell;
  const lines: string[] = [];
  for (const experiment of [...new Set(rows.map((r) => r.experiment))]) {
    const own = rows.filter((r) => r.experiment === experiment);
    const counts = auditCounts(own);
    lines.push(
      `### ${experiment}: ${counts.likeForLike} like-for-like, ${counts.analogue} analogue` +
        (counts.failing ? `, ${counts.failing} failing the gate` : ""),
      "",
      "| metric | class | reproduced when | tolerance from | null models → verdict |",
      "|---|---|---|---|---|",
      ...own.map((r) =>
        `| ${cell(r.metric)} | ${r.kind} | ${cell(r.reproducedWhen)} | ${cell(r.toleranceSource)} | ${
          cell(r.nulls.map((n) => `${n.model} ${Number(n.value.toPrecision(4))} → ${n.verdict}`).join("; "))
        } |`
      ),
      "",
    );
  }
  const problems = rows.flatMap((r) => r.problems.map((p) => `- ${r.experiment} ${p}`));
  const all = auditCounts(rows);
  lines.push(
    `Targets: ${rows.length} (${all.likeForLike} like-for-like, ${all.analogue} analogue); ` +
      `${all.failing} failing the null-model gate.`,
  );
  if (problems.length) lines.push("", ...problems);
  return lines.join("\n");
}
