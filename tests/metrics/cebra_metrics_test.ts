import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { Matrix, Split } from "../../lib/core/matrix.ts";
import { METRICS } from "../../lib/metrics/registry.ts";
import { Rng } from "../../lib/core/rng.ts";
import { infoNce } from "../../lib/contrastive/infonce.ts";
import {
  alignEmbeddings,
  consistencyDatasets,
  consistencyRuns,
  goodnessOfFit,
} from "../../lib/metrics/cebra_metrics.ts";

await selectBackend("wasm");

interface Reference {
  bins: number;
  embeddings: { rows: number; cols: number; data: (number | null)[] }[];
  nanRows: number[][];
  labels: number[][];
  aligned: number[][];
  alignedRaw: number[][];
  fallbacks: number[][];
  datasetScores: number[];
  datasetPairs: [number, number][];
  runs: Matrix[];
  runScores: number[];
  runPairs: [number, number][];
}

const reference: Reference = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_cebra_metrics.json", import.meta.url)),
);
const embeddings: Matrix[] = reference.embeddings.map((e) => ({
  rows: e.rows,
  cols: e.cols,
  data: Float64Array.from(e.data, (v) => v ?? NaN),
}));
const labels = reference.labels.map((l) => Float64Array.from(l));

function uniform(rng: Rng, rows: number, cols: number): Matrix {
  return { data: Float64Array.from({ length: rows * cols }, () => rng.uniform()), rows, cols };
}

Deno.test("alignEmbeddings matches CEBRA's align_embeddings: digitized bins, ±1/±2 fallbacks, NaN rows dropped", () => {
  assert(reference.nanRows[0].length === 1, "the fixture has a NaN row");
  assert(reference.fallbacks.some((f) => f.includes(2)), "the fixture exercises the ±2 fallback");
  const aligned = alignEmbeddings(embeddings, labels, reference.bins);
  aligned.forEach((a, k) => {
    assertEquals([a.rows, a.cols], [reference.bins - 1, embeddings[k].cols]);
    for (let i = 0; i < a.data.length; i++) {
      assertAlmostEquals(a.data[i], reference.aligned[k][i], 1e-12, `dataset ${k} [${i}]`);
    }
    for (let r = 0; r < a.rows; r++) {
      let norm = 0;
      for (let c = 0; c < a.cols; c++) norm += a.data[r * a.cols + c] ** 2;
      assertAlmostEquals(norm, 1, 1e-12);
    }
  });
});

Deno.test("consistencyDatasets and consistencyRuns match CEBRA's scores (sklearn LinearRegression R²) and pair order", () => {
  const datasets = consistencyDatasets(embeddings, labels);
  assertEquals(datasets.pairs, reference.datasetPairs);
  datasets.scores.forEach((s, i) => assertAlmostEquals(s, reference.datasetScores[i], 1e-10, `datasets pair ${i}`));
  const runs = consistencyRuns(reference.runs);
  assertEquals(runs.pairs, reference.runPairs);
  runs.scores.forEach((s, i) => assertAlmostEquals(s, reference.runScores[i], 1e-10, `runs pair ${i}`));
});

Deno.test("consistency: identical embeddings score 1, independent uniform ones ≈ 0 (CEBRA test_sklearn_metrics)", () => {
  const rng = new Rng(42);
  const a = uniform(rng, 10000, 4), b = uniform(rng, 10000, 10);
  assertEquals(consistencyRuns([a, a]).scores.map((s) => Math.abs(s - 1) < 1e-9), [true, true]);
  for (const s of consistencyRuns([a, b, uniform(rng, 10000, 6)]).scores) assert(Math.abs(s) < 0.05, `runs ${s}`);
  const la = Float64Array.from({ length: 10000 }, () => rng.uniform());
  for (const s of consistencyDatasets([a, a], [la, la]).scores) assertAlmostEquals(s, 1, 1e-9);
  // Datasets: 99 bin means per dataset, so an unrelated pair's R² is Beta(p/2, (98 − p)/2) with mean p/98
  // (p the input width): its excess over that mean is ≈ 0 with s.d. < 0.04.
  const sizes = [[10000, 4], [10000, 10], [8000, 6], [5000, 7]];
  const datasets = sizes.map(([rows, cols]) => uniform(rng, rows, cols));
  const datasetLabels = sizes.map(([rows]) => Float64Array.from({ length: rows }, () => rng.uniform()));
  const { pairs, scores } = consistencyDatasets(datasets, datasetLabels);
  assertEquals(pairs.length, 12);
  const excess = scores.map((s, i) => s - sizes[pairs[i][0]][1] / 98);
  const meanExcess = excess.reduce((t, v) => t + v, 0) / excess.length;
  assert(Math.abs(meanExcess) < 0.03, `mean excess R² ${meanExcess} (${scores.map((s) => s.toFixed(3))})`);
  assert(Math.abs(scores[0]) < 0.15, `${scores[0]}`);
});

