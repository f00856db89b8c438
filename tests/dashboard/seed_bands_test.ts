import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { bandHalfWidth, meanBand, runGroups } from "../../dashboard/ui/seed_bands.ts";

Deno.test("meanBand: mean ± sample s.d. at each step (2,4,4,4,5,5,7,9 → 5 ± √(32/7))", () => {
  // Eight seeds, one value each at step 10 and the same values doubled at step 20.
  const values = [2, 4, 4, 4, 5, 5, 7, 9];
  const series = values.map((v) => ({ x: [10, 20], t: [1, 2], y: [v, 2 * v] }));
  const { series: mean, band } = meanBand(series);
  assertEquals(mean, { x: [10, 20], t: [1, 2], y: [5, 10] });
  // Σ(v − 5)² = 32: the sample s.d. is √(32/7) (the population one, 2, is not what a spread over seeds estimates).
  const sd = Math.sqrt(32 / 7);
  [[5 - sd, 10 - 2 * sd], [5 + sd, 10 + 2 * sd]].forEach((bound, k) =>
    bound.forEach((v, i) => assertAlmostEquals((k ? band.hi : band.lo)[i], v, 1e-12))
  );
});

Deno.test("meanBand: two seeds 1 and 4 give 2.5 ± 1.5·√2", () => {
  const { series, band } = meanBand([{ x: [0], t: [0], y: [1] }, { x: [0], t: [0], y: [4] }]);
  assertEquals(series.y, [2.5]);
  assertAlmostEquals(band.lo[0], 2.5 - 1.5 * Math.SQRT2, 1e-12);
  assertAlmostEquals(band.hi[0], 2.5 + 1.5 * Math.SQRT2, 1e-12);
});

Deno.test("meanBand aligns on step: a step only one run logged has a zero-width band", () => {
  const a = { x: [20, 0], t: [2.5, 0.5], y: [3, 1] };
  const b = { x: [20, 40], t: [9, 18], y: [5, 7] };
  const { series, band } = meanBand([a, b]);
  // Steps sorted; each step's time is that of the first run listed that logged it.
  assertEquals(series, { x: [0, 20, 40], t: [0.5, 2.5, 18], y: [1, 4, 7] });
  // Step 20 has 3 and 5: sample s.d. √2.
  assertEquals(band, { lo: [1, 4 - Math.SQRT2, 7], hi: [1, 4 + Math.SQRT2, 7] });
});

Deno.test("meanBand of one run is the run itself with a zero-width band", () => {
  const run = { x: [1, 2, 3], t: [0.1, 0.2, 0.3], y: [0.5, 0.25, 0.125] };
  assertEquals(meanBand([run]), { series: run, band: { lo: run.y, hi: run.y } });
});

Deno.test("runGroups groups equal experiment and config in first-seen order, labelled by what differs and the seed count", () => {
  const runs = [
    { id: "1", experiment: "vae", config: { beta: 4 } },
    { id: "2", experiment: "vae", config: { beta: 1 } },
    { id: "3", experiment: "vae", config: { beta: 4 } },
    { id: "4", experiment: "gan", config: { beta: 4 } },
  ];
  const groups = runGroups(runs);
  assertEquals(groups.map((g) => [g.label, g.runs.map((r) => r.id)]), [
    ["vae beta=4 (2 seeds)", ["1", "3"]],
    ["vae beta=1 (1 seed)", ["2"]],
    ["gan beta=4 (1 seed)", ["4"]],
  ]);
});

