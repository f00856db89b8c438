import { assertEquals } from "../assert.ts";
import { runRow } from "./fixtures.ts";
import { configKeys, differingKeys } from "../../dashboard/ui/config_keys.ts";
import {
  cellValue,
  configColumns,
  DEFAULT_SORT,
  isFinalScore,
  metricColumns,
  metricKeys,
  type MetricRow,
  metricSections,
  metricValue,
  nextSort,
  visibleRows,
} from "../../dashboard/ui/run_rows.ts";

const reducers = (last: number, min = last, max = last) => ({ last, min, max });

const row = runRow;

Deno.test("configKeys and differingKeys: union in first-seen order; a key some configs lack differs", () => {
  const configs = [{ lr: 0.1, seed: 1 }, { lr: 0.1, seed: 2, beta: 4 }, { seed: 1, lr: 0.1 }];
  assertEquals(configKeys(configs), ["lr", "seed", "beta"]);
  assertEquals(differingKeys(configs), ["seed", "beta"]);
  // Values compare as JSON, so equal arrays are equal.
  assertEquals(differingKeys([{ dims: [1, 2] }, { dims: [1, 2] }]), []);
  assertEquals(differingKeys([{}, {}]), []);
});

Deno.test("configColumns: every key sorted, or only those that differ", () => {
  const runs = [{ config: { lr: 0.1, b: 1, a: "x" } }, { config: { lr: 0.2, b: 1, a: "x" } }];
  assertEquals(configColumns(runs, false), ["a", "b", "lr"]);
  assertEquals(configColumns(runs, true), ["lr"]);
});

Deno.test("metricColumns: top-level metrics before namespaced ones, at most twelve", () => {
  const m = reducers(1);
  assertEquals(metricColumns([{ metrics: { "mcc/a": m, loss: m } }, { metrics: { "kl/b": m, acc: m, loss: m } }]), [
    "loss",
    "acc",
    "mcc/a",
    "kl/b",
  ]);
  const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`m${i}`, m]));
  assertEquals(metricColumns([{ metrics: many }]), Array.from({ length: 12 }, (_, i) => `m${i}`));
});

Deno.test("metricKeys puts final scores first; metricColumns keeps the chosen ones some run has, in the order chosen", () => {
  const m = reducers(1);
  const runs: MetricRow[] = [
    { metrics: { "L1/mcc": m, loss: m }, final: { "mcc/L1": 0.9 } },
    { metrics: { loss: m, "kl/b": m } },
  ];
  assertEquals(metricKeys(runs), ["mcc/L1", "loss", "L1/mcc", "kl/b"]);
  assertEquals(metricColumns(runs, ["kl/b", "gone", "mcc/L1"]), ["kl/b", "mcc/L1"]);
  // Nothing chosen that exists: the default columns.
  assertEquals(metricColumns(runs, ["gone"]), ["mcc/L1", "loss", "L1/mcc", "kl/b"]);
  // A final score is one number whatever the reducer; a logged metric gives the reducer's value.
  const r = row("1", { metrics: { loss: reducers(2, 1, 5) }, final: { "mcc/L1": 0.9 } });
  assertEquals([metricValue(r, "mcc/L1", "min"), metricValue(r, "loss", "max"), metricValue(r, "x", "last")], [
    0.9,
    5,
    undefined,
  ]);
  assertEquals([isFinalScore(runs, "mcc/L1"), isFinalScore(runs, "loss")], [true, false]);
  // The filter and the sort read final scores too.
  assertEquals(
    visibleRows([r, row("2", { final: { "mcc/L1": 0.5 } })], "mcc/L1>0.8", DEFAULT_SORT, "last").map((x) => x.id),
    [
      "1",
    ],
  );
});

Deno.test("metricSections: by first path segment, in order of first appearance", () => {
  assertEquals(metricSections(["L1/a", "loss", "L1/b", "train/x/y", "acc"]), [
    ["L1", ["L1/a", "L1/b"]],
    ["metrics", ["loss", "acc"]],
    ["train", ["train/x/y"]],
  ]);
});

Deno.test("cellValue reads run fields, config keys and a metric's chosen reducer", () => {
  const r = row("1", { config: { lr: 0.1 }, metrics: { loss: reducers(2, 1, 5) } });
  assertEquals(cellValue(r, "status", "last"), "completed");
  assertEquals(cellValue(r, "config:lr", "last"), 0.1);
  assertEquals(cellValue(r, "metric:loss", "max"), 5);
  assertEquals(cellValue(r, "metric:loss", "min"), 1);
  assertEquals(cellValue(r, "metric:acc", "last"), undefined);
});