Deno.test("goodnessOfFit of an untrained network's embedding is ≈ 0 bits; a full batch is refused", () => {
  // An untrained offset1-like encoder (50 → 32 → 32 → 16 → 8, GELU, U(±1/√fan_in), L2-normalised) of uniform
  // noise, with positives unrelated to the references: CEBRA test_goodness_of_fit_score's setting, |GoF| < 0.01.
  const rng = new Rng(7), sizes = [50, 32, 32, 16, 8];
  const weights = sizes.slice(1).map((out, l) => {
    const bound = 1 / Math.sqrt(sizes[l]);
    return {
      w: tf.tensor2d(Float32Array.from({ length: sizes[l] * out }, () => (2 * rng.uniform() - 1) * bound), [
        sizes[l],
        out,
      ]),
      b: tf.tensor1d(Float32Array.from({ length: out }, () => (2 * rng.uniform() - 1) * bound)),
    };
  });
  const gelu = (x: tf.Tensor) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.div(x, Math.SQRT2))));
  const batch = 512, steps = 50, losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    const loss = tf.tidy(() => {
      const [ref, pos, neg] = [0, 1, 2].map(() => {
        let h: tf.Tensor = tf.tensor2d(Float32Array.from({ length: batch * 50 }, () => rng.uniform()), [batch, 50]);
        weights.forEach(({ w, b }, l) => {
          h = tf.add(tf.matMul(h, w), b);
          if (l < weights.length - 1) h = gelu(h);
        });
        return tf.div(h, tf.norm(h, 2, 1, true)) as tf.Tensor2D;
      });
      return infoNce(ref, pos, neg, { distance: "cosine" }).total;
    });
    losses.push(loss.dataSync()[0]);
    loss.dispose();
  }
  const gof = goodnessOfFit(losses, batch);
  const mean = gof.reduce((t, v) => t + v, 0) / steps;
  assert(Math.abs(mean) < 0.01, `mean GoF ${mean} bits`);
  tf.dispose(weights.flatMap(({ w, b }) => [w, b]));
  assertEquals(goodnessOfFit([Math.log(64), Math.log(64) - 1], 16, 4), [0, Math.LOG2E]);
  assertThrows(() => goodnessOfFit([1], null), UsageError, "full-batch");
});

Deno.test("CEBRA metrics reject bad input before any work", () => {
  const rng = new Rng(1);
  const a = uniform(rng, 50, 2), b = uniform(rng, 40, 3);
  const la = Float64Array.from({ length: 50 }, (_, i) => i / 49), lb = Float64Array.from({ length: 40 }, () => 0.5);
  assertThrows(() => consistencyRuns([a]), UsageError, "at least 2");
  assertThrows(() => consistencyRuns([a, b]), UsageError, "same samples");
  assertThrows(() => consistencyRuns([a, { data: [NaN, 1], rows: 1, cols: 2 }]), UsageError, "finite");
  assertThrows(() => alignEmbeddings([a, b], [la]), UsageError, "one each");
  assertThrows(() => alignEmbeddings([a, b], [la, la]), UsageError, "labels 1 has 50");
  assertThrows(() => alignEmbeddings([a, b], [la, lb], 1), UsageError, "bins");
  assertThrows(() => alignEmbeddings([a, b], [la, Float64Array.from(lb).fill(NaN, 0, 1)]), UsageError, "finite");
  // b's labels all sit at 0.5: bins far from the middle have no labels within 2 bins.
  assertThrows(() => alignEmbeddings([a, b], [la, lb]), UsageError, "no labels within 2 bins");
});

Deno.test("the registry's linear_r2 (deno task eval) scores an affine image of the factors 1 and its own noise ≈ 0", () => {
  const entry = METRICS.entries.find((m) => m.name === "linear_r2")!;
  const rows = 400;
  const factors = new Float64Array(rows * 2), affine = new Float64Array(rows * 3), noise = new Float64Array(rows * 3);
  const rng = new Rng(5);
  for (let r = 0; r < rows; r++) {
    const [a, b] = [rng.uniform(), rng.uniform()];
    factors.set([a, b], r * 2);
    affine.set([2 * a - b + 3, 0.5 * b, a + b], r * 3);
    noise.set([rng.normal(), rng.normal(), rng.normal()], r * 3);
  }
  const split = { train: [], test: [] } as unknown as Split;
  const fit = (codes: Float64Array) =>
    entry.compute!({ codes: { data: codes, rows, cols: 3 }, factors: { data: factors, rows, cols: 2 }, split })
      .linear_r2;
  assertAlmostEquals(fit(affine), 1, 1e-12);
  // In sample, 3 regressors on 400 rows of noise give R² ≈ 3/399 in expectation.
  assert(Math.abs(fit(noise)) < 0.05);
});