Deno.test("runGroups by a config key: runs sharing its value are one group, whatever else differs", () => {
  const runs = [
    { id: "1", experiment: "ica", config: { method: "pcl", lr: 0.1 } },
    { id: "2", experiment: "ica", config: { method: "slowflow", lr: 0.1 } },
    { id: "3", experiment: "ica", config: { method: "pcl", lr: 0.01 } },
    { id: "4", experiment: "ica", config: { lr: 0.01 } },
    { id: "5", experiment: "vae", config: { method: "pcl" } },
  ];
  assertEquals(runGroups(runs, ["method"]).map((g) => [g.label, g.runs.map((r) => r.id)]), [
    ["ica method=pcl (2 runs)", ["1", "3"]],
    ["ica method=slowflow (1 run)", ["2"]],
    ["ica method=— (1 run)", ["4"]],
    ["vae method=pcl (1 run)", ["5"]],
  ]);
});

Deno.test("meanBand averages seeds thinned to different steps: exact mean and s.d. of 5 lines over 10,000 steps", () => {
  // Seed i logs y = a_i·step + b_i at every step; the server kept every k_i-th point (and the last) of each.
  const lines = [[0.5, 1], [0.25, 3], [1, -2], [0.75, 0], [0.1, 5]];
  const strides = [7, 13, 29, 101, 3];
  const runs = lines.map(([a, b], i) => {
    const x = Array.from({ length: 10_001 }, (_, s) => s).filter((s) => s % strides[i] === 0 || s === 10_000);
    return { x, t: x.map((s) => s / 100), y: x.map((s) => a * s + b) };
  });
  const { series, band } = meanBand(runs, "sd", Infinity);
  for (const [j, step] of series.x.entries()) {
    // Every run covers every grid step (all start at 0 and end at 10,000): the lines' mean and sample s.d.
    const values = lines.map(([a, b]) => a * step + b);
    const mean = values.reduce((p, v) => p + v, 0) / 5;
    const sd = Math.sqrt(values.reduce((p, v) => p + (v - mean) ** 2, 0) / 4);
    assertAlmostEquals(series.y[j], mean, 1e-9 * Math.max(1, Math.abs(mean)));
    assertAlmostEquals(band.hi[j] - series.y[j], sd, 1e-9 * Math.max(1, sd));
  }
  // The grid is the union of the kept steps.
  const union = [...new Set(runs.flatMap((r) => r.x))].sort((a, b) => a - b);
  assertEquals(series.x, union);
  // By default at most 2,000 of them, evenly, from the first step to the last, with the same values there.
  const capped = meanBand(runs);
  assertEquals([capped.series.x.length, capped.series.x[0], capped.series.x.at(-1)], [2000, 0, 10_000]);
  assert(capped.series.x.every((step) => union.includes(step)));
  for (const [j, step] of capped.series.x.entries()) {
    assertAlmostEquals(capped.series.y[j], series.y[union.indexOf(step)], 1e-12);
  }
});

Deno.test("meanBand ci95: the mean ± t(0.975, n − 1)·s/√n (scipy: t.ppf(0.975, 4) = 2.7764)", () => {
  // Five seeds 1..5: mean 3, sample s.d. √2.5.
  const runs = [1, 2, 3, 4, 5].map((y) => ({ x: [0], t: [0], y: [y] }));
  const { band } = meanBand(runs, "ci95");
  assertAlmostEquals(band.hi[0] - 3, (2.7764 * Math.sqrt(2.5)) / Math.sqrt(5), 1e-12);
  assertEquals(bandHalfWidth(1, 1, "ci95"), 0);
  assertAlmostEquals(bandHalfWidth(1, 2, "ci95"), 12.7062 / Math.SQRT2, 1e-12);
  assertAlmostEquals(bandHalfWidth(1, 100, "ci95"), 0.196, 1e-12);
});

Deno.test("runGroups of seeds: a `seed` key in the config, or keys in another order, does not split a setting", () => {
  const runs = [
    { experiment: "a", config: { lr: 1, seed: 0 } },
    { experiment: "a", config: { seed: 1, lr: 1 } },
    { experiment: "a", config: { lr: 2, seed: 2 } },
  ];
  assertEquals(runGroups(runs).map((g) => g.label), ["a lr=1 (2 seeds)", "a lr=2 (1 seed)"]);
});