Deno.test("visibleRows filters case-blind on experiment, status, config and tags", () => {
  const runs = [
    row("1", { experiment: "slowvae-kitti", config: { prior: "laplace" } }),
    row("2", { status: "failed" }),
    row("3", { tags: ["Baseline"] }),
  ];
  const ids = (query: string) => visibleRows(runs, query, DEFAULT_SORT, "last").map((r) => r.id).sort();
  assertEquals(ids(""), ["1", "2", "3"]);
  assertEquals(ids("KITTI"), ["1"]);
  assertEquals(ids("laplace"), ["1"]);
  assertEquals(ids("failed"), ["2"]);
  assertEquals(ids("baseline"), ["3"]);
  assertEquals(ids("nothing"), []);
});

Deno.test("visibleRows: a structured filter compares config keys, run fields and metrics; all terms must hold", () => {
  const runs = [
    row("1", { seed: 3, config: { lr: 0.001, method: "pcl" }, metrics: { mcc: reducers(0.95) } }),
    row("2", {
      seed: 1,
      status: "failed",
      config: { lr: 0.01, method: "slowflow" },
      metrics: { mcc: reducers(0.5, 0.5, 1.5) },
    }),
    row("3", { seed: 3, backend: "cpu", config: { lr: 0.1, method: "slowflow" } }),
  ];
  const ids = (query: string, reducer: "last" | "max" = "last") =>
    visibleRows(runs, query, DEFAULT_SORT, reducer).map((r) => r.id).sort();
  assertEquals(ids("lr<0.01"), ["1"]);
  assertEquals(ids("lr<=0.01"), ["1", "2"]);
  assertEquals(ids("status:failed"), ["2"]);
  assertEquals(ids("seed=3"), ["1", "3"]);
  assertEquals(ids("seed=3 method:slowflow"), ["3"]);
  assertEquals(ids("mcc>=0.9"), ["1"]);
  // The reducer the table shows: max of run 2's mcc is 1.5.
  assertEquals(ids("mcc>=0.9", "max"), ["1", "2"]);
  assertEquals(ids("backend!=wasm"), ["3"]);
  assertEquals(ids("slowflow lr>0.05"), ["3"]);
  // A key no run has: nothing equals it, everything differs from it.
  assertEquals(ids("nokey=1"), []);
  assertEquals(ids("nokey!=1"), ["1", "2", "3"]);
});

Deno.test("visibleRows hides archived runs unless the filter asks about them", () => {
  const runs = [row("1"), row("2", { archived: true }), row("3", { archived: true, config: { lr: 1 } })];
  const ids = (query: string) => visibleRows(runs, query, DEFAULT_SORT, "last").map((r) => r.id).sort();
  assertEquals(ids(""), ["1"]);
  assertEquals(ids("archived:true"), ["2", "3"]);
  assertEquals(ids("archived:true lr=1"), ["3"]);
  assertEquals(ids("archived!=true"), ["1"]);
});

Deno.test("visibleRows sorts numbers numerically and text as text, missing values as empty text", () => {
  const runs = [
    row("a", { created: "2024-01-02T00:00:00Z", metrics: { loss: reducers(10) }, config: { opt: "sgd" } }),
    row("b", { created: "2024-01-03T00:00:00Z", metrics: { loss: reducers(9) }, config: { opt: "adam" } }),
    row("c", { created: "2024-01-01T00:00:00Z", metrics: { loss: reducers(100) } }),
  ];
  const ids = (column: string, descending: boolean) =>
    visibleRows(runs, "", { column, descending }, "last").map((r) => r.id);
  assertEquals(ids("created", true), ["b", "a", "c"]);
  // 9 < 10 < 100 as numbers (as text "10" < "100" < "9").
  assertEquals(ids("metric:loss", false), ["b", "a", "c"]);
  assertEquals(ids("config:opt", false), ["c", "b", "a"]);
  // The input order is left alone.
  assertEquals(runs.map((r) => r.id), ["a", "b", "c"]);
});

Deno.test("nextSort flips the sorted column and starts another one descending", () => {
  assertEquals(DEFAULT_SORT, { column: "created", descending: true });
  assertEquals(nextSort(DEFAULT_SORT, "created"), { column: "created", descending: false });
  assertEquals(nextSort({ column: "created", descending: false }, "created"), { column: "created", descending: true });
  assertEquals(nextSort({ column: "created", descending: false }, "status"), { column: "status", descending: true });
});
