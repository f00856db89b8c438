/** The study analyses: Spearman against SciPy, the variance split by hand, Table 1 on designed studies. */
import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  median,
  metricRankCorrelation,
  selectionSuccess,
  settingMedians,
  type StudyModel,
  varianceShares,
} from "../../lib/metrics/study.ts";

const model = (method: string, value: number, seed: number, metrics: Record<string, number>): StudyModel => ({
  method,
  value,
  seed,
  metrics,
});

Deno.test("median of odd and even lists", () => {
  assertEquals(median([3, 1, 2]), 2);
  assertEquals(median([4, 1, 3, 2]), 2.5);
  assertEquals(Number.isNaN(median([])), true);
});

/** A table of tests/metrics/fixtures/reference_study.json (written by make_study_reference.py). */
interface StudyReference {
  name: string;
  metrics: string[];
  /** Models × metrics; null where a model lacks the metric. */
  table: (number | null)[][];
  /** scipy.stats.spearmanr over the complete rows. */
  rho: number[][];
}

const STUDY_REFERENCE: StudyReference[] = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_study.json", import.meta.url)),
).cases;

const modelsOf = ({ metrics, table }: StudyReference) =>
  table.map((row, i) => model("m", i, 0, Object.fromEntries(metrics.map((k, j) => [k, row[j] ?? NaN]))));

for (const reference of STUDY_REFERENCE) {
  Deno.test(`metricRankCorrelation equals scipy.stats.spearmanr on the ${reference.name} table, ties included`, () => {
    const rho = metricRankCorrelation(modelsOf(reference), reference.metrics);
    // Measured agreement ≤ 2.3e-16: the same ranks, summed in another order.
    rho.forEach((row, i) => row.forEach((v, j) => assertAlmostEquals(v, reference.rho[i][j], 1e-15, `[${i}][${j}]`)));
  });
}

Deno.test("metricRankCorrelation leaves out a model missing a metric and needs 3 complete models", () => {
  const small = STUDY_REFERENCE.find((r) => r.name === "small")!;
  const models = modelsOf(small);
  // A missing metric would otherwise poison the ranks of the others.
  const withGap = [...models, model("m", 9, 0, { a: 7, b: NaN, c: 1 })];
  assertEquals(metricRankCorrelation(withGap, small.metrics), metricRankCorrelation(models, small.metrics));
  assertThrows(() => metricRankCorrelation(models.slice(0, 2), ["a", "b"]), RangeError, "≥ 3 models");
});

Deno.test("varianceShares splits a designed study into method, value and seed by hand", () => {
  // Method A: settings with seed scores {1, 3} and {5, 7}; method B: {2, 4} and {6, 8}.
  const models = [
    model("A", 1, 0, { s: 1 }),
    model("A", 1, 1, { s: 3 }),
    model("A", 2, 0, { s: 5 }),
    model("A", 2, 1, { s: 7 }),
    model("B", 1, 0, { s: 2 }),
    model("B", 1, 1, { s: 4 }),
    model("B", 2, 0, { s: 6 }),
    model("B", 2, 1, { s: 8 }),
  ];
  // Total 5.25 = method 0.25 + value 4 + seed 1 (sums of squares over 8 models).
  const shares = varianceShares(models, "s");
  assertAlmostEquals(shares.total, 5.25, 1e-12);
  assertAlmostEquals(shares.method, 0.25 / 5.25, 1e-12);
  assertAlmostEquals(shares.value, 4 / 5.25, 1e-12);
  assertAlmostEquals(shares.seed, 1 / 5.25, 1e-12);
  // Unbalanced: the shares still sum to 1.
  const unbalanced = varianceShares([...models, model("A", 1, 2, { s: 10 })], "s");
  assertAlmostEquals(unbalanced.method + unbalanced.value + unbalanced.seed, 1, 1e-12);
  assertEquals(settingMedians(models, "s"), { A: { "1": 2, "2": 6 }, B: { "1": 3, "2": 7 } });
});

/** `settings` settings × `seeds` seeds, scored by `score(setting, seed)` on two metrics. */
function designed(settings: number, seeds: number, score: (setting: number, seed: number) => [number, number]) {
  const models: StudyModel[] = [];
  for (let k = 0; k < settings; k++) {
    for (let s = 0; s < seeds; s++) {
      const [m1, m2] = score(k, s);
      models.push(model("m", k, s, { m1, m2 }));
    }
  }
  return models;
}

Deno.test("selectionSuccess: 1 when one setting is best everywhere, (1 + (K−1)/2)/K for pure noise", () => {
  const best = designed(6, 5, (k, s) => [k + 0.1 * s, k]);
  assertEquals(selectionSuccess(best, ["m1", "m2"], new Rng(1), { draws: 2_000, differentMetric: false }), 1);
  const noiseRng = new Rng(2);
  const noise = designed(12, 40, () => [noiseRng.uniform(), noiseRng.uniform()]);
  // The random model is the chosen setting with probability 1/K (a tie counts), else a fair coin.
  const expected = (1 + 11 / 2) / 12;
  const success = selectionSuccess(noise, ["m1", "m2"], new Rng(3), { draws: 40_000, differentMetric: false });
  assertAlmostEquals(success, expected, 0.015);
});

Deno.test("selectionSuccess with a different metric: anti-correlated metrics win only on a tie, 1/K", () => {
  const opposed = designed(8, 4, (k, s) => [k + 0.01 * s, -k]);
  const success = selectionSuccess(opposed, ["m1", "m2"], new Rng(4), { draws: 40_000, differentMetric: true });
  assertAlmostEquals(success, 1 / 8, 0.01);
  assertThrows(
    () =>
      selectionSuccess(opposed.filter((m) => m.seed === 0), ["m1"], new Rng(5), { draws: 1, differentMetric: false }),
    RangeError,
    "≥ 2 seeds",
  );
});
