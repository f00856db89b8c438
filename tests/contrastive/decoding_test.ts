import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { KnnMetric } from "../../lib/ml/knn.ts";
import {
  decodePositionDirection,
  KNN_NEIGHBORS,
  medianAbsoluteError,
  type PositionDirection,
  r2ScoreColumns,
} from "../../lib/contrastive/decoding.ts";
import type { Matrix } from "../../lib/core/matrix.ts";

interface Reference {
  sets: { embedding: number[]; rows: number; position: number[]; direction: number[] }[];
  cases: {
    metric: KnnMetric;
    validR2: number[];
    k: number;
    r2: number;
    positionR2: number;
    medianAbsError: number;
    directionAccuracy: number;
  }[];
}

const reference: { decoding: Reference } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_decoding.json", import.meta.url)),
);

const embeddingOf = (s: Reference["sets"][number]): Matrix => ({ data: s.embedding, rows: s.rows, cols: 3 });
const labelsOf = (s: Reference["sets"][number]): PositionDirection => ({
  position: s.position,
  direction: s.direction,
});

Deno.test("decodePositionDirection matches sklearn's kNN regressor + classifier with k picked on validation", () => {
  const [train, valid, test] = reference.decoding.sets;
  for (const c of reference.decoding.cases) {
    const got = decodePositionDirection(
      { train: embeddingOf(train), valid: embeddingOf(valid), test: embeddingOf(test) },
      { train: labelsOf(train), valid: labelsOf(valid), test: labelsOf(test) },
      { metric: c.metric },
    );
    assertEquals(got.k, c.k, c.metric);
    got.validR2.forEach((r, i) => assertAlmostEquals(r, c.validR2[i], 1e-12, `${c.metric} k ${KNN_NEIGHBORS[i]}`));
    assertAlmostEquals(got.r2, c.r2, 1e-12);
    assertAlmostEquals(got.positionR2, c.positionR2, 1e-12);
    assertAlmostEquals(got.medianAbsError, c.medianAbsError, 1e-12);
    assertAlmostEquals(got.directionAccuracy, c.directionAccuracy, 1e-12);
  }
});

Deno.test("r2ScoreColumns and medianAbsoluteError: closed forms", () => {
  const truth = { data: [1, 0, 2, 1, 3, 0, 4, 1], rows: 4, cols: 2 };
  // Column 0 exact (R² 1); column 1 predicted by its mean (R² 0).
  assertAlmostEquals(r2ScoreColumns(truth, { data: [1, 0.5, 2, 0.5, 3, 0.5, 4, 0.5], rows: 4, cols: 2 }), 0.5, 1e-15);
  // Column 1 flipped: residual 4, total 1 → R² −3.
  assertAlmostEquals(r2ScoreColumns(truth, { data: [1, 1, 2, 0, 3, 1, 4, 0], rows: 4, cols: 2 }), -1, 1e-15);
  assertEquals(medianAbsoluteError([1, 2, 3], [1, 0, 6]), 2);
  assertEquals(medianAbsoluteError([0, 0, 0, 0], [1, -2, 3, 10]), 2.5);
  assertThrows(() => medianAbsoluteError([1], [1, 2]), UsageError);
});

Deno.test("decodePositionDirection: a perfect embedding decodes exactly; bad input is a UsageError", () => {
  // Embedding = angle of a ring, distinct per (position, direction): the nearest train row has the same labels.
  const ring = (n: number, offset: number) => {
    const position = Float64Array.from({ length: n }, (_, i) => ((i * 7 + offset) % n) / n * 1.6);
    const direction = Int32Array.from({ length: n }, (_, i) => (i + offset) % 2);
    const data = new Float64Array(n * 2);
    for (let i = 0; i < n; i++) {
      const angle = Math.PI * position[i] / 1.6 + Math.PI * direction[i];
      data[2 * i] = Math.cos(angle);
      data[2 * i + 1] = Math.sin(angle);
    }
    return { emb: { data, rows: n, cols: 2 }, labels: { position, direction } };
  };
  const train = ring(400, 0);
  // Queries at training rows: k 1 is exact.
  const got = decodePositionDirection(
    { train: train.emb, valid: train.emb, test: train.emb },
    { train: train.labels, valid: train.labels, test: train.labels },
  );
  assertEquals(got.k, 1);
  assertEquals([got.r2, got.positionR2, got.medianAbsError, got.directionAccuracy], [1, 1, 0, 1]);
  const sets = { train: train.emb, valid: train.emb, test: train.emb };
  const labels = { train: train.labels, valid: train.labels, test: train.labels };
  const bad: [() => unknown, RegExp][] = [
    [() => decodePositionDirection(sets, labels, { neighbors: [1, 401] }), /1\.\.400/],
    [() => decodePositionDirection(sets, labels, { neighbors: [] }), /at least one k/],
    [() =>
      decodePositionDirection(sets, {
        ...labels,
        test: { position: labels.test.position, direction: labels.test.direction.map((d) => d * 2) },
      }), /direction must be 0 or 1/],
    [() =>
      decodePositionDirection(sets, {
        ...labels,
        valid: { position: labels.valid.position.slice(1), direction: labels.valid.direction },
      }), /399 positions/],
  ];
  for (const [call, message] of bad) {
    const error = assertThrows(call, UsageError);
    assert(message.test(error.message), error.message);
  }
});
