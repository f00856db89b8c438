import { assertEquals } from "../assert.ts";
import type { RunRow } from "../../dashboard/run_index.ts";
import { finalTable } from "../../dashboard/ui/table_export.ts";

const reducers = (last: number) => ({ last, min: last - 1, max: last + 1 });
const runs: Pick<RunRow, "experiment" | "id" | "metrics">[] = [
  { experiment: "ica_toy", id: "20240101-120000-abcdef", metrics: { loss: reducers(0.5), mcc: reducers(0.123456) } },
  { experiment: "vae", id: "20240102-120000-012345", metrics: { loss: reducers(2) } },
];

Deno.test("finalTable as Markdown: sorted metric columns of last values, empty where a run lacks one", () => {
  assertEquals(
    finalTable(runs, "markdown"),
    [
      "| run | loss | mcc |",
      "|---|---|---|",
      "| ica_toy/20240101-120000-abcdef | 0.5000 | 0.1235 |",
      "| vae/20240102-120000-012345 | 2 |  |",
    ].join("\n"),
  );
});

Deno.test("finalTable as LaTeX: a tabular with one right-aligned column per metric, underscores escaped", () => {
  assertEquals(
    finalTable(runs, "latex"),
    [
      "\\begin{tabular}{lrr}",
      "run & loss & mcc \\\\ \\hline",
      "ica\\_toy/20240101-120000-abcdef & 0.5000 & 0.1235 \\\\",
      "vae/20240102-120000-012345 & 2 &  \\\\",
      "\\end{tabular}",
    ].join("\n"),
  );
});

Deno.test("finalTable escapes underscores in metric names for LaTeX only", () => {
  const one = [{ experiment: "a", id: "1", metrics: { "mcc_l1": reducers(1) } }];
  assertEquals(finalTable(one, "markdown").split("\n")[0], "| run | mcc_l1 |");
  assertEquals(finalTable(one, "latex").split("\n")[1], "run & mcc\\_l1 \\\\ \\hline");
});
