import { assertEquals } from "../assert.ts";
import type { RunRow } from "../../dashboard/run_index.ts";
import { finalTable, latexEscape } from "../../dashboard/ui/table_export.ts";

const reducers = (last: number) => ({ last, min: last - 1, max: last + 1 });
type ExportRun = Pick<RunRow, "experiment" | "id" | "seed" | "config" | "metrics">;
const runs: ExportRun[] = [
  {
    experiment: "ica_toy",
    id: "20240101-120000-abcdef",
    seed: 0,
    config: { lr: 0.01 },
    metrics: { loss: reducers(0.5), mcc: reducers(0.123456) },
  },
  { experiment: "ica_toy", id: "20240102-120000-012345", seed: 1, config: { lr: 0.1 }, metrics: { loss: reducers(2) } },
];

Deno.test("finalTable as Markdown: sorted metric columns of the reducer's values, rows named by differing config", () => {
  assertEquals(
    finalTable(runs, "markdown"),
    [
      "| run | loss | mcc |",
      "|---|---|---|",
      "| ica_toy lr=0.01 seed 0 | 0.5 | 0.1235 |",
      "| ica_toy lr=0.1 seed 1 | 2 |  |",
    ].join("\n"),
  );
  // The reducer the table shows is the one exported (max here), not the last value.
  assertEquals(
    finalTable(runs, "markdown", { reducer: "max" }).split("\n")[2],
    "| ica_toy lr=0.01 seed 0 | 1.5 | 1.123 |",
  );
});

Deno.test("finalTable as LaTeX: a tabular with one right-aligned column per metric, every special character escaped", () => {
  assertEquals(
    finalTable(runs, "latex"),
    [
      "\\begin{tabular}{lrr}",
      "run & loss & mcc \\\\ \\hline",
      "ica\\_toy lr=0.01 seed 0 & 0.5 & 0.1235 \\\\",
      "ica\\_toy lr=0.1 seed 1 & 2 &  \\\\",
      "\\end{tabular}",
    ].join("\n"),
  );
  assertEquals(
    latexEscape("a_b%c&d#e$f{g}h~i^j\\k"),
    "a\\_b\\%c\\&d\\#e\\$f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k",
  );
});

Deno.test("finalTable in group mode: one row per setting, mean ± sample s.d. over its seeds", () => {
  const seeds = [0.2, 0.4, 0.9].map((last, seed) => ({
    experiment: "vae",
    id: `2024010${seed}-000000-aaaaaa`,
    seed,
    config: { beta: 4 },
    metrics: { mig: reducers(last) },
  }));
  const single = {
    experiment: "vae",
    id: "20240109-000000-aaaaaa",
    seed: 0,
    config: { beta: 8 },
    metrics: { mig: reducers(0.3) },
  };
  // numpy: np.mean([0.2, 0.4, 0.9]) = 0.5, np.std(..., ddof=1) = 0.36055512754639896
  assertEquals(finalTable([...seeds, single], "markdown", { grouping: [] }).split("\n"), [
    "| setting | mig |",
    "|---|---|",
    "| vae beta=4 (3 seeds) | 0.5 ± 0.3606 |",
    "| vae beta=8 (1 seed) | 0.3 |",
  ]);
  assertEquals(finalTable(seeds, "latex", { grouping: [] }).split("\n")[2], "vae (3 seeds) & 0.5 $\\pm$ 0.3606 \\\\");
});

Deno.test("finalTable exports the table's columns in its order, final scores as they are, grouped by a chosen key", () => {
  const rows = [
    {
      experiment: "ica",
      id: "20240101-000000-aaaaaa",
      seed: 0,
      config: { method: "pcl", lr: 0.1 },
      final: { mcc: 0.8 },
    },
    {
      experiment: "ica",
      id: "20240102-000000-aaaaaa",
      seed: 0,
      config: { method: "pcl", lr: 0.01 },
      final: { mcc: 0.6 },
    },
    {
      experiment: "ica",
      id: "20240103-000000-aaaaaa",
      seed: 0,
      config: { method: "slowflow", lr: 0.1 },
      final: { mcc: 0.9 },
    },
  ].map((r) => ({ ...r, metrics: { loss: reducers(r.final.mcc) } }));
  // numpy: np.mean([0.8, 0.6]) = 0.7, np.std([0.8, 0.6], ddof=1) = 0.1414213562373095
  assertEquals(
    finalTable(rows, "markdown", { grouping: ["method"], reducer: "max", columns: ["mcc", "loss"] }).split("\n"),
    [
      "| setting | mcc | loss |",
      "|---|---|---|",
      "| ica method=pcl (2 runs) | 0.7 ± 0.1414 | 1.7 ± 0.1414 |",
      "| ica method=slowflow (1 run) | 0.9 | 1.9 |",
    ],
  );
});
