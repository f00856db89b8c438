import { assert, assertEquals } from "../assert.ts";
import { runRow } from "./fixtures.ts";
import { axisOf, parallelCoordinates, scatterPoints } from "../../dashboard/ui/hparams.ts";

const metrics = (last: number) => ({ mcc: { last, min: last, max: last } });
const runs = [
  runRow("1", { seed: 0, config: { lr: 1e-4, method: "pcl", steps: 100 }, metrics: metrics(0.5) }),
  runRow("2", { seed: 1, config: { lr: 1e-2, method: "slowflow", steps: 100 }, metrics: metrics(0.9) }),
  runRow("3", { seed: 0, config: { lr: 1e-3, method: "slowflow", steps: 100 } }),
];

Deno.test("axisOf: linear within two decades, log beyond, categories sorted, missing values nowhere", () => {
  const linear = axisOf("x", [2, 4, 6]);
  assertEquals([linear.kind, linear.position(2), linear.position(5), linear.position(6)], ["linear", 0, 0.75, 1]);
  const log = axisOf("lr", [1e-4, 1e-3, 1e-2]);
  assertEquals(log.kind, "log");
  assertEquals([log.position(1e-4), log.position(1e-2)], [0, 1]);
  assert(Math.abs(log.position(1e-3)! - 0.5) < 1e-12);
  const category = axisOf("method", ["slowflow", "pcl", "slowflow", undefined]);
  assertEquals(category.ticks, [{ at: 0, label: "pcl" }, { at: 1, label: "slowflow" }]);
  assertEquals([category.position("slowflow"), category.position("other"), category.position(undefined)], [
    1,
    null,
    null,
  ]);
  assertEquals(axisOf("c", [3, 3]).position(3), 0.5);
});

Deno.test("parallelCoordinates: axes of the differing keys (seed included), then the metric; a line per run", () => {
  const { axes, lines } = parallelCoordinates(runs, "mcc", "last");
  assertEquals(axes.map((a) => [a.key, a.kind]), [["lr", "log"], ["method", "category"], ["seed", "linear"], [
    "mcc",
    "linear",
  ]]);
  assertEquals(lines.map((l) => [l.run, l.at.map((v) => v === null ? null : Math.round(v * 100) / 100), l.metric]), [
    ["vae/1", [0, 0, 0, 0], 0.5],
    ["vae/2", [1, 1, 1, 1], 0.9],
    ["vae/3", [0.5, 1, 0, null], null],
  ]);
});

Deno.test("scatterPoints: the runs with both a numeric key and the metric", () => {
  assertEquals(scatterPoints(runs, "lr", "mcc", "last"), [{ run: "vae/1", x: 1e-4, y: 0.5 }, {
    run: "vae/2",
    x: 1e-2,
    y: 0.9,
  }]);
  assertEquals(scatterPoints(runs, "method", "mcc", "last"), []);
  assertEquals(scatterPoints(runs, "seed", "mcc", "last").map((p) => p.x), [0, 1]);
});
